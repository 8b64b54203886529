"""Greedy sentence matching (GSM), KLUE 3.2.1 Algorithm 1, on MeCab morphemes.

KLUE-STS drew its less similar pairs this way: while at least two sentences remain, pick
a random sentence S, find the remaining sentence T that maximises ROUGE(S, T), remove
both and emit the pair. The scores of the pairs fall as the pool empties, which is what
spreads the pairs over the low end of the 0-5 similarity range.

Contract of :func:`greedy_sentence_matching`:

- ``tokens[i]`` is the morpheme sequence of sentence ``i``; the result lists the pairs
  in the order they were drawn with the ROUGE F1 of each (``rouge1``, ``rouge2`` or
  ``rougeL``, the default), and the index of the sentence left over when the count is
  odd.
- "Random" is a seeded permutation of the sentences: the next S is the first sentence of
  the permutation that is still in the pool, which is a uniform draw from the pool.
- Ties between candidates T are broken by the lowest input index, so the output is a
  function of the tokens, the metric and the seed alone.
- The scores are exactly those of the ``rouge-score`` package on the same tokens (the
  tests check pair for pair against a naive GSM scored with ``rouge-score``).

Speed. Naive GSM makes N^2/4 ROUGE calls (N/2 draws, each against a pool of N/2 on
average). Two things make that cheap:

- ROUGE-L F1 is 2*LCS/(|S|+|T|), and rapidfuzz computes LCS lengths with a bit-parallel
  algorithm in C++ (``process.cdist``, both cores). Morphemes are coded as characters,
  the most frequent morphemes first, so that most fall in rapidfuzz's fast 8-bit table.
- Draws are speculative in batches: the scores of the next B draws against the whole
  pool are computed in one call, then the draws are replayed one by one, masking the
  sentences that earlier draws of the batch removed. A pair's score does not depend on
  the pool, so this gives exactly the sequential result.

ROUGE-N F1 is 2*overlap/(|grams S|+|grams T|) with the clipped n-gram overlap, which is
the LCS of the two sentences' n-grams in sorted order: the same rapidfuzz call serves.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import LCSseq
from tqdm.auto import tqdm

METRICS = ("rouge1", "rouge2", "rougeL")
_SURROGATES = range(0xD800, 0xE000)
_MAX_CODE = 0x10FFFF - len(_SURROGATES)


@dataclass(frozen=True)
class GsmResult:
    """Pairs in draw order: ``first[k]`` (the drawn S) and ``second[k]`` (its best T)."""

    first: np.ndarray
    second: np.ndarray
    score: np.ndarray
    leftover: int | None


def rouge_f1(overlap: int, size_a: int, size_b: int) -> float:
    """ROUGE F1 from the overlap and the two sizes: 2*overlap/(size_a+size_b), 0 if empty."""
    total = size_a + size_b
    return 2.0 * overlap / total if total and overlap else 0.0


def _metric_n(metric: str) -> int:
    if metric not in METRICS:
        raise ValueError(f"unknown ROUGE metric {metric!r}; expected one of {', '.join(METRICS)}")
    return 0 if metric == "rougeL" else int(metric[-1])


def _units(sent: Sequence[str], n: int) -> list:
    """What ROUGE matches: the tokens (ROUGE-L) or the n-grams (ROUGE-N)."""
    return list(sent) if n == 0 else [tuple(sent[k : k + n]) for k in range(len(sent) - n + 1)]


def _frequency_codes(units: list[list], sort: bool) -> list[str]:
    """Each sentence as a string with one character per unit, frequent units lowest."""
    counts = Counter(u for sent in units for u in sent)
    if len(counts) > _MAX_CODE:
        raise ValueError(
            f"{len(counts)} distinct n-grams: more than GSM can code; use a smaller pool"
        )
    code: dict = {}
    for rank, (unit, _) in enumerate(counts.most_common()):
        point = rank if rank < _SURROGATES.start else rank + len(_SURROGATES)
        code[unit] = chr(point)
    return [
        "".join(sorted(code[u] for u in sent) if sort else (code[u] for u in sent))
        for sent in units
    ]


class _Scorer:
    """ROUGE overlaps of batches of sentences against the pool, with rapidfuzz.

    ROUGE-L's overlap is the LCS of the token sequences. ROUGE-N's is the clipped count
    of common n-grams, sum(min(count_S, count_T)), which is the LCS of the two sentences'
    n-grams sorted: any common subsequence of sorted sequences is a common sub-multiset,
    and the sorted common sub-multiset is a common subsequence.
    """

    def __init__(self, tokens: Sequence[Sequence[str]], n: int, workers: int) -> None:
        units = [_units(sent, n) for sent in tokens]
        self.strings = np.array(_frequency_codes(units, sort=n > 0), dtype=object)
        self.sizes = np.array([len(u) for u in units], dtype=np.int64)
        self.workers = workers

    def overlaps(self, batch: np.ndarray, pool: np.ndarray) -> np.ndarray:
        return process.cdist(
            self.strings[batch].tolist(),
            self.strings[pool].tolist(),
            scorer=LCSseq.similarity,
            dtype=np.int32,
            workers=self.workers,
        )


def greedy_sentence_matching(
    tokens: Sequence[Sequence[str]],
    metric: str = "rougeL",
    seed: int = 0,
    batch_size: int = 256,
    workers: int = -1,
    progress: bool = False,
) -> GsmResult:
    """Run KLUE's Algorithm 1 over ``tokens`` (see the module docstring for the contract).

    ``batch_size`` is how many draws are scored together and ``workers`` how many threads
    rapidfuzz uses (-1: all cores); neither changes the result. ``progress`` shows a bar
    of pairs drawn.
    """
    n = _metric_n(metric)
    count = len(tokens)
    scorer = _Scorer(tokens, n, workers)
    sizes = scorer.sizes
    order = np.random.default_rng(seed).permutation(count)
    alive = np.ones(count, dtype=bool)
    first: list[int] = []
    second: list[int] = []
    scores: list[float] = []
    cursor = 0
    remaining = count
    bar = tqdm(total=count // 2, desc=f"GSM {metric}", unit="pair", disable=not progress)
    while remaining >= 2:
        batch: list[int] = []
        while len(batch) < batch_size and cursor < count:
            if alive[order[cursor]]:
                batch.append(int(order[cursor]))
            cursor += 1
        pool = np.flatnonzero(alive)
        batch_arr = np.array(batch, dtype=np.int64)
        overlap = scorer.overlaps(batch_arr, pool)
        pool_sizes = sizes[pool]
        position = np.full(count, -1, dtype=np.int64)
        position[pool] = np.arange(len(pool))
        removed: list[int] = []
        for row, s in enumerate(batch):
            if not alive[s] or remaining < 2:
                continue
            total = pool_sizes + sizes[s]
            ov = overlap[row]
            f1 = np.divide(2.0 * ov, total, out=np.zeros(len(pool)), where=(total > 0) & (ov > 0))
            f1[position[s]] = -1.0
            if removed:
                f1[position[removed]] = -1.0
            best = int(np.argmax(f1))  # first maximum: the lowest input index
            t = int(pool[best])
            alive[s] = alive[t] = False
            removed += (s, t)
            remaining -= 2
            first.append(s)
            second.append(t)
            scores.append(float(f1[best]))
        bar.update(len(first) - bar.n)
    bar.close()
    leftover = int(np.flatnonzero(alive)[0]) if remaining == 1 else None
    return GsmResult(
        first=np.array(first, dtype=np.int64),
        second=np.array(second, dtype=np.int64),
        score=np.array(scores, dtype=np.float64),
        leftover=leftover,
    )
