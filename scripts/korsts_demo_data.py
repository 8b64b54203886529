"""Make the KorSTS demo subset in data/demo/korsts from ../shared/corpora (run once; its
outputs are committed). Only STS-B's caption sources whose text licence allows
redistribution are taken: ``images`` (PASCAL VOC-2008 captions, CC BY-SA) and
``track5.en-en`` (SNLI captions, CC BY-SA 4.0); see data/demo/korsts/README.md.

    python scripts/korsts_demo_data.py [SHARED_CORPORA] [--dev-images 120] [--dev-track5 80]
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "demo" / "korsts"
HEADER = ["genre", "filename", "year", "id", "score", "sentence1", "sentence2"]


def _rows(shared: Path, split: str) -> list[tuple[list[str], list[str]]]:
    english = list(csv.reader((shared / f"stsb-en/stsb-en-{split}.csv").open(encoding="utf-8")))
    with (shared / f"korsts-kornli/sts-{split}.tsv").open(encoding="utf-8") as f:
        korean = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    assert len(english) == len(korean), (len(english), len(korean))
    for n, (e, k) in enumerate(zip(english, korean, strict=True), 1):
        assert abs(float(e[2]) - float(k[4])) < 1e-6, f"{split} row {n} misaligned"
    return list(zip(english, korean, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shared", nargs="?", default="../shared/corpora", type=Path)
    ap.add_argument("--dev-images", type=int, default=120)
    ap.add_argument("--dev-track5", type=int, default=80)
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)

    dev = _rows(args.shared, "dev")
    chosen = [r for r in dev if r[1][1] == "images"][: args.dev_images]
    chosen += [r for r in dev if r[1][1] == "track5.en-en"][: args.dev_track5]
    with (OUT / "stsb-en-dev.demo.csv").open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(e for e, _ in chosen)
    with (OUT / "korsts-dev.demo.tsv").open("w", encoding="utf-8", newline="") as f:
        f.writelines("\t".join(row) + "\n" for row in [HEADER, *(k for _, k in chosen)])

    # English -> Korean sentence pairs of STS-B train's ``images`` source: the parallel
    # data the demo's MT model trains on, and the demo's translation memory
    memory: dict[str, str] = {}
    conflicts = 0
    for e, k in _rows(args.shared, "train"):
        if k[1] != "images":
            continue
        for en, ko in ((e[0], k[5]), (e[1], k[6])):
            en, ko = en.strip(), ko.strip()
            if en in memory and memory[en] != ko:
                conflicts += 1  # the first translation is kept: a TM maps a source once
                continue
            memory.setdefault(en, ko)
    with (OUT / "stsb-train-images.en-ko.tsv").open("w", encoding="utf-8", newline="") as f:
        rows = [("source", "target"), *sorted(memory.items())]
        f.writelines(f"{en}\t{ko}\n" for en, ko in rows)
    print(
        f"dev pairs {len(chosen)}; parallel sentences {len(memory)} ({conflicts} conflicting "
        "repeats left out)"
    )


if __name__ == "__main__":
    main()
