"""What a baseline's figures are measured against, and when they are no result at all.

Issue 54: the STS demo's card showed a "fine-tuned baseline" of dev Pearson -23.06
beside people at 95.8 while every prediction lay between 2.36 and 2.80 (a constant
predictor); MARC-ja's test is 91% positive, so always answering ``positive`` (91.3)
beat the model (86.96), and no such row was shown. Two things follow for every split a
baseline scores:

- :func:`majority_row`: the same metrics for always answering train's most frequent
  gold value (``label`` and ``choice`` targets), the least a model must beat. A
  ``score`` target has none (a constant's Pearson is undefined): :func:`chance_row`
  gives its correlations at chance, 0, instead.
- :func:`collapse`: whether the predictions collapsed. A ``label`` or ``choice`` model
  that gives one answer to ``collapse_share`` (0.95) or more of the items while the gold
  has several, or a ``score`` model whose predictions spread less than
  ``collapse_spread`` (0.1) times the gold's standard deviation, learned nothing the
  metric can show: the card turns its row into a warning, not a result.

Structured targets (tags, answers) get neither: their metrics have no single constant
answer, and their own reports (entity F1 0) say what they learned.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from pipelines.evaluation.evaluate import score
from pipelines.evaluation.spec import Evaluation

CONSTANT_TARGETS = ("label", "choice")
CORRELATIONS = ("pearson", "spearman")


def majority_answer(ev: Evaluation, train: list[dict]) -> object | None:
    """Train's most frequent gold value (the first of a tie in sorted order), or None
    where the target has no constant answer or train is empty."""
    if ev.target not in CONSTANT_TARGETS or not train:
        return None
    counts = Counter(str(ev.gold(r)) for r in train)
    top = max(counts.values())
    value = sorted(k for k, n in counts.items() if n == top)[0]
    return next(ev.gold(r) for r in train if str(ev.gold(r)) == value)


def majority_row(ev: Evaluation, answer: object, records: list[dict]) -> dict:
    """The split's metrics for answering ``answer`` to every item."""
    gold = [ev.gold(r) for r in records]
    return score(ev, gold, [answer] * len(gold), None, records)


def chance_row(ev: Evaluation) -> dict:
    """A ``score`` target's correlations at chance (0: no correlation with the gold),
    the least its model must beat; empty for other targets."""
    if ev.target != "score":
        return {}
    return {m: 0.0 for m in ev.metrics if m in CORRELATIONS}


def collapse(ev: Evaluation, gold: list, pred: list, share: float = 0.95,
             spread: float = 0.1) -> dict:  # fmt: skip
    """Whether ``pred`` collapsed against ``gold`` (see the module docstring):
    ``collapsed`` and a ``summary`` a person reads; ``checked`` is False where the
    target is not judged."""
    if ev.target == "score":
        p, g = np.asarray(pred, dtype=float), np.asarray(gold, dtype=float)
        if len(p) < 2:
            return {"checked": False, "collapsed": False, "summary": "too few items"}
        sd_p, sd_g = float(p.std()), float(g.std())
        collapsed = sd_g > 0 and sd_p < spread * sd_g
        summary = (f"every prediction between {p.min():.2f} and {p.max():.2f} (standard "
                   f"deviation {sd_p:.2f} against the gold's {sd_g:.2f})")  # fmt: skip
        return {"checked": True, "collapsed": bool(collapsed), "summary": summary,
                "prediction_sd": round(sd_p, 4), "gold_sd": round(sd_g, 4),
                "spread": spread}  # fmt: skip
    if ev.target not in CONSTANT_TARGETS or not pred:
        return {"checked": False, "collapsed": False, "summary": "not judged for this target"}
    counts = Counter(str(x) for x in pred)
    top, n = counts.most_common(1)[0]
    several = len({str(x) for x in gold}) > 1
    collapsed = several and n / len(pred) >= share
    summary = f"{n} of {len(pred)} predictions are {top!r}"
    return {"checked": True, "collapsed": bool(collapsed), "summary": summary,
            "top": top, "top_share": round(n / len(pred), 4), "share": share}  # fmt: skip
