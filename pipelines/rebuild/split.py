"""The split step (``split``: the recipe's split rule and the artifact report,
``pipelines.splits``, over the gold labels of the agreement step or of the family's own
gold step) and :func:`split_over`, the split of a family that writes its own release."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, declares
from pipelines.rebuild.agree import gold_folder


def _split_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    return {
        "gold": gold_folder(ctx) / "gold.parquet",
        "items": ctx.out / "items" / "items.parquet",
    }


def _split_writes(ctx: RunContext, arg: str) -> dict[str, Path]:
    split = ctx.out / "split"
    return {"splits": split / "splits.parquet", "artifacts": split / "artifacts.json",
            "artifacts_md": split / "artifacts.md"}  # fmt: skip


@STEPS.register("split")
@declares(reads=_split_reads, writes=_split_writes)
def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule and the artifact report (``pipelines.splits``) ->
    OUT/split."""
    from pipelines.splits.base import recipe_split_settings
    from pipelines.splits.run import run_split

    settings = recipe_split_settings(ctx.recipe, ctx.seed)
    reads = _split_reads(ctx, arg)
    split = run_split(reads["gold"], settings, ctx.out / "split", reads["items"],
                      ctx.recipe.language)  # fmt: skip
    n = sum(split["splits"].values())
    return StepOutcome(f"{split['splits']}", {"splits": split["splits"],
                       "written": split["written"]}, Rows("item", n, n))  # fmt: skip


def split_over(ctx: RunContext, table: Path, unit: str) -> StepOutcome:
    """The split step of a family that writes its own release: the recipe's split rule
    and the artifact report over ``table`` (its items before the split, with
    ``item_id``) -> OUT/split; ``unit``: what one row is, for the step's row count."""
    from pipelines.splits.base import recipe_split_settings
    from pipelines.splits.run import run_split

    settings = recipe_split_settings(ctx.recipe, ctx.seed)
    split = run_split(table, settings, ctx.out / "split", None, ctx.recipe.language)
    n = sum(split["splits"].values())
    return StepOutcome(f"{split['splits']}", {"splits": split["splits"]}, Rows(unit, n, n))
