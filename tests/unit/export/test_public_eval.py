"""Issue 54: rows of a public evaluation set in a release are found and named.

In a JSTS build most train pairs were JGLUE valid pairs and the card said nothing. The
demo's ``data/demo/jglue/jsts-v1.3_valid-v1.3.json`` holds JGLUE's own valid records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.export.public_eval import is_public_eval, overlap
from pipelines.export.warnings import CARD_WARNINGS

ROOT = Path(__file__).resolve().parents[3]
JSTS_VALID = ROOT / "data" / "demo" / "jglue" / "jsts-v1.3_valid-v1.3.json"
JSQUAD_VALID = ROOT / "data" / "demo" / "jglue" / "jsquad-v1.3_valid-v1.3.demo.json"


def _valid() -> list[dict]:
    return [json.loads(line) for line in JSTS_VALID.read_text(encoding="utf-8").splitlines()]


def test_the_file_name_says_which_corpus_is_a_public_evaluation_split(tmp_path):
    assert is_public_eval(JSTS_VALID) == "a valid split by its file name"
    assert is_public_eval(Path("kornli-xnli-dev.head30.tsv")) == "a dev split by its file name"
    assert is_public_eval(Path("klue-sts-v1.1_dev.json")) == "a dev split by its file name"
    assert is_public_eval(Path("reviews.sample3000.jsonl.gz")) is None
    assert is_public_eval(Path("developers.txt")) is None  # "dev" inside a word is not one


def test_the_same_pair_is_found_and_a_new_pairing_of_its_sentences_is_not():
    valid = _valid()
    copied = [{"sentence_pair_id": r["sentence_pair_id"], "sentence1": r["sentence1"],
               "sentence2": r["sentence2"], "label": 3.0} for r in valid[:3]]  # fmt: skip
    # both sentences are in the valid file, but never in one record
    mixed = {"sentence_pair_id": "new-1", "sentence1": valid[0]["sentence1"],
             "sentence2": valid[1]["sentence2"], "label": 1.0}  # fmt: skip
    written = {"sentence_pair_id": "new-2", "sentence1": valid[2]["sentence1"],
               "sentence2": "この文は誰も書いたことのない新しい文です。", "label": 0.0}  # fmt: skip
    train = pd.DataFrame([*copied, mixed, written])
    test = pd.DataFrame([written])
    found = overlap({"train.parquet": train, "test.parquet": test},
                    {"train.json": 5, "test.json": 1}, [("jsts-valid", JSTS_VALID)])  # fmt: skip
    assert set(found) == {"train"}  # test holds no public row
    o = found["train"]["jsts-valid"]
    assert o["items"] == 3 and o["records"] == 5
    assert o["ids"] == [r["sentence_pair_id"] for r in valid[:3]]
    (line,) = CARD_WARNINGS.get("public-eval-rows")({"public_eval": found}, {})
    assert line.startswith(
        "**Rows of a public evaluation set**: `train` holds 3 of its 5 records from "
        "`jsts-valid` (`jsts-v1.3_valid-v1.3.json`, a valid split by its file name): a "
        "model trained on it has seen that evaluation data; ids "
    )
    # a corpus that is no evaluation split is not looked at
    assert overlap({"train.parquet": train}, {"train.json": 5},
                   [("captions", JSTS_VALID.with_name("x.json"))]) == {}  # fmt: skip


def test_a_squad_question_is_found_with_its_paragraph_and_a_new_question_is_not():
    data = json.loads(JSQUAD_VALID.read_text(encoding="utf-8"))
    article = data["data"][0]
    paragraph = article["paragraphs"][0]
    qa = paragraph["qas"][0]
    rows = [
        {"guid": qa["id"], "title": article["title"], "context": paragraph["context"],
         "question": qa["question"], "answers": '{"text": ["x"]}',
         "question_type": "answerable"},
        {"guid": "written-1", "title": article["title"], "context": paragraph["context"],
         "question": "この段落について誰かが新しく書いた質問は何か。",
         "answers": '{"text": ["y"]}', "question_type": "answerable"},
    ]  # fmt: skip
    rows += [{**rows[1], "guid": f"w{i}", "question": f"新しく書いた別の質問その{i}です。"}
             for i in range(3)]  # fmt: skip
    found = overlap({"train.parquet": pd.DataFrame(rows)}, {"train.jsonl": len(rows)},
                    [("jsquad-valid", JSQUAD_VALID)])  # fmt: skip
    assert found["train"]["jsquad-valid"]["ids"] == [qa["id"]]
