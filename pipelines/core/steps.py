"""The step contract of ``benchforge rebuild``: what a task kind's steps are and what
each returns.

A *step* is a registered function ``step(ctx, arg) -> StepOutcome``: it reads the
earlier steps' outputs under ``ctx.out``, writes its own (atomically, with a manifest),
and says what it did. ``arg`` is the part of the step's name after its registered
name (``push-writing`` runs the registered ``push`` with ``arg = "writing"``: the
annotation round called ``writing``); most steps ignore it.

The row contract (docs/architecture.md, "The stage contract") holds for every step that
keeps or drops rows: its
:class:`Rows` say how many came in, how many were kept and how many were dropped per
reason, and :class:`StepOutcome` refuses counts that do not add up. Dropped rows are
written with their reasons next to the kept ones.

:func:`cached` is the one cache scheme of the rebuild's own steps: a step's outputs
are current when their manifest's key (the step's inputs' SHA-256, its settings and the
source of the module that computes it) is unchanged, so editing a task module reruns its
steps and nothing else.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import outputs_current, sha256_file, write_outputs
from pipelines.core.registry import Registry


@dataclass
class Rows:
    """Rows in, kept, and dropped per reason, of one step (in its own unit)."""

    unit: str
    rows_in: int
    kept: int
    dropped: dict[str, int] = field(default_factory=dict)

    def check(self, step: str) -> None:
        if self.rows_in != self.kept + sum(self.dropped.values()):
            raise AssertionError(
                f"step {step}: {self.rows_in} {self.unit}s in != {self.kept} kept + "
                f"{sum(self.dropped.values())} dropped {self.dropped}"
            )

    def to_dict(self) -> dict:
        return {"unit": self.unit, "in": self.rows_in, "kept": self.kept,
                "dropped": dict(sorted(self.dropped.items()))}  # fmt: skip


@dataclass
class StepOutcome:
    """What a step did: a one-line summary for the progress line, the figures recorded
    in OUT/rebuild.json, and (for steps that keep or drop rows) its :class:`Rows`."""

    summary: str
    info: dict = field(default_factory=dict)
    rows: Rows | None = None


@dataclass
class RunContext:
    """What every step of one rebuild sees."""

    recipe: object  # pipelines.core.recipe.Recipe
    recipe_path: Path
    out: Path
    task: object  # pipelines.families.TaskKind
    simulated: bool
    seed: int | None = None
    port: int | None = None
    steps: dict = field(default_factory=dict)  # name -> the info of each finished step
    server_started: bool = False  # the local Label Studio server, once per run
    # --reuse-project: keep using a Label Studio project made with another overlap
    reuse_project: bool = False

    @property
    def project(self) -> str:
        return self.recipe.annotation.project or self.recipe.name


StepFn = Callable[[RunContext, str], StepOutcome]
STEPS: Registry[StepFn] = Registry("step", "pipelines.families", "rebuild steps")


Paths = Callable[[RunContext, str], dict[str, Path]]


class StepInputMissing(BenchforgeError, FileNotFoundError):
    """A step's declared input is not there: the message names the step, the file and
    the step that writes it."""


@dataclass(frozen=True)
class StepFiles:
    """What a step reads and writes: ``reads(ctx, arg)`` and ``writes(ctx, arg)`` give
    files by name (under OUT, or the recipe's own files). The orchestrator checks the
    reads exist before the step runs (naming the step that writes a missing one), checks
    the writes exist after it, and records the reads' SHA-256 in OUT/rebuild.json; a
    step such as ``export`` takes its inputs from its declaration instead of a list of
    its own."""

    reads: Paths
    writes: Paths


def declares(reads: Paths | None = None, writes: Paths | None = None) -> Callable:
    """Decorator: declare what a step function reads and writes (:class:`StepFiles`)."""

    def mark(fn: StepFn) -> StepFn:
        fn.files = StepFiles(reads or (lambda ctx, arg: {}), writes or (lambda ctx, arg: {}))
        return fn

    return mark


def files_of(fn: StepFn) -> StepFiles | None:
    """The step's declaration, if it made one."""
    return getattr(fn, "files", None)


def check_inputs(ctx: RunContext, name: str, fn: StepFn, arg: str,
                 names: list[str]) -> dict[str, str]:  # fmt: skip
    """Before step ``name`` runs: every declared input exists, else
    :class:`StepInputMissing` naming the file and the step of ``names`` (the run's
    steps) that writes it; returns the inputs' SHA-256 (first 12) by name."""
    files = files_of(fn)
    if files is None:
        return {}
    reads = files.reads(ctx, arg)
    for key, path in reads.items():
        if not Path(path).is_file():
            writer = _writer_of(ctx, Path(path), names)
            by = f", which step {writer!r} writes" if writer else ""
            raise StepInputMissing(
                f"step {name!r} needs its input {key!r}, {path}{by}, and it is not there: "
                "run the whole recipe again (finished steps are skipped)"
            )
    return {key: sha256_file(Path(path))[:12] for key, path in reads.items()}


def check_outputs(ctx: RunContext, name: str, fn: StepFn, arg: str) -> None:
    """After step ``name``: every file it declared it writes is there."""
    files = files_of(fn)
    if files is None:
        return
    missing = [str(p) for p in files.writes(ctx, arg).values() if not Path(p).is_file()]
    if missing:
        raise AssertionError(f"step {name!r} declared outputs it did not write: {missing}")


def _writer_of(ctx: RunContext, path: Path, names: list[str]) -> str | None:
    for other in names:
        fn, arg = step_function(ctx.task.name, other)
        files = files_of(fn)
        if files is not None and path in {Path(p) for p in files.writes(ctx, arg).values()}:
            return other
    return None


def step_function(kind: str, name: str) -> tuple[StepFn, str]:
    """The registered step for ``name`` in task kind ``kind`` and its argument: the
    family's own (``<kind>:<name>``) first, then the shared ``name``, else the family's
    or the shared registered prefix (``artifacts-2`` -> ``<kind>:artifacts``, ``2``;
    ``push-writing`` -> ``push``, ``writing``)."""
    if f"{kind}:{name}" in STEPS:
        return STEPS.get(f"{kind}:{name}"), ""
    if name in STEPS:
        return STEPS.get(name), ""
    base, _, arg = name.partition("-")
    if arg and f"{kind}:{base}" in STEPS:
        return STEPS.get(f"{kind}:{base}"), arg
    if arg and base in STEPS:
        return STEPS.get(base), arg
    return STEPS.get(name), ""  # raises, naming the nearest step


def code_hash(fn: Callable) -> str:
    """SHA-256 (first 16) of the source file of the module that defines ``fn`` and of
    the templates beside it (``*.j2``: a family's card text), so that editing either
    invalidates the outputs it computed."""
    source = Path(inspect.getfile(fn))
    files = [source, *sorted(source.parent.glob("*.j2"))]
    if len(files) == 1:
        return sha256_file(source)[:16]
    return hashlib.sha256("".join(sha256_file(f) for f in files).encode()).hexdigest()[:16]


def cached(
    out: Path,
    inputs: list[Path],
    settings: object,
    compute: Callable[[], tuple[dict, dict]],
    info_name: str,
    table_names: list[str],
) -> tuple[dict, bool]:
    """Run ``compute`` unless OUT holds current outputs; return (info, cached).

    ``compute() -> (tables, info)`` gives the Parquet tables by file name and the info
    written as ``info_name``. The key is the inputs' SHA-256, ``settings`` and the code
    of ``compute``'s module."""
    key = json.dumps(
        [[sha256_file(p) for p in inputs], settings, code_hash(compute)],
        sort_keys=True,
        default=str,
    )
    names = [*table_names, info_name]
    if outputs_current(out, key, names):
        return json.loads((out / info_name).read_text(encoding="utf-8")), True
    tables, info = compute()
    write_outputs(out, key, tables, {info_name: info})
    return info, False
