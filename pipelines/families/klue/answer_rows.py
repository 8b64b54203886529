"""The answer and report rows of a pulled annotation table that KLUE's corrected tasks
(NER's spans, DP's trees) read: one field's answers in the order they were made, and
each item's report flags."""

from __future__ import annotations

import pandas as pd


def answers(table: pd.DataFrame, field: str) -> pd.DataFrame:
    """The rows of ``field``, cancelled annotations left out, by item and time."""
    rows = table[table["field"] == field]
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    return rows.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")


def reports(table: pd.DataFrame) -> dict[str, list[str]]:
    """item -> the report values its annotators gave (none given: not listed)."""
    rows = table[table["field"] == "report"]
    out: dict[str, list[str]] = {}
    for item, value in zip(rows["item_id"].astype(str), rows["value"].astype(str), strict=True):
        if value and value != "None":
            out.setdefault(item, []).append(value)
    return out
