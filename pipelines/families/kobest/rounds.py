"""KoBEST's rounds (writing, review, revision), the steps a recipe plans, its configs
and the checks before any work."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.steps import RunContext
from pipelines.families.kobest.tasks import KobestTask, kobest_task
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
POOLS = {"writing": "writer", "review": "linguist", "revision": "reviser",
         "conversion": "converter"}  # fmt: skip
DROP_COLUMNS = ["item_id", "stage", "reason", "detail"]


def _spec(ctx_or_recipe: RunContext | Recipe) -> object:
    return getattr(ctx_or_recipe, "recipe", ctx_or_recipe).kobest


def _seed(ctx: RunContext) -> int:
    """The run's seed (``--seed``), else the recipe's ``kobest.seed``."""
    return ctx.seed if ctx.seed is not None else _spec(ctx).seed


def _task(ctx: RunContext) -> KobestTask:
    return kobest_task(ctx.task.name.removeprefix("kobest-"))


def _rules(ctx_or_recipe: RunContext | Recipe) -> object:
    return _spec(ctx_or_recipe).kobest_rules()


def _lang(ctx: RunContext) -> object:
    from pipelines.lang import language

    return language(ctx.recipe.language)


def round_config(recipe: Recipe, task: str, name: str) -> Path:
    spec = getattr(recipe.kobest, f"{name}_round")
    if spec is not None and spec.config:
        return recipe.resolve(spec.config)
    if name == "conversion":
        return CONFIGS / f"kobest_{task}_conversion.xml"
    return CONFIGS / (f"kobest_{task}.xml" if name == "writing" else f"kobest_{task}_review.xml")


def _round(ctx: RunContext, name: str, items: Path, annotations: Path, pool: str) -> Round:
    from pipelines.annotation.settings import SimulateSpec
    from pipelines.families.kobest.section import KobestRound

    key = "revision" if name.startswith("revision") else name
    spec = getattr(_spec(ctx), f"{key}_round") or KobestRound()
    sim = None
    if ctx.simulated:
        sim = spec.simulate or SimulateSpec(annotators=max(spec.people, 3))
    return Round(
        items,
        round_config(ctx.recipe, _task(ctx).name, key),
        f"{spec.project}{name.removeprefix(key)}" if spec.project else f"{ctx.project_base}-{name}",
        spec.people,
        sim,
        pool,
        annotations,
        spec.timeout,
        spec.poll,
    )


def rounds(ctx: RunContext) -> dict[str, Round]:
    """``writing``, ``review`` and ``revision<k>`` for each of ``rules.iterations``."""
    out = ctx.out
    r = {
        "writing": _round(
            ctx,
            "writing",
            out / "prompts" / "items.parquet",
            out / "annotate" / "writing.parquet",
            POOLS["writing"],
        ),
        "review": _round(
            ctx,
            "review",
            out / "written" / "review_items.parquet",
            out / "annotate" / "review.parquet",
            POOLS["review"],
        ),
    }
    if _task(ctx).name == "sentineg":  # 2.6: the conversion of the selected candidates
        r["conversion"] = _round(
            ctx,
            "conversion",
            out / "candidates" / "conversion_items.parquet",
            out / "annotate" / "conversion.parquet",
            POOLS["conversion"],
        )
    for k in range(1, _rules(ctx).iterations + 1):
        r[f"revision{k}"] = _round(
            ctx,
            f"revision{k}",
            out / f"artifacts-{k}" / "revision_items.parquet",
            out / "annotate" / f"revision{k}.parquet",
            POOLS["revision"],
        )
    return r


def plan(recipe: Recipe) -> list[PlanEntry]:
    """The steps of a recipe: the artifact reviews and revision rounds follow
    ``rules.iterations``; SentiNeg builds its test set last (``negated``, 2.6)."""
    steps: list[PlanEntry] = [
        "prompts",
        LabelStudioRound("writing"),
        "written",
        LabelStudioRound("review"),
        "reviewed",
        "duplicates",
        "split",
    ]
    n = _rules(recipe).iterations
    for k in range(1, n + 1):
        steps += [f"artifacts-{k}", f"revision-{k}"]
    steps.append(f"artifacts-{n + 1}")
    if recipe.task == "kobest-sentineg":
        # 2.6: the candidates selected from train, converted (the conversion round, run
        # by the negated step when there are any) and relabelled into test
        steps += ["candidates", "negated"]
    return [*steps, "export"]


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    task = recipe.task.removeprefix("kobest-")
    names = ("writing", "review", "revision", *(("conversion",) if task == "sentineg" else ()))
    return [(f"kobest.{n}_round.config", round_config(recipe, task, n)) for n in names]


def _corpus(recipe: Recipe, name: str) -> Path:
    by_name = {c.name: c for c in recipe.corpora}
    return recipe.corpus_path(by_name[name])


def preflight(recipe: Recipe) -> None:
    """The sources read (a malformed line fails here, naming the file and line), and the
    task has what its prompts need."""
    from pipelines.core.recipe import RecipeError

    spec, task = recipe.kobest, kobest_task(recipe.task.removeprefix("kobest-"))
    if task.name in ("boolq", "wic", "hellaswag", "sentineg") and not spec.source:
        raise RecipeError(f"a {recipe.task} rebuild needs kobest.source (a corpus of the recipe)")
    if spec.source:
        _source_rows(recipe, task)
    sim = spec.simulation
    if sim and sim.seeds:
        from pipelines.families.kobest.simulate import SeedsError, read_seeds

        try:
            read_seeds(_corpus(recipe, sim.seeds), task.name)
        except SeedsError as exc:  # issue 51: a missing file was a traceback
            raise SeedsError(f"kobest.simulation.seeds ({sim.seeds}): {exc}") from None


def _source_rows(recipe: Recipe, task: KobestTask) -> pd.DataFrame:
    """The source corpus as a table (JSON Lines, gzip allowed); a malformed line, or a
    row missing a given field or holding it empty, is an error naming the file and line."""
    from pipelines.core.line_files import read_json_lines
    from pipelines.core.recipe import RecipeError

    path = _corpus(recipe, recipe.kobest.source)
    need = ("review", "rating") if task.name == "sentineg" else task.given
    rows = read_json_lines(path, need, RecipeError)
    for row in rows:
        for field in need:
            if row[field] is None or not str(row[field]).strip():
                raise RecipeError(f"{path}:{row['line']}: empty {field!r}")
    return pd.DataFrame(rows).drop(columns="line")
