"""Detecting a detector whose training collapsed.

A classifier that predicts one label for (almost) every dev example has collapsed: its
macro-F1 can still look like a number (issue 22 measured 0.078 for bias and 0.462 for
gender_bias on the GPU, each one label predicted throughout), but as a filter it either
drops everything or nothing. :func:`collapse_report` says so in ``metrics.json`` and the
model card, ``classifiers train`` exits with status 3, and the filter refuses such a
checkpoint (:func:`pipelines.models.classifier.check_detector`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def prediction_shares(pred: np.ndarray, config: Any) -> dict[str, float]:
    """Share of predictions per label name (every label, 0.0 when never predicted)."""
    counts = np.bincount(np.asarray(pred, dtype=int), minlength=config.num_labels)
    total = max(1, int(counts.sum()))
    return {str(config.id2label[i]): round(int(c) / total, 4) for i, c in enumerate(counts)}


def collapse_report(
    pred: np.ndarray, gold: Sequence[int], labels: Sequence[str], max_share: float
) -> dict:
    """Whether predictions ``pred`` on labeled dev data collapsed: one label takes
    ``max_share`` or more of them. Also lists the labels never predicted although the
    gold has them (a partial collapse: reported, not fatal)."""
    pred = np.asarray(pred, dtype=int)
    counts = np.bincount(pred, minlength=len(labels))
    present = np.bincount(np.asarray(gold, dtype=int), minlength=len(labels)) > 0
    top = int(counts.argmax())
    share = float(counts[top] / max(1, counts.sum()))
    collapsed = share >= max_share
    never = [labels[i] for i in range(len(labels)) if counts[i] == 0 and present[i]]
    summary = f"{share:.1%} of dev predictions are {labels[top]!r}"
    if never:
        summary += f"; never predicted: {', '.join(map(repr, never))}"
    return {
        "collapsed": bool(collapsed),
        "top_label": labels[top],
        "top_share": round(share, 4),
        "max_share": max_share,
        "never_predicted": never,
        "summary": summary,
    }
