"""The rebuild steps that run Prefect, registered by name
(``pipelines.core.steps.STEPS``): ``ingest`` and ``pairs`` (the ``flows.ingest`` and
``flows.pair`` subflows) and a Label Studio round's ``push``, ``simulate``, ``wait`` and
``pull`` (the ``flows.annotate`` tasks; ``push-writing`` is the ``writing`` round's
push). The other shared steps (``agree``, ``split``, ``export``, the people rounds',
``harness``) are Prefect-free and live in ``pipelines.rebuild``; a family's own steps
in its package. Each reads what the task kind declares (its rounds) and none knows a
family by name.
"""

from __future__ import annotations

import os

import pandas as pd

from pipelines.core.io import write_json, write_parquet
from pipelines.core.steps import STEPS, RunContext, StepOutcome, retried
from pipelines.export.card_facts import server_record
from pipelines.rebuild.rounds import round_of


class AnnotationsPending(RuntimeError):
    """The annotators have not finished; the message says how far they are."""


def worth_retrying(error: BaseException) -> bool:
    """Whether a Label Studio step's error may go away on a retry: a server that is slow
    or restarting (transport errors, 5xx answers), not an error no retry can change (a
    labeling config that reads fields the items lack, a project made with other
    settings: ``ValueError``s) nor annotators who have not finished (a rerun resumes)."""
    return not isinstance(error, (ValueError, AnnotationsPending))


# a round's steps are idempotent (no task or annotation is created twice): the
# orchestrator runs one again 3 times, 10 s apart, after an error worth a retry. The steps
# are the Prefect tasks: they call the Label Studio operations of flows.annotate as plain
# functions (``.fn``), whose own task retries serve the standalone annotation_round flow.
LABEL_STUDIO_RETRIES = retried(3, 10.0, worth_retrying)


@STEPS.register("ingest")
def ingest_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Ingest the recipe's corpora (``flows.ingest``) into OUT/ingest."""
    from flows.ingest import run_ingest

    report = run_ingest(ctx.recipe_path, ctx.out / "ingest")
    kept = sum(c.get("sentences_kept", 0) for c in report["stats"].get("corpora", {}).values())
    return StepOutcome(
        f"{kept:,} sentences ({'written' if report['written'] else 'unchanged'})",
        {"written": report["written"], "sentences": kept},
    )


@STEPS.register("pairs")
def pairs_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Ingest and pair (``flows.pair``, KLUE 3.2.1) into OUT/pairs."""
    from flows.pair import run_pair

    report = run_pair(ctx.recipe_path, ctx.out / "pairs", None, ctx.seed)
    return StepOutcome(
        f"{report['stats']['total_pairs']:,} pairs "
        f"({'written' if report['written'] else 'unchanged'})",
        {"pairs": report["stats"]["pairs"], "written": report["written"]},
    )


def ensure_server(ctx: RunContext) -> None:
    """Start (or reach) the local Label Studio server once per run, unless
    LABEL_STUDIO_URL names another."""
    from prefect import get_run_logger

    from pipelines.annotation import ls_server

    if os.environ.get("LABEL_STUDIO_URL") or ctx.server_started:
        return
    server = ls_server.up(ctx.port)
    ctx.server_started = True
    get_run_logger().info("Label Studio at %s", server.get("url"))


@STEPS.register("push")
@LABEL_STUDIO_RETRIES
def push_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Create the round's project and import the items not there yet (no duplicate
    tasks); with simulated annotators new tasks carry their annotations (one bulk
    import)."""
    from flows.annotate import push_task

    ensure_server(ctx)
    r = round_of(ctx, arg)
    sim = r.simulate
    pushed = push_task.fn(r, ctx.reuse_project)
    return StepOutcome(
        f"project {r.project!r}: {pushed['created']:,} tasks created, "
        f"{pushed['existing']:,} already there"
        + (f"; {pushed['annotations']:,} simulated annotations imported with them" if sim else "")
        + (
            f"; {len(pushed['changed']):,} of the tasks there hold other data than their items "
            "(the items changed since they were pushed; see the log)"
            if pushed.get("changed")
            else ""
        ),
        pushed,
    )


@STEPS.register("simulate")
@LABEL_STUDIO_RETRIES
def simulate_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Post the simulated annotations still missing (none after a push that imported
    them); a no-op with real annotators."""
    from flows.annotate import simulate_task

    r = round_of(ctx, arg)
    if r.simulate is None:
        return StepOutcome("real annotators (no simulation)", {"skipped": True})
    # the same run's push created every task with its simulated annotations: nothing can
    # be missing, and the whole-project export that would say so is skipped (issue 38)
    pushed = ctx.steps.get(f"push-{arg}" if arg else "push") or {}
    complete = bool(pushed.get("items") and pushed.get("created") == pushed.get("items")
                    and not pushed.get("existing"))  # fmt: skip
    posted = simulate_task.fn(r, complete)
    return StepOutcome(
        f"{posted.get('posted', 0):,} missing annotations posted by "
        f"{r.simulate.annotators} simulated {r.pool}s",
        posted,
    )


@STEPS.register("wait")
@LABEL_STUDIO_RETRIES
def wait_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Wait until every task of the round is done; raise AnnotationsPending (exit 3,
    resumable) on timeout."""
    from flows.annotate import wait_task

    r = round_of(ctx, arg)
    sim = r.simulate is not None  # simulated annotations are all posted by now
    timeout = min(r.timeout, 60.0) if sim else r.timeout
    if ctx.suspend_waits and not sim:
        timeout = 0.0  # a deployed run suspends instead (flows/suspend.py)
    waited = wait_task.fn(r.project, timeout, min(r.poll, 1.0) if sim else r.poll)
    if not waited["done"]:
        exc = AnnotationsPending(
            f"annotators have finished {waited.get('finished')} of {waited.get('tasks')} "
            f"tasks in project {r.project!r}; run the same command again to resume"
        )
        exc.project, exc.round = r.project, arg  # type: ignore[attr-defined]
        raise exc
    return StepOutcome(f"{waited.get('finished', '?')}/{waited.get('tasks', '?')} tasks finished",
                       waited)  # fmt: skip


@STEPS.register("pull")
@LABEL_STUDIO_RETRIES
def pull_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every annotation of the round as a long table; tasks of other samples in the
    project are left out (and counted)."""
    from flows.annotate import pull_task
    from pipelines.annotation import ls_server

    r = round_of(ctx, arg)
    r.annotations.parent.mkdir(parents=True, exist_ok=True)
    pins = ctx.recipe.annotation.value_types if ctx.recipe.annotation else {}
    pulled = pull_task.fn(r.project, r.annotations, pins or None)
    pulled["table_rows"] = pulled.pop("rows")  # not the row contract's `rows`
    version = ls_server.server_version(ls_server.connection())
    write_json({"label_studio": version}, server_record(r))
    table = pd.read_parquet(r.annotations)
    wanted = set(pd.read_parquet(r.items)["item_id"].astype(str))
    other = table[~table["item_id"].astype(str).isin(wanted)]
    if len(other):
        table = table[table["item_id"].astype(str).isin(wanted)]
        write_parquet(table, r.annotations)
        pulled.update(table_rows=len(table), annotations=int(table["annotation_id"].nunique()))
    pulled["other_items_ignored"] = int(other["item_id"].nunique())
    return StepOutcome(
        f"{pulled['annotations']:,} annotations, {pulled['table_rows']:,} rows"
        + (f"; {pulled['other_items_ignored']} items of the project not in this rebuild "
           "ignored" if len(other) else ""),
        pulled,
    )  # fmt: skip


__all__ = ["AnnotationsPending"]
