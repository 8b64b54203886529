"""The released dataset, per split: what every task kind's export shares.

Each split is written as JSON Lines (``<split>.jsonl``) and Parquet (``<split>.parquet``,
the same records; nested fields as structs), both loadable with
``datasets.load_dataset("json"|"parquet", data_files=...)``. Rows are ordered by item id,
so the same inputs give byte-identical files. A task kind's ``records``
(``pipelines.rebuild.kinds.SharedSteps``, in its family's package under
``pipelines/families``) builds the records of its release layout with :func:`split_rows`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

SPLITS = ("train", "dev", "test")


def split_rows(gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame):  # noqa: ANN202
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


def jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in records)


def release_tables(tables: dict[str, pd.DataFrame], files: dict[str, int]
                   ) -> dict[str, pd.DataFrame]:  # fmt: skip
    """The Parquet tables of the release's files (``files``: the release's file names),
    by file stem in name order; the export's other tables (versions, targets) left out."""
    stems = {Path(name).stem for name in files}
    return {Path(n).stem: t for n, t in sorted(tables.items())
            if n.endswith(".parquet") and Path(n).stem in stems}  # fmt: skip
