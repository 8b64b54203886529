"""The released dataset, per split, in the field layout of the KLUE release.

``klue-sts`` (KLUE-STS v1.1 JSON, one object per pair)::

    {"guid": "<prefix>_<split>_00000", "source": "<corpus>-<method>",
     "sentence1": ..., "sentence2": ...,
     "labels": {"label": 3.7, "real-label": 3.714285714285714, "binary-label": 1},
     "annotations": {"agreement": "0:0:1:2:4:0", "annotators": ["ls-user-3", ...],
                     "annotations": [3, 4, ...]}}

``agreement`` counts the kept annotators' ratings per score 0:1:2:3:4:5 (rounded), as
the release does.

``klue-nli`` (KLUE-NLI v1.1 JSON, one object per premise-hypothesis pair)::

    {"guid": "<prefix>_<split>_00000", "source": "<corpus>", "premise": ...,
     "hypothesis": ..., "gold_label": "entailment", "author": "entailment",
     "label2": "entailment", "label3": "neutral", "label4": ..., "label5": ...}

``author`` is the writer's label and ``label2``... the validators' labels in the order
they were given (four in KLUE; as many as the recipe's overlap here).

``klue-ynat`` (KLUE-TC / YNAT v1.1 JSON, one object per headline)::

    {"guid": "<prefix>_<split>_00000", "title": ..., "label": "생활문화",
     "annotations": {"annotators": ["ls-user-3", ...],
                     "annotations": {"first-scope": [...], "second-scope": [...],
                                     "third-scope": [...]}},
     "url": null, "date": "2016.06.30" or null}

``label`` is the gold topic (the majority of the first-ranked topics); each scope
lists the annotators' first, second and third topics (``해당없음`` where one gave none),
as the release does. Shipped headlines have no URL, and the demo's no date.

Each split is written as JSON Lines (``<split>.jsonl``) and Parquet (``<split>.parquet``,
the same records; nested fields as structs),
both loadable with ``datasets.load_dataset("json"|"parquet", data_files=...)``. Rows are
ordered by item id, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

SPLITS = ("train", "dev", "test")


def _ratings(annotations: pd.DataFrame, screened: set[str]) -> dict[str, list[tuple[str, float]]]:
    """item_id -> [(annotator, rating)] of the annotators the agreement rule kept."""
    rows = annotations.copy()
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    if "field" in rows.columns:
        rows = rows[rows["field"].isin(["similarity", "label"]) | rows["field"].isna()]
    rows = rows[~rows["annotator_id"].astype(str).isin(screened)]
    values = pd.to_numeric(rows["value"], errors="coerce")
    rows = rows.assign(value=values).dropna(subset=["value"])
    out: dict[str, list[tuple[str, float]]] = {}
    for item, annotator, value in zip(
        rows["item_id"].astype(str), rows["annotator_id"].astype(str), rows["value"], strict=True
    ):
        out.setdefault(item, []).append((annotator, float(value)))
    return out


def _split_rows(gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame):  # noqa: ANN202
    """(split, n, row) over the gold items joined with their items and splits, per split
    in item id order (``n`` numbers the rows of a split, for the guid)."""
    frame = (
        gold.merge(items, on="item_id", how="inner", suffixes=("", "_item"))
        .merge(splits[["item_id", "split"]], on="item_id", how="inner")
        .sort_values("item_id", kind="stable")
    )
    for split in SPLITS:
        part = frame[frame["split"] == split]
        for n, row in enumerate(part.itertuples(index=False)):
            yield split, n, row


def klue_sts_records(
    gold: pd.DataFrame,
    items: pd.DataFrame,
    splits: pd.DataFrame,
    annotations: pd.DataFrame,
    screened: set[str],
    prefix: str,
) -> dict[str, list[dict]]:
    """The records of every split (see the module docstring)."""
    ratings = _ratings(annotations, screened)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in _split_rows(gold, items, splits):
        given = ratings.get(str(row.item_id), [])
        counts = np.bincount(
            [min(5, max(0, int(round(v)))) for _, v in given], minlength=6
        ).tolist()
        out[split].append(
            {
                "guid": f"{prefix}_{split}_{n:05d}",
                "source": f"{row.source}-{row.method}",
                "sentence1": row.sentence1,
                "sentence2": row.sentence2,
                "labels": {
                    "label": float(row.label),
                    "real-label": float(row.real_label),
                    "binary-label": int(row.binary_label),
                },
                "annotations": {
                    "agreement": ":".join(str(c) for c in counts),
                    "annotators": [a for a, _ in given],
                    "annotations": [int(v) if float(v).is_integer() else v for _, v in given],
                },
            }
        )
    return out


def _validator_labels(annotations: pd.DataFrame) -> dict[str, list[str]]:
    """item_id -> the validators' labels (not cancelled), in the order they were given."""
    rows = annotations
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    rows = rows[(rows["field"] == "label") & (rows.get("role", "validator") != "author")]
    rows = rows.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")
    return {str(k): g["value"].astype(str).tolist() for k, g in rows.groupby("item_id", sort=False)}


def klue_nli_records(
    gold: pd.DataFrame,
    items: pd.DataFrame,
    splits: pd.DataFrame,
    annotations: pd.DataFrame,
    prefix: str,
) -> dict[str, list[dict]]:
    """The records of every split in the KLUE-NLI layout (see the module docstring)."""
    labels = _validator_labels(annotations)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in _split_rows(gold, items, splits):
        record = {
            "guid": f"{prefix}_{split}_{n:05d}",
            "source": row.source,
            "premise": row.premise,
            "hypothesis": row.hypothesis,
            "gold_label": str(row.label),
            "author": row.author_label,
        }
        for k, value in enumerate(labels.get(str(row.item_id), []), start=2):
            record[f"label{k}"] = value
        out[split].append(record)
    return out


def _topic_scopes(annotations: pd.DataFrame) -> dict[str, tuple[list[str], dict[str, list]]]:
    """item_id -> (annotators, {scope: topics}) of the completed annotations, in order."""
    rows = annotations
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    rows = rows[rows["field"].isin(["topic1", "topic2", "topic3"])]
    out: dict[str, tuple[list[str], dict[str, list]]] = {}
    order = rows.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")
    for item, group in order.groupby("item_id", sort=False):
        people = list(
            dict.fromkeys(zip(group["annotation_id"], group["annotator_id"], strict=True))
        )
        scopes = {}
        for field, scope in (("topic1", "first-scope"), ("topic2", "second-scope"),
                             ("topic3", "third-scope")):  # fmt: skip
            given = dict(zip(group.loc[group["field"] == field, "annotation_id"],
                             group.loc[group["field"] == field, "value"], strict=True))  # fmt: skip
            scopes[scope] = [str(given.get(a, "해당없음")) for a, _ in people]
        out[str(item)] = ([str(who) for _, who in people], scopes)
    return out


def klue_ynat_records(
    gold: pd.DataFrame,
    items: pd.DataFrame,
    splits: pd.DataFrame,
    annotations: pd.DataFrame,
    prefix: str,
) -> dict[str, list[dict]]:
    """The records of every split in the KLUE-TC (YNAT) layout (see the module docstring)."""
    scopes = _topic_scopes(annotations)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in _split_rows(gold, items, splits):
        annotators, given = scopes.get(str(row.item_id), ([], {}))
        date = getattr(row, "date", None)
        out[split].append(
            {
                "guid": f"{prefix}_{split}_{n:05d}",
                "title": row.title,
                "label": str(row.label),
                "annotations": {"annotators": annotators, "annotations": given},
                "url": None,
                "date": None if date is None or pd.isna(date) else str(date),
            }
        )
    return out


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)
