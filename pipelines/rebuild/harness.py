"""The ``harness`` step every rebuild ends with (issue 39): the release's
lm-evaluation-harness task, ``OUT/dataset/lm_eval/<task>.yaml`` and ``<task>.py``
(:mod:`pipelines.evaluation.harness`), with ``harness.json`` saying what was written or
why nothing was (a task kind whose answers have no harness form: character tags,
KoBBQ's biases). Cached on the release's ``card.json`` and the recipe's name and
language; its own manifest in ``lm_eval/``."""

from __future__ import annotations

from pipelines.core.steps import STEPS, RunContext, StepOutcome, cached, declares
from pipelines.evaluation.harness import harness_files, supported, task_name

HARNESS_DIR = "dataset/lm_eval"


def _names(ctx: RunContext) -> list[str]:
    if not supported(ctx.task.evaluation):
        return ["harness.json"]
    name = task_name(ctx.recipe.name)
    return [f"{name}.yaml", f"{name}.py", "harness.json"]


def _declared(ctx: RunContext) -> dict | None:
    """What the task kind declares of its evaluation that the harness task shows."""
    ev = ctx.task.evaluation
    if ev is None:
        return None
    return {
        k: getattr(ev, k)
        for k in (
            "target",
            "prompt",
            "harness_choices",
            "harness_metrics",
            "harness_languages",
            "labels",
            "files",
            "metrics",
            "gold_field",
            "choice_fields",
            "source",
        )
    }


@STEPS.register("harness")
@declares(
    reads=lambda ctx, arg: {"card": ctx.out / "dataset" / "card.json"},
    writes=lambda ctx, arg: {n: ctx.out / HARNESS_DIR / n for n in _names(ctx)},
    settings=lambda ctx, arg: [ctx.recipe.name, ctx.recipe.language, _declared(ctx)],
    code=lambda ctx, arg: ["pipelines.evaluation.harness", "pipelines.evaluation.spec"],
)
def harness_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The release's lm-evaluation-harness task -> OUT/dataset/lm_eval/ (run it with
    ``lm_eval --tasks <task> --include_path OUT/dataset/lm_eval``)."""
    folder = ctx.out / HARNESS_DIR

    def compute() -> tuple[dict, dict, dict[str, str]]:
        ev = ctx.task.evaluation
        if not supported(ev):
            why = ("no evaluation declared" if ev is None
                   else f"answers of kind {ev.target!r} have no harness form; "
                   "`benchforge evaluate` scores them")  # fmt: skip
            return {}, {"task": None, "summary": f"no lm-eval task: {why}"}, {}
        files = harness_files(ctx.recipe.name, ctx.recipe.language, ev, ctx.out / "dataset")
        name = task_name(ctx.recipe.name)
        info = {
            "task": name,
            "files": sorted(files),
            "command": f"lm_eval --model hf --model_args pretrained=MODEL --tasks {name} "
            f"--include_path {folder}",
            "summary": f"lm-eval task {name} -> {folder}",
        }
        return {}, info, files

    done = cached(ctx, compute)
    return done.outcome(done.info["summary"], merge=False)
