"""Settings beside their stages (issue 53): each shared stage registers its own recipe
section from its own settings module (``filters``: quality, ``pairing``, ``annotation``,
``card``: export; KLUE's ``items``), ``pipelines/core/recipe.py`` keeps the shell, and a
section registered with a default is there when a recipe leaves it out, so
``recipe.filters.noise`` works on every recipe."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

import pipelines.core.recipe as core_recipe
from pipelines.core.plugins import RECIPE_SECTIONS, RecipeSection, register_section
from pipelines.core.recipe import Recipe, RecipeError, Strict, load_recipe, recipe_schema

ROOT = Path(__file__).resolve().parents[3]
BASE = ("name: t\ncorpora:\n  - name: toy\n    path: c.txt\n    format: txt\n"
        "    license: CC0-1.0\n    domain: test\n    style: formal\n")  # fmt: skip
# the shell: what every layer reads (the release licence needs corpora and export)
SHELL = {
    "name",
    "description",
    "task",
    "language",
    "corpora",
    "runner",
    "export",
    "base_dir",
    "project_prefix",
}
OWNERS = {
    "filters": "pipelines.quality.settings",
    "pairing": "pipelines.pairing.settings",
    "annotation": "pipelines.annotation.settings",
    "card": "pipelines.export.settings",
    "items": "pipelines.families.klue.items_section",
    "agreement": "pipelines.core.recipe",  # StageOptions, registered by agreement
    "split": "pipelines.core.recipe",
}


def _recipe(tmp_path: Path, body: str = "") -> Path:
    (tmp_path / "c.txt").write_text("a b\n", encoding="utf-8")
    path = tmp_path / "recipe.yaml"
    path.write_text(BASE + body, encoding="utf-8")
    return path


def test_each_stage_registers_its_own_section_and_core_keeps_the_shell():
    for name, module in OWNERS.items():
        assert RECIPE_SECTIONS.get(name).model.__module__ == module, name
    assert set(Recipe.model_fields) == SHELL
    models = {name for name, value in vars(core_recipe).items()
              if isinstance(value, type) and issubclass(value, BaseModel)
              and value.__module__ == core_recipe.__name__}  # fmt: skip
    assert models == {"Strict", "CorpusSpec", "RunnerSettings", "StageOptions", "ExportSpec",
                      "Recipe"}  # fmt: skip


def test_a_section_left_out_is_its_default_or_none(tmp_path):
    from pipelines.export.settings import CardSpec
    from pipelines.families.klue.items_section import ItemsSpec
    from pipelines.quality.settings import FilterSettings

    recipe = load_recipe(_recipe(tmp_path))
    assert recipe.filters == FilterSettings() and recipe.filters.noise.max_cjk_chars == 10
    assert recipe.items == ItemsSpec() and recipe.card == CardSpec()
    assert recipe.pairing is None and recipe.annotation is None
    dumped = recipe.model_dump()
    assert dumped["filters"] == FilterSettings().model_dump() and dumped["pairing"] is None
    props = recipe_schema()["properties"]
    assert "anyOf" not in props["filters"] and "anyOf" in props["pairing"]  # null only there


def test_a_registered_default_is_given_checked_and_dumped(tmp_path):
    class Toy(Strict):
        min_words: int = Field(default=2, ge=1)

    register_section(RecipeSection("toy", Toy, "a toy section", default=Toy))
    try:
        assert load_recipe(_recipe(tmp_path)).toy == Toy()
        assert load_recipe(_recipe(tmp_path)).model_dump()["toy"] == {"min_words": 2}
        assert load_recipe(_recipe(tmp_path, "toy:\n  min_words: 3\n")).toy.min_words == 3
        with pytest.raises(RecipeError, match=r"recipe\.yaml: toy\.min_words: Input should"):
            load_recipe(_recipe(tmp_path, "toy:\n  min_words: 0\n"))
        assert "anyOf" not in recipe_schema()["properties"]["toy"]
    finally:
        RECIPE_SECTIONS.remove("toy")


def test_the_pairing_section_checks_the_corpora_it_names(tmp_path):
    body = "pairing:\n  corpora:\n    - corpus: other\n      gsm: {}\n"
    with pytest.raises(RecipeError, match=r"recipe\.yaml: pairing names corpora the recipe "
                                          r"does not have: \['other'\]"):  # fmt: skip
        load_recipe(_recipe(tmp_path, body))
    # another ingest's output (input): its corpora are not the recipe's
    assert load_recipe(_recipe(tmp_path, body + "  input: elsewhere\n")).pairing.input


def test_a_loaded_recipe_with_its_sections_pickles_for_a_worker():
    recipe = load_recipe(ROOT / "recipes" / "sts-demo.yaml")
    again = pickle.loads(pickle.dumps(recipe))
    assert again == recipe and type(again).__name__ == "LoadedRecipe"
    assert again.pairing.corpora[0].corpus == recipe.pairing.corpora[0].corpus
