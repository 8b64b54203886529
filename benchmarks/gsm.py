"""Benchmark: greedy sentence matching (KLUE Algorithm 1) on real NSMC sentences.

Splits NSMC reviews into sentences with kss (as `benchforge ingest` does), takes their
MeCab morphemes, and runs benchforge's GSM on the first 10,000 and 50,000 sentences.
The reference is Algorithm 1 as written, scored with the rouge-score package on the
same morphemes (tests/unit/pairing/test_gsm.py: reference_gsm). It makes N^2/4 ROUGE calls, so it is
run in this process on a sample of --ref-n sentences, checked pair for pair against
benchforge's GSM on that sample, and its time is scaled by (N / ref-n)^2 for the ratio.

    .venv/bin/python benchmarks/gsm.py [--corpus PATH] [--sizes 10000 50000] [--ref-n 400]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit" / "pairing"))

from nsmc_corpus import add_corpus_argument  # noqa: E402
from test_gsm import reference_gsm  # noqa: E402

from pipelines.lang.ko import morphemes, split_sentences  # noqa: E402
from pipelines.pairing.gsm import greedy_sentence_matching  # noqa: E402


def nsmc_sentences(path: Path, count: int) -> list[str]:
    """The first ``count`` kss sentences of the NSMC reviews in file order."""
    out: list[str] = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        while len(out) < count:
            chunk = [json.loads(line)["review"] for line, _ in zip(fh, range(5000), strict=False)]
            if not chunk:
                break
            for sents in split_sentences([t for t in chunk if t.strip()]):
                out.extend(sents)
    return out[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_argument(parser, "; the demo sample works for small sizes")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--ref-n", type=int, default=400, help="sentences in the reference run")
    parser.add_argument("--metric", default="rougeL", choices=["rouge1", "rouge2", "rougeL"])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    sentences = nsmc_sentences(args.corpus, max(args.sizes))
    split_s = time.perf_counter() - start
    start = time.perf_counter()
    tokens = [morphemes(s) for s in sentences]
    mecab_s = time.perf_counter() - start
    lengths = np.array([len(t) for t in tokens])
    print(
        f"{len(sentences)} NSMC sentences: kss {split_s:.1f} s, MeCab {mecab_s:.1f} s, "
        f"{lengths.mean():.1f} morphemes on average (max {lengths.max()})"
    )

    sample = tokens[: args.ref_n]
    start = time.perf_counter()
    ref_pairs, ref_left = reference_gsm(sample, args.metric, args.seed)
    ref_s = time.perf_counter() - start
    mine = greedy_sentence_matching(sample, args.metric, args.seed)
    same = [(a, b) for a, b, _ in ref_pairs] == list(
        zip(mine.first.tolist(), mine.second.tolist(), strict=True)
    )
    calls = args.ref_n**2 // 4
    print(
        f"reference (rouge-score, naive GSM) on {args.ref_n}: {ref_s:.2f} s, "
        f"{calls / ref_s:,.0f} ROUGE calls/s; benchforge gives the same pairs: {same}"
    )
    if not same or mine.leftover != ref_left:
        print("MISMATCH against the reference")
        return 1

    for n in args.sizes:
        if n > len(tokens):
            print(f"N = {n}: only {len(tokens)} sentences available, skipped")
            continue
        start = time.perf_counter()
        result = greedy_sentence_matching(tokens[:n], args.metric, args.seed)
        took = time.perf_counter() - start
        ref_est = ref_s * (n / args.ref_n) ** 2
        quarter = max(1, len(result.score) // 4)
        print(
            f"N = {n}: benchforge GSM {took:.2f} s; reference estimate {ref_est:,.0f} s "
            f"({ref_est / 60:.1f} min); ratio {ref_est / took:,.0f}x. Mean {args.metric} of "
            f"first/last quarter of draws: {result.score[:quarter].mean():.3f} / "
            f"{result.score[-quarter:].mean():.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
