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
    assert {"klue-ner", "klue-re", "klue-dp", "jsquad", "klue-mrc", "marc-ja", "jcqa"} <= tasks
    assert len(REBUILDS) == 20


@pytest.mark.parametrize("path", REBUILDS, ids=lambda p: p.stem)
def test_each_demo_recipe_passes_the_rebuild_preflight(path):
    recipe = load_recipe(path)
    check_rebuild_recipe(recipe, path)
    kind = task_kind(recipe.task)
    if kind.preflight is not None:
        kind.preflight(recipe)


def test_a_recipes_guideline_that_is_empty_or_does_not_match_is_refused_at_load(tmp_path):
    """Issue 55, bad input: the main round's guideline is checked against its interface
    before any work, and the error names the recipe, the setting and the file."""
    import yaml

    from pipelines.core.recipe import RecipeError

    source = ROOT / "recipes" / "sts-demo.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    for corpus in data["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((source.parent / corpus[key]).resolve())
    data["annotation"]["config"] = str(ROOT / "annotation_configs" / "sts.xml")
    guide = tmp_path / "guide.md"
    path = tmp_path / "recipe.yaml"
    cases = {
        "": "guide.md: line 1: the header names the annotators' language",
        "lang: ko\n\n# 지침\n\n| 단축키 | 항목 | 코드 |\n|---|---|---|\n":
            "guide.md: the guideline is empty",
        (ROOT / "annotation_configs/guidelines/nli_validation.md").read_text(encoding="utf-8"):
            "is in sts.xml but not in the hotkey table",
    }  # fmt: skip
    for text, message in cases.items():
        guide.write_text(text, encoding="utf-8")
        data["annotation"]["guideline"] = str(guide)
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        with pytest.raises(
            RecipeError, match="annotation.config: .*" + message.replace("(", r"\(")
        ):
            check_rebuild_recipe(load_recipe(path), path)
