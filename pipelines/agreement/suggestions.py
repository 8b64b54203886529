"""How people treat the model's pre-loaded suggestions (issue 55, item 4): automation
bias, the first thing a steward asks of pseudo-labelled data (KLUE 3.4.1 and 3.5.1
pre-annotate entities; KLUE-NER's correction round pre-loads the tagger's spans).

A round whose tasks carry a prediction has, on each pulled row, the suggestion for the
field (``suggested``, ``pipelines.annotation.annotate.pull``) beside the person's value.
For a value type made of elements (spans, relations, arcs; ``ValueType.elements``):

- a suggested element is **accepted** when the annotation holds it exactly, **edited**
  when it does not but an element of the annotation conflicts with it (an overlapping
  span, another head for the word: ``ValueType.conflicts``), else **deleted**; an edit
  is **relabelled** when the annotation holds the element with only its label (an
  element's last member) changed, else **reshaped** (another boundary, another head);
- an element of the annotation that is no suggestion and conflicts with none is
  **added**; an annotation equal to its suggestion is an **unchanged** item.

Contract of :func:`suggestion_table`: one row per annotator and one ``overall`` row,
with items, suggested elements, accepted / edited / deleted / added, and the shares
``accepted_share`` (accepted / suggested) and ``unchanged_share`` (unchanged / items);
None when no row has a suggestion or the type has no elements.

:func:`accepting_annotators` is the screening rule (``agreement.suggestion_accept_max``,
off by default: no paper states a value): an annotator whose ``accepted_share`` is at
least the threshold over ``suggestion_min_items`` items or more, while the other
annotators together accept less than the threshold (when everyone accepts nearly
everything the model may simply be right, and nobody is singled out), is excluded with
the reason ``accepts_suggestions``.
"""

from __future__ import annotations

import pandas as pd

from pipelines.annotation.values import ValueType

COLUMNS = ["annotator_id", "items", "suggested", "accepted", "edited", "relabelled",
           "reshaped", "deleted", "added", "unchanged_items", "accepted_share",
           "unchanged_share"]  # fmt: skip


def _counts(kind: ValueType, value: str, suggested: str) -> dict[str, int]:
    mine = set(kind.elements(value))
    offered = set(kind.elements(suggested))
    accepted = mine & offered
    rest_mine, rest_offered = mine - offered, offered - mine
    edited = {e for e in rest_offered if any(kind.conflicts(e, m) for m in rest_mine)}
    added = {m for m in rest_mine if not any(kind.conflicts(m, e) for e in offered)}
    relabelled = {e for e in edited if any(tuple(m[:-1]) == tuple(e[:-1]) for m in rest_mine)}
    return {"suggested": len(offered), "accepted": len(accepted), "edited": len(edited),
            "relabelled": len(relabelled), "reshaped": len(edited - relabelled),
            "deleted": len(rest_offered - edited), "added": len(added),
            "unchanged_items": int(mine == offered)}  # fmt: skip


def suggestion_table(ratings: pd.DataFrame, kind: ValueType) -> pd.DataFrame | None:
    """Per annotator and overall, what they did with the suggestions (module docstring)."""
    if "suggested" not in ratings.columns or "span_vote" not in kind.rules:
        return None
    rows = ratings[ratings["suggested"].notna()]
    if rows.empty:
        return None
    per: dict[str, dict[str, int]] = {}
    for who, value, suggested in rows[["annotator_id", "value", "suggested"]].itertuples(
        index=False
    ):
        counts = _counts(kind, str(value), str(suggested))
        total = per.setdefault(str(who), dict.fromkeys(COLUMNS[1:10], 0))
        total["items"] += 1
        for key, n in counts.items():
            total[key] += n
    table = pd.DataFrame([{"annotator_id": who, **c} for who, c in sorted(per.items())])
    overall = table.drop(columns="annotator_id").sum().to_dict()
    table = pd.concat([table, pd.DataFrame([{"annotator_id": "overall", **overall}])],
                      ignore_index=True)  # fmt: skip
    table["accepted_share"] = (table["accepted"] / table["suggested"].where(table["suggested"] > 0)
                               ).round(3)  # fmt: skip
    table["unchanged_share"] = (table["unchanged_items"] / table["items"]).round(3)
    return table[COLUMNS]


def accepting_annotators(table: pd.DataFrame, max_share: float, min_items: int) -> list[dict]:
    """The annotators the screening rule excludes, as drop records (module docstring)."""
    people = table[table["annotator_id"] != "overall"]
    out = []
    for row in people.itertuples(index=False):
        if row.items < min_items or pd.isna(row.accepted_share) or row.accepted_share < max_share:
            continue
        others = people[people["annotator_id"] != row.annotator_id]
        offered = int(others["suggested"].sum())
        share = others["accepted"].sum() / offered if offered else None
        if share is None or share >= max_share:
            continue
        out.append({
            "kind": "annotator", "id": row.annotator_id, "reason": "accepts_suggestions",
            "detail": f"accepted {row.accepted} of {row.suggested} suggested elements unchanged "
                      f"({row.accepted_share:.3f} >= {max_share}) over {row.items} items, "
                      f"where the others accepted {share:.3f}",
        })  # fmt: skip
    return out
