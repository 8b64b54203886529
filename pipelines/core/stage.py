"""The stage contract (docs/architecture.md): a stage returns the rows it keeps and the
rows it drops.

Every dropped row carries a ``reason`` (and optionally a ``detail``, and ``flags``: every
rule that fired on it, when a stage checks several), so that at every
stage ``rows in == rows kept + rows dropped`` and a data steward can audit each decision
in ``rejects.parquet``. :class:`StageStats` counts rows per stage, corpus and reason and
adds up across shards.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

REJECT_COLUMNS = [
    "stage",
    "unit",
    "reason",
    "detail",
    "row_id",
    "doc_id",
    "sent_id",
    "corpus",
    "text",
    "duplicate_of",
    "similarity",
    "flags",
]


@dataclass
class StageResult:
    """Kept rows and dropped rows (with ``reason`` and ``detail``) of one stage."""

    stage: str
    unit: str  # "document" or "sentence"
    kept: pd.DataFrame
    dropped: pd.DataFrame
    rows_in: int

    def __post_init__(self) -> None:
        if self.rows_in != len(self.kept) + len(self.dropped):
            raise AssertionError(
                f"stage {self.stage}: {self.rows_in} rows in != "
                f"{len(self.kept)} kept + {len(self.dropped)} dropped"
            )
        if len(self.dropped) and self.dropped["reason"].isna().any():
            raise AssertionError(f"stage {self.stage}: a dropped row has no reason")

    def stats(self) -> StageStats:
        return StageStats.of(self)

    def rejects(self) -> pd.DataFrame:
        """The dropped rows in the common ``rejects`` layout."""
        d = self.dropped
        n = len(d)

        def col(name: str) -> pd.Series:
            if name in d.columns:
                return d[name].reset_index(drop=True)
            return pd.Series([None] * n, dtype="object")

        id_col = "sent_id" if self.unit == "sentence" else "doc_id"
        out = pd.DataFrame(
            {
                "stage": pd.Series([self.stage] * n, dtype="object"),
                "unit": pd.Series([self.unit] * n, dtype="object"),
                "reason": col("reason"),
                "detail": col("detail"),
                "row_id": col(id_col),
                "doc_id": col("doc_id"),
                "sent_id": col("sent_id"),
                "corpus": col("corpus"),
                "text": col("text"),
                "duplicate_of": col("duplicate_of"),
                "similarity": col("similarity").astype("float64"),
                # every rule that fired (the noise stage can fire several), else the reason
                "flags": col("flags").fillna(col("reason")) if "flags" in d else col("reason"),
            }
        )
        return out[REJECT_COLUMNS]


def split_by_reason(
    stage: str,
    unit: str,
    df: pd.DataFrame,
    reasons: pd.Series,
    details: pd.Series | None = None,
    extra: dict[str, pd.Series] | None = None,
) -> StageResult:
    """Split ``df`` into kept rows (reason is null) and dropped rows (with their reason).

    ``extra`` columns (for example ``duplicate_of``) are attached to the dropped rows.
    """
    reasons = pd.Series(reasons, index=df.index, dtype="object")
    mask = reasons.notna()
    dropped = df[mask].copy()
    dropped["reason"] = reasons[mask]
    dropped["detail"] = (
        pd.Series(details, index=df.index, dtype="object")[mask] if details is not None else None
    )
    for name, values in (extra or {}).items():
        dropped[name] = pd.Series(values, index=df.index)[mask]
    kept = df[~mask].reset_index(drop=True)
    return StageResult(stage, unit, kept, dropped.reset_index(drop=True), len(df))


@dataclass
class StageStats:
    """Counts per (stage, unit, corpus): rows in, kept, and dropped per reason."""

    counts: dict[tuple[str, str, str], dict] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, result: StageResult) -> StageStats:
        stats = cls(order=[result.stage])
        corpora_in = pd.concat(
            [
                result.kept.get("corpus", pd.Series(dtype=object)),
                result.dropped.get("corpus", pd.Series(dtype=object)),
            ]
        )
        kept = result.kept["corpus"].value_counts() if len(result.kept) else {}
        for corpus, n_in in corpora_in.value_counts().items():
            entry = {"in": int(n_in), "kept": int(kept.get(corpus, 0)), "dropped": {}}
            if len(result.dropped):
                sub = result.dropped[result.dropped["corpus"] == corpus]
                entry["dropped"] = {str(k): int(v) for k, v in sub["reason"].value_counts().items()}
                if "flags" in sub:
                    fired = sub["flags"].dropna().str.split(",").explode()
                    entry["flags"] = {str(k): int(v) for k, v in fired.value_counts().items()}
            stats.counts[(result.stage, result.unit, str(corpus))] = entry
        return stats

    @classmethod
    def merge(cls, parts: Iterable[StageStats]) -> StageStats:
        out = cls()
        for part in parts:
            for stage in part.order:
                if stage not in out.order:
                    out.order.append(stage)
            for key, entry in part.counts.items():
                acc = out.counts.setdefault(key, {"in": 0, "kept": 0, "dropped": {}})
                acc["in"] += entry["in"]
                acc["kept"] += entry["kept"]
                for reason, n in entry["dropped"].items():
                    acc["dropped"][reason] = acc["dropped"].get(reason, 0) + n
                for flag, n in entry.get("flags", {}).items():
                    flags = acc.setdefault("flags", {})
                    flags[flag] = flags.get(flag, 0) + n
        return out

    def to_dict(self) -> dict:
        """Per stage: totals and a per-corpus breakdown; checks in == kept + dropped."""
        stages = []
        for stage in self.order:
            keys = [k for k in self.counts if k[0] == stage]
            if not keys:
                continue
            total = {"in": 0, "kept": 0, "dropped": {}, "flags": {}}
            per_corpus = {}
            for key in sorted(keys):
                entry = self.counts[key]
                per_corpus[key[2]] = {**entry, "dropped": dict(sorted(entry["dropped"].items()))}
                total["in"] += entry["in"]
                total["kept"] += entry["kept"]
                for reason, n in entry["dropped"].items():
                    total["dropped"][reason] = total["dropped"].get(reason, 0) + n
                for flag, n in entry.get("flags", {}).items():
                    total["flags"][flag] = total["flags"].get(flag, 0) + n
            n_dropped = sum(total["dropped"].values())
            if total["in"] != total["kept"] + n_dropped:
                raise AssertionError(f"stage {stage}: in != kept + dropped: {total}")
            stages.append(
                {
                    "stage": stage,
                    "unit": keys[0][1],
                    "in": total["in"],
                    "kept": total["kept"],
                    "dropped_total": n_dropped,
                    "dropped": dict(sorted(total["dropped"].items())),
                    # every rule that fired on the dropped rows (several per row possible)
                    **({"flags": dict(sorted(total["flags"].items()))} if total["flags"] else {}),
                    "corpora": per_corpus,
                }
            )
        return {"stages": stages}


def value_counts(values: pd.Series) -> dict[str, int]:
    """How often each value occurs, sorted by value, as plain JSON types."""
    return {str(k): int(n) for k, n in values.value_counts().sort_index().items()}
