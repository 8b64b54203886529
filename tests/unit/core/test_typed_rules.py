"""``typed_rules``: a family's rules dataclass from a recipe mapping (issue 33 review:
one conversion of YAML lists for tuple fields instead of one per family)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pipelines.core.recipe import typed_rules


@dataclass(frozen=True)
class Rules:
    words: tuple[str, ...] = ("누구", "무엇")
    names: list[str] | None = None
    limit: int = 3


def test_lists_become_tuples_only_for_tuple_fields():
    rules = typed_rules(Rules, {"words": ["언제"], "names": ["a"], "limit": 4}, "x.rules")
    assert rules.words == ("언제",) and isinstance(rules.words, tuple)
    assert rules.names == ["a"]  # a list field keeps its list
    assert hash(typed_rules(Rules, {"words": ["누구", "무엇"]}, "x")) == hash(Rules())


def test_an_unknown_key_names_where_and_the_known_ones():
    with pytest.raises(ValueError, match=r"x\.rules: unknown settings \['word'\]"):
        typed_rules(Rules, {"word": []}, "x.rules")


def test_the_families_rules_take_lists_from_yaml():
    from pipelines.families.jglue.construct import JglueRules
    from pipelines.families.kobest.rules import KobestRules

    assert typed_rules(JglueRules, {"nli_gold": ["entailment"]}, "j").nli_gold == ("entailment",)
    assert typed_rules(KobestRules, {"wh_words": ["누구"]}, "k").wh_words == ("누구",)
