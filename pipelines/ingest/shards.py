"""The ingestion stages composed per shard, as pure functions (no Prefect).

``process_documents`` runs ``clean`` and ``segment`` over a shard of documents;
``filter_sentences`` runs ``noise`` and ``pii`` over its sentences. Each returns the
kept rows, the rejects of every stage it ran, and the stage statistics. The flow in
``flows/ingest.py`` runs them on shards in parallel and ``dedup`` over everything.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipelines.core.stage import REJECT_COLUMNS, StageResult, StageStats
from pipelines.ingest.segment import segment_documents
from pipelines.lang import DEFAULT_LANGUAGE
from pipelines.quality.noise import clean_documents, filter_noise
from pipelines.quality.pii import filter_pii
from pipelines.quality.settings import NoiseSettings, PiiSettings

# NoiseSettings fields that change how documents are cleaned (the rest filter sentences)
CLEANING_FIELDS = (
    "remove_hashtags",
    "remove_html",
    "remove_invisible",
    "remove_empty_parentheses",
    "collapse_blanks",
    "news_boilerplate",
    "news_domains",
    "max_document_chars",
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


def process_documents(
    docs: pd.DataFrame, noise: NoiseSettings, lang: str = DEFAULT_LANGUAGE
) -> ShardOutput:
    """Stages ``clean`` then ``segment`` (the language's sentence splitter) over a shard
    of documents."""
    cleaned = clean_documents(docs, noise)
    sentences, segmented = segment_documents(cleaned.kept, lang=lang)
    rejects, stats = collect([cleaned, segmented])
    return ShardOutput(sentences, rejects, stats, documents=segmented.kept)


def filter_sentences(
    sentences: pd.DataFrame, noise: NoiseSettings, pii: PiiSettings, lang: str = DEFAULT_LANGUAGE
) -> ShardOutput:
    """Stages ``noise`` (the language's script check) then ``pii`` over a shard of
    sentences."""
    noisy = filter_noise(sentences, noise, tuple(pii.kinds) if pii.enabled else (), lang)
    private = filter_pii(noisy.kept, pii)
    rejects, stats = collect([noisy, private])
    return ShardOutput(private.kept, rejects, stats)


# each stage takes in exactly what the stage before it kept
_CHAIN = [
    ("read", "clean"),
    ("clean", "segment"),
    ("noise", "pii"),
    ("pii", "dedup"),
    ("dedup", "classify"),
]


def check_continuity(stats: dict, sentences_produced: int) -> None:
    """Raise if rows went missing between stages (per corpus), not only within them."""
    empty = {"in": 0, "kept": 0, "corpora": {}}
    found = {s["stage"]: s for s in stats["stages"]}
    corpora = set().union(*(s["corpora"] for s in stats["stages"]))
    for before, after in _CHAIN:
        if after == "classify" and after not in found:  # the classifier stage is optional
            continue
        for corpus in corpora:
            kept = found.get(before, empty)["corpora"].get(corpus, {}).get("kept", 0)
            took = found.get(after, empty)["corpora"].get(corpus, {}).get("in", 0)
            if kept != took:
                raise AssertionError(
                    f"{corpus}: {before} kept {kept} rows but {after} took in {took}"
                )
    noise_in = found.get("noise", empty)["in"]
    if noise_in != sentences_produced:
        raise AssertionError(
            f"segment produced {sentences_produced} sentences, noise took in {noise_in}"
        )
