"""Premise selection for NLI (KLUE 3.3.1).

KLUE-NLI took its premises from sentences that are declarative, contain a predicate,
and are 20 to 90 characters long. ``premise_reason`` applies those rules to one
sentence with MeCab (mecab-ko-dic) tags and returns why it fails, or None:

- ``too_short`` / ``too_long``: fewer than ``min_chars`` or more than ``max_chars``
  characters (stripped);
- ``not_declarative``: a question mark at the end, or the last morpheme that is not
  a symbol (tags ``S*``) has no final ending (``EF``, alone or inside a compound tag such
  as ``VV+EF``), or the final ending's surface does not end with one of ``endings``
  (default ``다``: ``-다``, ``-ㄴ다``, ``-습니다``; imperatives such as ``-세요`` and
  questions without a mark such as ``-니`` fail);
- ``no_predicate``: no morpheme tagged with one of ``predicate_tags`` (verbs,
  adjectives, auxiliaries, copulas, verb/adjective-deriving suffixes).

``select_premises`` keeps the sentences that pass and draws a seeded sample evenly over
a column (the corpus); every sentence not chosen is returned with its reason
(``not_sampled`` for one that passed), so nothing is lost.
"""

from __future__ import annotations

import pandas as pd

from pipelines.core.recipe import PremiseRules
from pipelines.families.klue.sampling import sample_evenly
from pipelines.lang import DEFAULT_LANGUAGE, language


def premise_reason(text: str, rules: PremiseRules, lang: str = DEFAULT_LANGUAGE) -> str | None:
    """Why ``text`` is not a premise under ``rules``, or None when it is one."""
    stripped = text.strip()
    if len(stripped) < rules.min_chars:
        return "too_short"
    if len(stripped) > rules.max_chars:
        return "too_long"
    if stripped.endswith("?"):
        return "not_declarative"
    morphs = [(surface, tag.split("+")) for surface, tag in language(lang).tagged(stripped)]
    words = [(s, parts) for s, parts in morphs if not all(p.startswith("S") for p in parts)]
    if not words:
        return "not_declarative"
    surface, parts = words[-1]
    if "EF" not in parts or not surface.endswith(tuple(rules.endings)):
        return "not_declarative"
    predicates = set(rules.predicate_tags)
    if not any(predicates & set(p) for _, p in words):
        return "no_predicate"
    return None


def select_premises(
    sentences: pd.DataFrame, rules: PremiseRules, sample: int | None, stratify: str | None,
    seed: int, lang: str = DEFAULT_LANGUAGE,
) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(chosen, rejected): the sentences passing ``rules`` (tags of ``lang``'s morpheme
    analyser), a seeded sample of ``sample`` of them drawn evenly over ``stratify``;
    ``rejected`` holds every other sentence with ``reason``."""
    reasons = [premise_reason(t, rules, lang) for t in sentences["text"]]
    frame = sentences.assign(reason=reasons)
    passing = frame[frame["reason"].isna()].drop(columns="reason")
    chosen = sample_evenly(passing, sample, stratify, seed)
    rejected = frame[~frame.index.isin(chosen.index)].copy()
    rejected["reason"] = rejected["reason"].fillna("not_sampled")
    return chosen.reset_index(drop=True), rejected.reset_index(drop=True)
