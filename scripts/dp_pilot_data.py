"""Write the KLUE-DP demo's pilot (known trees) from the shipped UD Korean GSD test
sentences: the last ``--from`` sentences of ``data/demo/ud-korean/gsd-test.sentences.jsonl.gz``
(the demo's formal corpus reads only its first 90, the parser never sees GSD test),
converted to KLUE's conventions (``pipelines.families.klue.dp_convert``), kept when
complete (a final ending, KLUE-DP's rule) and of ``--min-words`` to ``--max-words``
words, the first ``--items`` of them. Each line: ``item_id``, ``text``, ``words``,
``head_final``, ``source``, ``style`` and ``value``, the converted tree
(``[[head, label], ...]``, the root's label ``ROOT``), the pilot's known answer.

    .venv/bin/python scripts/dp_pilot_data.py [--items 5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "data" / "demo" / "ud-korean" / "gsd-test.sentences.jsonl.gz"
TARGET = ROOT / "data" / "demo" / "klue-dp" / "pilot.jsonl"


def main() -> None:
    sys.path.insert(0, str(ROOT))
    from pipelines.families.klue.dp import completeness, tree_json
    from pipelines.families.klue.dp_convert import convert
    from pipelines.families.klue.dp_section import DpSpec
    from pipelines.families.klue.ud import from_record

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5)
    parser.add_argument("--from", dest="tail", type=int, default=200)
    parser.add_argument("--min-words", type=int, default=5)
    parser.add_argument("--max-words", type=int, default=12)
    args = parser.parse_args()
    spec = DpSpec.model_validate({"parser": {"train": ["unused.conllu"]}})
    with gzip.open(SOURCE, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][-args.tail :]
    out = []
    for row in rows:
        tree = convert(from_record({"tokens": row["tokens"]}))
        if tree.text != row["text"] or not args.min_words <= len(tree.words) <= args.max_words:
            continue
        if completeness(tree.words, spec) or tree.forced:
            continue
        out.append({"item_id": f"pilot-dp-{len(out) + 1}", "text": tree.text,
                    "words": [w.form for w in tree.words], "head_final": True,
                    "source": "ud-gsd-test", "style": "formal", "ud_id": row["id"],
                    "value": tree_json(tree.heads, tree.labels)})  # fmt: skip
        if len(out) == args.items:
            break
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out), "utf-8")
    print(f"{len(out)} pilot items -> {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
