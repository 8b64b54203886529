"""``benchforge rebuild`` of recipes/jsquad-demo.yaml and recipes/klue-mrc-demo.yaml
(issue 37): articles drawn, a real writing round and a real validation round in Label
Studio answered by simulated people (answers cut short, careless people, questions that
copy their sentence), the question checks, the SQuAD layout read back and loaded by
``datasets``, a true card; a rerun resumes without duplicating Label Studio tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_rebuild import load_release, rebuild

from pipelines.annotation import annotate
from pipelines.export.hf_card import HUB_SPLITS
from pipelines.families.reading.squad import read_file, write_squad

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(family_server):
    """The session's Label Studio server, shared by the family rebuilds
    (tests/conftest.py): this file's projects have names of their own."""
    return family_server


def _recipe(name: str, folder: Path) -> Path:
    recipe = yaml.safe_load((ROOT / "recipes" / f"{name}.yaml").read_text(encoding="utf-8"))
    here = ROOT / "recipes"
    for corpus in recipe["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((here / corpus[key]).resolve())
    spec = recipe["reading"]
    if spec["simulation"].get("reference"):
        spec["simulation"]["reference"] = str((here / spec["simulation"]["reference"]).resolve())
    spec["writing_round"]["project"] = f"{name}-test-writing"
    spec["validation_round"]["project"] = f"{name}-test-validation"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def _rebuilt(name: str, server: dict, factory: pytest.TempPathFactory) -> dict:
    folder = factory.mktemp(name)
    path = _recipe(name, folder)
    out = folder / "out"
    first = rebuild(path, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "first": first.stdout, "again": again.stdout, "name": name}


@pytest.fixture(scope="module")
def jsquad(server, tmp_path_factory):
    return _rebuilt("jsquad-demo", server, tmp_path_factory)


@pytest.fixture(scope="module")
def mrc(server, tmp_path_factory):
    return _rebuilt("klue-mrc-demo", server, tmp_path_factory)


def _accounted(out: Path) -> None:
    """Rows in = kept + dropped at every step of the family."""
    para = json.loads((out / "paragraphs" / "paragraphs.json").read_text(encoding="utf-8"))
    kept = pd.read_parquet(out / "paragraphs" / "paragraphs.parquet")
    dropped = pd.read_parquet(out / "paragraphs" / "dropped.parquet")
    assert len(kept) + len(dropped) == para["paragraphs_in"] and len(kept) == para["paragraphs"]
    items = pd.read_parquet(out / "writing" / "items.parquet")
    qs = pd.read_parquet(out / "questions" / "questions.parquet")
    qdrop = pd.read_parquet(out / "questions" / "dropped.parquet")
    assert len(qs) + len(qdrop) == len(items)
    assert set(qs["item_id"]) | set(qdrop["id"]) == set(items["item_id"])
    final = pd.read_parquet(out / "final" / "questions.parquet")
    fdrop = pd.read_parquet(out / "final" / "dropped.parquet")
    assert len(final) + len(fdrop) == len(qs)


def _release(out: Path, prefix: str, names: dict, tmp_path: Path) -> dict:
    """Every split's SQuAD-layout file reads back (answers spans of their contexts) and
    writes back byte for byte; its questions are the jsonl's, in order."""
    counts = {}
    for split, name in names.items():
        path = out / "dataset" / f"{prefix}_{name}.json"
        release = read_file(path)
        assert write_squad(release) == path.read_text(encoding="utf-8")
        hub = [json.loads(line) for line in (out / "dataset" / f"{name}.jsonl").read_text(
            encoding="utf-8").splitlines()]  # fmt: skip
        questions = [r for r in release.records if "question" in r]
        assert [r["question"] for r in questions] == [h["question"] for h in hub]
        for h in hub:
            for text, start in zip(h["answers"]["text"], h["answers"]["answer_start"], strict=True):
                assert h["context"][start : start + len(text)] == text
        counts[split] = len(hub)
    loaded = load_release(out / "dataset", tmp_path / "hf")
    got = {k: v.num_rows for k, v in loaded["default"].items()}
    # the Hub's split names (issue 54: validation), the files the paper's
    assert got == {HUB_SPLITS.get(names[s], names[s]): n for s, n in counts.items() if n}
    return counts


def test_jsquad_writes_checks_validates_and_releases_squad(jsquad, tmp_path):
    out = jsquad["out"]
    _accounted(out)
    q = json.loads((out / "questions" / "questions.json").read_text(encoding="utf-8"))
    # the simulated writers copy (the overlap flag) and forget the question form
    assert q["dropped"].get("not_a_question", 0) >= 1 and q["overlap_flagged"] >= 1
    assert q["reference"]["questions"] > 0 and q["reference"]["exact_match"] > 0.8
    a = json.loads((out / "final" / "answers.json").read_text(encoding="utf-8"))
    assert a["validator_answers"] == 2 * a["evaluation_questions"] - 2 * a["dropped"].get(
        "not_validated", 0)  # fmt: skip
    assert 0 < a["exact_match"] < 1 and a["exact_match"] <= a["character_f1"]
    final = pd.read_parquet(out / "final" / "questions.parquet")
    for row in final.itertuples():
        answers = json.loads(row.answers)
        assert answers[0]["text"] == row.answer_text  # the writer's first
        if row.split in ("dev", "test"):
            assert 2 <= len(answers) <= 3  # JSQuAD's dev: the writer's and 1-2 validators'
        else:
            assert len(answers) == 1
        assert row.context.startswith(f"{row.title} [SEP] ")
    counts = _release(out, "jsquad-demo", {"train": "train", "dev": "valid", "test": "test"},
                      tmp_path)  # fmt: skip
    assert sum(counts.values()) == len(final)
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "62,697" in card and "simulated" in card.lower()
    assert "One label fills a split" not in card


def test_klue_mrc_types_unanswerable_and_copying_dropped(mrc, tmp_path):
    out = mrc["out"]
    _accounted(out)
    items = pd.read_parquet(out / "writing" / "items.parquet")
    types = items["question_type"].value_counts().to_dict()
    assert set(types) == {"paraphrase", "multi_sentence", "unanswerable"}
    una = items[items["question_type"] == "unanswerable"]
    assert (una["similar"].str.len() > 0).all()
    assert (una["similar_title"] != una["title"]).all()  # another article's paragraph
    qs = pd.read_parquet(out / "questions" / "questions.parquet")
    assert qs.loc[qs["question_type"] == "unanswerable", "is_impossible"].all()
    assert (qs["overlap"].dropna() < 1.0).all()  # drop_overlap: copying is dropped
    dropped = pd.read_parquet(out / "questions" / "dropped.parquet")
    assert "copies_context" in set(dropped["reason"])
    counts = _release(out, "klue-mrc-demo", {"train": "train", "dev": "dev", "test": "test"},
                      tmp_path)  # fmt: skip
    hub = [
        json.loads(line)
        for s in ("train", "dev", "test")
        for line in (out / "dataset" / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert sum(counts.values()) == len(hub)
    assert {h["question_type"] for h in hub} <= {1, 2, 3}
    assert all(h["is_impossible"] == (h["question_type"] == 3) for h in hub)
    assert all((not h["answers"]["text"]) == h["is_impossible"] for h in hub)
    assert set(hub[0]) == {"guid", "title", "context", "source", "question", "question_type",
                           "is_impossible", "answers"}  # fmt: skip


@pytest.mark.parametrize("kind", ["jsquad", "mrc"])
def test_rerun_resumes_without_duplicate_tasks_and_the_card_is_true(kind, request, server):
    from pipelines.export.card_check import check_card

    run = request.getfixturevalue(kind)
    assert "tasks created" in run["first"] and "0 tasks created" in run["again"]
    assert "hold other data" not in run["again"]  # the same items: none differs
    ls = annotate.client()
    for suffix in ("writing", "validation"):
        items = pd.read_parquet(run["out"] / suffix / "items.parquet")
        project = annotate.find_project(ls, f"{run['name']}-test-{suffix}")
        assert project.task_number == len(items)
    report = check_card(run["out"])
    assert report.mismatches == [], report.mismatches


def test_lm_eval_runs_the_exported_jsquad_task(jsquad, tmp_path):
    """Issue 39: the release's harness task, generation scored by exact match and
    character F1, runs in lm-eval on a tiny local model."""
    from tiny_lm import release_texts, run_lm_eval, tiny_lm

    dataset = jsquad["out"] / "dataset"
    info = json.loads((dataset / "lm_eval" / "harness.json").read_text(encoding="utf-8"))
    model = tiny_lm(tmp_path / "model", release_texts(dataset))
    got = run_lm_eval(model, info["task"], dataset / "lm_eval", tmp_path / "lm")
    scores = got["results"][info["task"]]
    assert {"exact_match,none", "char_f1,none"} <= set(scores)
    n_test = len((dataset / "test.jsonl").read_text(encoding="utf-8").splitlines())
    assert got["n-samples"][info["task"]]["effective"] == n_test


def test_the_reader_baseline_scores_dev_and_test_by_exact_match_and_char_f1(jsquad, tmp_path):
    import shutil
    import subprocess
    import sys

    out = tmp_path / "run"
    shutil.copytree(jsquad["out"], out)
    got = subprocess.run([sys.executable, "-m", "flows.cli", "baseline", str(out), "--epochs",
                          "2"], cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    result = json.loads((out / "baseline" / "baseline.json").read_text(encoding="utf-8"))
    assert set(result["splits"]["test"]["metrics"]) == {"exact_match", "char_f1"}
    assert "## Baselines" in (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", ["jsquad", "mrc"])
def test_the_html_card_reads_without_raw_markdown(kind, request, tmp_path):
    """Issue 54: the JSQuAD and KLUE-MRC cards in headless Chromium."""
    from browser import assert_card_reads_well

    assert_card_reads_well(request.getfixturevalue(kind)["out"] / "dataset", kind, tmp_path)
