"""The Label Studio operations as Prefect tasks with retries, and a round-trip flow.

Each task wraps one function of ``pipelines.annotation.annotate`` /
``pipelines.annotation.simulate``; besides the per-request backoff inside those
functions, Prefect retries a whole operation 3 times, 10 s apart, for a server that is
slow or restarting (not for an error a retry cannot change: :func:`worth_retrying`).
The push is idempotent and the simulation posts only what is missing, so a retry never
duplicates a task or an annotation. ``annotation_round`` runs push -> (simulate) ->
wait -> pull and writes the long table atomically.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from prefect import flow, task

from pipelines.annotation import annotate
from pipelines.annotation.rounds import Round
from pipelines.annotation.simulate import simulate, with_simulated
from pipelines.core.io import write_parquet


def worth_retrying(task: object, task_run: object, state: object) -> bool:
    """Prefect's ``retry_condition_fn``: retry what a server that is slow or restarting
    causes (transport errors, 5xx answers), never an error no retry can change, such as
    a labeling config that reads fields the items lack or a project made with other
    settings (issue 32: those were retried 3 times, 10 s apart, before the error)."""
    error = getattr(state, "data", None)
    return not isinstance(error, ValueError)  # AnnotationError, LabelConfigError, ...


RETRIES = {"retries": 3, "retry_delay_seconds": 10, "retry_condition_fn": worth_retrying}


@task(name="labelstudio-push", **RETRIES)
def push_task(round: Round, reuse: bool = False) -> dict:
    """Push ``round``'s items to its project; with simulated people
    (``round.simulate``), new tasks carry their simulated annotations (``unqualified``
    of them fail a pilot; ``round.phase``: ``pilot`` or ``main``, see
    ``pipelines.annotation.simulate``); ``reuse``: keep a project made with another
    overlap (``--reuse-project``); ``round.guideline``: a Markdown file shown as the
    project's instructions before labelling (else the interface's own,
    ``pipelines.annotation.guidelines``: a round without one is refused)."""
    from pipelines.annotation.guidelines import instruction_html

    parsed = annotate.load_config(round.config)
    if round.value_types:  # the recipe's pins (a <Relations> read as a dependency tree)
        parsed = dataclasses.replace(parsed, value_types=round.value_types)
    sim = round.simulate
    attach = (with_simulated(sim.annotators, sim.seed, round.pool, sim.careless,
                             sim.unqualified, round.phase, sim.accepting, round.value_types)
              if sim else None)  # fmt: skip
    items_table = annotate.read_items(round.items, parsed)
    phase = "human" if round.pool == "human" else round.phase
    instruction = instruction_html(round.config, round.guideline, phase)
    return annotate.push(items_table, parsed, round.project, round.overlap, attach=attach,
                         reuse=reuse, instruction=instruction).__dict__  # fmt: skip


@task(name="labelstudio-simulate", **RETRIES)
def simulate_task(round: Round, complete: bool = False) -> dict:
    """Post the annotations ``round``'s simulated people (``round.simulate``) have not
    posted yet; ``complete``: the push imported them all (nothing is looked up)."""
    sim = round.simulate
    result = simulate(round.project, sim.annotators, sim.seed, pool=round.pool,
                      careless=sim.careless, unqualified=sim.unqualified, phase=round.phase,
                      accepting=sim.accepting, value_types=round.value_types,
                      complete=complete)  # fmt: skip
    return {k: v for k, v in result.items() if k != "payloads"}


@task(name="labelstudio-wait", **RETRIES)
def wait_task(project: str, timeout: float, poll: float = 5.0) -> dict:
    return annotate.wait(project, timeout, poll)


@task(name="labelstudio-pull", **RETRIES)
def pull_task(project: str, out: Path, value_types: dict[str, str] | None = None) -> dict:
    table = annotate.pull(project, value_types=value_types)
    write_parquet(table, out)
    return {"rows": len(table), "annotations": int(table["annotation_id"].nunique())}


@flow(name="benchforge-annotation-round")
def annotation_round(
    items: Path,
    config: Path,
    project: str,
    overlap: int,
    out: Path,
    simulate_annotators: int | None = None,
    seed: int = 0,
    timeout: float = 3600.0,
) -> dict:
    """Push ``items``, simulate ``simulate_annotators`` annotators when given (demos and
    tests), wait until every task is done (or ``timeout``), and pull to ``out``. When the
    wait times out the pull is not made: run the flow again later to resume."""
    from pipelines.annotation.settings import SimulateSpec

    sim = SimulateSpec(annotators=simulate_annotators, seed=seed) if simulate_annotators else None
    r = Round(items, config, project, overlap, sim, "annotator", out, timeout)
    report: dict = {"push": push_task(r)}
    if sim is not None:
        report["simulate"] = simulate_task(r)
    report["wait"] = wait_task(project, timeout)
    if report["wait"]["done"]:
        report["pull"] = pull_task(project, out)
    return report
