"""``benchforge rebuild RECIPE``: the main job, one Prefect flow from corpora to a
released dataset and its data card.

The orchestrator knows no dataset family by name. The recipe's ``task`` names a
registered task kind (``pipelines.rebuild.kinds``, one per package of
``pipelines.families``: ``klue-sts``, ``klue-nli``, ``klue-ynat``, ...); the kind lists
its steps, and each is looked up in the step registry (``pipelines.core.steps.STEPS``:
the family's own steps under ``<kind>:<step>``, the shared ones in ``pipelines.rebuild``
- agree, split, export, the people rounds', harness - and, for those that run Prefect
subflows and tasks - ingest, pairs, push/simulate/wait/pull of an annotation round -
in ``flows/steps.py``) and run as a Prefect task, in order. Each step
writes its outputs under OUT atomically with a manifest and skips itself on a rerun when
its inputs, settings and code are unchanged: a step declares its files and settings
(``pipelines.core.steps.declares``), has its inputs checked before it runs (a missing one
names the step that writes it) and its outputs after, its inputs' SHA-256 recorded, and
its cache key derived from the declaration (``step_cache``); Label Studio steps are
idempotent (no task or annotation is ever created twice). Every step prints one
progress line, and the run's record (OUT/rebuild.json) holds each step's figures, with
rows in, kept and dropped per reason where the step keeps or drops rows (checked:
in == kept + dropped).

With no ``LABEL_STUDIO_URL`` set, the local Label Studio server is started (installed
on first use) and left running for the next rebuild; ``benchforge labelstudio down``
stops it. Killing the run at any point and running the same command again finishes the
job; the same seed gives the same dataset.
"""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.utilities.annotations import quote

from flows.steps import AnnotationsPending
from pipelines.annotation import ls_server
from pipelines.core.io import output_lock, write_json
from pipelines.core.recipe import Recipe, load_recipe
from pipelines.core.steps import (
    RunContext,
    StepFn,
    StepOutcome,
    check_outputs,
    input_digests,
    retries_of,
    step_cache,
    step_function,
)
from pipelines.preflight import check_rebuild_recipe
from pipelines.rebuild.kinds import TaskKind, task_kind


def steps_of(kind: TaskKind, recipe: Recipe | None = None) -> list[str]:
    """The step names of ``kind`` (for ``recipe`` when the kind plans its steps), each
    checked against the registry (a typo in a task kind fails before any work, naming the
    nearest step)."""
    import flows.steps  # noqa: F401 - registers the steps that run Prefect

    names = kind.steps_for(recipe)
    for name in names:
        step_function(kind.name, name)
    return names


def task_retries(fn: StepFn) -> dict:
    """The Prefect task options that apply the step's declared retries
    (``pipelines.core.steps.retried``): none when it declares none."""
    declared = retries_of(fn)
    if declared is None:
        return {}

    def worth(task: object, task_run: object, state: object) -> bool:
        error = getattr(state, "data", None)
        return isinstance(error, BaseException) and declared.worth(error)

    return {"retries": declared.times, "retry_delay_seconds": declared.delay_s,
            "retry_condition_fn": worth}  # fmt: skip


def simulated_by_default(recipe: Recipe) -> bool:
    """Simulated annotators when any of the recipe's rounds asks for them."""
    kind = task_kind(recipe.task)
    if kind.simulated is not None:
        return kind.simulated(recipe)
    ann = recipe.annotation
    if ann is None:
        return False
    return bool(ann.simulate or (ann.writing and ann.writing.simulate))


def _line(step: str, index: int, total: int, seconds: float, outcome: StepOutcome) -> None:
    rows = outcome.rows
    counts = (f" [{rows.rows_in:,} in, {rows.kept:,} kept, {sum(rows.dropped.values()):,} "
              "dropped]" if rows and rows.rows_in != rows.kept else "")  # fmt: skip
    print(f"[{index}/{total}] {step:<16} {seconds:6.1f} s  {outcome.summary}{counts}", flush=True)


def run_steps(ctx: RunContext, record: Path) -> dict:
    """Run the task kind's steps in order, one Prefect task and one progress line each;
    OUT/rebuild.json is rewritten after every step."""
    from flows.prefect_artifacts import publish_run, publish_step
    from flows.runtime import enter_step

    names = steps_of(ctx.task, ctx.recipe)
    for index, name in enumerate(names, 1):
        fn, arg = step_function(ctx.task.name, name)
        started = time.perf_counter()
        enter_step(name)
        digests = input_digests(ctx, name, fn, arg, names)  # declared inputs, before any work
        ctx.cache = step_cache(ctx, fn, arg, digests)  # its key, from its declaration
        try:
            # quote: Prefect would walk the whole context looking for futures on every
            # call (about 1 s of the main job, issue 38); it holds none
            run = task(name=f"rebuild-{name}", cache_policy=NO_CACHE, **task_retries(fn))
            outcome = run(fn)(quote(ctx), arg)
        except AnnotationsPending as exc:
            if not ctx.suspend_waits:
                raise
            from flows.suspend import suspend_for

            # a deployed run: suspended until the round is done (flows/suspend.py)
            suspend_for(getattr(exc, "project", ctx.project), getattr(exc, "round", arg),
                        ctx.out, None)  # fmt: skip
            raise
        finally:
            ctx.cache = None
        check_outputs(ctx, name, fn, arg)
        if outcome.rows is not None:
            outcome.rows.check(name)
        entry = {"seconds": round(time.perf_counter() - started, 1), "summary": outcome.summary,
                 **{k: v for k, v in outcome.info.items() if k != "payloads"}}  # fmt: skip
        if digests:  # the declared inputs' SHA-256 (first 12)
            entry["inputs"] = {key: h[:12] for key, h in digests.items()}
        if outcome.rows is not None:
            entry["rows"] = outcome.rows.to_dict()
        ctx.steps[name] = entry
        _line(name, index, len(names), entry["seconds"], outcome)
        write_json({"recipe": str(ctx.recipe_path), "task": ctx.task.name, "steps": ctx.steps},
                   record)  # fmt: skip
        publish_step(ctx.recipe.name, name, entry, ctx.out)  # Prefect artifacts
        failed = ls_server.start_error()  # Label Studio started in the background and failed
        if failed is not None:
            raise failed
    enter_step(None)
    if (ctx.out / "dataset" / "card.json").is_file():  # issue 51: what card check verifies
        from pipelines.export.manifest import write_release_manifest

        write_release_manifest(ctx.out / "dataset")
    publish_run(ctx.recipe.name, ctx.steps)
    return ctx.steps


@flow(name="benchforge-rebuild")
def rebuild_flow(
    recipe_path: str, out_dir: str, simulate: bool | None = None, seed: int | None = None,
    port: int | None = None, reuse_project: bool = False, deployed: bool = False,
) -> dict:  # fmt: skip
    """The whole rebuild (see the module docstring); returns the per-step summary.

    ``deployed``: run by a worker from a deployment (``benchforge deploy``): the flow
    takes OUT's lock and result storage itself, makes sure Label Studio answers, and a
    round people have not finished suspends the run (``flows.suspend``) instead of
    ending it."""
    if deployed:
        from flows.runtime import prepare_environment, result_storage

        prepare_environment()
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with output_lock(out), result_storage(out):
            return _rebuild(recipe_path, out_dir, simulate, seed, port, reuse_project, True)
    return _rebuild(recipe_path, out_dir, simulate, seed, port, reuse_project, False)


def _rebuild(
    recipe_path: str, out_dir: str, simulate: bool | None, seed: int | None, port: int | None,
    reuse_project: bool, deployed: bool,
) -> dict:  # fmt: skip
    path = Path(recipe_path)
    recipe = load_recipe(path)
    check_rebuild_recipe(recipe, path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    simulated = simulated_by_default(recipe) if simulate is None else simulate
    ctx = RunContext(
        recipe,
        path,
        out,
        task_kind(recipe.task),
        simulated,
        seed,
        port,
        reuse_project=reuse_project,
        suspend_waits=deployed,
    )
    if deployed and ctx.task.uses_label_studio(recipe):
        ls_server.ensure_reachable(port)  # LABEL_STUDIO_URL, or the managed server
    steps = run_steps(ctx, out / "rebuild.json")
    return {"out": str(out), "task": ctx.task.name, "steps": steps, "simulated": simulated}


def run_rebuild(
    recipe_path: Path, out_dir: Path, simulate: bool | None = None, seed: int | None = None,
    port: int | None = None, reuse_project: bool = False,
) -> dict:  # fmt: skip
    """Run the flow (inside ``flows.runtime.prefect_server``)."""
    from flows.runtime import result_storage

    out_dir.mkdir(parents=True, exist_ok=True)
    with output_lock(out_dir), result_storage(out_dir):  # one run at a time writes into OUT
        return rebuild_flow(str(Path(recipe_path).resolve()), str(out_dir.resolve()), simulate,
                            seed, port, reuse_project)  # fmt: skip


__all__ = ["AnnotationsPending", "rebuild_flow", "run_rebuild", "run_steps", "steps_of"]
