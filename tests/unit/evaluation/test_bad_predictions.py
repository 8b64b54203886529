"""``benchforge evaluate`` refuses what it cannot score as the paper does (issue 51, items
8 and 10): a prediction of the wrong kind (an NER prediction ``3.5``, ``NaN``, ``null``)
or out of the task's set (a MARC-ja class ``"neutral"``, an NER tag ``B-XX``, a JSQuAD
answer ``42``) is an error naming the file, the line, the value and what is allowed,
never a traceback and never scored as a wrong answer; so is invalid UTF-8 in a
predictions or release file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.cli.app import main
from pipelines.evaluation.evaluate import evaluate
from pipelines.evaluation.spec import EvaluationError


def _release(tmp: Path, kind: str, files: dict[str, list[dict]]) -> Path:
    dataset = tmp / "run" / "dataset"
    dataset.mkdir(parents=True)
    (dataset / "card.json").write_text(json.dumps({"task_kind": kind}), encoding="utf-8")
    for name, records in files.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (dataset / name).write_text(text, encoding="utf-8")
    return dataset.parent


def _predictions(tmp: Path, rows: list, name: str = "pred.jsonl") -> Path:
    path = tmp / name
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


NER = [{"guid": "n0", "tokens": list("서울에"), "ner_tags": ["B-LC", "I-LC", "O"]},
       {"guid": "n1", "tokens": list("철수"), "ner_tags": ["B-PS", "I-PS"]}]  # fmt: skip
MARC = [{"review_id": f"r{i}", "sentence": "良い", "label": lab}
        for i, lab in enumerate(["positive", "negative", "positive"])]  # fmt: skip
JSQUAD = [{"id": f"q{i}", "question": "?", "context": "東京は首都", "is_impossible": False,
           "answers": {"text": ["東京"], "answer_start": [0]}} for i in range(2)]  # fmt: skip


def _refused(run: Path, path: Path, *pieces: str) -> str:
    with pytest.raises(EvaluationError) as err:
        evaluate(run, "dev", path)
    message = str(err.value)
    assert str(path) in message, message
    for piece in pieces:
        assert piece in message, message
    return message


@pytest.mark.parametrize("value", ["3.5", "NaN", "null", "Infinity", "{}", "[1, 2, 3]"])
def test_an_ner_prediction_of_the_wrong_kind_names_the_line_not_a_traceback(tmp_path, value):
    run = _release(tmp_path, "klue-ner", {"dev.jsonl": NER})
    path = _predictions(tmp_path, [{"guid": "n0", "prediction": ["B-LC", "I-LC", "O"]},
                                   f'{{"guid": "n1", "prediction": {value}}}'])  # fmt: skip
    _refused(run, path, "line 2", "tags")


def test_an_ner_tag_outside_bio_over_the_klue_types_is_refused_with_the_allowed_set(tmp_path):
    run = _release(tmp_path, "klue-ner", {"dev.jsonl": NER})
    path = _predictions(tmp_path, [{"guid": "n0", "prediction": "B-LC I-LC O"},
                                   {"guid": "n1", "prediction": ["B-XX", "I-PS"]}])  # fmt: skip
    message = _refused(run, path, "line 2", "'B-XX'", "B-PS", "I-QT")
    assert "character 1" in message
    # the same tags, all in the set: scored
    ok = _predictions(tmp_path, [{"guid": "n0", "prediction": "B-LC I-LC O"},
                                 {"guid": "n1", "prediction": ["B-PS", "I-PS"]}])  # fmt: skip
    assert evaluate(run, "dev", ok)["metrics"]["entity_macro_f1"] == 100.0


def test_a_class_outside_the_task_is_refused_not_scored_as_wrong(tmp_path):
    run = _release(tmp_path, "marc-ja", {"valid.json": MARC})
    rows = [{"guid": r["review_id"], "prediction": r["label"]} for r in MARC]
    for bad in ("neutral", "Positive", None, 1, ["positive"]):
        path = _predictions(tmp_path, [*rows[:2], {"guid": "r2", "prediction": bad}])
        _refused(run, path, "line 3", repr(bad), "negative, positive")
    assert evaluate(run, "dev", _predictions(tmp_path, rows))["metrics"] == {"accuracy": 100.0}


def test_a_kobest_class_may_be_written_as_its_number(tmp_path):
    boolq = [{"paragraph": "p", "question": "q", "label": i % 2} for i in range(2)]
    run = _release(tmp_path, "kobest-boolq", {"dev.jsonl": boolq})
    ok = _predictions(tmp_path, [{"guid": "0", "prediction": 0}, {"guid": "1", "prediction": "1"}])
    assert evaluate(run, "dev", ok)["metrics"] == {"macro_f1": 100.0}
    bad = _predictions(tmp_path, [{"guid": "0", "prediction": 0}, {"guid": "1", "prediction": 2}])
    _refused(run, bad, "line 2", "2", "0, 1")


@pytest.mark.parametrize("value", ["42", "null", "true", '["東京"]'])
def test_an_answer_that_is_not_a_text_is_refused(tmp_path, value):
    run = _release(tmp_path, "jsquad", {"valid.jsonl": JSQUAD})
    path = _predictions(tmp_path, [{"guid": "q0", "prediction": "東京"},
                                   f'{{"guid": "q1", "prediction": {value}}}'])  # fmt: skip
    _refused(run, path, "line 2", "an answer is a text")


@pytest.mark.parametrize("value", ["1.5", "true", "Infinity", "NaN", "-1"])
def test_a_choice_must_be_a_whole_option_index(tmp_path, value):
    copa = [{"premise": "p", "question": "원인", "alternative_1": "a", "alternative_2": "b",
             "label": i % 2} for i in range(2)]  # fmt: skip
    run = _release(tmp_path, "kobest-copa", {"dev.jsonl": copa})
    path = _predictions(tmp_path, [{"guid": "0", "prediction": 0},
                                   f'{{"guid": "1", "prediction": {value}}}'])  # fmt: skip
    _refused(run, path, "line 2", "0-1")


def test_a_score_prediction_must_be_a_number_not_a_truth_value(tmp_path):
    jsts = [{"sentence_pair_id": str(i), "sentence1": "a", "sentence2": "b", "label": 1.0 * i}
            for i in range(2)]  # fmt: skip
    run = _release(tmp_path, "jsts", {"valid.json": jsts})
    path = _predictions(tmp_path, [{"guid": "0", "prediction": 0.5},
                                   {"guid": "1", "prediction": True}])  # fmt: skip
    _refused(run, path, "line 2", "a score must be a number")


@pytest.mark.parametrize("probs", ['{"positive": "high"}', '{"positive": NaN}',
                                   '{"positive": 1.5}', '{"neutral": 0.5}', '[0.5]'])  # fmt: skip
def test_probabilities_are_finite_shares_of_the_tasks_classes(tmp_path, probs):
    run = _release(tmp_path, "marc-ja", {"valid.json": MARC})
    lines = [json.dumps({"guid": r["review_id"], "prediction": r["label"],
                         "probabilities": {r["label"]: 0.9}}) for r in MARC[:2]]  # fmt: skip
    lines.append(f'{{"guid": "r2", "prediction": "positive", "probabilities": {probs}}}')
    _refused(run, _predictions(tmp_path, lines), "line 3", "probabilit")


def test_invalid_utf8_names_the_file_and_the_line(tmp_path):
    run = _release(tmp_path, "marc-ja", {"valid.json": MARC})
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"guid": "r0", "prediction": "positive"}\n'
                     b'{"guid": "r1", "prediction": "n\xe9gative"}\n')  # fmt: skip
    _refused(run, path, "latin1.jsonl:2", "cannot decode as utf-8")
    # a release file that is not UTF-8: the same, naming the release file
    rows = [{"guid": r["review_id"], "prediction": r["label"]} for r in MARC]
    gold = run / "dataset" / "valid.json"
    gold.write_bytes(gold.read_bytes() + b'{"review_id": "r9", "sentence": "\xff"}\n')
    with pytest.raises(EvaluationError, match=r"valid.json:4: cannot decode as utf-8"):
        evaluate(run, "dev", _predictions(tmp_path, rows))


def test_a_split_the_release_lacks_names_the_files_it_has(tmp_path):
    run = _release(tmp_path, "marc-ja", {"valid.json": MARC})
    rows = [{"guid": r["review_id"], "prediction": r["label"]} for r in MARC]
    with pytest.raises(EvaluationError, match=r"test.json: release file not found \(this "
                       r"release's split files: valid.json\)"):  # fmt: skip
        evaluate(run, "test", _predictions(tmp_path, rows))


def test_the_cli_exits_2_with_one_line_for_each_refusal(tmp_path, capsys):
    run = _release(tmp_path, "klue-ner", {"dev.jsonl": NER})
    path = _predictions(tmp_path, [{"guid": "n0", "prediction": 3.5},
                                   {"guid": "n1", "prediction": ["B-PS", "I-PS"]}])  # fmt: skip
    assert main(["evaluate", str(run), "--predictions", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchforge: error: ") and "line 1" in err[0]
