"""Write the KLUE-NER and KLUE-RE demos' data from the KMOU NER corpus in
../shared/corpora/kmou-ner (or the folder given).

KLUE-NER (the 2016 release): the tagger's training and dev sentences (the ``;`` raw and
``$`` inline-tagged lines of every sentence, without the morpheme lines, gzipped) and the
first ``--sentences`` test sentences as JSON Lines (``id``, ``text``, ``entities``: the
corpus's spans mapped to KLUE's types), the demo's formal source whose reference spans
the simulated annotators take as their truth.

KLUE-RE (the later release, ``corpus-morph-ner.tar.gz``: news and web sentences, ten
types): its files in name order, sentence by sentence; the first ``--re-train``
sentences train the second tagger and the next ``--re-dev`` score it (both in the same
``;``/``$`` layout), and the next ``--re-sentences`` are the RE demo's candidate
sentences (JSON Lines: ``id``, ``text``).

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
    parser.add_argument("--re-train", type=int, default=3000)
    parser.add_argument("--re-dev", type=int, default=300)
    parser.add_argument("--re-sentences", type=int, default=150)
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
    later_release(args, out)


def later_release(args: argparse.Namespace, out: Path) -> None:
    import tarfile

    from pipelines.families.klue.kmou import parse_inline

    blocks = []
    with tarfile.open(args.corpus / "corpus-morph-ner.tar.gz") as tar:
        members = sorted((m for m in tar.getmembers() if m.name.endswith(".txt")),
                         key=lambda m: m.name)  # fmt: skip
        for member in members:
            text = tar.extractfile(member).read().decode("utf-8").replace("\r\n", "\n")
            for block in text.split("\n\n"):
                lines = [x[3:] for x in block.strip("\n").split("\n") if x.startswith("## ")]
                if len(lines) >= 3 and parse_inline(lines[2])[0] == lines[1]:
                    blocks.append((lines[1], lines[2]))
    train = blocks[: args.re_train]
    dev = blocks[args.re_train : args.re_train + args.re_dev]
    rest = blocks[args.re_train + args.re_dev : args.re_train + args.re_dev + args.re_sentences]
    for name, part in (("train", train), ("dev", dev)):
        target = out / f"morph-ner.{name}.tagged.gz"
        body = "\n\n".join(f"; {raw}\n${inline}" for raw, inline in part) + "\n"
        with gzip.GzipFile(target, "wb", mtime=0) as fh:
            fh.write(body.encode("utf-8"))
        print(target, target.stat().st_size, len(part))
    target = out / "re-sentences.jsonl"
    target.write_text("".join(json.dumps({"id": f"kmou-morph-{n:05d}", "text": raw},
                                         ensure_ascii=False) + "\n"
                              for n, (raw, _) in enumerate(rest)), encoding="utf-8")  # fmt: skip
    print(target, len(rest))


if __name__ == "__main__":
    main()
