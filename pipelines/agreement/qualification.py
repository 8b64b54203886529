"""Qualification (pilot) rounds: who may annotate a main round (issue 35, item 1).

KLUE began every crowdsourced task with a pilot that chose its workers: TC (3.1.1)
kept the 13 who passed, STS (3.2.1) 19 of 20, NLI (3.3.1) 684 of 2,604 applicants, and
RE (3.5.1) those who got at least 4 of 5 pilot items right. A pilot is a round of items
whose answers are known (``gold``: ``item_id`` and ``value``); its pass rule is one of

- ``min_correct``: at least ``threshold`` of ``of`` gold items answered as the gold
  (classes; RE 3.5.1: 4 of 5). An item the annotator skipped or never saw counts as
  wrong, so ``of`` defaults to every gold item;
- ``min_pearson``: the Pearson correlation of the annotator's ratings with the gold
  scores is at least ``threshold`` (ratings, such as STS), over at least 3 answered
  items with some spread;
- ``min_majority_share``: without gold, the share of answered items on which the
  annotator gives the others' majority answer (the mode of the other annotators; a tie
  has no majority and is not counted) is at least ``threshold``;
- ``min_uas``: dependency trees (KLUE-DP, issue 57): the annotator's mean unlabelled
  attachment score against the gold trees, over every gold item (one skipped or never
  seen scores 0), is at least ``threshold``.

Contract: :func:`pilot_results` gives one row per annotator (``annotator_id``,
``answered``, ``correct`` or ``score``, ``passed``, ``why``); :func:`exclude_unqualified`
splits a main round's annotations into kept and rejected, every rejected row kept with
reason ``not_qualified``, so that rows in = kept + rejected. Bad input (gold items that
are not in the round, a rule no one can meet) is a :class:`QualificationError` naming
the items, or the annotator who came closest.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipelines.agreement.settings import AgreementError

RULES = ("min_correct", "min_pearson", "min_majority_share", "min_uas")


class QualificationError(AgreementError):
    """A pilot that cannot decide who qualifies."""


@dataclass(frozen=True)
class PassRule:
    """A pilot's pass rule (see the module docstring): ``kind`` one of :data:`RULES`;
    ``threshold`` a count (``min_correct``), a correlation or a share; ``of``: the
    number of gold items ``min_correct`` counts over (None: every gold item)."""

    kind: str
    threshold: float
    of: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in RULES:
            raise QualificationError(f"pass rule {self.kind!r}: expected one of {RULES}")
        if self.kind == "min_correct":
            if self.threshold < 1 or self.threshold != int(self.threshold):
                raise QualificationError(
                    f"min_correct: a whole number of items, 1 or more, got {self.threshold}"
                )
            if self.of is not None and self.of < self.threshold:
                raise QualificationError(
                    f"min_correct: {self.threshold:g} of {self.of} can never be met"
                )
        elif self.kind == "min_pearson" and not -1.0 <= self.threshold <= 1.0:
            raise QualificationError(f"min_pearson: a correlation in [-1, 1], got {self.threshold}")
        elif self.kind in ("min_majority_share", "min_uas") and not 0.0 < self.threshold <= 1.0:
            raise QualificationError(f"{self.kind}: a share in (0, 1], got {self.threshold}")

    def describe(self) -> str:
        if self.kind == "min_correct":
            return (
                f"at least {self.threshold:g} of {self.of if self.of else 'all'} gold items right"
            )
        if self.kind == "min_pearson":
            return f"Pearson r with the gold scores at least {self.threshold:g}"
        if self.kind == "min_uas":
            return f"a mean UAS of at least {self.threshold:g} against the gold trees"
        return f"the others' majority answer on at least {self.threshold:.0%} of items"


def answers_of(annotations: pd.DataFrame) -> pd.DataFrame:
    """One answer per (item, annotator): skipped (cancelled) and blank rows left out."""
    frame = annotations
    if "cancelled" in frame:
        frame = frame[~frame["cancelled"].fillna(False).astype(bool)]
    frame = frame[frame["value"].notna() & (frame["value"].astype(str).str.strip() != "")]
    frame = frame.assign(item_id=frame["item_id"].astype(str), value=frame["value"].astype(str))
    return frame.drop_duplicates(["item_id", "annotator_id"], keep="last")[
        ["item_id", "annotator_id", "value"]
    ]


def pilot_results(
    annotations: pd.DataFrame, rule: PassRule, gold: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Each annotator's pilot result under ``rule`` (see the module docstring).

    ``annotations``: the pilot round's long table (``item_id``, ``annotator_id``,
    ``value``, optionally ``cancelled``); ``gold``: ``item_id`` and ``value`` (needed by
    ``min_correct`` and ``min_pearson``)."""
    answers = answers_of(annotations)
    people = sorted(annotations["annotator_id"].astype(str).unique())
    if not people:
        raise QualificationError("the pilot round has no annotations")
    if rule.kind == "min_majority_share":
        rows = majority_rows(answers, people, rule)
    else:
        if gold is None or not len(gold):
            raise QualificationError(f"{rule.kind} needs gold items (item_id, value)")
        gold = gold.assign(item_id=gold["item_id"].astype(str))
        if gold["item_id"].duplicated().any():
            dup = sorted(gold.loc[gold["item_id"].duplicated(), "item_id"])[:5]
            raise QualificationError(f"gold items given twice: {dup}")
        unseen = sorted(set(gold["item_id"]) - set(annotations["item_id"].astype(str)))
        if unseen:
            raise QualificationError(
                f"{len(unseen)} gold item(s) are not in the pilot round: {unseen[:5]}"
            )
        truth = dict(zip(gold["item_id"], gold["value"], strict=True))
        rows = {"min_correct": _correct_rows, "min_uas": _uas_rows}.get(rule.kind, _pearson_rows)(
            answers, people, truth, rule
        )
    out = pd.DataFrame(rows)
    if not out["passed"].any():
        best = out.sort_values("score", ascending=False, kind="stable").iloc[0]
        raise QualificationError(
            f"no annotator meets the pass rule ({rule.describe()}); the closest is "
            f"{best['annotator_id']} ({best['why']})"
        )
    return out


def same_answer(a: str, b: object, tolerance: float = 0.0) -> bool:
    """Whether answer ``a`` is ``b``: as numbers within ``tolerance`` ("3" and "3.0"
    are the same answer), else as text."""
    try:
        return abs(float(a) - float(b)) <= tolerance
    except (TypeError, ValueError):
        return a.strip() == str(b).strip()


def count_correct(answers: pd.DataFrame, truth: dict, tolerance: float = 0.0) -> int:
    """How many of ``answers`` (``item_id``, ``value``) equal ``truth[item_id]`` (a
    number within ``tolerance`` of it)."""
    pairs = zip(answers["item_id"], answers["value"], strict=True)
    return sum(same_answer(v, truth[i], tolerance) for i, v in pairs)


def _correct_rows(answers: pd.DataFrame, people: list[str], truth: dict, rule: PassRule) -> list:
    of = rule.of or len(truth)
    rows = []
    for who in people:
        mine = answers[(answers["annotator_id"] == who) & answers["item_id"].isin(truth)]
        correct = count_correct(mine, truth)
        passed = correct >= rule.threshold
        rows.append({"annotator_id": who, "answered": len(mine), "correct": correct,
                     "score": correct / of, "passed": passed,
                     "why": f"{correct} of {of} gold items right"})  # fmt: skip
    return rows


def _pearson_rows(answers: pd.DataFrame, people: list[str], truth: dict, rule: PassRule) -> list:
    rows = []
    for who in people:
        mine = answers[(answers["annotator_id"] == who) & answers["item_id"].isin(truth)]
        x = pd.to_numeric(mine["value"], errors="coerce")
        y = pd.to_numeric(mine["item_id"].map(truth), errors="coerce")
        ok = x.notna() & y.notna()
        x, y = x[ok].to_numpy(float), y[ok].to_numpy(float)
        if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
            r, why = float("nan"), f"{len(x)} numeric answers, too few or all the same for r"
        else:
            r = float(np.corrcoef(x, y)[0, 1])
            why = f"r = {r:.3f} over {len(x)} gold items"
        passed = bool(r >= rule.threshold) if not np.isnan(r) else False
        rows.append({"annotator_id": who, "answered": len(mine), "correct": None,
                     "score": -2.0 if np.isnan(r) else round(r, 6), "passed": passed,
                     "why": why})  # fmt: skip
    return rows


def tree_uas(answer: str, gold: object) -> float:
    """The share of words of the gold tree (a JSON ``[[head, label], ...]``) that the
    answer tree attaches to the same head (0 when it is not a tree of as many words)."""
    import json

    try:
        mine, truth = json.loads(answer), json.loads(str(gold))
    except (TypeError, ValueError):
        return 0.0
    if not isinstance(mine, list) or not truth or len(mine) != len(truth):
        return 0.0
    from pipelines.models.attachment import attachment_counts

    words, heads, _ = attachment_counts([(mine, truth)])
    return heads / words


def _uas_rows(answers: pd.DataFrame, people: list[str], truth: dict, rule: PassRule) -> list:
    rows = []
    for who in people:
        mine = answers[(answers["annotator_id"] == who) & answers["item_id"].isin(truth)]
        given = dict(zip(mine["item_id"], mine["value"], strict=True))
        scores = [tree_uas(given[i], t) if i in given else 0.0 for i, t in truth.items()]
        mean = sum(scores) / len(scores)
        rows.append({"annotator_id": who, "answered": len(mine), "correct": None,
                     "score": round(mean, 6), "passed": mean >= rule.threshold,
                     "why": f"mean UAS {mean:.3f} over {len(truth)} gold trees"})  # fmt: skip
    return rows


def majority_rows(answers: pd.DataFrame, people: list[str], rule: PassRule) -> list:
    """Per annotator: the items counted (answered, others answered, no tie), on how
    many they gave the others' majority answer, the share, and ``passed``."""
    by_item = {i: g for i, g in answers.groupby("item_id")}
    rows = []
    for who in people:
        agree = counted = 0
        for _item, group in by_item.items():
            own = group.loc[group["annotator_id"] == who, "value"]
            others = group.loc[group["annotator_id"] != who, "value"].value_counts()
            if own.empty or others.empty or (others == others.max()).sum() > 1:
                continue  # not answered, nobody else, or a tie: no majority
            counted += 1
            agree += int(same_answer(own.iloc[0], others.index[0]))
        share = agree / counted if counted else 0.0
        rows.append({"annotator_id": who, "answered": counted, "correct": agree,
                     "score": share, "passed": bool(counted and share >= rule.threshold),
                     "why": f"the others' majority on {agree} of {counted} items"})  # fmt: skip
    return rows


def exclude_unqualified(
    annotations: pd.DataFrame, qualified: set[str] | list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kept, rejected) of a main round's annotations: the rows of accounts that did not
    qualify are rejected with ``reason`` ``not_qualified`` (nothing is lost)."""
    allowed = {str(q) for q in qualified}
    mask = annotations["annotator_id"].astype(str).isin(allowed)
    rejected = annotations[~mask].assign(
        reason="not_qualified", detail="did not pass the qualification (pilot) round"
    )
    return annotations[mask], rejected
