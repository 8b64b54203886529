"""Where the benchmarks find the full NSMC crawl (a developer's ../shared checkout)."""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NSMC_CRAWL = ROOT.parent / "shared" / "corpora" / "nsmc" / "reviews.jsonl.gz"


def add_corpus_argument(parser: argparse.ArgumentParser, note: str = "") -> None:
    """The ``--corpus`` option: the NSMC crawl, JSON Lines, gzipped."""
    parser.add_argument(
        "--corpus",
        type=Path,
        default=NSMC_CRAWL,
        help=f"the NSMC crawl (JSON Lines, gzipped; default {NSMC_CRAWL}){note}",
    )
