"""Control items inside a main round (issue 35, item 2): a share of items whose answers
are known, shuffled in among the round's items, and each annotator's accuracy on them,
which screens out of the round's agreement those below a threshold.

Contract:

- :func:`mix_controls` gives the round's items with controls shuffled in (seeded).
  ``share`` is the controls' share of the round (at most 50%: a round mostly of
  controls measures the annotators, not the data). Every row carries ``is_control``.
  A Label Studio config shows only the fields it names, so the flag and the control's
  answer (``control_value``) stay hidden from the annotator.
- :func:`control_accuracy` gives one row per annotator: ``answered`` (control items
  answered; skips left out), ``correct``, ``accuracy`` and ``screened``. An annotator is
  screened when their accuracy is below ``min_accuracy`` over at least ``min_answered``
  controls. An annotator who answered fewer is not screened, and ``why`` says so.
- :func:`split_controls` separates the controls' annotations from the round's, so that
  controls never enter the agreement or the gold.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from pipelines.agreement.qualification import QualificationError, answers_of, count_correct

MAX_SHARE = 0.5


def mix_controls(
    items: pd.DataFrame, controls: pd.DataFrame, share: float, seed: int
) -> pd.DataFrame:
    """``items`` with ``controls`` (``item_id``, the fields, ``value``: the known
    answer) shuffled in, so that they make ``share`` of the round (rounded up).
    ``control_value`` holds a control's known answer."""
    if not 0.0 < share <= MAX_SHARE:
        raise QualificationError(
            f"control share {share}: expected more than 0 and at most {MAX_SHARE:.0%} of the round"
        )
    clash = sorted(set(items["item_id"].astype(str)) & set(controls["item_id"].astype(str)))
    if clash:
        raise QualificationError(f"control items share ids with the round's items: {clash[:5]}")
    need = math.ceil(len(items) * share / (1.0 - share))
    if need > len(controls):
        raise QualificationError(
            f"a control share of {share:.0%} over {len(items)} items needs {need} control "
            f"items; {len(controls)} given"
        )
    rng = np.random.default_rng(seed)
    chosen = controls.iloc[rng.permutation(len(controls))[:need]]
    chosen = chosen.rename(columns={"value": "control_value"}).assign(is_control=True)
    frame = pd.concat([items.assign(is_control=False), chosen], ignore_index=True)
    return frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)


def split_controls(
    annotations: pd.DataFrame, control_ids: set[str] | list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the round's annotations, the controls' annotations)."""
    mask = annotations["item_id"].astype(str).isin({str(i) for i in control_ids})
    return annotations[~mask], annotations[mask]


def control_accuracy(
    annotations: pd.DataFrame,
    controls: pd.DataFrame,
    min_accuracy: float,
    min_answered: int = 3,
    tolerance: float = 0.0,
) -> pd.DataFrame:
    """Each annotator's accuracy on the control items (``controls``: ``item_id`` and
    ``value``) among ``annotations`` (the round's long table), and whether it screens
    them out (see the module docstring). On a rating an answer within ``tolerance`` of
    the known one is right."""
    if not 0.0 <= min_accuracy <= 1.0:
        raise QualificationError(f"min_accuracy: a share in [0, 1], got {min_accuracy}")
    truth = dict(zip(controls["item_id"].astype(str), controls["value"], strict=True))
    answers = answers_of(annotations)
    answers = answers[answers["item_id"].isin(truth)]
    rows = []
    for who in sorted(annotations["annotator_id"].astype(str).unique()):
        mine = answers[answers["annotator_id"] == who]
        correct = count_correct(mine, truth, tolerance)
        n = len(mine)
        accuracy = correct / n if n else None
        enough = n >= min_answered
        screened = bool(enough and accuracy < min_accuracy)
        why = (f"{correct} of {n} controls right" if enough
               else f"{n} controls answered, fewer than {min_answered}: not judged")  # fmt: skip
        rows.append({"annotator_id": who, "answered": n, "correct": correct,
                     "accuracy": None if accuracy is None else round(accuracy, 4),
                     "screened": screened, "why": why})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["annotator_id", "answered", "correct", "accuracy", "screened", "why"]
    )
