"""Make the known-answer items of the STS and NLI demos' pilot and control rounds
(issue 35) from the KorSTS and KorNLI subsets already in data/demo/korsts (run once; its
outputs are committed in data/demo/people):

- ``sts-pilot.jsonl``: 20 KorSTS dev pairs spread over the 0-5 scale, ``value`` the
  KorSTS score (the pilot's rule correlates an applicant's ratings with it);
- ``sts-controls.jsonl``: 40 more, ``value`` the KorSTS score (a rating within the
  recipe's ``tolerance`` of it counts as right);
- ``nli-pilot.jsonl`` and ``nli-controls.jsonl``: the first 10 and the next 20 rows of
  KorNLI's XNLI dev subset, ``value`` its gold label.

    python scripts/people_demo_data.py
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "data" / "demo"


def _tsv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def _write(rows: list[dict], name: str) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    (ROOT / "people" / name).write_text(text, encoding="utf-8")


def main() -> None:
    (ROOT / "people").mkdir(exist_ok=True)
    sts = _tsv(ROOT / "korsts" / "korsts-dev.demo.tsv")
    ranked = sorted(sts, key=lambda r: (float(r["score"]), r["id"]))
    step = len(ranked) / 20
    pilot = [ranked[int(i * step + step / 2)] for i in range(20)]
    rest = [r for r in ranked if r not in pilot]
    step = len(rest) / 40
    controls = [rest[int(i * step + step / 2)] for i in range(40)]

    def sts_item(prefix: str, r: dict) -> dict:
        return {"item_id": f"{prefix}-korsts-{r['filename']}-{r['id']}",
                "sentence1": r["sentence1"], "sentence2": r["sentence2"],
                "value": round(float(r["score"]), 2), "source": "korsts-dev",
                "license": "CC-BY-SA-4.0"}  # fmt: skip

    _write([sts_item("pilot", r) for r in pilot], "sts-pilot.jsonl")
    _write([sts_item("control", r) for r in controls], "sts-controls.jsonl")

    nli = _tsv(ROOT / "korsts" / "kornli-xnli-dev.head30.tsv")

    def nli_item(prefix: str, n: int, r: dict) -> dict:
        return {"item_id": f"{prefix}-kornli-xnli-dev-{n:02d}", "premise": r["sentence1"],
                "hypothesis": r["sentence2"], "value": r["gold_label"],
                "source": "kornli-xnli-dev", "license": "CC-BY-SA-4.0"}  # fmt: skip

    _write([nli_item("pilot", n, r) for n, r in enumerate(nli[:10], 1)], "nli-pilot.jsonl")
    _write([nli_item("control", n, r) for n, r in enumerate(nli[10:30], 11)], "nli-controls.jsonl")


if __name__ == "__main__":
    main()
