"""Label Studio round trips through label-studio-sdk: push items, wait, simulate, pull.

- ``push``: find or create the project (by title) with a labeling config and an overlap
  of K annotations per task, and import the items that are not there yet. Each task's
  data carries the item's ``item_id``, so pushing the same items again adds no task.
- ``wait``: poll until every task has K annotations that were not skipped, with a progress
  bar; returns when done or when the timeout passes (the caller can resume later).
- ``simulate``: for demos and tests only; see ``pipelines.annotation.simulate``.
- ``pull``: every annotation as a long table (``ANNOTATION_COLUMNS``), one row per
  annotation and field; skipped (cancelled) annotations are kept, marked, with no value.

Writes to one project (push, import with annotations, simulate, repair) hold a project
lock (``project_lock``): a file lock per server and project under benchforge's data
folder, shared by every run on this machine, so two concurrent runs cannot both see a
task missing and both import it (issue 32). A pull that meets duplicate tasks says so and
names ``benchforge annotate repair``.

A project carries the settings it was made with (``SETTINGS_MARK`` in its description:
the labeling config's hash and the overlap); a recipe whose config or overlap changed
stops before any work, naming both settings and the way out (issue 32).

Every call to the server goes through ``with_retries``: transport errors and 5xx answers
(a server that is slow or restarting) are retried with backoff. The SDK's own retries are
off (it would repeat a POST whose response was lost, after the server had saved it): a
write is retried only after reading back whether the failed attempt was saved
(``recheck``), so a retry never duplicates a task, an annotation, an account or a
project.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import math
import ssl
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import pandas as pd
from tqdm.auto import tqdm

from pipelines.annotation.label_config import REPORT_FIELDS, LabelConfig, parse_label_config
from pipelines.annotation.ls_server import Connection, connection
from pipelines.core.errors import BenchforgeError

log = logging.getLogger(__name__)

T = TypeVar("T")
SIM_DOMAIN = "simulated.benchforge.local"
IMPORT_CHUNK = 2000
ANNOTATION_COLUMNS = [
    "item_id",
    "task_id",
    "annotation_id",
    "annotator_id",
    "field",
    "value",
    "created_at",
    "lead_time",
    "cancelled",
    "report_flags",
    "simulated",
    "project",
    # the task's pre-loaded suggestion for the field (its last prediction, read as the
    # value is; None: the task had none): what suggestion acceptance compares with
    "suggested",
]


class AnnotationError(BenchforgeError, ValueError):
    """Items or a project that cannot be used; the message names the file, row or project."""


SETTINGS_MARK = "benchforge settings: "


@contextlib.contextmanager
def project_lock(project: str, url: str | None = None) -> Iterator[None]:
    """Hold the write lock of ``project`` on the server at ``url`` (default: the
    connection's): one run at a time writes to a project from this machine."""
    import fcntl
    import hashlib

    from pipelines.annotation.ls_server import connection, home

    url = url or connection().url
    key = hashlib.sha256(f"{url}\n{project}".encode()).hexdigest()[:24]
    folder = home() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"project-{key}.lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("project %r: waiting for another run's write to finish", project)
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def project_settings(config: LabelConfig, overlap: int) -> str:
    """The settings a project is made with, as its description records them."""
    import hashlib

    digest = hashlib.sha256(_norm(config.xml).encode()).hexdigest()[:12]
    return f"config {digest}, overlap {overlap}"


def client(conn: Connection | None = None):  # noqa: ANN201 - label_studio_sdk.LabelStudio
    """An SDK client for ``conn`` (default: ``ls_server.connection()``)."""
    import httpx
    from label_studio_sdk import LabelStudio

    conn = conn or connection()
    # max_retries=0: the SDK would resend a POST whose response was lost (see with_retries);
    # a new httpx client per call, sharing one TLS context: each context loads the CA
    # bundle (23 ms; 19 clients in the main job, issue 38)
    http = httpx.Client(timeout=120, follow_redirects=True, verify=_tls_context())
    return LabelStudio(base_url=conn.url, api_key=conn.api_key, timeout=120, max_retries=0,
                       httpx_client=http)  # fmt: skip


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default context (SSL_CERT_FILE, SSL_CERT_DIR or certifi's CA bundle), made
    once per process."""
    from httpx._config import create_ssl_context

    return create_ssl_context()


def with_retries(
    call: Callable[[], T],
    what: str,
    attempts: int = 8,
    base: float = 0.5,
    recheck: Callable[[], T | None] | None = None,
) -> T:
    """``call()``, retried with exponential backoff (0.5 s doubling, 8 attempts, about two
    minutes in all) on transport errors and 5xx/429 answers; other errors are raised.

    For a write, ``recheck`` reads back whether the failed attempt was saved after all
    (a response lost after the server committed it): before each retry it is called, and
    what it returns (not None) is taken as the result instead of writing again."""
    import httpx
    from label_studio_sdk.core.api_error import ApiError

    for attempt in range(attempts):
        try:
            if attempt and recheck is not None:
                saved = recheck()
                if saved is not None:
                    log.info("%s: the failed attempt was saved; not writing again", what)
                    return saved
            return call()
        except (httpx.TransportError, ApiError) as exc:
            code = getattr(exc, "status_code", None)
            if isinstance(exc, ApiError) and not (code == 429 or (code or 0) >= 500):
                raise
            if attempt == attempts - 1:
                raise
            delay = base * 2**attempt
            log.warning("%s: %s; retrying in %.1f s", what, type(exc).__name__, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- items and projects


def read_items(path: Path, config: LabelConfig) -> pd.DataFrame:
    """Items from Parquet, CSV or JSON Lines, with a unique ``item_id`` and every data
    field the config reads; errors name the file and the row."""
    if not path.is_file():
        raise AnnotationError(f"{path}: file not found")
    suffixes = "".join(path.suffixes)
    if suffixes.endswith(".parquet"):
        frame = pd.read_parquet(path)
    elif suffixes.endswith(".csv"):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    elif ".jsonl" in suffixes:
        frame = pd.read_json(path, lines=True, dtype=False)
    else:
        raise AnnotationError(f"{path}: expected .parquet, .csv or .jsonl")
    if "item_id" not in frame.columns:
        raise AnnotationError(f"{path}: no item_id column (columns: {list(frame.columns)})")
    missing = [f for f in config.data_fields if f not in frame.columns]
    if missing:
        raise AnnotationError(f"{path}: the labeling config reads {missing}, not in the items")
    ids = frame["item_id"].astype("string")
    for row, value in enumerate(ids, start=1):
        if pd.isna(value) or not str(value).strip():
            raise AnnotationError(f"{path}: row {row}: empty item_id")
    dup = ids[ids.duplicated()]
    if len(dup):
        row = int(dup.index[0]) + 1
        raise AnnotationError(f"{path}: row {row}: item_id {dup.iloc[0]!r} appears twice")
    frame = frame.copy()
    frame["item_id"] = ids.astype(str)
    return frame


def find_project(ls, name: str):  # noqa: ANN001, ANN201
    """The project titled ``name``, or None (an error when two have that title)."""
    found = [p for p in with_retries(lambda: list(ls.projects.list(title=name)), "list projects")]
    found = [p for p in found if p.title == name]
    if len(found) > 1:
        raise AnnotationError(f"{len(found)} Label Studio projects are titled {name!r}")
    return found[0] if found else None


def ensure_project(  # noqa: ANN201
    ls,  # noqa: ANN001
    name: str,
    config: LabelConfig,
    overlap: int,
    simulated: bool = False,
    reuse: bool = False,
    instruction: str | None = None,
):
    """Find the project ``name`` or create it with ``config`` and ``overlap`` (recorded in
    its description, ``project_settings``). An existing project made with other settings
    (another labeling config, another overlap) is refused with both settings named,
    unless ``reuse`` (``--reuse-project``): then its overlap is updated. ``instruction``
    (HTML, ``invite.guideline_html``): the guideline Label Studio shows before
    labelling; an existing project's is updated when it changed."""
    if len(name) < 3:
        raise AnnotationError(f"project name {name!r}: Label Studio needs 3 characters or more")
    wanted = project_settings(config, overlap)
    project = find_project(ls, name)
    if project is None:
        return with_retries(
            lambda: ls.projects.create(
                title=name,
                label_config=config.xml,
                maximum_annotations=overlap,
                overlap_cohort_percentage=100,
                description=f"benchforge project; {SETTINGS_MARK}{wanted}",
                **({"expert_instruction": instruction, "show_instruction": True}
                   if instruction else {}),
            ),
            "create project",
            recheck=lambda: find_project(ls, name),
        )  # fmt: skip
    _check_settings(project, name, config, overlap, reuse)
    if instruction and (project.expert_instruction or "") != instruction:
        project = with_retries(
            lambda: ls.projects.update(id=project.id, expert_instruction=instruction,
                                       show_instruction=True),
            "update the project's instructions",
        )  # fmt: skip
    if project.maximum_annotations != overlap:
        log.info("project %r: overlap %s -> %s", name, project.maximum_annotations, overlap)
        project = with_retries(
            lambda: ls.projects.update(id=project.id, maximum_annotations=overlap,
                                       description=f"benchforge project; {SETTINGS_MARK}{wanted}"),
            "update project",
        )  # fmt: skip
    return project


def _check_settings(project, name: str, config: LabelConfig, overlap: int, reuse: bool) -> None:  # noqa: ANN001
    """Refuse a project made with other settings than this run's (see ``ensure_project``)."""
    wanted = project_settings(config, overlap)
    same_config = _norm(project.label_config) == _norm(config.xml)
    description = project.description or ""
    if SETTINGS_MARK in description:
        had = description.split(SETTINGS_MARK, 1)[1]
    else:  # a project made before its settings were recorded
        kind = "the same" if same_config else "another"
        had = f"config {kind}, overlap {project.maximum_annotations}"
    if not reuse and (not same_config or project.maximum_annotations != overlap):
        raise AnnotationError(
            f"Label Studio project {name!r} was made with other settings ({had}) than this "
            f"run's ({wanted}); its tasks and annotations would be mixed with this run's. "
            "Give the round a new project name in the recipe, or pass --reuse-project to "
            "keep using it"
            + ("" if same_config else " (a changed labeling config always needs a new name)")
        )
    if not same_config:
        raise AnnotationError(
            f"project {name!r} exists with another labeling config; use a new project name"
        )


def check_project(name: str, config: Path, overlap: int, reuse: bool = False, ls=None) -> None:  # noqa: ANN001
    """Before any work: the labeling config parses, and a project ``name`` that exists
    was made with the same settings (else the error ``ensure_project`` would raise after
    the first steps is raised now)."""
    parsed = parse_label_config(config)
    ls = ls or client()
    project = find_project(ls, name)
    if project is not None:
        _check_settings(project, name, parsed, overlap, reuse)


def _norm(xml: str | None) -> str:
    return " ".join((xml or "").split())


def export_tasks(ls, project_id: int) -> list[dict]:  # noqa: ANN001
    """Every task of the project with its annotations (Label Studio's JSON export). The
    server keeps a snapshot file of every export (``data/export/project-N-at-*.json``);
    those this call made on the managed server are removed, so they do not pile up."""

    def call() -> list[dict]:
        before = _snapshots(project_id)
        try:
            chunks = ls.projects.exports.download_sync(
                project_id, export_type="JSON", download_all_tasks=True
            )
            return json.loads(b"".join(chunks))
        finally:
            for path in _snapshots(project_id) - before:
                path.unlink(missing_ok=True)

    return with_retries(call, "export tasks")


def _snapshots(project_id: int) -> set[Path]:
    """The export snapshot files of the project on the managed server's disk (none for a
    server of the user's own: benchforge cannot reach its files)."""
    from pipelines.annotation.ls_server import managed_export_dir

    folder = managed_export_dir()
    if folder is None:
        return set()
    return set(folder.glob(f"project-{int(project_id)}-at-*.json"))


@dataclass
class PushResult:
    project_id: int
    project: str
    items: int
    created: int
    existing: int
    overlap: int
    annotations: int = 0  # imported with the new tasks (simulated annotators)
    # items already in the project whose task holds other data (the items changed since
    # they were pushed; the tasks are kept, never duplicated)
    changed: list[str] = field(default_factory=list)


# attach(ls, project, records) adds "annotations" to new task records; returns how many
AttachAnnotations = Callable[[object, object, list[dict]], int]


def push(
    items: pd.DataFrame,
    config: LabelConfig,
    project: str,
    overlap: int,
    ls=None,  # noqa: ANN001
    progress: bool | None = None,
    attach: AttachAnnotations | None = None,
    reuse: bool = False,
    instruction: str | None = None,
) -> PushResult:
    """Import ``items`` (with ``item_id``) as tasks; items already in the project are not
    imported again. ``attach`` (``simulate.with_simulated``) adds annotations to the new
    tasks, imported in the same request; ``instruction``: the project's guideline
    (HTML). Runs under the project's lock."""
    if overlap < 1:
        raise AnnotationError(f"overlap must be 1 or more, got {overlap}")
    ls = ls or client()
    with project_lock(project, _base_url(ls)):
        return _push(items, config, project, overlap, ls, progress, attach, reuse, instruction)


def _base_url(ls) -> str | None:  # noqa: ANN001
    """The server URL an SDK client talks to (None: the connection's)."""
    wrapper = getattr(ls, "_client_wrapper", None)
    url = getattr(wrapper, "get_base_url", lambda: None)() if wrapper else None
    return str(url).rstrip("/") if url else None


def _push(
    items, config, project, overlap, ls, progress, attach, reuse, instruction=None
) -> PushResult:  # noqa: ANN001, E501
    proj = ensure_project(ls, project, config, overlap, reuse=reuse, instruction=instruction)
    stored = {str(t["data"]["item_id"]): t["data"] for t in _task_data(ls, proj.id)
              if "item_id" in t["data"]}  # fmt: skip
    existing = set(stored)
    fresh = items[~items["item_id"].isin(existing)]
    changed = changed_items(_records(items[items["item_id"].isin(existing)]), stored)
    if changed:
        log.warning(
            "%d task(s) of project %r hold other data than their items (first: %s): the "
            "items changed since they were pushed; the tasks are kept as they are (push to "
            "a new project to ask about the new items)", len(changed), project, changed[0],
        )  # fmt: skip
    records = _records(fresh)
    annotations = attach(ls, proj, records) if attach and records else 0
    bar = tqdm(total=len(records), desc=f"push {project}", unit="task", disable=progress)
    for start in range(0, len(records), IMPORT_CHUNK):
        chunk = records[start : start + IMPORT_CHUNK]
        _import_once(ls, proj.id, chunk)
        bar.update(len(chunk))
    bar.close()
    return PushResult(
        proj.id,
        project,
        len(items),
        len(records),
        len(items) - len(fresh),
        overlap,
        annotations,
        changed,
    )


def _canonical_data(data: dict) -> str:
    return json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)


def changed_items(records: list[dict], stored: dict[str, dict]) -> list[str]:
    """The item ids whose task record's data (``_records``) is not the data the
    project's task of that item holds, compared as canonical JSON."""
    out = []
    for record in records:
        item = str(record["data"].get("item_id"))
        if item in stored and _canonical_data(record["data"]) != _canonical_data(stored[item]):
            out.append(item)
    return sorted(out)


def _import_once(ls, project_id: int, chunk: list[dict]) -> None:  # noqa: ANN001
    """Import ``chunk`` (task records with ``item_id``); after a failed attempt, only the
    records whose item is not in the project yet (an import is one transaction: it was
    saved whole or not at all)."""

    def rest() -> int | None:
        have = _item_ids(ls, project_id)
        todo = [r for r in chunk if str(r["data"].get("item_id")) not in have]
        if not todo:
            return 0
        if len(todo) < len(chunk):
            log.warning("import: %d of %d tasks were saved before the failure; importing "
                        "the other %d", len(chunk) - len(todo), len(chunk), len(todo))  # fmt: skip
        ls.projects.import_tasks(project_id, request=todo)
        return len(todo)

    with_retries(lambda: ls.projects.import_tasks(project_id, request=chunk), "import",
                 recheck=rest)  # fmt: skip


def _item_ids(ls, project_id: int) -> set[str]:  # noqa: ANN001
    """The item ids of the project's tasks."""
    return {
        str(t["data"].get("item_id")) for t in _task_data(ls, project_id) if "item_id" in t["data"]
    }


def user_id_of(completed_by: object) -> int | None:
    """The account id in an annotation's ``completed_by`` (an id, or a user object)."""
    if isinstance(completed_by, dict):
        return int(completed_by["id"])
    return int(completed_by) if completed_by is not None else None


def _task_data(ls, project_id: int) -> list[dict]:  # noqa: ANN001
    """id and data of every task, from Label Studio's task list without annotations
    (``fields=task_only``, pages of 5,000): a rerun's push that finds its 14,694 KLUE-STS
    tasks there read them in half the time of the export, which carries every one of
    their 115,394 annotations (issue 38; as fast at the demo's 334)."""

    def call() -> list[dict]:
        pages = ls.tasks.list(project=project_id, fields="task_only", page_size=5000)
        return [{"id": int(t.id), "data": dict(t.data or {})} for t in pages]

    return with_retries(call, "list tasks")


PREDICTION_COLUMN = "ls_prediction"


def _records(frame: pd.DataFrame) -> list[dict]:
    """Task records of the items; an item's ``ls_prediction`` (JSON: ``{"model_version",
    "result": [Label Studio regions]}``, e.g. a tagger's pseudo-labels) becomes the
    task's pre-loaded prediction, not task data."""
    out = []
    for row in frame.to_dict(orient="records"):
        data, prediction = {}, None
        for key, value in row.items():
            if isinstance(value, float) and math.isnan(value):
                value = None
            elif hasattr(value, "tolist"):  # numpy scalars and arrays (list columns)
                value = value.tolist()
            if key == PREDICTION_COLUMN:
                prediction = json.loads(value) if isinstance(value, str) and value else None
                continue
            data[key] = value
        record: dict = {"data": data}
        if prediction is not None:
            record["predictions"] = [prediction]
        out.append(record)
    return out


# ---------------------------------------------------------------------------- waiting


def progress_of(ls, project_id: int, note: dict | None = None) -> tuple[int, int]:  # noqa: ANN001
    """(tasks with all their annotations, tasks); ``note`` gets the project's annotation
    and skip counts (what ``wait`` shows in its bar)."""
    proj = with_retries(lambda: ls.projects.get(id=project_id), "project status")
    if note is not None:
        note["annotations"] = int(getattr(proj, "total_annotations_number", 0) or 0)
        note["skipped"] = int(getattr(proj, "skipped_annotations_number", 0) or 0)
    return int(proj.finished_task_number or 0), int(proj.task_number or 0)


def wait(
    project: str,
    timeout: float,
    poll: float = 5.0,
    ls=None,  # noqa: ANN001
    progress: bool | None = None,
    every: float | None = None,
) -> dict:
    """Poll until every task of ``project`` has its annotations or ``timeout`` seconds
    pass; returns {"done", "finished", "tasks", "waited_s"}. Progress: a bar on a
    terminal (``progress=True``: none); elsewhere (a log, a pipe) one line on stderr when
    the wait begins, every ``every`` seconds (default ``BENCHFORGE_PROGRESS_SECONDS``,
    else 10: ``pipelines.core.progress.interval``) and at its end (issue 51: a wait of
    minutes printed nothing): tasks complete of all, annotations made and skipped,
    seconds waited."""
    from pipelines.core.progress import interval

    every = interval() if every is None else every
    ls = ls or client()
    proj = find_project(ls, project)
    if proj is None:
        raise AnnotationError(f"no Label Studio project named {project!r}")
    start = time.monotonic()
    note: dict = {}
    finished, total = progress_of(ls, proj.id, note)
    bar = tqdm(total=total, initial=finished, desc=f"wait {project}", unit="task", disable=progress)
    bar.set_postfix(note)  # annotations made and skipped so far (annotate status: per person)
    lines = progress is None and bar.disable  # no bar where one was wanted: plain lines

    def line(last: bool = False) -> None:
        if lines and (finished < total or last):
            waited = time.monotonic() - start
            print(f"wait {project}: {finished}/{total} tasks complete, "
                  f"{note.get('annotations', 0)} annotations, {note.get('skipped', 0)} "
                  f"skipped ({waited:.0f} s of {timeout:.0f} s)", file=sys.stderr,
                  flush=True)  # fmt: skip

    begun = finished < total  # a wait that had nothing to wait for says nothing
    line()
    said = time.monotonic()
    while finished < total and time.monotonic() - start < timeout:
        time.sleep(min(poll, max(0.0, timeout - (time.monotonic() - start))))
        now, total = progress_of(ls, proj.id, note)
        bar.set_postfix(note)
        bar.total = total
        bar.update(now - finished)
        finished = now
        if time.monotonic() - said >= every:
            line()
            said = time.monotonic()
    bar.close()
    if begun:
        line(last=True)
    return {
        "done": finished >= total,
        "finished": finished,
        "tasks": total,
        "waited_s": round(time.monotonic() - start, 1),
    }


# ------------------------------------------------------------------------------ pull


def users_by_id(ls) -> dict[int, str]:  # noqa: ANN001
    return {
        int(u.id): str(u.email or u.username)
        for u in with_retries(lambda: list(ls.users.list()), "list users")
    }


def flatten_result(
    result: Iterable[dict], config: LabelConfig | None = None
) -> list[tuple[str, str]]:
    """(field, value) pairs of one annotation's result, each control's regions read by
    its value type (``pipelines.annotation.values``): a choice as itself (several joined
    with ``|``), text as written, a rating as its number, spans, relations and trees as
    one canonical JSON value. With the project's ``config``, a control the annotation
    left empty whose type has an empty answer (a span set's ``[]``, an answer span's
    ``no_answer``) gets it; without, regions are read by their Label Studio type."""
    from pipelines.annotation.values import canonical_json, value_type_for_region, value_type_of

    regions = list(result)
    controls = {c.name: c for c in config.answer_controls} if config else {}
    relation_field = next((c.name for c in controls.values() if c.tag == "Relations"), "")
    groups: dict[str, list[dict]] = {}
    for region in regions:
        name = region.get("from_name") or (relation_field if region.get("type") == "relation"
                                           else "")  # fmt: skip
        groups.setdefault(name, []).append(region)
    out: list[tuple[str, str]] = []
    for name, group in groups.items():
        control = controls.get(name)
        kind = (value_type_of(control, config.pinned(name)) if control
                else value_type_for_region(group[0].get("type", "")))  # fmt: skip
        if kind is None:  # a region no registered type reads: its value as JSON
            out.extend((name, canonical_json(r.get("value", {}))) for r in group)
            continue
        out.extend((name, value) for value in kind.flatten(control, group, regions))
    if config is not None:  # an answer left empty: "[]" for a span set, no_answer ...
        for name, control in controls.items():
            if name not in groups:
                kind = value_type_of(control, config.pinned(name))
                if kind.reads_result:  # its value reads other regions (a typed companion)
                    out.extend((name, value) for value in kind.flatten(control, [], regions))
                    continue
                empty = kind.empty(control)
                if empty is not None:
                    out.append((name, empty))
    return out


def annotations_table(
    tasks: list[dict], users: dict[int, str], project: str, config: LabelConfig | None = None
) -> pd.DataFrame:
    """The long table of every annotation in ``tasks`` (an export; ``config``: the
    project's labeling config, whose value types read the results)."""
    rows = []
    for task in tasks:
        item_id = str(task["data"].get("item_id", task["id"]))
        predictions = [p for p in task.get("predictions") or [] if isinstance(p, dict)]
        suggested = (dict(flatten_result(predictions[-1].get("result") or [], config))
                     if predictions else {})  # fmt: skip
        for ann in task.get("annotations", []):
            user_id = user_id_of(ann.get("completed_by"))
            email = users.get(user_id, "")
            base = {
                "item_id": item_id,
                "task_id": int(task["id"]),
                "annotation_id": int(ann["id"]),
                "annotator_id": f"ls-user-{user_id}",
                "created_at": ann.get("created_at"),
                "lead_time": ann.get("lead_time"),
                "cancelled": bool(ann.get("was_cancelled")),
                "simulated": email.endswith("@" + SIM_DOMAIN),
                "project": project,
            }
            pairs = flatten_result(ann.get("result") or [], config)
            flags = sorted(
                {flag for name, v in pairs if name in REPORT_FIELDS for flag in v.split("|")}
            )
            base["report_flags"] = "|".join(flags)
            if not pairs:
                rows.append({**base, "field": None, "value": None})
            rows.extend({**base, "field": name, "value": v, "suggested": suggested.get(name)}
                        for name, v in pairs)  # fmt: skip
    frame = pd.DataFrame(rows, columns=ANNOTATION_COLUMNS)
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, format="ISO8601")
    frame["lead_time"] = frame["lead_time"].astype("float64")
    for col in ("cancelled", "simulated"):
        frame[col] = frame[col].astype(bool)
    return frame.sort_values(["item_id", "annotation_id", "field"], kind="stable").reset_index(
        drop=True
    )


def pull(  # noqa: ANN001
    project: str, ls=None, value_types: dict[str, str] | None = None
) -> pd.DataFrame:
    """Every annotation of ``project`` as a long table (``ANNOTATION_COLUMNS``), each
    field read by the value type its control carries in the project's labeling config
    (``value_types``: the recipe's pins, field -> type)."""
    ls = ls or client()
    proj = find_project(ls, project)
    if proj is None:
        raise AnnotationError(f"no Label Studio project named {project!r}")
    tasks = export_tasks(ls, proj.id)
    from collections import Counter

    counts = Counter(str(t["data"].get("item_id", t["id"])) for t in tasks)
    repeated = sorted(i for i, n in counts.items() if n > 1)
    items = list(counts.elements())
    if repeated:
        raise AnnotationError(
            f"Label Studio project {project!r} holds {len(items) - len(set(items))} duplicate "
            f"tasks (items {repeated[:5]}{' ...' if len(repeated) > 5 else ''} appear more "
            "than once; a past fault or concurrent runs imported them twice). Run "
            f"`benchforge annotate repair {project}` to remove them, then run again"
        )
    config = None
    if getattr(proj, "label_config", None):
        with contextlib.suppress(ValueError):  # a config Label Studio took but we cannot read
            config = parse_label_config(proj.label_config)
    if config is not None and value_types:
        config = dataclasses.replace(config, value_types=tuple(sorted(value_types.items())))
    with_predictions(ls, proj.id, tasks)
    return annotations_table(tasks, users_by_id(ls), project, config)


def with_predictions(ls, project_id: int, tasks: list[dict]) -> None:  # noqa: ANN001
    """Put each task's predictions (their results, oldest first) into ``tasks`` in place:
    Label Studio's JSON export lists a task's predictions by id only. One request for
    the project, and none when no task has a prediction."""
    if not any(t.get("predictions") for t in tasks):
        return
    by_task: dict[int, list[dict]] = {}
    listed = with_retries(lambda: list(ls.predictions.list(project=project_id)), "list predictions")
    for p in sorted(listed, key=lambda p: int(p.id)):
        by_task.setdefault(int(p.task), []).append({"id": int(p.id), "result": p.result or []})
    for task in tasks:
        task["predictions"] = by_task.get(int(task["id"]), [])


def repair(project: str, ls=None, dry_run: bool = False) -> dict:  # noqa: ANN001
    """Find, and unless ``dry_run`` remove, the duplicates a past fault left in
    ``project``: tasks that repeat an ``item_id`` (the task with the lowest id is kept,
    the later ones go with their annotations) and a second annotation by the same account
    on one task (the earliest is kept). Returns what was found and removed."""
    ls = ls or client()
    with project_lock(project, _base_url(ls)):
        return _repair(project, ls, dry_run)


def _repair(project: str, ls, dry_run: bool) -> dict:  # noqa: ANN001
    proj = find_project(ls, project)
    if proj is None:
        raise AnnotationError(f"no Label Studio project named {project!r}")
    tasks = sorted(export_tasks(ls, proj.id), key=lambda t: int(t["id"]))
    first_task: dict[str, int] = {}
    tasks_out, anns_out = [], []
    for task in tasks:
        item = str(task["data"].get("item_id", task["id"]))
        if item in first_task:
            tasks_out.append({"task_id": int(task["id"]), "item_id": item,
                              "kept_task_id": first_task[item],
                              "annotations": len(task.get("annotations", []))})  # fmt: skip
            continue
        first_task[item] = int(task["id"])
        first_ann: dict[int | None, int] = {}
        for ann in sorted(task.get("annotations", []), key=lambda a: int(a["id"])):
            user_id = user_id_of(ann.get("completed_by"))
            if user_id in first_ann:
                anns_out.append({"annotation_id": int(ann["id"]), "task_id": int(task["id"]),
                                 "item_id": item, "annotator_id": f"ls-user-{user_id}",
                                 "kept_annotation_id": first_ann[user_id]})  # fmt: skip
            else:
                first_ann[user_id] = int(ann["id"])
    if not dry_run:
        for row in anns_out:
            with_retries(lambda a=row["annotation_id"]: ls.annotations.delete(id=a),
                         "delete annotation")  # fmt: skip
        for row in tasks_out:
            with_retries(lambda t=row["task_id"]: ls.tasks.delete(id=t), "delete task")
    return {
        "project": project,
        "tasks": len(tasks),
        "duplicate_tasks": tasks_out,
        "duplicate_annotations": anns_out,
        "removed": not dry_run,
    }


def load_config(path: Path) -> LabelConfig:
    return parse_label_config(path)
