"""Benchmark: `benchforge ingest` over the full NSMC crawl (712,404 reviews).

Runs the real Prefect flow twice in one process, each into a fresh output folder (no
cache): the reference on 1 Dask worker over the first --reference-docs reviews, then
all local workers over the whole crawl. Prints documents per second for both and the
ratio (all workers / 1 worker), and the wall time of the full run.

    .venv/bin/python benchmarks/ingest.py [--corpus ../shared/corpora/nsmc/reviews.jsonl.gz]

NSMC reviews are split into sentences with kss (unit: sentence), the expensive case.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from nsmc_corpus import add_corpus_argument  # noqa: E402


def recipe(folder: Path, corpus: Path, limit: int | None, workers: int) -> Path:
    entry = {
        "name": "nsmc",
        "path": str(corpus.resolve()),
        "format": "jsonl",
        "text_field": "review",
        "id_field": "review_id",
        "date_field": "date",
        "date_format": "%y.%m.%d",
        "keep_fields": ["rating", "movie_id"],
        "license": "CC0-1.0",
        "domain": "review",
        "style": "colloquial",
        "unit": "sentence",
    }
    if limit:
        entry["limit"] = limit
    data = {
        "name": f"bench-nsmc-{limit or 'full'}",
        "corpora": [entry],
        "runner": {"workers": workers},
    }
    path = folder / f"{data['name']}-w{workers}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def timed(recipe_path: Path, out: Path) -> tuple[float, dict]:
    from flows.ingest import run_ingest

    start = time.perf_counter()
    report = run_ingest(recipe_path, out)
    return time.perf_counter() - start, report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_corpus_argument(parser)
    parser.add_argument(
        "--reference-docs",
        type=int,
        default=50000,
        help="reviews in the 1-worker reference run (0: the whole crawl)",
    )
    parser.add_argument(
        "--full-limit",
        type=int,
        default=0,
        help="reviews in the all-workers run (0: the whole crawl)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="workers of the parallel run (default: all local cores)",
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep outputs in this folder")
    args = parser.parse_args()
    if not args.corpus.is_file():
        parser.error(f"{args.corpus}: not found")

    from flows.runtime import prefect_server

    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    base.mkdir(parents=True, exist_ok=True)
    with prefect_server():
        ref_s, ref = timed(recipe(base, args.corpus, args.reference_docs or None, 1), base / "ref")
        full_s, full = timed(
            recipe(base, args.corpus, args.full_limit or None, args.workers), base / "full"
        )
    ref_docs = ref["stats"]["stages"][0]["in"]
    full_docs = full["stats"]["stages"][0]["in"]
    ref_rate, full_rate = ref_docs / ref_s, full_docs / full_s
    sentences = full["stats"]["corpora"]["nsmc"]["sentences_kept"]
    print()
    print(
        f"reference  1 worker : {ref_docs:>8,} documents in {ref_s:8.1f} s = {ref_rate:8.1f} docs/s"
    )
    print(
        f"parallel  {args.workers:2d} workers: {full_docs:>8,} documents in {full_s:8.1f} s = "
        f"{full_rate:8.1f} docs/s ({sentences:,} sentences kept)"
    )
    print(f"ratio (parallel / reference docs/s): {full_rate / ref_rate:.2f}x")
    print(f"full crawl wall time: {full_s / 60:.1f} min (target: 12 min or less)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
