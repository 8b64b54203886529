"""Checks that run before any work starts (and before a Dask cluster or a server starts),
so that a run that cannot finish fails in seconds with a message naming the file and
the problem, instead of after ingest or after the annotation rounds.

- ``check_ingest_inputs``: every corpus file exists, is not empty and decodes with its
  encoding; every detector checkpoint named by the recipe is a checkpoint directory.
- ``check_rebuild_recipe``: the sections a ``benchforge rebuild`` chain needs are there,
  and the annotation configs exist (the agreement and split sections are validated by
  ``load_recipe`` itself).
"""

from __future__ import annotations

from pathlib import Path

from pipelines.core.recipe import Recipe, RecipeError
from pipelines.ingest.readers import check_corpus_file
from pipelines.models.checkpoints import is_checkpoint
from pipelines.models.classifier import ClassifierError


def check_ingest_inputs(recipe: Recipe, recipe_path: Path | str) -> None:
    """Corpus files and detector checkpoints (see the module docstring)."""
    for name, spec in recipe.filters.classifiers.detectors.items():
        path = recipe.resolve(spec.model)
        if not is_checkpoint(str(path)):
            raise ClassifierError(
                f"{recipe_path}: filters.classifiers.detectors.{name}.model: {path} is "
                "not a checkpoint directory (no config.json)"
            )
    for corpus in recipe.corpora:
        check_corpus_file(corpus, recipe.corpus_path(corpus))


def check_rebuild_recipe(recipe: Recipe, path: Path | str) -> None:
    """The sections a rebuild chain needs, and its annotation configs."""
    layout = recipe.export.layout
    need = ["annotation", "agreement", "split"] + (["pairing"] if layout == "klue-sts" else [])
    missing = [s for s in need if not getattr(recipe, s)]
    if missing:
        raise RecipeError(f"{path}: a rebuild recipe needs the sections {missing}")
    ann = recipe.annotation
    if layout == "klue-nli" and (recipe.items.premises is None or ann.writing is None):
        raise RecipeError(
            f"{path}: a klue-nli rebuild needs items.premises (KLUE's premise rules) and "
            "annotation.writing (the hypothesis-writing round)"
        )
    configs = [("annotation.config", ann.config)]
    if ann.writing:
        configs.append(("annotation.writing.config", ann.writing.config))
    for field, config in configs:
        if not recipe.resolve(config).is_file():
            raise RecipeError(f"{path}: {field}: {recipe.resolve(config)} not found")
