"""Write the JSQuAD demo's source file from the JGLUE release in ../shared/corpora/jglue
(or the file given): the first ``--articles`` articles of JSQuAD v1.3 valid, each with
its first ``--paragraphs`` paragraphs and all their questions, in the release's own
SQuAD layout and formatting (``json.dumps(ensure_ascii=False)`` and a line break).

    python scripts/reading_demo_data.py [--source PATH/jsquad-v1.3_valid-v1.3.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=ROOT.parent / "shared/corpora/jglue/jsquad-v1.3_valid-v1.3.json",
    )
    parser.add_argument("--articles", type=int, default=12)
    parser.add_argument("--paragraphs", type=int, default=6)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "data/demo/jglue/jsquad-v1.3_valid-v1.3.demo.json"
    )
    args = parser.parse_args()
    data = json.loads(args.source.read_text(encoding="utf-8"))
    articles = [
        {**a, "paragraphs": a["paragraphs"][: args.paragraphs]}
        for a in data["data"][: args.articles]
    ]
    out = {**data, "data": articles}
    args.out.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
    questions = sum(len(p["qas"]) for a in articles for p in a["paragraphs"])
    print(f"{len(articles)} articles, {questions} questions -> {args.out}")


if __name__ == "__main__":
    main()
