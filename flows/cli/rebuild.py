"""``benchforge rebuild``: the main job, corpora to a released dataset and its card."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


def add_parser(sub: argparse._SubParsersAction) -> None:
    rebuild = sub.add_parser(
        "rebuild",
        help="the whole pipeline: recipe in, dataset and data card out",
        description=(
            "Run one Prefect flow through the steps of the recipe's task kind (`task:`; "
            "`benchforge list` shows them): e.g. klue-sts: ingest and pairing -> items -> "
            "Label Studio push -> (simulated annotators) -> wait -> pull -> agreement -> "
            "split -> export (the kind's release layout, JSON Lines and Parquet) and the "
            "data card; klue-nli adds the premise rules and a hypothesis-writing round; "
            "klue-ynat samples headlines. "
            "Every step's output is kept under OUT; run the same command again after a "
            "crash, a kill or a wait that timed out and it resumes without redoing finished "
            "steps or duplicating Label Studio tasks. With no LABEL_STUDIO_URL set, the "
            "local Label Studio server is started (installed on first use)."
        ),
    )
    rebuild.add_argument(
        "recipe", type=Path, help="recipe YAML (recipes/sts-demo.yaml, nli-demo.yaml, tc-demo.yaml)"
    )
    rebuild.add_argument(
        "--out", type=Path, default=None, help="output folder (default: runs/<recipe name>)"
    )
    sim = rebuild.add_mutually_exclusive_group()
    sim.add_argument(
        "--simulate",
        dest="simulate",
        action="store_true",
        default=None,
        help="simulated annotators even if the recipe has none (demos and tests; the "
        "dataset and its card say so)",
    )
    sim.add_argument(
        "--no-simulate",
        dest="simulate",
        action="store_false",
        help="wait for real annotators even if the recipe simulates them",
    )
    rebuild.add_argument(
        "--seed", type=int, default=None, help="seed for pairing and split (default: recipe's)"
    )
    rebuild.add_argument(
        "--port",
        type=int,
        default=None,
        help="port of the local Label Studio server; it must be free (default: "
        "BENCHFORGE_LS_PORT, else 8080 when free, else a free port the system chooses)",
    )
    rebuild.add_argument(
        "--stop-server",
        action="store_true",
        help="stop the local Label Studio server at the end if this run started it",
    )
    rebuild.add_argument(
        "--reuse-project",
        action="store_true",
        help="keep using a Label Studio project of the same name that was made with another "
        "overlap (its overlap is updated); by default such a project stops the run before "
        "any work, since its tasks and annotations would mix with this run's",
    )
    rebuild.add_argument("--json", action="store_true", help="print the step summary as JSON")


def run(args: argparse.Namespace) -> int:
    from pipelines.core.io import output_lock
    from pipelines.core.recipe import load_recipe

    recipe = load_recipe(args.recipe)  # every section validated, agreement and split too
    out = args.out or Path("runs") / recipe.name
    with output_lock(out):  # the first thing a run does: a second run stops at once
        return _run(args, recipe, out)


def _run(args: argparse.Namespace, recipe: Recipe, out: Path) -> int:
    from flows.runtime import prefect_server
    from pipelines.annotation import ls_server
    from pipelines.preflight import check_ingest_inputs, check_rebuild_recipe
    from pipelines.rebuild.kinds import task_kind

    check_rebuild_recipe(recipe, args.recipe)
    if not (recipe.pairing and recipe.pairing.input):
        check_ingest_inputs(recipe, args.recipe)

    was_running = bool(os.environ.get("LABEL_STUDIO_URL")) or ls_server.status()["running"]
    try:
        if task_kind(recipe.task).uses_label_studio(recipe):  # rounds ahead

            def reached(server: dict) -> None:
                print(f"Label Studio at {server['url']}", flush=True)
                check_rounds(recipe, args.recipe, out, args.reuse_project)

            if was_running:
                # every check of a server that runs before the first step: a run that
                # cannot reach Label Studio fails in seconds, not after ingest and pairing
                reached(ls_server.ensure_reachable(args.port))
            else:
                # the local server starts while Prefect starts and the first steps run
                # (issue 38); the first step that needs it waits for it, and a start that
                # failed stops the run at the next step's end (flows/rebuild.py)
                ls_server.start_in_background(args.port, then=reached)
        with prefect_server():
            from flows.rebuild import AnnotationsPending, run_rebuild

            try:
                result = run_rebuild(
                    args.recipe, out, args.simulate, args.seed, args.port, args.reuse_project
                )
            except AnnotationsPending as exc:
                print(f"benchforge: {exc}")
                return 3
    finally:
        with contextlib.suppress(Exception):
            ls_server.wait_started(timeout=120)  # a start still going on ends before `down`
        ls_server.forget_start()
        if args.stop_server and not was_running:
            ls_server.down()
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2, default=str))
        return 0
    from pipelines.core.report import print_rebuild_summary

    print_rebuild_summary(result)
    print(f"Dataset and data card in {out / 'dataset'} (DATA_CARD.md)")
    return 0


def check_rounds(recipe: Recipe, path: Path, out: Path, reuse: bool) -> None:
    """Before any work (issue 32): every Label Studio round the task kind plans, whose
    labeling config is a file already, has a config that parses and checks, a guideline
    that matches it, and its project, when it exists, was made with the same config and
    overlap."""
    from pipelines.annotation.annotate import check_project
    from pipelines.annotation.guidelines import round_guideline
    from pipelines.core.steps import RunContext
    from pipelines.rebuild.kinds import task_kind

    ctx = RunContext(recipe, path, out, task_kind(recipe.task), False)
    try:
        rounds = ctx.task.rounds(ctx)
    except Exception:  # noqa: BLE001 - a kind whose rounds need earlier steps' outputs
        return
    for r in rounds.values():
        if Path(r.config).is_file():
            round_guideline(r.config, r.guideline)  # issue 55: every round shows one
            check_project(r.project, Path(r.config), r.overlap, reuse)
