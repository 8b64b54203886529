"""Write the KLUE-NER demo's data from the KMOU NER corpus (2016 release) in
../shared/corpora/kmou-ner (or the folder given): the tagger's training and dev sentences
(the ``;`` raw and ``$`` inline-tagged lines of every sentence, without the morpheme lines,
gzipped) and the first ``--sentences`` test sentences as JSON Lines (``id``, ``text``,
``entities``: the corpus's spans mapped to KLUE's types), the demo's formal source whose
reference spans the simulated annotators take as their truth.

    python scripts/ner_demo_data.py [--corpus ../shared/corpora/kmou-ner] [--sentences 80]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def tagged_lines(path: Path) -> str:
    blocks = path.read_text(encoding="utf-8").replace("\r\n", "\n").split("\n\n")
    out = []
    for block in blocks:
        lines = [x for x in block.strip("\n").split("\n") if x.startswith((";", "$"))]
        if lines:
            out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def main() -> None:
    import sys

    sys.path.insert(0, str(ROOT))
    from pipelines.families.klue.kmou import read_kmou

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/corpora/kmou-ner")
    parser.add_argument("--sentences", type=int, default=80)
    args = parser.parse_args()
    out = ROOT / "data/demo/kmou-ner"
    for split in ("train", "dev"):
        target = out / f"ner.{split}.tagged.gz"
        with gzip.GzipFile(target, "wb", mtime=0) as fh:  # byte-stable output
            fh.write(tagged_lines(args.corpus / f"ner.{split}").encode("utf-8"))
        print(target, target.stat().st_size)
    test, dropped, _ = read_kmou(args.corpus / "ner.test")
    assert dropped.empty, dropped
    lines = []
    for n, row in enumerate(test.head(args.sentences).itertuples()):
        lines.append(
            json.dumps(
                {"id": f"kmou-test-{n:05d}", "text": row.text, "entities": list(row.entities)},
                ensure_ascii=False,
            )
        )
    target = out / "sentences.test.jsonl"
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(target, len(lines))


if __name__ == "__main__":
    main()
