"""The ingestion stages composed per shard, as pure functions (no Prefect).

``process_documents`` runs ``clean`` and ``segment`` over a shard of documents;
``filter_sentences`` runs ``noise`` and ``pii`` over its sentences. Each returns the
kept rows, the rejects of every stage it ran, and the stage statistics. The flow in
``flows/ingest.py`` runs them on shards in parallel and ``dedup`` over everything.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipelines.noise import clean_documents, filter_noise
from pipelines.pii import filter_pii
from pipelines.recipe import NoiseSettings, PiiSettings
from pipelines.segment import segment_documents
from pipelines.stage import REJECT_COLUMNS, StageResult, StageStats

# NoiseSettings fields that change how documents are cleaned (the rest filter sentences)
CLEANING_FIELDS = (
    "remove_hashtags",
    "remove_html",
    "remove_invisible",
    "remove_empty_parentheses",
    "collapse_blanks",
    "news_boilerplate",
    "news_domains",
)


@dataclass
class ShardOutput:
    """What a shard step hands on: kept rows, rejects, stats (and documents for segment)."""

    kept: pd.DataFrame
    rejects: pd.DataFrame
    stats: StageStats
    documents: pd.DataFrame | None = None


def collect(results: list[StageResult]) -> tuple[pd.DataFrame, StageStats]:
    """Rejects and statistics of several stage results."""
    rejects = [r.rejects() for r in results if len(r.dropped)]
    table = pd.concat(rejects, ignore_index=True) if rejects else empty_rejects()
    return table, StageStats.merge(r.stats() for r in results)


def empty_rejects() -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype="object") for c in REJECT_COLUMNS})
    df["similarity"] = df["similarity"].astype("float64")
    return df


def process_documents(docs: pd.DataFrame, noise: NoiseSettings) -> ShardOutput:
    """Stages ``clean`` then ``segment`` over a shard of documents."""
    cleaned = clean_documents(docs, noise)
    sentences, segmented = segment_documents(cleaned.kept)
    rejects, stats = collect([cleaned, segmented])
    return ShardOutput(sentences, rejects, stats, documents=segmented.kept)


def filter_sentences(
    sentences: pd.DataFrame, noise: NoiseSettings, pii: PiiSettings
) -> ShardOutput:
    """Stages ``noise`` then ``pii`` over a shard of sentences."""
    noisy = filter_noise(sentences, noise)
    private = filter_pii(noisy.kept, pii)
    rejects, stats = collect([noisy, private])
    return ShardOutput(private.kept, rejects, stats)
