"""JGLUE 3.2.2 as the paper prints it (issue 52): JSTS is built from JSTS-A, B and C
("We constructed JSTS from JSTS-A, B, and C"), so a JSTS recipe writes and validates
contradictions (step 4) and rates them with the A and B pairs (step 5); the paper's
counts per step; JNLI's and JSTS's rounds take the paper's numbers of people by default.
The whole chain runs through Label Studio in tests/e2e/test_rebuild_families.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.families import task_kind
from pipelines.families.jglue.construct import PAPER_JSTS
from pipelines.families.jglue.rounds import preflight, task_rounds
from pipelines.families.jglue.section import JglueSpec

ROOT = Path(__file__).resolve().parents[4]
CONTRADICTIONS = ["writing-items", "push-writing", "simulate-writing", "wait-writing",
                  "pull-writing", "written", "push-validation", "simulate-validation",
                  "wait-validation", "pull-validation", "validation"]  # fmt: skip


def _recipe(tmp_path: Path, name: str, edit) -> object:
    data = yaml.safe_load((ROOT / "recipes" / f"{name}.yaml").read_text(encoding="utf-8"))
    for corpus in data["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
    edit(data["jglue"])
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_recipe(path)


def test_jsts_is_built_from_jsts_a_b_and_c_by_default():
    """3.2.2: JSTS-C is the validated contradictions rated in the same way as steps 1
    and 2; the JSTS demo writes and validates them before the one STS round."""
    assert JglueSpec(releases=["x"]).jsts_c is True
    recipe = load_recipe(ROOT / "recipes" / "jsts-demo.yaml")
    steps = task_kind("jsts").steps_for(recipe)
    at = steps.index("writing-items")
    assert steps[at : at + len(CONTRADICTIONS)] == CONTRADICTIONS
    assert steps.index("validation") < steps.index("push-sts") < steps.index("sts")
    assert task_rounds(recipe) == ["writing", "validation", "sts"]


def test_a_jsts_recipe_without_the_contradiction_rounds_is_refused_or_says_it_departs(
    tmp_path,
):
    def without(jglue: dict) -> None:
        del jglue["writing_round"], jglue["validation_round"]

    recipe = _recipe(tmp_path, "jsts-demo", without)
    with pytest.raises(RecipeError, match=r"writing_round.*validation_round.*jsts_c: false"):
        preflight(recipe)

    def departs(jglue: dict) -> None:
        without(jglue)
        jglue["jsts_c"] = False

    recipe = _recipe(tmp_path, "jsts-demo", departs)
    preflight(recipe)
    steps = task_kind("jsts").steps_for(recipe)
    assert not set(CONTRADICTIONS) & set(steps) and task_rounds(recipe) == ["sts"]


def test_the_papers_counts_per_jsts_step():
    """3.2.2 steps 1, 2 and 5: 16,000 -> 10,236 (A), 4,000 -> 2,970 (B), 3,779 ->
    2,303 (C); the card prints them beside the run's."""
    assert PAPER_JSTS == {
        "A": {"pairs": 16000, "kept": 10236},
        "B": {"pairs": 4000, "kept": 2970},
        "C": {"pairs": 3779, "kept": 2303},
    }
