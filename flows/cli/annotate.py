"""``benchforge labelstudio`` and ``benchforge annotate``: the Label Studio commands."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipelines.annotation.ls_server import DEFAULT_PORT


def add_parsers(sub: argparse._SubParsersAction) -> None:
    server = sub.add_parser(
        "labelstudio",
        help="install, start, stop a local Label Studio server",
        description=(
            "A local Label Studio server in a virtual environment of its own "
            "(BENCHFORGE_HOME/labelstudio, default ~/.local/share/benchforge/labelstudio), "
            "listening on 127.0.0.1 only. Its admin password and API token are generated "
            "once and stored with mode 0600 in BENCHFORGE_CONFIG/labelstudio-credentials.json "
            "(default ~/.config/benchforge); they are never printed. To use a server of your "
            "own instead, set LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY."
        ),
    )
    ssub = server.add_subparsers(dest="action", required=True, metavar="ACTION")
    up = ssub.add_parser(
        "up",
        help="install (first time), start and wait until it answers",
        description="Install Label Studio the first time, start it, wait until it answers.",
    )
    up.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"port on 127.0.0.1 (default: BENCHFORGE_LS_PORT, else {DEFAULT_PORT}, when free; "
        "else a free port chosen by the system, printed and remembered until `down`). A port "
        "given here must be free",
    )
    up.add_argument(
        "--timeout", type=float, default=300.0, help="seconds to wait for it to answer (300)"
    )
    ssub.add_parser(
        "install",
        help="install it and prepare its empty database, without starting it",
        description=(
            "Install Label Studio into its own virtual environment (BENCHFORGE_LS_VENV, "
            "default BENCHFORGE_HOME/labelstudio/venv) from scripts/labelstudio-"
            "constraints.txt, and migrate one empty database that every new data folder "
            "starts from (a first start then takes seconds, not half a minute). "
            "scripts/bootstrap.sh runs it; quick when done."
        ),
    )
    ssub.add_parser("status", help="whether it runs, and where", description="Print status.")
    ssub.add_parser("down", help="stop the server `up` started", description="Stop it.")

    ann = sub.add_parser(
        "annotate",
        help="push items to Label Studio, wait, simulate annotators, pull annotations",
        description=(
            "Label Studio round trips. The server is LABEL_STUDIO_URL + LABEL_STUDIO_API_KEY "
            "when set, else the one `benchforge labelstudio up` started."
        ),
    )
    asub = ann.add_subparsers(dest="action", required=True, metavar="ACTION")
    push = asub.add_parser(
        "push",
        help="create or find a project and import items as tasks (idempotent)",
        description=(
            "Create the project (or find it by name) with a labeling config and K "
            "annotations per task, and import the items not already there: each task keeps "
            "its item_id, so pushing the same items again adds no task."
        ),
    )
    push.add_argument(
        "items",
        type=Path,
        help="items (.parquet, .csv or .jsonl) with an item_id column and every $field the "
        "config reads",
    )
    push.add_argument(
        "--config", type=Path, required=True, help="labeling config XML (annotation_configs/)"
    )
    push.add_argument("--project", required=True, help="project name (3 characters or more)")
    push.add_argument(
        "--overlap", type=int, default=1, help="annotations wanted per task, K (default 1)"
    )
    push.add_argument(
        "--guideline",
        type=Path,
        default=None,
        help="a Markdown guideline, shown as the project's instructions before labelling "
        "(sanitised HTML; an existing project's is updated)",
    )
    invite = asub.add_parser(
        "invite",
        help="create annotator accounts; their passwords go to a private file",
        description=(
            "Create a Label Studio account for each e-mail address, with a random password. "
            "The passwords are written to a private file (0600, outside the repository; "
            "default BENCHFORGE_CONFIG/annotators/<project>.json), never printed or logged. "
            "Every address is checked first, as Label Studio's sign-up checks it: one it "
            "would refuse, a repeated one, or one that is already an account this file did "
            "not make, is an error naming each such address, and no account is created. "
            "A run that stopped half-way (the server died) is resumed by the same command: "
            "the accounts the file lists are kept, the others are made. The annotators "
            "log in at the server's URL (the file says which) and see the project."
        ),
    )
    invite.add_argument("--project", default=None, help="the project they will annotate")
    invite.add_argument(
        "--emails", required=True, help="comma-separated e-mail addresses of the annotators"
    )
    invite.add_argument(
        "--credentials",
        type=Path,
        default=None,
        help="the private file for their passwords (default "
        "BENCHFORGE_CONFIG/annotators/<project>.json); accounts already listed are kept",
    )
    wait = asub.add_parser(
        "wait",
        help="poll until every task has its K annotations",
        description=(
            "Poll the project until every task has K annotations that were not skipped, with a "
            "progress bar. Exit 0 when done, 3 when the timeout passed first (run it again "
            "to resume waiting)."
        ),
    )
    wait.add_argument("--project", required=True, help="project name")
    wait.add_argument("--timeout", type=float, required=True, help="seconds to wait at most")
    wait.add_argument("--poll", type=float, default=5.0, help="seconds between polls (5)")
    sim = asub.add_parser(
        "simulate",
        help="demos and tests only: post annotations from K simulated accounts",
        description=(
            "For demos and tests only. Post the missing annotations of every task from K "
            "simulated Label Studio accounts (annotator-NN@simulated.benchforge.local), drawn "
            "from the noise model documented in pipelines/annotation/simulate.py: "
            "per-annotator bias and noise, at least one careless annotator, 2%% skips, "
            "1%% report flags. Everything pulled from them is marked simulated. A rerun "
            "posts nothing twice."
        ),
    )
    sim.add_argument("--project", required=True, help="project name")
    sim.add_argument("--annotators", type=int, required=True, help="simulated accounts, K")
    sim.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    sim.add_argument("--workers", type=int, default=8, help="parallel requests (default 8)")
    sim.add_argument(
        "--pool",
        default="annotator",
        help="account pool name: accounts are <pool>-NN@simulated.benchforge.local "
        "(default annotator; the NLI rebuild's writers are 'writer', kept apart from the "
        "validators)",
    )
    repair = asub.add_parser(
        "repair",
        help="find and remove duplicate tasks and annotations a past fault left",
        description=(
            "Find tasks that repeat an item_id (the task with the lowest id is kept; the "
            "later ones are removed with their annotations) and second annotations by the "
            "same account on one task (the earliest is kept), remove them, and report what "
            "was removed. benchforge's own writes no longer leave such duplicates; this "
            "mends projects written before, or by other tools."
        ),
    )
    repair.add_argument("--project", required=True, help="project name")
    repair.add_argument("--dry-run", action="store_true", help="only report what would be removed")
    pull = asub.add_parser(
        "pull",
        help="every annotation as a long Parquet table",
        description=(
            "Write every annotation of the project as a long table, one row per annotation "
            "and field: item_id, task_id, annotation_id, annotator_id, field, value, "
            "created_at, lead_time, cancelled (skipped annotations: kept, no value), "
            "report_flags, simulated, project. Written atomically."
        ),
    )
    pull.add_argument("--project", required=True, help="project name")
    pull.add_argument("--out", type=Path, required=True, help="output .parquet file")
    status = asub.add_parser(
        "status",
        help="per-annotator progress, agreement so far and control accuracy",
        description=(
            "Print each annotator's progress in the project: annotations done and "
            "skipped, median seconds per task, agreement so far (the share of items on "
            "which they give the others' majority answer, over the items where the "
            "others have one) and, with --controls, their accuracy on the control items."
        ),
    )
    which = status.add_mutually_exclusive_group(required=True)
    which.add_argument("--project", help="project name")
    which.add_argument("--recipe", type=Path, help="a rebuild recipe: every round of its run")
    status.add_argument(
        "--out",
        type=Path,
        default=None,
        help="with --recipe: the run's output folder (default runs/<name>)",
    )
    status.add_argument(
        "--field",
        default=None,
        help="the answer field agreement is measured on (default: the most common one)",
    )
    status.add_argument(
        "--controls",
        type=Path,
        default=None,
        help="a .parquet or .csv of control items (item_id, value: the known answer)",
    )
    for parser in (up, push, wait, sim, repair, pull, status, invite):
        parser.add_argument("--json", action="store_true", help="print the result as JSON")


def server_up(args: argparse.Namespace) -> int:
    from pipelines.annotation import ls_server

    info = ls_server.up(args.port, args.timeout)
    print(json.dumps(info) if args.json else f"Label Studio answers at {info['url']}")
    return 0


def server_install(args: argparse.Namespace) -> int:
    from pipelines.annotation import ls_server

    exe = ls_server.ensure_installed()
    template = ls_server.database_template()
    print(f"Label Studio {ls_server.LS_VERSION} installed in {exe.parent.parent}"
          + ("; its empty database is ready" if template.exists() else ""))  # fmt: skip
    return 0


def server_status(args: argparse.Namespace) -> int:
    from pipelines.annotation import ls_server

    print(json.dumps(ls_server.status(), indent=2))
    return 0


def server_down(args: argparse.Namespace) -> int:
    from pipelines.annotation import ls_server

    print("stopped" if ls_server.down() else "not running")
    return 0


def push(args: argparse.Namespace) -> int:
    from pipelines.annotation import annotate
    from pipelines.annotation.invite import guideline_html

    config = annotate.load_config(args.config)
    items = annotate.read_items(args.items, config)
    instruction = guideline_html(args.guideline) if args.guideline else None
    result = annotate.push(items, config, args.project, args.overlap, instruction=instruction)
    _print(args, result.__dict__, f"{result.created} tasks created, {result.existing} there")
    return 0


def invite(args: argparse.Namespace) -> int:
    from pipelines.annotation.invite import invite as create_accounts

    emails = [e for e in args.emails.split(",") if e.strip()]
    result = create_accounts(emails, args.project, args.credentials)
    kept = f", {len(result['kept'])} made before kept" if result["kept"] else ""
    _print(args, result, f"{len(result['created'])} annotator account(s) created{kept}; their "
           f"passwords are in {result['credentials']} (private: share each one with its "
           f"annotator); they log in at {result['url']}")  # fmt: skip
    return 0


def wait(args: argparse.Namespace) -> int:
    from pipelines.annotation import annotate

    result = annotate.wait(args.project, args.timeout, args.poll)
    _print(args, result, f"{result['finished']}/{result['tasks']} tasks complete")
    return 0 if result["done"] else 3


def simulate(args: argparse.Namespace) -> int:
    from pipelines.annotation.simulate import simulate as post_simulated

    result = post_simulated(
        args.project, args.annotators, args.seed, workers=args.workers, pool=args.pool
    )
    result.pop("payloads")
    _print(args, result, f"{result['posted']} simulated annotations posted")
    return 0


def repair(args: argparse.Namespace) -> int:
    from pipelines.annotation import annotate

    result = annotate.repair(args.project, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    _print(args, result, f"{verb} {len(result['duplicate_tasks'])} duplicate tasks and "
           f"{len(result['duplicate_annotations'])} duplicate annotations of "
           f"{result['tasks']} tasks in {args.project!r}")  # fmt: skip
    return 0


def pull(args: argparse.Namespace) -> int:
    from pipelines.annotation import annotate
    from pipelines.core.io import write_parquet

    table = annotate.pull(args.project)
    write_parquet(table, args.out)
    summary = {
        "rows": len(table),
        "annotations": int(table["annotation_id"].nunique()),
        "cancelled": int(table.drop_duplicates("annotation_id")["cancelled"].sum()),
        "out": str(args.out),
    }
    _print(args, summary, f"{summary['annotations']} annotations ({len(table)} rows) -> {args.out}")
    return 0


def status(args: argparse.Namespace) -> int:
    if args.recipe is not None:
        return _recipe_status(args)
    from pipelines.agreement.status import annotator_status
    from pipelines.annotation import annotate
    from pipelines.core.io import read_table

    table = annotate.pull(args.project)
    controls = None
    if args.controls is not None:
        controls = read_table(args.controls, annotate.AnnotationError, {"item_id": str})
        missing = [c for c in ("item_id", "value") if c not in controls.columns]
        if missing:
            raise annotate.AnnotationError(f"{args.controls}: no column {missing}")
    proj = annotate.find_project(annotate.client(), args.project)
    kind = _field_type(proj.label_config, table, args.field)
    try:
        frame = annotator_status(table, args.field, controls, kind=kind)
    except ValueError as exc:
        raise annotate.AnnotationError(f"{args.project}: {exc}") from None
    rows = json.loads(frame.to_json(orient="records"))
    if args.json:
        print(json.dumps({"project": args.project, "annotators": rows}, ensure_ascii=False))
        return 0
    from pipelines.core.markdown import table as md_table

    print(f"{args.project}: {len(rows)} annotator(s)")
    print(md_table(list(frame.columns), [[("" if v is None else v) for v in r.values()]
                                         for r in rows]))  # fmt: skip
    return 0


def _recipe_status(args: argparse.Namespace) -> int:
    """A project manager's view (issue 55): per round of the recipe's run, the progress
    (tasks, tasks with all their annotations) and each annotator's status."""
    from pipelines.agreement.status import annotator_status
    from pipelines.annotation import annotate
    from pipelines.core.markdown import table as md_table
    from pipelines.core.recipe import load_recipe
    from pipelines.core.steps import RunContext
    from pipelines.rebuild.kinds import task_kind

    recipe = load_recipe(args.recipe)
    out = args.out or Path("runs") / recipe.name
    ctx = RunContext(recipe, args.recipe, out, task_kind(recipe.task), False)
    ls = annotate.client()
    report = []
    for name, r in ctx.task.rounds(ctx).items():
        proj = annotate.find_project(ls, r.project)
        entry: dict = {"round": name or "main", "project": r.project, "overlap": r.overlap}
        if proj is None:
            report.append({**entry, "state": "not pushed yet"})
            continue
        tasks = annotate.export_tasks(ls, proj.id)
        complete = sum(
            sum(not a.get("was_cancelled") for a in t.get("annotations", [])) >= r.overlap
            for t in tasks
        )
        config = annotate.parse_label_config(proj.label_config)
        annotate.with_predictions(ls, proj.id, tasks)
        table = annotate.annotations_table(tasks, annotate.users_by_id(ls), r.project, config)
        controls = None
        controls_file = ctx.out / "controls" / "controls.parquet"
        if name == "" and controls_file.is_file():
            import pandas as pd

            controls = pd.read_parquet(controls_file)
        field = (
            getattr(getattr(recipe, "agreement", None), "answer_field", None)
            if name == ""
            else None
        )
        try:
            frame = annotator_status(table, field, controls,
                                     kind=_field_type(proj.label_config, table, field))  # fmt: skip
        except ValueError:
            frame = annotator_status(table, None, controls)
        report.append({**entry, "state": "done" if complete == len(tasks) else "in progress",
                       "tasks": len(tasks), "complete": complete,
                       "annotators": json.loads(frame.to_json(orient="records"))})  # fmt: skip
    if args.json:
        print(json.dumps({"recipe": str(args.recipe), "out": str(out), "rounds": report},
                         ensure_ascii=False))  # fmt: skip
        return 0
    for entry in report:
        head = f"{entry['round']} ({entry['project']}): {entry['state']}"
        if "tasks" in entry:
            head += (f", {entry['complete']} of {entry['tasks']} tasks complete "
                     f"(overlap {entry['overlap']})")  # fmt: skip
        print(head)
        rows = entry.get("annotators") or []
        if rows:
            print(md_table(list(rows[0]), [[("" if v is None else v) for v in r.values()]
                                          for r in rows]))  # fmt: skip
        print()
    return 0


def _field_type(label_config: str, table, field: str | None):  # noqa: ANN001, ANN202
    """The value type of the field status measures (its control in the project's
    labeling config, the XML ``label_config``), or None when it cannot be told."""
    from pipelines.agreement.status import answer_field
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.values import value_type_of

    try:
        chosen = answer_field(table, field)
        config = parse_label_config(label_config)
        return value_type_of(config.control(chosen)) if chosen else None
    except (ValueError, KeyError):
        return None


def _print(args: argparse.Namespace, result: dict, line: str) -> None:
    print(json.dumps(result, ensure_ascii=False, default=str) if args.json else line)
