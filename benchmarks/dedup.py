"""Benchmark: near-duplicate removal, batch MinHash (pipelines.quality.minhash) against datasketch.

Both run on the same real NSMC reviews in this process: the reference builds one
datasketch MinHash per sentence (its default SHA-1 shingle hash) and queries a datasketch
MinHashLSH, as a datasketch user would; benchforge's stage computes signatures in numpy
batches. Prints sentences per second for both, the ratio, and the rows each drops (the
two shingle hashes differ, so LSH may miss a different handful; the tests check
row-for-row equality with datasketch fed benchforge's shingle hash).

    .venv/bin/python benchmarks/dedup.py [--corpus PATH] [--docs 100000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "quality"))

from nsmc_corpus import add_corpus_argument  # noqa: E402
from test_minhash import reference_near_dedup  # noqa: E402

from pipelines.quality.dedup import deduplicate  # noqa: E402
from pipelines.quality.settings import DedupSettings  # noqa: E402


def timed_near_dedup(texts: list[str]) -> dict:
    """datasketch (the reference) and benchforge's stage on the same texts, each timed:
    ``{"datasketch": (seconds, {dropped: kept}), "benchforge": (seconds, StageResult)}``
    (``benchmarks/peer_ingest.py`` runs the same comparison)."""
    settings = DedupSettings(exact=False)
    df = pd.DataFrame(
        {"sent_id": [str(i) for i in range(len(texts))], "text": texts, "corpus": "nsmc"}
    )
    start = time.perf_counter()
    ref = reference_near_dedup(texts, settings, hashfunc=None)
    ref_s = time.perf_counter() - start
    start = time.perf_counter()
    got = deduplicate(df, settings)
    return {"datasketch": (ref_s, ref), "benchforge": (time.perf_counter() - start, got)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_argument(parser, "; the demo sample works too")
    parser.add_argument("--docs", type=int, default=100_000, help="reviews to deduplicate")
    args = parser.parse_args()
    with gzip.open(args.corpus, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["review"] for line, _ in zip(fh, range(args.docs), strict=False)]
    timed = timed_near_dedup(texts)
    ref_s, ref = timed["datasketch"]
    got_s, got = timed["benchforge"]
    mine = dict(
        zip(
            got.dropped["sent_id"].astype(int), got.dropped["duplicate_of"].astype(int), strict=True
        )
    )
    n = len(texts)
    print(f"datasketch reference: {n:,} sentences in {ref_s:6.1f} s = {n / ref_s:9.0f} sent/s")
    print(f"benchforge dedup    : {n:,} sentences in {got_s:6.1f} s = {n / got_s:9.0f} sent/s")
    same = len(set(mine.items()) & set(ref.items()))
    print(f"ratio: {ref_s / got_s:.1f}x faster")
    print(
        f"near duplicates dropped: reference {len(ref):,}, benchforge {len(mine):,}, "
        f"identical decisions {same:,}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
