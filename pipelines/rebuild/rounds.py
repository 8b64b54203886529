"""A family's Label Studio rounds (:class:`pipelines.annotation.rounds.Round`): the
recipe's one ``annotation`` round, a round of a family's own ``RoundSpec``, their
simulated people, and the round a step names; and a round as one entry of a task
kind's plan (:class:`LabelStudioRound`), which the plan expands into the round's four
steps."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
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
                 spec.project or f"{ctx.project_base}-{name}", spec.people, sim, pool,
                 ctx.out / "annotate" / f"{name}.parquet", spec.timeout, spec.poll)  # fmt: skip


def round_of(ctx: RunContext, arg: str) -> Round:
    """The round ``arg`` of the run's task kind (``""``: the main one), with the
    recipe's pinned value types (``annotation.value_types``) unless it has its own."""
    from dataclasses import replace

    rounds = ctx.task.rounds(ctx)
    if arg not in rounds:
        raise KeyError(f"task kind {ctx.task.name!r} has no annotation round {arg!r}")
    found = rounds[arg]
    pins = ctx.recipe.annotation.value_types if ctx.recipe.annotation else {}
    if pins and not found.value_types:
        found = replace(found, value_types=tuple(sorted(pins.items())))
    return found


ROUND_OPS = ("push", "simulate", "wait", "pull")


@dataclass(frozen=True)
class LabelStudioRound:
    """A Label Studio round in a task kind's plan, one entry where it runs: its
    ``push`` (the project and its tasks, no duplicate), ``simulate`` (the simulated
    people's missing annotations), ``wait`` (until every task is done) and ``pull``
    (the long table) steps, named ``push-<name>`` ... (the main round, ``name`` "",
    ``push`` ...). ``name`` is the round's key in the kind's ``rounds``. A plan holds
    this object, not the four names: :func:`expand_plan` writes them out, and the
    people rounds find the main round by it (:mod:`pipelines.rebuild.people`)."""

    name: str = ""

    def step_names(self) -> list[str]:
        """The round's steps, in the order they run."""
        return [f"{op}-{self.name}" if self.name else op for op in ROUND_OPS]


PlanEntry = str | LabelStudioRound
"""One entry of a task kind's plan: a registered step's name, or a round."""


def expand_plan(plan: Iterable[PlanEntry]) -> list[str]:
    """The step names of ``plan``: each round written out as its four steps."""
    out: list[str] = []
    for entry in plan:
        out.extend(entry.step_names() if isinstance(entry, LabelStudioRound) else [entry])
    return out


def run_round(ctx: RunContext, name: str) -> dict[str, str]:
    """Run round ``name``'s four steps inside another step (a round a step runs only
    when it has work for it: KoBEST's revision rounds, KorNLU's relabelling); returns
    each step's summary by operation."""
    from pipelines.core.steps import run_retried, step_function

    done = {}
    for op, step in zip(ROUND_OPS, LabelStudioRound(name).step_names(), strict=True):
        fn, arg = step_function(ctx.task.name, step)
        done[op] = run_retried(fn, ctx, arg).summary  # with the step's declared retries
    return done
