"""Benchmark: expanding all 269 KoBBQ templates (570 rows) into their 76,568 samples.

benchforge's expansion (``pipelines.families.kobbq.templates.expand``: slots filled with their
written forms, choices, answers, sample ids) against a reference run in the same
process: pandas reading the same template file and enumerating the same filler
combinations with ``itertools.product`` and their sample ids only (no text). The ratio
is what filling the texts costs over enumerating the samples; the seconds say the whole
expansion takes seconds.

    .venv/bin/python benchmarks/kobbq_expand.py [--templates PATH] [--repeat 3]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipelines.families.kobbq.templates import CATEGORIES, expand, parse_slots, read_templates  # noqa: E402


def reference(path: Path) -> int:
    """The floor: read the file with pandas, enumerate every combination and its ids."""
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    ids = []
    for r in frame.itertuples(index=False):
        slots = parse_slots(r.Names, "") | parse_slots(r.Lexical_diversity, "")
        prefix = f"{CATEGORIES[r.Category]}-{int(r.ID):03d}{r.version}"
        sizes = [range(len(v)) for v in slots.values()]
        for n, _ in enumerate(itertools.product(*sizes), start=1):
            for ctx in ("amb", "dis"):
                for q in ("bsd", "cnt"):
                    ids.append(f"{prefix}-{n:03d}-{ctx}-{q}")
    return len(ids)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--templates", type=Path, default=ROOT / "data/demo/kobbq/KoBBQ_templates.tsv")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each (the best is kept)")
    args = ap.parse_args()
    ref_t, ours_t = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        n_ref = reference(args.templates)
        ref_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        samples = expand(read_templates(args.templates))
        ours_t.append(time.perf_counter() - t0)
    assert n_ref == len(samples), (n_ref, len(samples))
    r, o = min(ref_t), min(ours_t)
    print(f"samples: {len(samples):,} from {samples['template_id'].nunique()} templates")
    print(f"reference (pandas read + enumerate ids): {r:.2f} s, {n_ref / r:,.0f} samples/s")
    print(f"benchforge expand (read, check, fill):   {o:.2f} s, {len(samples) / o:,.0f} samples/s")
    print(f"ratio benchforge / reference time: {o / r:.2f}x")


if __name__ == "__main__":
    main()
