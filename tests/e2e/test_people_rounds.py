"""Issue 35 end to end: a small KLUE-STS rebuild with a qualification (pilot) round and
control items, against a real Label Studio server and a real Prefect run. One simulated
applicant cannot do the task and fails the pilot; a careless one passes it and is
screened out by the control items; both are in the outputs and the card, and a rerun
creates no task twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipelines.annotation import annotate

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def _recipe(folder: Path) -> Path:
    recipe = yaml.safe_load((ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        corpus["limit"] = 600
    recipe["name"] = "sts-people-test"
    recipe.pop("project_prefix", None)  # the projects are named after this test's recipe
    recipe["annotation"]["project"] = "sts-people-test"  # the demo names its own
    recipe["pairing"]["corpora"][0]["gsm"] = {"pool": 300, "pairs": 60}
    recipe["items"]["sample"] = 30
    ann = recipe["annotation"]
    ann.update(config=str(ROOT / "annotation_configs" / "sts.xml"), overlap=3,
               simulate={"annotators": 5, "seed": 0, "careless": 1, "unqualified": 1})  # fmt: skip
    ann["pilot"]["gold"] = str(ROOT / "data/demo/people/sts-pilot.jsonl")
    ann["guideline"] = str(ROOT / "annotation_configs/guidelines/sts.md")
    ann["controls"].update(items=str(ROOT / "data/demo/people/sts-controls.jsonl"), share=0.2)
    recipe["split"]["eval_fraction"] = 0.3
    path = folder / "sts-people-test.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def _rebuild(recipe: Path, out: Path, port: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", "rebuild", str(recipe), "--out", str(out),
         "--port", str(port)],
        cwd=ROOT, capture_output=True, text=True, timeout=900, env=os.environ.copy(),
    )  # fmt: skip


@pytest.fixture(scope="module")
def run(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("people")
    recipe, out = _recipe(folder), folder / "out"
    first = _rebuild(recipe, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    ls = annotate.client()
    ids = {u.email.split("@")[0]: f"ls-user-{u.id}" for u in ls.users.list()}
    return {"recipe": recipe, "out": out, "first": first.stdout, "ids": ids, "port": server["port"]}


def test_the_applicant_who_cannot_do_the_task_fails_the_pilot(run):
    facts = json.loads((run["out"] / "pilot" / "qualification.json").read_text(encoding="utf-8"))
    failed = {a["annotator_id"] for a in facts["annotators"] if not a["passed"]}
    assert facts["applicants"] == 5 and facts["passed"] == 4
    assert failed == {run["ids"]["annotator-04"]}  # the unqualified one: just before the careless
    careless = next(
        a for a in facts["annotators"] if a["annotator_id"] == run["ids"]["annotator-05"]
    )
    assert careless["passed"]  # careful in the pilot
    results = pd.read_parquet(run["out"] / "pilot" / "results.parquet")
    assert len(results) == 5 and results["score"].between(-1, 1).all()
    pilot = pd.read_parquet(run["out"] / "pilot" / "annotations.parquet")
    assert pilot.groupby("annotator_id")["item_id"].nunique().eq(20).all()  # every gold item


def test_the_main_round_excludes_the_unqualified_and_screens_the_careless(run):
    out, ids = run["out"], run["ids"]
    dropped = pd.read_parquet(out / "agree" / "dropped.parquet")
    people = dropped[dropped["kind"] == "annotator"].set_index("id")["reason"].to_dict()
    assert people.get(ids["annotator-04"]) == "not_qualified"
    assert people.get(ids["annotator-05"]) == "low_control_accuracy"
    table = pd.read_parquet(out / "annotate" / "annotations.parquet")
    excluded = pd.read_parquet(out / "agree" / "excluded_annotations.parquet")
    controls = pd.read_parquet(out / "controls" / "controls.parquet")
    assert len(controls) == 8  # ceil(30 * 0.2 / 0.8)
    assert set(excluded["reason"]) == {"control_item", "not_qualified", "low_control_accuracy"}
    assert set(excluded.loc[excluded["reason"] == "control_item", "item_id"]) <= set(
        controls["item_id"]
    )
    # nothing lost: every pulled row is either excluded (with its reason) or counted
    kept = table[
        ~table["item_id"].isin(controls["item_id"])
        & ~table["annotator_id"].isin([ids["annotator-04"], ids["annotator-05"]])
    ]
    assert len(kept) + len(excluded) == len(table)  # fmt: skip
    gold = pd.read_parquet(out / "agree" / "gold.parquet")
    assert not gold["item_id"].isin(controls["item_id"]).any()
    items = pd.read_parquet(out / "controls" / "items.parquet")
    assert "value" not in items and "control_value" not in items  # answers not in the tasks


def test_the_card_shows_the_pilot_and_the_controls(run):
    card = (run["out"] / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "**Qualification (pilot) round.** 5 applicants answered the 20 gold items" in card
    assert "**4 of 5 passed**; 1 did not" in card
    assert "Pearson r with the gold scores at least 0.7" in card
    assert "**Control items.** 8 items with known answers were shuffled into the round" in card
    assert f"(reason `low_control_accuracy`): `{run['ids']['annotator-05']}`" in card
    check = subprocess.run(
        [sys.executable, "-m", "flows.cli", "card", "check", str(run["out"])],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_rerun_creates_no_task_twice(run):
    again = _rebuild(run["recipe"], run["out"], run["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    ls = annotate.client()
    pilot = annotate.find_project(ls, "sts-people-test-pilot")
    main = annotate.find_project(ls, "sts-people-test")
    assert ls.projects.get(id=pilot.id).task_number == 20
    assert ls.projects.get(id=main.id).task_number == 38  # 30 items and 8 controls


def test_reported_items_go_through_the_review_round(run):
    """``reports: review`` (the demo recipe's): every reported item has a reviewer's
    decision kept with it, and the card gives the counts."""
    out = run["out"]
    reported = pd.read_parquet(out / "review" / "items.parquet")
    figures = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    review = figures["review"]
    assert review["reported"] == len(reported)
    assert review["kept"] + review["fixed"] + review["fix_without_change"] + review[
        "dropped"
    ] + review["not_reviewed"] == len(reported)
    assert review["not_reviewed"] == 0
    gold = pd.read_parquet(out / "agree" / "gold.parquet")
    dropped = pd.read_parquet(out / "agree" / "dropped.parquet")
    for item in reported["item_id"]:
        if item in set(gold["item_id"]):
            row = gold.set_index("item_id").loc[item]
            assert row["review_decision"] in ("keep", "fix") and row["reviewer"]
        else:
            assert item in set(dropped["id"])
    assert (out / "review" / "review.xml").is_file()
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert f"the {len(reported)} items annotators reported went to a review round" in card


def test_other_people_answer_test_items_for_the_human_performance(run):
    out = run["out"]
    perf = json.loads((out / "human" / "performance.json").read_text(encoding="utf-8"))
    splits = pd.read_parquet(out / "split" / "splits.parquet")
    shown = pd.read_parquet(out / "human" / "items.parquet")
    assert set(shown["item_id"]) <= set(splits.loc[splits["split"] == "test", "item_id"])
    assert perf["kind"] == "rating" and perf["sampled"] == len(shown)
    assert perf["combined"]["pearson"] is not None and -1 <= perf["combined"]["pearson"] <= 1
    humans = {p["annotator_id"] for p in perf["people"]}
    annotators = set(pd.read_parquet(out / "annotate" / "annotations.parquet")["annotator_id"])
    assert humans and not humans & annotators  # separate people
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "**Human performance (simulated people" in card
