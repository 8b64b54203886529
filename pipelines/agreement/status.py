"""Per-annotator progress of a round so far (issue 35, item 6; ``benchforge annotate
status``): from the pulled long table (``pipelines.annotation.annotate.pull``), for each
annotator the annotations done and skipped, the median seconds per task, agreement so
far (the share of items on which they give the others' majority answer,
``qualification.majority_rows``), and their accuracy on control items when the round has
any (``controls.control_accuracy``), and on a round with pre-loaded suggestions the share
of suggested elements they accepted unchanged and of items they left as suggested
(``suggestions.suggestion_table``, issue 55; ``kind``: the field's value type).

Contract: one row per annotator who holds an annotation, sorted by id; the counts add
up to the table's annotations (done + skipped).
"""

from __future__ import annotations

import pandas as pd

from pipelines.agreement.controls import control_accuracy
from pipelines.agreement.qualification import PassRule, answers_of, majority_rows
from pipelines.agreement.suggestions import suggestion_table
from pipelines.annotation.values import ValueType

STATUS_COLUMNS = ["annotator_id", "done", "skipped", "median_seconds", "majority_items",
                  "majority_share", "control_answered", "control_accuracy",
                  "suggestions_accepted", "items_unchanged"]  # fmt: skip


def answer_field(table: pd.DataFrame, field: str | None = None) -> str | None:
    """The field agreement is measured on: ``field``, else the most common field that
    holds values (report flags are kept apart in ``report_flags``)."""
    if field is not None:
        if field not in set(table["field"].dropna()):
            raise ValueError(f"no field {field!r} in the project's annotations "
                             f"(fields: {sorted(table['field'].dropna().unique())})")  # fmt: skip
        return field
    fields = table.loc[table["value"].notna(), "field"].value_counts()
    return str(fields.index[0]) if len(fields) else None


def annotator_status(
    table: pd.DataFrame,
    field: str | None = None,
    controls: pd.DataFrame | None = None,
    min_accuracy: float = 0.0,
    kind: ValueType | None = None,
) -> pd.DataFrame:
    """The round's per-annotator status (see the module docstring)."""
    if table.empty:
        return pd.DataFrame(columns=STATUS_COLUMNS)
    per_annotation = table.drop_duplicates("annotation_id")
    cancelled = per_annotation["cancelled"].fillna(False).astype(bool)
    people = sorted(per_annotation["annotator_id"].astype(str).unique())
    chosen = answer_field(table, field)
    answers = table[table["field"] == chosen] if chosen else table.iloc[:0]
    control_ids: set[str] = set()
    accuracy = pd.DataFrame(columns=["annotator_id", "answered", "accuracy"])
    if controls is not None and len(controls):
        control_ids = set(controls["item_id"].astype(str))
        accuracy = control_accuracy(answers, controls, min_accuracy, min_answered=1)
    plain = answers[~answers["item_id"].astype(str).isin(control_ids)]
    majority = {
        r["annotator_id"]: r
        for r in majority_rows(answers_of(plain), people, PassRule("min_majority_share", 1.0))
    }
    acc = accuracy.set_index("annotator_id") if len(accuracy) else None
    offered = None
    if kind is not None and "suggested" in plain.columns:
        live = plain[~plain["cancelled"].fillna(False).astype(bool)]
        found = suggestion_table(live.dropna(subset=["value"]), kind)
        offered = found.set_index("annotator_id") if found is not None else None
    rows = []
    for who in people:
        mine = per_annotation[per_annotation["annotator_id"].astype(str) == who]
        skipped = cancelled[mine.index]
        seconds = mine.loc[~skipped, "lead_time"].dropna()
        m = majority.get(who, {})
        has_controls = acc is not None and who in acc.index
        rows.append(
            {
                "annotator_id": who,
                "done": int((~skipped).sum()),
                "skipped": int(skipped.sum()),
                "median_seconds": round(float(seconds.median()), 1) if len(seconds) else None,
                "majority_items": int(m.get("answered", 0)),
                "majority_share": round(float(m["score"]), 4) if m.get("answered") else None,
                "control_answered": int(acc.loc[who, "answered"]) if has_controls else 0,
                "control_accuracy": acc.loc[who, "accuracy"] if has_controls else None,
                "suggestions_accepted": _of(offered, who, "accepted_share"),
                "items_unchanged": _of(offered, who, "unchanged_share"),
            }
        )
    return pd.DataFrame(rows, columns=STATUS_COLUMNS)


def _of(table: pd.DataFrame | None, who: str, column: str) -> float | None:
    if table is None or who not in table.index or pd.isna(table.loc[who, column]):
        return None
    return float(table.loc[who, column])
