"""Checks that run before any work starts (and before a Dask cluster or a server starts),
so that a run that cannot finish fails in seconds with a message naming the file and
the problem, instead of after ingest or after the annotation rounds.

- ``check_ingest_inputs``: every corpus file exists, is not empty and decodes with its
  encoding (the detector folders a recipe names are checked when it loads:
  ``pipelines.quality.settings``).
- ``check_rebuild_recipe``: the sections a ``benchforge rebuild`` chain needs are there,
  and the annotation configs exist (the agreement and split sections are validated by
  ``load_recipe`` itself); a pilot's gold items and the control items fit the interface
  and the pass rule can be met.
"""

from __future__ import annotations

from pathlib import Path

from pipelines.annotation.guidelines import GuidelineError, round_guideline
from pipelines.annotation.label_config import LabelConfigError, parse_label_config
from pipelines.core.recipe import Recipe, RecipeError
from pipelines.ingest.readers import check_corpus_file
from pipelines.rebuild.kinds import task_kind
from pipelines.rebuild.people import check_people


def check_ingest_inputs(recipe: Recipe, recipe_path: Path | str) -> None:
    """Corpus files and licence files (see the module docstring)."""
    for corpus in recipe.corpora:
        check_corpus_file(corpus, recipe.corpus_path(corpus))
    check_licence_files(recipe, recipe_path)


def check_licence_files(recipe: Recipe, recipe_path: Path | str) -> None:
    """Each corpus's ``license_file`` exists (its notice goes into every card)."""
    for corpus in recipe.corpora:
        if corpus.license_file and not recipe.resolve(corpus.license_file).is_file():
            raise RecipeError(
                f"{recipe_path}: corpora[{corpus.name}].license_file: "
                f"{recipe.resolve(corpus.license_file)} not found"
            )


def check_rebuild_recipe(recipe: Recipe, path: Path | str) -> None:
    """The recipe names a task kind, has the sections that kind needs (annotation,
    agreement, split and the kind's own ``needs``), and its annotation configs exist and
    parse (XML, an answer control), before any server starts."""

    if recipe.task is None:
        raise RecipeError(
            f"{path}: a rebuild recipe names its task kind (task: klue-sts, klue-nli, ...; "
            "`benchforge list` shows them)"
        )
    kind = task_kind(recipe.task)
    check_licence_files(recipe, path)
    missing = [s for s in kind.needs if _section(recipe, s) is None]
    if missing:
        raise RecipeError(f"{path}: a {kind.name} rebuild needs the sections {missing}")
    if kind.preflight is not None:
        kind.preflight(recipe)
    ann = recipe.annotation
    configs = kind.configs(recipe) if kind.configs else []
    if ann is not None:
        configs.append(("annotation.config", ann.config))
        if ann.writing:
            configs.append(("annotation.writing.config", ann.writing.config))

    for field, config in configs:
        if not recipe.resolve(config).is_file():
            raise RecipeError(f"{path}: {field}: {recipe.resolve(config)} not found")
        try:  # issue 32: a bad config was found after pairs, items and three push retries
            parse_label_config(recipe.resolve(config))
        except LabelConfigError as exc:
            raise RecipeError(f"{path}: {field}: {exc}") from None
        override = ann.guideline if ann is not None and field == "annotation.config" else None
        try:  # issue 55: every round shows a guideline that matches its interface
            round_guideline(recipe.resolve(config), recipe.resolve(override) if override else None)
        except GuidelineError as exc:
            raise RecipeError(f"{path}: {field}: {exc}") from None
    try:  # issue 35: a pilot's gold file and the control items, before any round
        check_people(recipe, path)
    except ValueError as exc:
        raise RecipeError(str(exc)) from None


def _section(recipe: Recipe, dotted: str) -> object:
    value: object = recipe
    for part in dotted.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value
