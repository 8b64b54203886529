"""Pilot and control rounds (issue 35) short of a server: known-answer files checked
against the interface, the steps and rounds a recipe adds to any family, and the
simulated applicants (one fails the pilot, a careless one passes it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pipelines.annotation.gold_items import GoldItemsError, read_gold_items
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.simulate import Annotator, plan
from pipelines.core.recipe import load_recipe
from pipelines.rebuild.kinds import task_kind
from pipelines.rebuild.people import PILOT_STEPS, with_people_steps
from pipelines.rebuild.rounds import expand_plan

ROOT = Path(__file__).resolve().parents[3]
STS = parse_label_config(ROOT / "annotation_configs" / "sts.xml")
NLI = parse_label_config(ROOT / "annotation_configs" / "nli_validation.xml")


def _write(tmp_path: Path, rows: list) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_the_shipped_pilot_and_control_files_fit_their_interfaces():
    people = ROOT / "data" / "demo" / "people"
    assert len(read_gold_items(people / "sts-pilot.jsonl", STS)) == 20
    assert len(read_gold_items(people / "sts-controls.jsonl", STS)) == 40
    nli = read_gold_items(people / "nli-pilot.jsonl", NLI, "label")
    assert set(nli["value"]) == {"entailment", "neutral", "contradiction"}


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"item_id": "p1", "sentence1": "가", "sentence2": "나", "value": 6},
            "outside the scale 0-5",
        ),
        ({"item_id": "p1", "sentence1": "가", "sentence2": "나", "value": "high"}, "not a number"),
        ({"item_id": "p1", "sentence1": "가", "value": 3}, r"no \['sentence2'\]"),
        ({"sentence1": "가", "sentence2": "나", "value": 3}, "no item_id"),
        ({"item_id": "p1", "sentence1": "가", "sentence2": "나"}, "no value"),
    ],
)
def test_a_bad_known_answer_names_the_file_and_line(tmp_path, row, message):
    good = {"item_id": "p0", "sentence1": "가", "sentence2": "나", "value": 3.8}
    path = _write(tmp_path, [good, row])
    with pytest.raises(GoldItemsError, match=rf"gold.jsonl: line 2: .*{message}"):
        read_gold_items(path, STS)


def test_a_label_outside_the_choices_and_a_repeated_id_are_errors(tmp_path):
    row = {"item_id": "p1", "premise": "가", "hypothesis": "나", "value": "maybe"}
    with pytest.raises(GoldItemsError, match="not one of the interface's answers"):
        read_gold_items(_write(tmp_path, [row]), NLI, "label")
    row["value"] = "neutral"
    with pytest.raises(GoldItemsError, match="line 2: item_id 'p1' is on line 1 too"):
        read_gold_items(_write(tmp_path, [row, row]), NLI, "label")


def test_the_recipe_adds_the_pilot_before_the_first_round_and_controls_before_push():
    sts = load_recipe(ROOT / "recipes" / "sts-demo.yaml")
    steps = task_kind("klue-sts").steps_for(sts)
    assert steps[steps.index("pilot") : steps.index("qualify") + 1] == expand_plan(PILOT_STEPS)
    assert expand_plan(PILOT_STEPS) == ["pilot", "push-pilot", "simulate-pilot", "wait-pilot",
                                        "pull-pilot", "qualify"]  # fmt: skip
    assert steps.index("qualify") < steps.index("controls") == steps.index("push") - 1
    nli = load_recipe(ROOT / "recipes" / "nli-demo.yaml")
    steps = task_kind("klue-nli").steps_for(nli)
    assert steps.index("qualify") < steps.index("push-writing")
    plain = load_recipe(ROOT / "recipes" / "tc-demo.yaml")
    assert with_people_steps(plain, ["push"]) == ["push"]


def _people(k: int, careless: int, unqualified: int) -> list[Annotator]:
    return [Annotator(100 + i, f"a{i}@x", 0.0, 0.4, 0.9, careless=i >= k - careless,
                      unqualified=k - careless - unqualified <= i < k - careless)
            for i in range(k)]  # fmt: skip


def _tasks(n: int) -> list[dict]:
    return [{"data": {"item_id": f"i{k}", "sentence1": "가", "sentence2": "나",
                      "sim_similarity": float(k % 6)}, "annotations": []}
            for k in range(n)]  # fmt: skip


def test_in_the_pilot_the_unqualified_answer_at_random_and_the_careless_with_care():
    people = _people(5, careless=1, unqualified=1)
    assert [p.unqualified for p in people] == [False, False, False, True, False]
    jobs = plan(STS, _tasks(30), people, overlap=5, seed=0, phase="pilot")
    by = {}
    for index, who, payload in jobs:
        if payload["was_cancelled"]:
            continue
        value = float(payload["result"][0]["value"]["choices"][0])
        by.setdefault(who.email, []).append((value, float(index % 6)))

    def r(email: str) -> float:
        x, y = np.array(by[email]).T
        return float(np.corrcoef(x, y)[0, 1])

    assert r("a4@x") > 0.8  # careless in the main round, careful in the pilot
    assert r("a3@x") < 0.5  # unqualified: at random
    assert all(who.careless == who.unqualified for _, who, _ in jobs)


def test_in_the_main_round_the_unqualified_come_on_top_of_the_overlap():
    people = _people(6, careless=1, unqualified=1)
    jobs = plan(STS, _tasks(40), people, overlap=4, seed=0, phase="main")
    done: dict[int, list] = {}
    for index, who, payload in jobs:
        if not payload["was_cancelled"]:
            done.setdefault(index, []).append(who)
    for whos in done.values():
        assert sum(not w.unqualified for w in whos) == 4
    assert any(w.unqualified for whos in done.values() for w in whos)
    assert {w.email for _, w, _ in jobs if w.careless} == {"a4@x", "a5@x"}


def _nli_recipe(tmp_path: Path, change) -> Path:  # noqa: ANN001
    import yaml

    recipe = yaml.safe_load((ROOT / "recipes" / "nli-demo.yaml").read_text(encoding="utf-8"))
    change(recipe["annotation"])
    path = ROOT / "recipes" / f".test-{tmp_path.name}.yaml"  # relative paths stay valid
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: a["pilot"].update(rule={"kind": "min_pearson", "threshold": 0.5}),
         "min_pearson needs numeric gold values"),
        (lambda a: a["pilot"].update(rule={"kind": "min_correct", "threshold": 4, "of": 12}),
         "at least 4 of 12 gold items right can never be met with the 10 gold items"),
        (lambda a: (a.pop("simulate"), a.pop("writing")), "annotation.pilot.applicants"),
    ],
)  # fmt: skip
def test_the_preflight_names_a_pilot_that_cannot_work(tmp_path, change, message):
    from pipelines.rebuild.people import check_people

    path = _nli_recipe(tmp_path, change)
    try:
        with pytest.raises(ValueError, match=message):
            check_people(load_recipe(path), path)
    finally:
        path.unlink()


def test_the_pilot_step_checks_gold_items_against_the_pilots_own_interface(tmp_path):
    """A pilot with its own ``config`` is checked against that interface, as the
    preflight and its round use it: NLI-labelled gold items before an STS round."""
    import yaml

    from pipelines.core.steps import RunContext
    from pipelines.rebuild.people import check_people, interface, known_items

    recipe = yaml.safe_load((ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8"))
    recipe["annotation"]["pilot"] = {
        "gold": "../data/demo/people/nli-pilot.jsonl",
        "config": "../annotation_configs/nli_validation.xml",
        "rule": {"kind": "min_correct", "threshold": 7, "of": 10},
    }
    path = ROOT / "recipes" / f".test-{tmp_path.name}.yaml"  # relative paths stay valid
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    try:
        loaded = load_recipe(path)
        check_people(loaded, path)
        ctx = RunContext(loaded, path, tmp_path / "out", task_kind(loaded.task), True)
        assert interface(ctx, pilot=True).name == "nli_validation.xml"
        assert interface(ctx).name == "sts.xml"
        gold = known_items(ctx, loaded.annotation.pilot.gold, pilot=True)
        assert set(gold["value"]) == {"entailment", "neutral", "contradiction"}
        with pytest.raises(GoldItemsError, match="reads"):  # not the STS interface's items
            known_items(ctx, loaded.annotation.pilot.gold)
    finally:
        path.unlink()
