"""``benchforge rebuild`` of recipes/klue-dp-demo.yaml made small (issue 57): a small
biaffine parser trained on the CPU on one shipped UD Korean file, a real Prefect run and
a real Label Studio server with the parse pre-loaded as predictions, a pilot of known
trees that one applicant fails, one careless annotator screened out, the tree vote, the
linguists' review, the balanced split, the release in the KLUE-DP layout read back byte
for byte, its errata checks, UAS/LAS in ``evaluate``, the baseline beside
right-branching, a true card; rerun without duplicate tasks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_rebuild import rebuild

from pipelines.annotation import annotate
from pipelines.families.klue.dp_layout import read_file, tree_faults

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


@pytest.fixture(scope="module")
def dp_rebuilt(family_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("klue-dp")
    recipe = yaml.safe_load((ROOT / "recipes" / "klue-dp-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((ROOT / "recipes" / corpus[key]).resolve())
        corpus["limit"] = 40 if corpus["style"] == "formal" else 150
    recipe["dp"]["parser"]["train"] = [
        str(ROOT / "data" / "demo" / "ud-korean" / "ko_gsd-ud-dev.conllu.gz")]  # fmt: skip
    recipe["dp"]["parser"]["settings"] = {"epochs": 10}  # ~20 s on 855 sentences
    recipe["dp"]["review"]["project"] = "klue-dp-test-linguists"
    recipe["annotation"]["project"] = "klue-dp-test"
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "dp.xml")
    recipe["annotation"]["pilot"]["gold"] = str(ROOT / "data" / "demo" / "klue-dp" / "pilot.jsonl")
    path = folder / "klue-dp.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    first = rebuild(path, out, family_server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, family_server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "first": first.stdout, "again": again.stdout, "recipe": recipe}


def test_the_parser_beats_right_branching_and_sentences_are_selected(dp_rebuilt):
    out = dp_rebuilt["out"]
    summary = json.loads((out / "parser" / "summary.json").read_text(encoding="utf-8"))
    assert summary["trained"] and summary["learned"]
    assert summary["dev"]["uas"] > summary["right_branching_dev_uas"]
    info = json.loads((out / "items" / "items.json").read_text(encoding="utf-8"))
    assert info["sentences"] == info["items"] + sum(info["dropped"].values())
    assert set(info["dropped"]) <= {"too_short", "too_long", "incomplete"}
    rejects = pd.read_parquet(out / "items" / "rejects.parquet")
    assert len(rejects) == sum(info["dropped"].values())
    assert info["reference_check"]["sentences"] > 0  # the UD sentences' own trees
    items = pd.read_parquet(out / "items" / "items.parquet")
    for words, text in zip(items["words"], items["text"], strict=True):
        assert " ".join(words) == text  # word forms byte for byte


def test_label_studio_tasks_carry_the_parse_and_are_not_duplicated(dp_rebuilt):
    steps = [line for line in dp_rebuilt["again"].splitlines() if line.startswith("[")]
    assert "0 tasks created" in dp_rebuilt["again"], steps
    assert any("(cached)" in line for line in steps if " items " in line), steps
    ls = annotate.client()
    project = annotate.find_project(ls, "klue-dp-test")
    tasks = annotate.export_tasks(ls, project.id)
    items = pd.read_parquet(dp_rebuilt["out"] / "items" / "items.parquet").set_index("item_id")
    assert len(tasks) == len(items)
    predictions: dict[int, list] = {}
    for pred in ls.predictions.list(project=project.id):
        predictions.setdefault(pred.task, []).append(pred)
    for task in tasks:
        (pred,) = predictions[task["id"]]  # one prediction per task, after two runs
        words = [r for r in pred.result if r.get("type") == "labels"]
        arcs = sorted((int(r["from_id"][1:]), int(r["to_id"][1:]), r["labels"][0])
                      for r in pred.result if r.get("type") == "relation")  # fmt: skip
        pseudo = json.loads(items.loc[task["data"]["item_id"], "pseudo"])
        assert len(words) == len(pseudo) == len(task["data"]["words"])
        assert arcs == [(d, h, lab) for d, (h, lab) in enumerate(pseudo, start=1) if h]
        assert pred.model_version.startswith("biaffine")
        assert "ls_prediction" not in task["data"]


def test_the_pilot_of_known_trees_keeps_out_who_cannot_draw_one(dp_rebuilt):
    out = dp_rebuilt["out"]
    results = pd.read_parquet(out / "pilot" / "results.parquet")
    assert len(results) == 6 and results["answered"].eq(5).all()
    failed = results[~results["passed"]]
    assert (
        len(failed) == 1
        and failed["score"].iloc[0] < 0.7 <= results["score"].drop(failed.index).min()
    )
    dropped = pd.read_parquet(out / "agree" / "dropped.parquet")
    excluded = dropped[dropped["reason"] == "not_qualified"]
    assert list(excluded["id"]) == list(failed["annotator_id"])
    shown = pd.read_parquet(out / "pilot" / "items.parquet")
    assert "value" not in shown.columns and "ls_prediction" not in shown.columns  # no parse shown


def test_the_careless_annotator_is_screened_and_the_vote_is_a_tree(dp_rebuilt):
    out = dp_rebuilt["out"]
    dropped = pd.read_parquet(out / "agree" / "dropped.parquet")
    screened = dropped[dropped["kind"] == "annotator"]
    assert list(screened["reason"]) == ["not_qualified", "low_element_f1"]
    agreement = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    assert 0 < agreement["uas"] <= 1 and agreement["las"] <= agreement["uas"]
    gold = pd.read_parquet(out / "gold" / "gold.parquet")
    for value in gold["label"]:
        heads = [h for h, _ in json.loads(value)]
        assert not tree_faults(heads) and heads[-1] == 0
        assert all(h > i for i, h in enumerate(heads[:-1], start=1))
    facts = json.loads((out / "gold" / "gold.json").read_text(encoding="utf-8"))
    assert facts["reviewed"] == len(gold) and facts["label_agreement"]
    versions = pd.read_parquet(out / "gold" / "versions.parquet")
    assert {"pseudo", "annotation", "draft", "reviewed"} <= set(versions["version"])


def test_dev_and_test_balance_the_styles(dp_rebuilt):
    out = dp_rebuilt["out"]
    trees = json.loads((out / "split" / "trees.json").read_text(encoding="utf-8"))
    for split in ("dev", "test"):
        counts = {r["style"]: r["sentences"] for r in trees["rows"] if r["split"] == split}
        assert set(counts) == {"formal", "colloquial"} and len(set(counts.values())) == 1


def test_the_release_layout_round_trips_and_passes_its_checks(dp_rebuilt, tmp_path):
    out = dp_rebuilt["out"]
    for split in ("train", "dev", "test"):
        tsv = out / "release" / f"klue-dp-v1.1_{split}.tsv"
        lines = (out / "dataset" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        records = [json.loads(x) for x in lines]
        release = read_file(tsv)
        assert [s.guid for s in release.sentences] == [r["guid"] for r in records]
        trees, back = tmp_path / f"{split}.jsonl", tmp_path / f"{split}.tsv"
        for direction, source, target in (("to-trees", tsv, trees), ("from-trees", trees, back)):
            done = cli("klue", "dp-layout", direction, str(source), "--out", str(target))
            assert done.returncode == 0, done.stderr
        assert back.read_bytes() == tsv.read_bytes()
        check = cli("klue", "dp-check", str(tsv), "--json")
        assert check.returncode == 0, check.stdout + check.stderr
    errata = json.loads((out / "release" / "errata.json").read_text(encoding="utf-8"))
    trees = json.loads((out / "split" / "trees.json").read_text(encoding="utf-8"))
    assert {s: e["problems"] for s, e in errata.items()} == {
        s: e["problems"] for s, e in trees["errata"].items()}  # fmt: skip


def test_evaluate_gives_uas_las_and_the_baseline_beats_right_branching(dp_rebuilt, tmp_path):
    from pipelines.export.card_check import check_card

    out = tmp_path / "run"
    shutil.copytree(dp_rebuilt["out"], out)
    test = [json.loads(x) for x in
            (out / "dataset" / "test.jsonl").read_text(encoding="utf-8").splitlines()]  # fmt: skip
    perfect = tmp_path / "gold.jsonl"
    perfect.write_text("".join(json.dumps({"guid": r["guid"], "prediction": {
        "head": r["head"], "deprel": r["deprel"]}}) + "\n" for r in test))  # fmt: skip
    ev = cli("evaluate", str(out), "--split", "test", "--predictions", str(perfect), "--json")
    assert ev.returncode == 0, ev.stderr
    metrics = json.loads(ev.stdout)["metrics"]
    assert metrics["uas"] == metrics["las"] == 100.0 and "uas_formal" in metrics
    got = cli("baseline", str(out), "--epochs", "3")
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    result = json.loads((out / "baseline" / "baseline.json").read_text(encoding="utf-8"))
    for split in ("dev", "test"):
        s = result["splits"][split]
        assert s["reference"]["metrics"]["uas"] is not None
        assert set(s["metrics"]) >= {"uas", "las", "klue_las_macro_f1"}
    result_check = check_card(out)
    assert not result_check.mismatches and not result_check.unchecked
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    for phrase in ("right-branching", "held-out UD sentences", "Errata checks",
                   "correction rate", "Review by linguists"):  # fmt: skip
        assert phrase in card, phrase
