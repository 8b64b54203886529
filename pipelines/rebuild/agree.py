"""The agreement step (``agree``): the recipe's agreement rule
(``pipelines.agreement``) over the main round's annotations (or the table the task kind
names), with the people rounds' screening and the review round's decisions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, declares
from pipelines.rebuild.kinds import SharedSteps
from pipelines.rebuild.people import people_files, people_screen, review_files, reviews_of
from pipelines.rebuild.rounds import round_of

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


def shared_of(ctx: RunContext) -> SharedSteps:
    """What the shared agree and export steps need of the task kind."""
    if ctx.task.shared is None:
        raise ValueError(
            f"task kind {ctx.task.name!r} runs a shared agree or export step and registers "
            "no SharedSteps (pipelines.rebuild.kinds.SharedSteps)"
        )
    return ctx.task.shared


def votes_path(ctx: RunContext) -> Path:
    """The table the agreement step reads: the task kind's (``votes``) or the main
    round's pull."""
    shared = ctx.task.shared
    if shared is not None and shared.votes is not None:
        return shared.votes(ctx)
    return round_of(ctx, "").annotations


def _agree_files(ctx: RunContext, arg: str) -> dict[str, Path]:
    agree = ctx.out / "agree"
    files = {"gold": agree / "gold.parquet", "dropped": agree / "dropped.parquet",
             "agreement": agree / "agreement.json"}  # fmt: skip
    if people_files(ctx):
        files["excluded"] = agree / "excluded_annotations.parquet"
    return files


@STEPS.register("agree")
@declares(reads=lambda ctx, arg: {"annotations": votes_path(ctx), **people_files(ctx),
                                  **review_files(ctx)},
          writes=_agree_files)  # fmt: skip
def agree_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's agreement rule (``pipelines.agreement``) -> OUT/agree; values are
    checked against the interface's answer control. With a pilot or control items the
    annotators who did not qualify or fail the controls are screened out first
    (``pipelines.agreement.screening``; their rows in
    OUT/agree/excluded_annotations.parquet)."""
    from pipelines.agreement.rules import recipe_agreement_settings, run_agree

    settings = recipe_agreement_settings(ctx.recipe)
    if settings.values is None:
        settings.values = interface_answers(ctx.recipe, settings.answer_field)
    agreed = run_agree(votes_path(ctx), settings, ctx.out / "agree",
                       interface_value_type(ctx.recipe, settings.answer_field),
                       people_screen(ctx), reviews_of(ctx))  # fmt: skip
    if "krippendorff_alpha" in agreed:
        levels = agreed["krippendorff_alpha"]
        level = "interval" if levels.get("interval") is not None else "nominal"
        headline = f"alpha ({level}) {levels.get(level)}"
    else:
        first = agreed["measures"][0]
        headline = f"{first} {agreed[first]}"
    return StepOutcome(
        f"{agreed['gold_items']:,} of {agreed['items']:,} items kept; {headline}",
        {"gold_items": agreed["gold_items"], "written": agreed["written"]},
        Rows("item", agreed["items"], agreed["gold_items"], agreed["dropped_items"]),
    )


def interface_answers(recipe: Recipe, field: str | None) -> list[str] | None:
    """The options of the recipe interface's single-choice answer control ``field`` (or
    its only answer control): the values the agreement step accepts. A ``<Relations>``
    control's options are its arrows' labels, not answers (a relation or a tree)."""
    from pipelines.annotation.label_config import parse_label_config

    control = parse_label_config(recipe.resolve(recipe.annotation.config)).answer_control(field)
    if control and control.single and control.options and control.tag != "Relations":
        return list(control.options)
    return None


def interface_value_type(recipe: Recipe, field: str | None) -> str | None:
    """The value type of the recipe interface's answer control ``field`` (or its only
    one): the recipe's pin, else the type that claims the control; None when the
    interface has several answer controls and no field is named."""
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.values import value_type_of

    control = parse_label_config(recipe.resolve(recipe.annotation.config)).answer_control(field)
    if control is None:
        return None
    return value_type_of(control, recipe.annotation.value_types.get(control.name)).name


def gold_folder(ctx: RunContext) -> Path:
    """The folder whose gold.parquet and dropped.parquet the split and export read: the
    agreement step's, or the family's final gold step's (``SharedSteps.gold_dir``)."""
    shared = ctx.task.shared
    return ctx.out / (shared.gold_dir if shared is not None else "agree")
