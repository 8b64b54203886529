"""Every shipped demo recipe (``recipes/*-demo.yaml``, issue 34 item 7: thirteen of them,
KorNLI and the five KoBEST tasks included) loads and passes the rebuild's preflight:
its task kind is registered, its sections, corpora, licence files and annotation
configs are there, and its sources read, before any server starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.core.recipe import load_recipe
from pipelines.preflight import check_rebuild_recipe
from pipelines.rebuild.kinds import task_kind

ROOT = Path(__file__).resolve().parents[3]
DEMOS = sorted((ROOT / "recipes").glob("*-demo.yaml"))
REBUILDS = [p for p in DEMOS if load_recipe(p).task is not None]


def test_a_demo_recipe_ships_for_every_dataset_the_readme_names():
    tasks = {load_recipe(p).task for p in REBUILDS}
    assert {"kornli", "korsts", "kobest-boolq", "kobest-copa", "kobest-wic",
            "kobest-hellaswag", "kobest-sentineg"} <= tasks  # fmt: skip
    assert {"klue-ner", "klue-re", "jsquad", "klue-mrc", "marc-ja", "jcqa"} <= tasks
    assert len(REBUILDS) == 19


@pytest.mark.parametrize("path", REBUILDS, ids=lambda p: p.stem)
def test_each_demo_recipe_passes_the_rebuild_preflight(path):
    recipe = load_recipe(path)
    check_rebuild_recipe(recipe, path)
    kind = task_kind(recipe.task)
    if kind.preflight is not None:
        kind.preflight(recipe)
