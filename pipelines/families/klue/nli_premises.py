"""Premise selection for NLI (KLUE 3.3.1).

KLUE-NLI took its premises from sentences that are declarative, contain a predicate,
and are 20 to 90 characters long, "excluding mathematical formulae and lists" (KLUE
3.3.1). ``premise_reason`` applies those rules to one sentence with MeCab (mecab-ko-dic)
tags and returns why it fails, or None:

- ``too_short`` / ``too_long``: fewer than ``min_chars`` or more than ``max_chars``
  characters (stripped);
- ``formula_or_list``: a mathematical formula (an ``=``, ``≠``, ``≤``, ``≥``, ``±`` or
  ``^`` between Latin or Greek letters or digits, not Hangul as in ``서울=연합뉴스``, or
  an arithmetic operator ``+ × ÷ *`` between two digits; a percentage, a date range or
  a middle dot as in 한·미 is no formula) or a list item (the sentence starts with a
  bullet such as ``- `` (with its space: ``-_-`` is a face), ``•`` or ``▲``, a circled
  number such as ``①``, or an enumerator such as ``1.``, ``2)`` or ``(3)``);
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

import re

import pandas as pd

from pipelines.families.klue.items_section import PremiseRules
from pipelines.families.klue.sampling import sample_evenly
from pipelines.lang import DEFAULT_LANGUAGE, language

# KLUE 3.3.1: "excluding mathematical formulae and lists" (see the module docstring)
_FORMULA = re.compile(r"[A-Za-z0-9α-ωΑ-Ω)\]²³]\s*[=≠≤≥±^]\s*[A-Za-z0-9α-ωΑ-Ω(\[-]|\d\s*[+×÷*]\s*\d")
_LIST_ITEM = re.compile(
    r"^(?:[-*]\s|[•·∙▶▷►▲△■□◆◇○●◎※➤✓✔]|[①-⑳]|\(\d{1,2}\)|\d{1,2}[.)](?!\d)|[가-하][.)]\s)"
)


def premise_reason(text: str, rules: PremiseRules, lang: str = DEFAULT_LANGUAGE) -> str | None:
    """Why ``text`` is not a premise under ``rules``, or None when it is one."""
    stripped = text.strip()
    if len(stripped) < rules.min_chars:
        return "too_short"
    if len(stripped) > rules.max_chars:
        return "too_long"
    if _FORMULA.search(stripped) or _LIST_ITEM.match(stripped):
        return "formula_or_list"
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
