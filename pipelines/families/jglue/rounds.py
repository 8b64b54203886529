"""JGLUE's rounds: the Label Studio rounds of JSTS and JNLI, their configs, and the
recipe's checks before any work."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.annotation.rounds import Round
from pipelines.core.steps import Paths, RunContext

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
ROUND_CONFIGS = {
    "sts": "jsts.xml",
    "nli": "jnli_judgement.xml",
    "writing": "jnli_contradiction.xml",
    "validation": "jnli_judgement.xml",
    "check": "jglue_check.xml",
}
ROUND_POOLS = {"sts": "rater", "nli": "annotator", "writing": "writer", "validation": "validator",
               "check": "checker"}  # fmt: skip
TASK_ROUNDS = {"jsts": ["sts"], "jnli": ["nli", "writing", "validation", "sts"]}
# JSTS with JSTS-C (JGLUE 3.2.2, steps 4 and 5; ``jglue.jsts_c``): contradictions written
# and validated as for JNLI-C, then rated with the A and B pairs in one STS round
JSTS_C_ROUNDS = ["writing", "validation", "sts"]
SPLIT_NAMES = {"train": "train", "dev": "valid", "test": "test"}  # JGLUE calls dev "valid"


def task_rounds(recipe: Recipe) -> list[str]:
    """The rounds a rebuild of ``recipe`` runs, in order: ``TASK_ROUNDS``, for a ``jsts``
    recipe with ``jglue.jsts_c`` (the paper's JSTS) the writing and validation rounds
    before the STS round, and with ``jglue.final_check`` the ``check`` round last."""
    out = list(TASK_ROUNDS[recipe.task])
    if recipe.task == "jsts" and recipe.jglue.jsts_c:
        out = list(JSTS_C_ROUNDS)
    # the last filter (3.2.2): "automatic matching and manual checking"
    return [*out, "check"] if recipe.jglue.final_check else out


def with_contradictions(recipe: Recipe) -> bool:
    """Whether the rebuild writes and validates contradictions (JNLI-C, JSTS-C)."""
    return "validation" in task_rounds(recipe)


def _spec(ctx_or_recipe: RunContext | Recipe) -> object:
    recipe = getattr(ctx_or_recipe, "recipe", ctx_or_recipe)
    return recipe.jglue


def _rules(ctx: RunContext) -> object:
    return _spec(ctx).construction_rules()


def release_paths(recipe: Recipe) -> list[Path]:
    by_name = {c.name: c for c in recipe.corpora}
    return [recipe.corpus_path(by_name[n]) for n in recipe.jglue.releases]


def _round_items(ctx: RunContext, name: str) -> Path:
    if name == "sts" and with_contradictions(ctx.recipe):
        return ctx.out / "validation" / "sts_items.parquet"
    folder = {"sts": "pairs", "nli": "pairs", "writing": "writing-items", "validation": "written",
              "check": "check-items"}  # fmt: skip
    return ctx.out / folder[name] / "items.parquet"


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The rebuild's Label Studio rounds (:func:`task_rounds`), from ``jglue.<name>_round``."""
    from pipelines.annotation.settings import SimulateSpec

    out = {}
    for name in task_rounds(ctx.recipe):
        spec = getattr(_spec(ctx), f"{name}_round")
        sim = None
        if ctx.simulated:
            sim = spec.simulate or SimulateSpec(annotators=spec.raters)
        config = ctx.recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name]
        out[name] = Round(
            _round_items(ctx, name),
            config,
            spec.project or f"{ctx.project_base}-{name}",
            spec.raters,
            sim,
            ROUND_POOLS[name],
            ctx.out / "annotate" / f"{name}.parquet",
            spec.timeout,
            spec.poll,
        )
    return out


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    out = []
    for name in ROUND_CONFIGS:
        spec = getattr(recipe.jglue, f"{name}_round")
        if spec is not None:
            config = recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name]
            out.append((f"jglue.{name}_round.config", config))
    return out


def preflight(recipe: Recipe) -> None:
    """Every release file reads (a malformed line fails here, naming the file and line)
    and the task's rounds are in the recipe."""
    from pipelines.core.recipe import RecipeError
    from pipelines.families.jglue.release import read_releases

    missing = [
        f"jglue.{n}_round"
        for n in task_rounds(recipe)
        if getattr(recipe.jglue, f"{n}_round") is None
    ]
    if missing:
        hint = ""
        if (
            recipe.task == "jsts"
            and recipe.jglue.jsts_c
            and {"jglue.writing_round", "jglue.validation_round"} & set(missing)
        ):
            hint += (
                " (JSTS-C, JGLUE 3.2.2 steps 4 and 5; or jglue.jsts_c: false for JSTS "
                "without JSTS-C, a departure from the paper)"
            )
        if "jglue.check_round" in missing:
            hint += (
                " (the last filter, JGLUE 3.2.2: automatic matching and manual checking; or "
                "jglue.final_check: false, a departure from the paper)"
            )
        raise RecipeError(f"a {recipe.task} rebuild needs {missing} in the recipe{hint}")
    read_releases(release_paths(recipe))


def round_files(name: str, *extra: str) -> Paths:
    """Declared files of a step over round ``name``: its items and its pulled
    annotations, and ``extra`` files under OUT."""

    def files(ctx: RunContext, arg: str) -> dict[str, Path]:
        r = rounds(ctx)[name]
        return {f"{name} items": r.items, f"{name} annotations": r.annotations,
                **{rel: ctx.out / rel for rel in extra}}  # fmt: skip

    return files
