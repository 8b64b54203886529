"""The release's lm-evaluation-harness task: the YAML lm-eval reads and the loader beside
it (run by ``lm_eval`` itself in tests/e2e on a tiny model); the artifacts' tables."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import yaml

from flows.prefect_artifacts import agreement_markdown, key_of, rows_table
from pipelines.core.plugins import TASK_KINDS
from pipelines.evaluation.harness import harness_files, task_name


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!function", lambda loader, node: f"FUNCTION {node.value}")


def _write(
    tmp: Path, kind: str, files: dict[str, list[dict]], language: str
) -> tuple[dict, object]:
    dataset = tmp / "dataset"
    dataset.mkdir(parents=True)
    for name, records in files.items():
        (dataset / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                            for r in records), encoding="utf-8")  # fmt: skip
    out = harness_files("my-demo", language, TASK_KINDS.get(kind).evaluation, dataset)
    folder = dataset / "lm_eval"
    folder.mkdir()
    for name, text in out.items():
        (folder / name).write_text(text, encoding="utf-8")
    config = yaml.load(out["benchforge_my_demo.yaml"], Loader=_Loader)
    spec = importlib.util.spec_from_file_location(
        "harness_module", folder / "benchforge_my_demo.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return config, module


def test_a_similarity_task_is_scored_by_pearson_over_the_scale(tmp_path):
    """Issue 54: STS-style tasks are scored as the papers score them (Pearson's r), the
    prediction the expectation over the scale's points under the model's likelihoods."""
    rows = [{"sentence_pair_id": str(i), "sentence1": "犬", "sentence2": "猫", "label": v}
            for i, v in enumerate([2.9, 3.0, 4.6])]  # fmt: skip
    config, module = _write(tmp_path, "jsts", {"train.json": rows, "valid.json": rows[:2]}, "ja")
    assert task_name("my-demo") == config["task"] == "benchforge_my_demo"
    assert config["custom_dataset"] == "FUNCTION benchforge_my_demo.load"
    assert config["output_type"] == "multiple_choice" and "test_split" not in config
    assert config["doc_to_text"].endswith("二つの文の意味はどのくらい近いか（0〜5）：")
    assert [m["metric"] for m in config["metric_list"]] == ["pearson", "f1"]
    assert config["process_results"] == "FUNCTION benchforge_my_demo.process_results"
    data = module.load()
    assert set(data) == {"train", "validation"}
    assert data["train"][0]["_choices"] == ["0", "1", "2", "3", "4", "5"]
    assert [d["_gold"] for d in data["train"]] == [3, 3, 5]
    # all the mass on "4": prediction 4.0; uniform: 2.5
    sure = module.process_results(data["train"][2], [(0.0 if k == 4 else -50.0, False)
                                                     for k in range(6)])  # fmt: skip
    assert sure["pearson"] == (4.6, 4.0) and sure["f1"] == (1, 1)
    flat = module.process_results(data["train"][0], [(-1.0, False)] * 6)
    assert flat["pearson"] == (2.9, 2.5) and flat["f1"] == (0, 0)
    assert (
        round(module.pearson([(1.0, 1.5), (2.0, 2.0), (3.0, 3.5)]), 4) == 0.9608
    )  # 2 / (sqrt 2 x sqrt 2.1667)
    assert not hasattr(module, "_char_f1")  # no SQuAD code in a similarity task's module


def test_a_class_task_verbalises_its_labels_and_kobest_adds_macro_f1(tmp_path):
    rows = [{"sentence": "좋다", "label": 1}, {"sentence": "별로", "label": 0}]
    config, module = _write(tmp_path, "kobest-sentineg", {"test.jsonl": rows}, "ko")
    assert config["metric_list"][1] == {"metric": "f1", "aggregation":
                                        "FUNCTION benchforge_my_demo.macro_f1",
                                        "higher_is_better": True}  # fmt: skip
    data = module.load()["test"]
    assert [d["_gold"] for d in data] == [1, 0] and data[0]["_choices"] == ["부정", "긍정"]
    assert module.macro_f1([(1, 1), (0, 1)]) == 1 / 3


def test_an_answer_task_generates_and_scores_like_the_squad_script(tmp_path):
    rows = [{"guid": "q0", "question": "?", "context": "c", "is_impossible": False,
             "answers": {"text": ["대법원장", "대법원"], "answer_start": [0, 0]}},
            {"guid": "q1", "question": "?", "context": "c", "is_impossible": True,
             "answers": {"text": [], "answer_start": []}}]  # fmt: skip
    config, module = _write(tmp_path, "klue-mrc", {"dev.jsonl": rows}, "ko")
    assert config["output_type"] == "generate_until"
    docs = module.load()["validation"]
    assert docs[0]["_gold"] == "대법원장" and docs[1]["_answers"] == []
    assert module.process_results(docs[0], ["대법원.\n다음"]) == {
        "exact_match": 1.0,
        "char_f1": 1.0,
    }
    assert module.process_results(docs[1], [""]) == {"exact_match": 1.0, "char_f1": 1.0}


def test_artifacts_tables_keys_and_agreement_text(tmp_path):
    table = rows_table("agree", {"unit": "item", "in": 300, "kept": 295,
                                 "dropped": {"disagreement": 4, "reported": 1}})  # fmt: skip
    assert table[0] == {"step": "agree", "unit": "item", "in": 300, "kept": 295, "dropped": 5,
                        "reason": "(all)"}  # fmt: skip
    assert [(r["reason"], r["dropped"]) for r in table[1:]] == [
        ("disagreement", 4),
        ("reported", 1),
    ]
    assert key_of("sts-demo", "push-pilot", "rows") == "sts-demo-push-pilot-rows"
    assert key_of("KLUE_NER demo", "x") == "klue-ner-demo-x"
    path = tmp_path / "agreement.json"
    path.write_text(json.dumps({"rule": "mean", "gold_items": 295, "krippendorff_alpha":
                                {"interval": 0.8047}, "fleiss_kappa": {"kappa": 0.28,
                                "items": 228}}), encoding="utf-8")  # fmt: skip
    text = agreement_markdown(path)
    assert "gold items: 295" in text and "| interval | 0.8047 |" in text
    assert "Fleiss' kappa 0.28 over 228 items" in text
    assert agreement_markdown(tmp_path / "none.json") is None


def test_the_task_carries_its_benchmarks_tag_and_the_release_hash_as_version(tmp_path):
    rows = [{"sentence_pair_id": str(i), "sentence1": "犬", "sentence2": "猫", "label": v}
            for i, v in enumerate([2.9, 3.0, 4.6])]  # fmt: skip
    config, _ = _write(tmp_path / "a", "jsts", {"train.json": rows, "valid.json": rows}, "ja")
    assert config["tag"] == ["benchforge_jglue"]
    version = config["metadata"]["version"]
    assert isinstance(version, str) and len(version) == 12
    again, _ = _write(tmp_path / "b", "jsts", {"train.json": rows, "valid.json": rows}, "ja")
    assert again["metadata"]["version"] == version  # the same files, the same version
    other, _ = _write(tmp_path / "c", "jsts", {"train.json": rows[:2], "valid.json": rows}, "ja")
    assert other["metadata"]["version"] != version  # another release, another version
    kobest = TASK_KINDS.get("kobest-copa").evaluation
    from pipelines.evaluation.harness import tag_of

    assert tag_of(kobest) == "benchforge_kobest"


def test_a_stand_in_in_another_language_gets_a_prompt_in_its_language(tmp_path):
    """Issue 54: the MARC-ja demo runs on Korean NSMC reviews; its prompt was Japanese."""
    rows = [{"review_id": "1", "sentence": "재미있다", "label": "positive"}]
    ko, _ = _write(tmp_path / "ko", "marc-ja", {"train.json": rows}, "ko")
    ja, _ = _write(tmp_path / "ja", "marc-ja", {"train.json": rows}, "ja")
    assert ko["doc_to_text"] == "리뷰: {{sentence}}\n평가:"
    assert ja["doc_to_text"] == "レビュー: {{sentence}}\n評価:"
