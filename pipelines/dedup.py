"""Stage ``dedup``: exact and near-duplicate sentences, within and across corpora.

Exact duplicates are found on a normalised form (NFKC, case-folded, letters and digits
only, so "재밌어요!!" and "재밌어요" are one sentence). Near duplicates are candidates
from MinHash LSH (datasketch) over character n-gram shingles of that form, confirmed by
the exact Jaccard similarity of the shingle sets against ``threshold``. Rows are taken in
order (recipe corpus order, then document and sentence order); the first of a group is
kept and every later one is dropped with ``duplicate_of`` (the kept row's ``sent_id``)
and ``similarity``. ``scope: corpus`` compares rows only within their own corpus.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd
from datasketch import MinHash, MinHashLSH
from tqdm.auto import tqdm

from pipelines.recipe import DedupSettings
from pipelines.stage import StageResult, split_by_reason


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
    if settings.exact:
        first: dict[tuple[str, str], int] = {}
        for i, key in enumerate(zip(scopes, norms, strict=True)):
            j = first.setdefault(key, i)
            if j != i:
                reasons[i], dup_of[i], sims[i] = "exact_duplicate", ids[j], 1.0
    if settings.near:
        lshs: dict[str, MinHashLSH] = {}
        proto = MinHash(num_perm=settings.num_perm, seed=1)
        perm, scheme = proto.permutations, proto.scheme
        rows = range(n)
        if progress:
            rows = tqdm(rows, desc="near-duplicates", unit="sent", mininterval=2)
        for i in rows:
            if reasons[i] is not None:
                continue
            sh = shingles(norms[i], settings.shingle_size)
            mh = MinHash(num_perm=settings.num_perm, seed=1, permutations=perm, scheme=scheme)
            mh.update_batch([s.encode("utf-8") for s in sh])
            lsh = lshs.get(scopes[i])
            if lsh is None:
                lsh = lshs[scopes[i]] = MinHashLSH(
                    threshold=settings.threshold, num_perm=settings.num_perm
                )
            best, best_sim = None, -1.0
            for j in lsh.query(mh):
                sim = jaccard(sh, shingles(norms[j], settings.shingle_size))
                if sim >= settings.threshold and (sim > best_sim or (sim == best_sim and j < best)):
                    best, best_sim = j, sim
            if best is not None:
                reasons[i], dup_of[i], sims[i] = "near_duplicate", ids[best], round(best_sim, 4)
            else:
                lsh.insert(i, mh, check_duplication=False)
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
