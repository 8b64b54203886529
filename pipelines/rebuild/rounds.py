"""A family's Label Studio rounds (:class:`pipelines.annotation.rounds.Round`): the
recipe's one ``annotation`` round, a round of a family's own ``RoundSpec``, their
simulated people, and the round a step names."""

from __future__ import annotations

from pathlib import Path

from pipelines.annotation.rounds import Round
from pipelines.core.steps import RunContext


def simulation(spec: object | None, simulated: bool, fallback: int) -> object | None:
    """The simulated annotators of a round: the recipe's, or ``fallback`` (at least 3)
    when ``--simulate`` asks for them and the recipe has none; None for real ones."""
    from pipelines.annotation.settings import SimulateSpec

    if not simulated:
        return None
    return spec or SimulateSpec(annotators=max(fallback, 3))


def one_round(ctx: object) -> dict[str, Round]:
    """The rounds of a family with one Label Studio round: the recipe's ``annotation``
    over OUT/items/items.parquet, pulled to OUT/annotate/annotations.parquet."""
    ann, out = ctx.recipe.annotation, ctx.out
    return {"": Round(
        out / "items" / "items.parquet", ctx.recipe.resolve(ann.config), ctx.project,
        ann.overlap, simulation(ann.simulate, ctx.simulated, ann.overlap), "annotator",
        out / "annotate" / "annotations.parquet", ann.timeout, ann.poll,
    )}  # fmt: skip


def spec_config(recipe: object, spec: object, default: Path) -> Path:
    """The interface of a family's own round (``RoundSpec.config``, else ``default``)."""
    return recipe.resolve(spec.config) if spec.config else default


def spec_round(
    ctx: object, name: str, spec: object, items: Path, default_config: Path, pool: str,
    simulate: object,
) -> Round:  # fmt: skip
    """The Label Studio round ``name`` of a family from its ``RoundSpec`` (JSQuAD's and
    KLUE-MRC's writing and validation rounds, JCommonsenseQA's four): its project
    defaults to "<recipe name>-<name>", its pulled annotations go to
    OUT/annotate/<name>.parquet; ``simulate``: the simulated people of a simulated run
    whose spec names none."""
    sim = (spec.simulate or simulate) if ctx.simulated else None
    return Round(items, spec_config(ctx.recipe, spec, default_config),
                 spec.project or f"{ctx.recipe.name}-{name}", spec.people, sim, pool,
                 ctx.out / "annotate" / f"{name}.parquet", spec.timeout, spec.poll)  # fmt: skip


def round_of(ctx: RunContext, arg: str) -> Round:
    """The round ``arg`` of the run's task kind (``""``: the main one)."""
    rounds = ctx.task.rounds(ctx)
    if arg not in rounds:
        raise KeyError(f"task kind {ctx.task.name!r} has no annotation round {arg!r}")
    return rounds[arg]
