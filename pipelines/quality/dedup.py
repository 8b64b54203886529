"""Stage ``dedup``: exact and near-duplicate sentences, within and across corpora.

Exact duplicates are found on a normalised form (NFKC, case-folded, letters and digits
only, so "재밌어요!!" and "재밌어요" are one sentence). Near duplicates are candidates
from MinHash LSH over character n-gram shingles of that form (signatures and bands as
datasketch makes them, computed in batches by ``pipelines.quality.minhash``), confirmed by the
exact Jaccard similarity of the shingle sets against ``threshold``. Rows are taken in
order (recipe corpus order, then document and sentence order); the first of a group is
kept and every later one is dropped with ``duplicate_of`` (the kept row's ``sent_id``)
and ``similarity``. ``scope: corpus`` compares rows only within their own corpus.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pipelines.core.stage import StageResult, split_by_reason
from pipelines.quality.minhash import BatchMinHash, band_keys, lsh_bands, shingle_hashes
from pipelines.quality.settings import DedupSettings


def normalize(text: str) -> str:
    """The form duplicates are compared on: NFKC, case-folded, letters and digits only."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def shingles(norm: str, size: int) -> set[str]:
    """Character ``size``-grams of a normalised text (the whole text when shorter)."""
    if len(norm) <= size:
        return {norm}
    return {norm[i : i + size] for i in range(len(norm) - size + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def _near_pass(
    norms: list[str],
    scopes: list[str],
    settings: DedupSettings,
    reasons: list[str | None],
    dup_of: list[str | None],
    sims: np.ndarray,
    ids: list[str],
    progress: bool,
) -> None:
    """Mark near duplicates in place: rows in order, each against the kept rows that
    share an LSH bucket with it, confirmed by exact Jaccard >= threshold."""
    todo = [i for i, r in enumerate(reasons) if r is None]
    bands = lsh_bands(settings.threshold, settings.num_perm)
    minhash = BatchMinHash(settings.num_perm)
    buckets: dict[str, list[dict[bytes, list[int]]]] = {}
    size = settings.shingle_size
    bar = tqdm(
        total=len(todo), desc="near-duplicates", unit="sent", mininterval=2, disable=not progress
    )
    for lo in range(0, len(todo), 100_000):
        rows = todo[lo : lo + 100_000]
        sig = minhash.signatures(*shingle_hashes([norms[i] for i in rows], size))
        keys = band_keys(sig, bands)
        for k, i in enumerate(rows):
            tables = buckets.setdefault(scopes[i], [{} for _ in bands])
            cands: set[int] = set()
            for table, band in zip(tables, keys, strict=True):
                hit = table.get(band[k])
                if hit:
                    cands.update(hit)
            best, best_sim = -1, -1.0
            if cands:
                sh = shingles(norms[i], size)
                for j in sorted(cands):
                    sim = jaccard(sh, shingles(norms[j], size))
                    if sim >= settings.threshold and sim > best_sim:
                        best, best_sim = j, sim
            if best >= 0:
                reasons[i], dup_of[i], sims[i] = "near_duplicate", ids[best], round(best_sim, 4)
            else:
                for table, band in zip(tables, keys, strict=True):
                    table.setdefault(band[k], []).append(i)
        bar.update(len(rows))
    bar.close()


def deduplicate(
    sentences: pd.DataFrame, settings: DedupSettings, progress: bool = False
) -> StageResult:
    """Drop exact (``exact_duplicate``) and near (``near_duplicate``) duplicates."""
    n = len(sentences)
    reasons: list[str | None] = [None] * n
    dup_of: list[str | None] = [None] * n
    sims = np.full(n, np.nan)
    ids = sentences["sent_id"].tolist()
    norms = [normalize(t) for t in sentences["text"]]
    scopes = sentences["corpus"].tolist() if settings.scope == "corpus" else [""] * n
    first: dict[tuple[str, str], int] = {}
    if settings.exact:
        for i, key in enumerate(zip(scopes, norms, strict=True)):
            j = first.setdefault(key, i)
            if j != i:
                reasons[i], dup_of[i], sims[i] = "exact_duplicate", ids[j], 1.0
    if settings.near:
        _near_pass(norms, scopes, settings, reasons, dup_of, sims, ids, progress)
    # an exact copy of a row that turned out to be a near duplicate points, like that
    # row, to the kept row (so duplicate_of always names a kept sentence)
    for i in range(n):
        if reasons[i] == "exact_duplicate":
            j = first[(scopes[i], norms[i])]
            if reasons[j] == "near_duplicate":
                reasons[i], dup_of[i], sims[i] = "near_duplicate", dup_of[j], sims[j]
    reason_s = pd.Series(reasons, index=sentences.index, dtype="object")
    detail = pd.Series(
        [f"duplicate of {d}" if d else None for d in dup_of], index=sentences.index, dtype="object"
    )
    return split_by_reason(
        "dedup",
        "sentence",
        sentences,
        reason_s,
        detail,
        extra={
            "duplicate_of": pd.Series(dup_of, index=sentences.index, dtype="object"),
            "similarity": pd.Series(sims, index=sentences.index),
        },
    )


def near_duplicate_links(
    texts: list[str], threshold: float = 0.8, shingle_size: int = 3, num_perm: int = 128
) -> list[tuple[int, int]]:
    """Links (i, j), i < j, between ``texts`` whose normalised forms are equal or whose
    character-shingle Jaccard is ``threshold`` or more (MinHash LSH candidates, confirmed
    exactly). Pairs already connected through earlier links are not checked again, so the
    result is a spanning set: two texts are near duplicates (directly or through a chain)
    exactly when the links connect them. Used to keep duplicates on one side of a split."""
    norms = [normalize(t) for t in texts]
    parent = list(range(len(texts)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    links: list[tuple[int, int]] = []

    def link(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
            links.append((min(a, b), max(a, b)))

    first: dict[str, int] = {}
    for i, norm in enumerate(norms):
        j = first.setdefault(norm, i)
        if j != i:
            link(j, i)
    if not texts:
        return []
    sig = BatchMinHash(num_perm).signatures(*shingle_hashes(norms, shingle_size))
    cache: dict[int, set[str]] = {}

    def sh(i: int) -> set[str]:
        if i not in cache:
            cache[i] = shingles(norms[i], shingle_size)
        return cache[i]

    for keys in band_keys(sig, lsh_bands(threshold, num_perm)):
        buckets: dict[bytes, list[int]] = {}
        for i, key in enumerate(keys):
            buckets.setdefault(key, []).append(i)
        for members in buckets.values():
            for pos, a in enumerate(members):
                for b in members[pos + 1 :]:
                    if find(a) != find(b) and jaccard(sh(a), sh(b)) >= threshold:
                        link(a, b)
    return sorted(links)
