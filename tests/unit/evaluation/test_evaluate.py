"""``benchforge evaluate`` over a release: each task kind's declared evaluation reads the
split file and the predictions, and every bad input is an error naming the file and the
line; the baseline's card section and ``card check``'s baseline checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.cli.app import main
from pipelines.evaluation.evaluate import evaluate
from pipelines.evaluation.spec import EvaluationError
from pipelines.export.card_baseline import baseline_section


def _release(tmp: Path, kind: str, files: dict[str, list[dict]]) -> Path:
    dataset = tmp / "run" / "dataset"
    dataset.mkdir(parents=True)
    (dataset / "card.json").write_text(json.dumps({"task_kind": kind}), encoding="utf-8")
    for name, records in files.items():
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        (dataset / name).write_text(text, encoding="utf-8")
    return dataset.parent


def _predictions(tmp: Path, rows: list[dict], name: str = "pred.jsonl") -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")  # fmt: skip
    return path


JSTS = [{"sentence_pair_id": str(i), "sentence1": "a", "sentence2": "b", "label": v}
        for i, v in enumerate([0.0, 1.2, 2.5, 3.0, 4.8])]  # fmt: skip


def test_jsts_dev_is_jglues_valid_file_scored_by_pearson_and_spearman(tmp_path):
    import numpy as np

    run = _release(tmp_path, "jsts", {"valid.json": JSTS})
    pred = [0.1, 1.0, 2.9, 2.8, 4.0]
    got = evaluate(
        run,
        "dev",
        _predictions(
            tmp_path,
            [
                {"guid": r["sentence_pair_id"], "prediction": p}
                for r, p in zip(JSTS, pred, strict=True)
            ],
        ),
    )
    gold = [r["label"] for r in JSTS]
    assert got["file"] == "valid.json" and got["items"] == 5 and got["split"] == "dev"
    assert got["metrics"]["pearson"] == pytest.approx(100 * np.corrcoef(gold, pred)[0, 1], abs=0.01)
    assert got["metrics"]["spearman"] == pytest.approx(90.0)  # one swapped pair of 5
    assert evaluate(run, "valid", _predictions(tmp_path, [
        {"guid": r["sentence_pair_id"], "prediction": r["label"]} for r in JSTS]))["metrics"] == {
        "pearson": 100.0, "spearman": 100.0}  # fmt: skip


def test_bad_predictions_name_the_file_and_the_line(tmp_path):
    run = _release(tmp_path, "jsts", {"valid.json": JSTS})
    rows = [{"guid": r["sentence_pair_id"], "prediction": 1.0} for r in JSTS]
    cases = [
        (rows[:4], "1 of 5 items have no prediction"),
        ([*rows, {"guid": "99", "prediction": 1.0}], "line 6: guid '99' is not an item"),
        ([*rows, rows[0]], "line 6: guid '0' is predicted twice"),
        ([*rows[:4], {"guid": "4", "prediction": "high"}], "line 5: a score must be a number"),
        ([*rows[:4], {"guid": "4"}], "line 5: a prediction is an object with 'guid'"),
    ]
    for got_rows, message in cases:
        path = _predictions(tmp_path, got_rows)
        with pytest.raises(EvaluationError, match=message) as err:
            evaluate(run, "dev", path)
        assert str(path) in str(err.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"guid": "0", "prediction": 1}\n{oops\n', encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"bad.jsonl, line 2: not valid JSON"):
        evaluate(run, "dev", bad)
    with pytest.raises(EvaluationError, match="no split 'train2'"):
        evaluate(run, "train2", path)


def test_the_cli_prints_the_metrics_and_exits_2_on_a_bad_file(tmp_path, capsys):
    run = _release(tmp_path, "jsts", {"valid.json": JSTS})
    path = _predictions(tmp_path, [{"guid": r["sentence_pair_id"], "prediction": r["label"]}
                                   for r in JSTS])  # fmt: skip
    out = tmp_path / "result.json"
    assert main(["evaluate", str(run), "--predictions", str(path), "--out", str(out)]) == 0
    assert "pearson            100.00" in capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8"))["metrics"]["spearman"] == 100.0
    assert main(["evaluate", str(run), "--predictions", str(tmp_path / "none.jsonl")]) == 2
    assert "none.jsonl: predictions file not found" in capsys.readouterr().err


def test_kobest_layout_without_ids_uses_line_numbers_and_choice_texts(tmp_path):
    copa = [{"premise": f"p{i}", "question": "원인", "alternative_1": f"a{i}",
             "alternative_2": f"b{i}", "label": i % 2} for i in range(4)]  # fmt: skip
    run = _release(tmp_path, "kobest-copa", {"dev.jsonl": copa})
    # a prediction is an index or an option's text; 3 of 4 right
    rows = [{"guid": "0", "prediction": 0}, {"guid": "1", "prediction": "b1"},
            {"guid": "2", "prediction": "a2"}, {"guid": "3", "prediction": 0}]  # fmt: skip
    got = evaluate(run, "dev", _predictions(tmp_path, rows))
    from sklearn.metrics import f1_score

    assert got["metrics"]["macro_f1"] == pytest.approx(
        100 * f1_score([0, 1, 0, 1], [0, 1, 0, 0], average="macro"), abs=0.01)  # fmt: skip
    with pytest.raises(EvaluationError, match="line 4: choice 2 is not 0-1"):
        evaluate(run, "dev", _predictions(tmp_path, [*rows[:3], {"guid": "3", "prediction": 2}]))


def test_klue_mrc_unanswerable_and_klue_re_probabilities(tmp_path):
    mrc = [{"guid": "q0", "question": "?", "context": "c", "is_impossible": False,
            "answers": {"text": ["대법원"], "answer_start": [0]}},
           {"guid": "q1", "question": "?", "context": "c", "is_impossible": True,
            "answers": {"text": [], "answer_start": []}}]  # fmt: skip
    run = _release(tmp_path / "m", "klue-mrc", {"dev.jsonl": mrc})
    got = evaluate(run, "dev", _predictions(tmp_path, [
        {"guid": "q0", "prediction": "대법원."}, {"guid": "q1", "prediction": ""}]))  # fmt: skip
    assert got["metrics"] == {"exact_match": 100.0, "rouge_w": 100.0}
    re_rows = [{"guid": f"r{i}", "sentence": "s", "label": lab,
                "subject_entity": {"word": "a", "start_idx": 0, "end_idx": 0, "type": "PER"},
                "object_entity": {"word": "s", "start_idx": 0, "end_idx": 0, "type": "ORG"}}
               for i, lab in enumerate(["no_relation", "per:title", "org:founded"])]  # fmt: skip
    run = _release(tmp_path / "r", "klue-re", {"dev.jsonl": re_rows})
    plain = [{"guid": r["guid"], "prediction": r["label"]} for r in re_rows]
    got = evaluate(run, "dev", _predictions(tmp_path, plain))
    assert got["metrics"] == {"re_micro_f1": 100.0, "auprc": None}  # AUPRC needs probabilities
    probs = [{**p, "probabilities": {p["prediction"]: 0.9}} for p in plain]
    got = evaluate(run, "dev", _predictions(tmp_path, probs))
    # the 30 classes, 27 with no gold item (0 each, as KLUE's script): 3 x 100 / 30
    assert got["metrics"]["auprc"] == pytest.approx(10.0)


def test_every_task_kind_declares_the_papers_metrics():
    from pipelines.core.plugins import TASK_KINDS
    from pipelines.evaluation.metrics import METRICS

    want = {"klue-sts": ("pearson", "f1_at_3"), "klue-nli": ("accuracy",),
            "klue-ynat": ("macro_f1",), "klue-ner": ("entity_macro_f1", "char_macro_f1"),
            "klue-re": ("re_micro_f1", "auprc"), "klue-mrc": ("exact_match", "rouge_w"),
            "jsts": ("pearson", "spearman"), "jnli": ("accuracy",), "jcqa": ("accuracy",),
            "jsquad": ("exact_match", "char_f1"), "marc-ja": ("accuracy",),
            "kornli": ("accuracy",), "korsts": ("spearman",)}  # fmt: skip
    for name, kind in TASK_KINDS.items():
        ev = kind.evaluation
        assert ev is not None, name
        if name.startswith("kobest-"):
            assert ev.metrics == ("macro_f1",), name
        elif name == "kobbq":
            assert ev.scorer is not None and "diff_bias_amb" in ev.metrics
        elif name == "klue-dp":  # UAS and LAS (KLUE 1.1), and KLUE's baseline variant
            assert ev.scorer is not None and ev.metrics[:2] == ("uas", "las")
            assert ev.reference is not None
        else:
            assert ev.metrics == want[name], name
        if ev.scorer is None:
            assert all(m in METRICS for m in ev.metrics)


def test_the_card_section_states_the_baseline_or_how_to_run_one():
    assert "No baseline has been run" in baseline_section({})
    facts = {"baseline": {
        "model": "benchforge small BERT, trained from scratch", "train_items": 80,
        "seconds": 7.5, "device": "cpu", "metrics_source": "JGLUE 4.1",
        "protocol": "fine-tuned on train", "splits": {
            "dev": {"items": 19, "metrics": {"accuracy": 73.68}},
            "test": {"items": 15, "metrics": {"accuracy": None}}}},
        "human_performance": {"items": 15, "combined": {"accuracy": 0.8},
                              "simulated": True}}  # fmt: skip
    text = baseline_section(facts)
    assert "| benchforge small BERT, trained from scratch | dev | 19 | 73.68 |" in text
    assert "| test | 15 | n/a |" in text
    assert "| people, majority answer (simulated) | test | 15 | 80 |" in text
    assert "With 80 items to learn from" in text
    kobbq = {
        "scores": {
            "unknown": {
                "scored": 40,
                "overall": {
                    "acc_amb": 1.0,
                    "acc_dis": 0.333,
                    "diff_bias_amb": 0.0,
                    "diff_bias_dis": 0.0,
                },
            }
        }
    }
    assert "| unknown | 40 | 1 | 0.333 | 0 | 0 |" in baseline_section(kobbq)
