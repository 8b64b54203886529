"""Who counts in a round's agreement (issue 35): the qualified set a pilot chose, and
the control items shuffled into the round. Applied by ``agree`` before any rule, so
that the mean, majority and span rules all get it.

Contract (:func:`screen_people`): from a round's long table,

1. the control items' annotations are set apart (reason ``control_item``: they
   measure the annotators and never enter the gold);
2. with a pilot, every annotation by an account that did not pass it is excluded
   (reason ``not_qualified``; a row with ``role = author``, the NLI writer's label, is
   the writing round's and is kept);
3. with control items, each remaining annotator's accuracy on them
   (``controls.control_accuracy``); those under ``min_accuracy`` over at least
   ``min_answered`` controls are excluded (reason ``low_control_accuracy``).

Every excluded row is returned with its reason (rows in = kept + excluded), each
excluded annotator as a drop record (``kind = annotator``), and the figures the card
shows: applicants and passed, control items, accuracy per annotator, who was screened
and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipelines.agreement.controls import control_accuracy
from pipelines.agreement.qualification import exclude_unqualified
from pipelines.annotation.label_config import REPORT_FIELDS

REASONS = ("control_item", "not_qualified", "low_control_accuracy")


@dataclass
class PeopleScreen:
    """What decides who counts: the accounts a pilot qualified (None: no pilot; with
    its ``pilot`` summary for the figures) and the control items (``item_id``,
    ``value``; None: none) with their threshold."""

    qualified: set[str] | None = None
    pilot: dict | None = None
    controls: pd.DataFrame | None = None
    min_accuracy: float = 0.0
    min_answered: int = 3
    tolerance: float = 0.0
    share: float | None = None

    def key(self) -> dict:
        """What the agreement step's cache key needs of it."""
        controls = None
        if self.controls is not None:
            controls = sorted(zip(self.controls["item_id"].astype(str),
                                  self.controls["value"].astype(str), strict=True))  # fmt: skip
        return {"qualified": sorted(self.qualified) if self.qualified is not None else None,
                "controls": controls, "min_accuracy": self.min_accuracy,
                "min_answered": self.min_answered, "tolerance": self.tolerance}  # fmt: skip


def answer_rows(frame: pd.DataFrame, field: str | None) -> pd.DataFrame:
    """The rows of the answer field ``field`` (the only non-report field when None)."""
    if "field" not in frame.columns:
        return frame
    answers = frame[~frame["field"].isin(REPORT_FIELDS) & frame["field"].notna()]
    fields = sorted(answers["field"].unique())
    chosen = field or (fields[0] if len(fields) == 1 else None)
    return answers[answers["field"] == chosen]


def screen_people(
    frame: pd.DataFrame, screen: PeopleScreen, field: str | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict], dict]:
    """(kept rows, excluded rows with ``reason`` and ``detail``, annotator drop
    records, figures); see the module docstring."""
    excluded, dropped, figures = [], [], {}
    work = frame
    if screen.controls is not None:
        ids = set(screen.controls["item_id"].astype(str))
        mask = work["item_id"].astype(str).isin(ids)
        controls_rows = work[mask]
        excluded.append(controls_rows.assign(
            reason="control_item", detail="a control item: measures the annotator"))  # fmt: skip
        work = work[~mask]
    if screen.qualified is not None:
        author = (work["role"].astype(str).eq("author") if "role" in work.columns
                  else pd.Series(False, index=work.index))  # fmt: skip
        kept, rejected = exclude_unqualified(work[~author], screen.qualified)
        work = pd.concat([kept, work[author]])
        excluded.append(rejected)
        failed = sorted(set(rejected["annotator_id"].astype(str)))
        for who in failed:
            dropped.append({"kind": "annotator", "id": who, "reason": "not_qualified",
                            "detail": _pilot_why(screen.pilot, who)})  # fmt: skip
        figures["pilot"] = {
            **(screen.pilot or {}),
            "excluded_annotators": failed,
            "excluded_annotations": int(rejected["annotation_id"].nunique())
            if "annotation_id" in rejected
            else len(rejected),
        }
    if screen.controls is not None:
        table = control_accuracy(
            answer_rows(controls_rows, field),
            screen.controls,
            screen.min_accuracy,
            screen.min_answered,
            screen.tolerance,
        )
        if screen.qualified is not None:  # the unqualified are out already
            table = table[table["annotator_id"].isin(screen.qualified)]
        low = table[table["screened"]]
        for row in low.itertuples(index=False):
            dropped.append(
                {
                    "kind": "annotator",
                    "id": row.annotator_id,
                    "reason": "low_control_accuracy",
                    "detail": f"{row.why} ({row.accuracy:.3f} < {screen.min_accuracy})",
                }
            )
        mask = work["annotator_id"].astype(str).isin(set(low["annotator_id"]))
        excluded.append(work[mask].assign(
            reason="low_control_accuracy", detail="under the control items' accuracy"))  # fmt: skip
        work = work[~mask]
        figures["controls"] = {
            "items": len(screen.controls),
            "shown": int(controls_rows["item_id"].nunique()),
            "share": screen.share,
            "min_accuracy": screen.min_accuracy,
            "min_answered": screen.min_answered,
            "tolerance": screen.tolerance,
            "annotators": table.to_dict(orient="records"),
            "screened": sorted(low["annotator_id"]),
        }
    out = pd.concat(excluded, ignore_index=True) if excluded else frame.iloc[:0]
    if "reason" not in out.columns:
        out = out.assign(reason=pd.Series(dtype=str), detail=pd.Series(dtype=str))
    figures["excluded_rows"] = {r: int(n) for r, n in out["reason"].value_counts().items()}
    return work, out, dropped, figures


def _pilot_why(pilot: dict | None, who: str) -> str:
    for row in (pilot or {}).get("annotators", []):
        if str(row.get("annotator_id")) == who:
            return f"failed the pilot: {row.get('why')}"
    return "did not take the qualification (pilot) round"
