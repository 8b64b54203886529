"""Human review of reported items (issue 35, item 4): with ``reports: review`` an item
that annotators reported goes to a reviewer (``keep`` / ``drop`` with a reason / ``fix``)
instead of being dropped automatically. KLUE-STS 3.2.1: "we inspect the reported
sentences and remove 418"; JGLUE 3.2/3.3 removed its last 12 JSTS and 44 JNLI pairs by a
manual check. ``report_min`` (``reports: auto``) stays the automatic alternative.

Contract:

- :func:`reported_items` gives the items whose report flags reach ``report_min`` (the
  flags of the recipe's ``report_flags``), with the flags and how many raised each: what
  the review round shows;
- :func:`review_table` turns the review round's pulled long table into one decision per
  item (the last one not skipped): ``decision``, ``reason``, ``fix`` (the fields the
  reviewer changed, as JSON ``{field: text}``; None when nothing changed) and
  ``reviewer``;
- ``agree`` (``pipelines.agreement.rules``) then keeps a reported item the reviewer kept
  or fixed, drops one the reviewer dropped (reason: the first flag, the reviewer and
  their reason in the detail), and drops a reported item nobody reviewed as ``auto``
  would (its detail says so). The decision and the reviewer are kept with each item.
"""

from __future__ import annotations

import json

import pandas as pd

from pipelines.agreement.annotations import split_annotations
from pipelines.agreement.settings import AgreementError, AgreementSettingsBase

DECISIONS = ("keep", "drop", "fix")
MODES = ("auto", "review")


def report_hits(per_flag: dict[str, int], settings: AgreementSettingsBase) -> dict[str, int]:
    """An item's report flags that count: among ``report_flags``, raised by at least
    ``report_min`` annotators (flag -> annotators)."""
    wanted = set(settings.report_flags)
    return {f: n for f, n in per_flag.items() if f in wanted and n >= settings.report_min}


def reported_items(frame: pd.DataFrame, settings: AgreementSettingsBase) -> pd.DataFrame:
    """The reported items (``item_id``, ``flags``: ``{flag: annotators}``, ``reports``:
    a line for the reviewer) under ``report_min`` and ``report_flags``."""
    _, flags, _ = split_annotations(frame, settings)
    rows = []
    for item, per_flag in sorted(flags.items()):
        hits = report_hits(per_flag, settings)
        if hits:
            text = "; ".join(f"{f}: {n} annotator(s)" for f, n in sorted(hits.items()))
            rows.append({"item_id": str(item), "flags": json.dumps(hits), "reports": text})
    return pd.DataFrame(rows, columns=["item_id", "flags", "reports"])


def review_table(annotations: pd.DataFrame, items: pd.DataFrame, fields: list[str]) -> pd.DataFrame:
    """One decision per reviewed item from the review round's long table (``field`` rows
    ``decision``, ``reason`` and one per editable ``fields``), against the reported
    ``items`` as shown (their original text): a field whose text the reviewer changed
    is in ``fix``."""
    columns = ["item_id", "decision", "reason", "fix", "reviewer", "annotation_id"]
    if annotations.empty:
        return pd.DataFrame(columns=columns)
    work = annotations
    if "cancelled" in work.columns:
        work = work[~work["cancelled"].fillna(False).astype(bool)]
    shown = items.set_index("item_id")
    rows = []
    for (item, ann), group in work.groupby(["item_id", "annotation_id"], sort=True):
        values = dict(zip(group["field"], group["value"], strict=False))
        decision = str(values.get("decision") or "")
        if decision not in DECISIONS:
            raise AgreementError(
                f"review of item {item}: decision {decision!r}; expected one of {DECISIONS}"
            )
        fix = {}
        for f in fields:
            text = values.get(f)
            edited = (decision == "fix" and isinstance(text, str) and text.strip()
                      and item in shown.index)  # fmt: skip
            if edited and text.strip() != str(shown.at[item, f]).strip():
                fix[f] = text.strip()
        rows.append({"item_id": str(item), "decision": decision,
                     "reason": str(values.get("reason") or ""),
                     "fix": json.dumps(fix, ensure_ascii=False) if fix else None,
                     "reviewer": str(group["annotator_id"].iloc[0]),
                     "annotation_id": ann})  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    # the last decision per item (a second reviewer's, or a reviewer's update)
    return table.sort_values(["item_id", "annotation_id"]).drop_duplicates("item_id", keep="last")


def review_decision(item: str, hits: dict[str, int], reviews: pd.DataFrame | None) -> dict:
    """What ``agree`` does with reported item ``item`` (``hits``: flag -> annotators):
    ``{"drop": bool, "detail": str, "decision": ..., "reviewer": ..., "fix": ...}``."""
    first = sorted(hits)[0]
    reported = "; ".join(f"{f} by {n} annotator(s)" for f, n in sorted(hits.items()))
    row = None
    if reviews is not None and len(reviews):
        match = reviews[reviews["item_id"].astype(str) == str(item)]
        row = match.iloc[-1] if len(match) else None
    if row is None:
        detail = f"{reported}; not reviewed (dropped, as reports: auto would)"
        return {"drop": True, "flag": first, "decision": None, "reviewer": None, "fix": None,
                "reason": None, "detail": detail}  # fmt: skip
    why = f": {row['reason']}" if row["reason"] else ""
    return {
        "drop": row["decision"] == "drop",
        "flag": first,
        "decision": row["decision"],
        "reviewer": row["reviewer"],
        "fix": row["fix"] if isinstance(row["fix"], str) and row["fix"] else None,
        "reason": row["reason"],
        "detail": f"{reported}; review by {row['reviewer']}: {row['decision']}{why}",
    }


def apply_fixes(items: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """``items`` with the reviewers' fixes (``gold.review_fix``: ``{field: text}``)
    applied: the released text is the fixed one. A fix of a field the items lack is an
    error naming the item."""
    if "review_fix" not in gold.columns:
        return items
    out = items.copy()
    index = {str(i): n for n, i in enumerate(out["item_id"].astype(str))}
    for item, fix in zip(gold["item_id"].astype(str), gold["review_fix"], strict=True):
        if not isinstance(fix, str) or not fix:
            continue
        for field, text in json.loads(fix).items():
            if field not in out.columns or item not in index:
                raise AgreementError(f"review fix of item {item}: no field {field!r} to fix")
            out.iloc[index[item], out.columns.get_loc(field)] = text
    return out
