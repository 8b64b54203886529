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

:func:`cached` is the one cache scheme of the rebuild's steps. A step that declares its
files and its settings (``@declares(reads=, writes=, settings=)``) is cached by the
orchestrator: before it runs, :func:`step_cache` derives its key
(``pipelines.core.code.cache_key``: the declared inputs' SHA-256, the settings and the
code key of the step's module and what it imports) and the step computes inside
``cached(ctx, compute)``, which writes the declared outputs and their manifest with that
key, or returns the stored info when they are current; the step ends with the
:class:`Cached` it gets back (``done.outcome(summary, rows)``: the summary's
`` (cached)`` mark and the info's ``cached`` flag, in one place). Editing one family's
module reruns that family's steps only (families import no other family).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import outputs_current, sha256_file, write_outputs
from pipelines.core.registry import Registry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


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


class TaskKindLike(Protocol):
    """What the step contract reads of the task kind a rebuild runs: its ``name`` (the
    family prefix under which :data:`STEPS` finds its own steps). The rebuild passes a
    ``pipelines.rebuild.kinds.TaskKind``, whose other fields (plan, rounds, card,
    shared steps) the rebuild layer and the families read; core cannot import it."""

    name: str


@dataclass
class RunContext:
    """What every step of one rebuild sees."""

    recipe: Recipe
    recipe_path: Path
    out: Path
    task: TaskKindLike  # a pipelines.rebuild.kinds.TaskKind
    simulated: bool
    seed: int | None = None
    port: int | None = None
    steps: dict = field(default_factory=dict)  # name -> the info of each finished step
    server_started: bool = False  # the local Label Studio server, once per run
    # --reuse-project: keep using a Label Studio project made with another overlap
    reuse_project: bool = False
    # the running step's cache (set by the orchestrator from its declaration)
    cache: StepCache | None = None
    # a deployed run on a persistent Prefect server: a round people have not finished
    # suspends the flow run instead of waiting (flows/suspend.py), so wait only checks
    suspend_waits: bool = False

    @property
    def project(self) -> str:
        """The main round's project: ``annotation.project``, else :attr:`project_base`."""
        return self.recipe.annotation.project or self.project_base

    @property
    def project_base(self) -> str:
        """What the rounds' project names start with (``project_prefix``, else the
        recipe's name): a round's default project is ``<project_base>-<round>``."""
        return self.recipe.project_prefix or self.recipe.name


StepFn = Callable[[RunContext, str], StepOutcome]
STEPS: Registry[StepFn] = Registry(
    "step", ("pipelines.rebuild", "pipelines.families"), "rebuild steps"
)


Paths = Callable[[RunContext, str], dict[str, Path]]


@dataclass(frozen=True)
class Retries:
    """A step's retries, declared on the step (:func:`retried`) and applied by whoever
    runs it: the orchestrator (``flows/rebuild.py``, as Prefect task retries) or
    :func:`run_retried` for a step run inside another. ``times`` more runs, ``delay_s``
    apart, after an error ``worth(error)`` says a retry can change (a server slow or
    restarting, not a refused setting)."""

    times: int
    delay_s: float
    worth: Callable[[BaseException], bool]


def retried(times: int, delay_s: float, worth: Callable[[BaseException], bool]) -> Callable:
    """Decorator: declare a step's :class:`Retries`."""

    def mark(fn: StepFn) -> StepFn:
        fn.retries = Retries(times, delay_s, worth)
        return fn

    return mark


def retries_of(fn: StepFn) -> Retries | None:
    """The step's declared retries, if it declared any."""
    return getattr(fn, "retries", None)


def run_retried(fn: StepFn, ctx: RunContext, arg: str,
                sleep: Callable[[float], None] | None = None) -> StepOutcome:  # fmt: skip
    """Run step ``fn`` inside another step with its declared retries, as the
    orchestrator runs a step of the plan (a round a step runs only when it has work for
    it: :func:`pipelines.rebuild.rounds.run_round`)."""
    import time

    declared = retries_of(fn)
    attempts = 1 + (declared.times if declared else 0)
    for attempt in range(1, attempts + 1):
        try:
            return fn(ctx, arg)
        except Exception as exc:  # noqa: BLE001 - the declaration says which are retried
            if attempt == attempts or not declared.worth(exc):
                raise
            (sleep or time.sleep)(declared.delay_s)
    raise AssertionError("unreachable")  # pragma: no cover


class StepInputMissing(BenchforgeError, FileNotFoundError):
    """A step's declared input is not there: the message names the step, the file and
    the step that writes it."""


Settings = Callable[[RunContext, str], object]
Code = Callable[[RunContext, str], Iterable[str]]


@dataclass(frozen=True)
class StepFiles:
    """What a step reads and writes: ``reads(ctx, arg)`` and ``writes(ctx, arg)`` give
    files by name (under OUT, or the recipe's own files). The orchestrator checks the
    reads exist before the step runs (naming the step that writes a missing one), checks
    the writes exist after it, and records the reads' SHA-256 in OUT/rebuild.json; a
    step such as ``export`` takes its inputs from its declaration instead of a list of
    its own.

    A step with ``settings(ctx, arg)`` (JSON-able) is cached: its key is the reads'
    SHA-256, the settings and the code key of the step's module, of the modules ``code``
    names (``code(ctx, arg)``: a shared step's family modules) and of what they import
    (:func:`step_cache`). ``pulls(ctx, arg)``: the files a step pulls itself from Label
    Studio before it computes (a round it runs inside, such as KoBEST's revisions): not
    checked before it runs, hashed into its key when it computes."""

    reads: Paths
    writes: Paths
    settings: Settings | None = None
    code: Code | None = None
    pulls: Paths | None = None


class StepCache:
    """The running step's cache: the folder and file names of its declared outputs
    (written with a manifest recording the key), the SHA-256 of its declared inputs by
    name, and its key, derived when first asked (after the pulls of a step that runs a
    round inside)."""

    def __init__(self, folder: Path, names: list[str], digests: dict[str, str],
                 key_of: Callable[[], str]) -> None:  # fmt: skip
        self.folder, self.names, self.digests, self._key_of = folder, names, digests, key_of

    @functools.cached_property
    def key(self) -> str:
        return self._key_of()


def declares(reads: Paths | None = None, writes: Paths | None = None,
             settings: Settings | None = None, code: Code | None = None,
             pulls: Paths | None = None) -> Callable:  # fmt: skip
    """Decorator: declare what a step function reads and writes and, for a cached step,
    its settings, the code beyond its own module and the files it pulls itself
    (:class:`StepFiles`)."""

    def mark(fn: StepFn) -> StepFn:
        fn.files = StepFiles(reads or (lambda ctx, arg: {}), writes or (lambda ctx, arg: {}),
                             settings, code, pulls)  # fmt: skip
        return fn

    return mark


def out_files(*paths: str) -> Paths:
    """Declared files under OUT by their path relative to it
    (``out_files("items/items.parquet")``)."""
    return lambda ctx, arg: {rel: ctx.out / rel for rel in paths}


def files_of(fn: StepFn) -> StepFiles | None:
    """The step's declaration, if it made one."""
    return getattr(fn, "files", None)


def check_inputs(ctx: RunContext, name: str, fn: StepFn, arg: str,
                 names: list[str]) -> dict[str, str]:  # fmt: skip
    """:func:`input_digests`, each SHA-256 cut to its first 12 (as OUT/rebuild.json
    records them)."""
    return {key: h[:12] for key, h in input_digests(ctx, name, fn, arg, names).items()}


def input_digests(ctx: RunContext, name: str, fn: StepFn, arg: str,
                  names: list[str]) -> dict[str, str]:  # fmt: skip
    """Before step ``name`` runs: every declared input exists, else
    :class:`StepInputMissing` naming the file and the step of ``names`` (the run's
    steps) that writes it; returns the inputs' SHA-256 by name (read once: the step's
    cache key and its card's provenance take them from here)."""
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
    return {key: sha256_file(Path(path)) for key, path in reads.items()}


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


def step_cache(ctx: RunContext, fn: StepFn, arg: str,
               digests: dict[str, str] | None = None) -> StepCache | None:  # fmt: skip
    """The cache of step ``fn`` (None unless it declares its settings): the key over
    its declared reads, settings and code (``pipelines.core.code.cache_key``); its
    declared writes must share one folder. ``digests``: the reads' SHA-256 when the
    caller has them (:func:`input_digests`), else they are computed here."""
    from pipelines.core.code import cache_key

    files = files_of(fn)
    if files is None or files.settings is None:
        return None
    writes = {name: Path(p) for name, p in files.writes(ctx, arg).items()}
    if not writes:  # nothing to cache (a step the recipe skips)
        return None
    folders = {p.parent for p in writes.values()}
    if len(folders) != 1:
        raise ValueError(f"{fn.__module__}.{fn.__name__}: a cached step writes into one "
                         f"folder, not {sorted(map(str, folders))}")  # fmt: skip
    roots = [fn.__module__, *(files.code(ctx, arg) if files.code else ())]
    if digests is None:
        digests = {k: sha256_file(Path(p)) for k, p in files.reads(ctx, arg).items()}

    def key_of() -> str:
        pulls = files.pulls(ctx, arg) if files.pulls else {}
        return cache_key(pulls, files.settings(ctx, arg), roots, digests)

    return StepCache(folders.pop(), [p.name for p in writes.values()], digests, key_of)


class Cached(NamedTuple):
    """What :func:`cached` gives a step: its ``info`` (computed, or read back) and
    whether its outputs were current (``hit``). :meth:`outcome` is the epilogue of every
    cached step."""

    info: dict
    hit: bool

    @property
    def mark(self) -> str:
        """``" (cached)"`` when the outputs were current, else ``""``: the progress
        line's mark."""
        return " (cached)" if self.hit else ""

    def outcome(self, summary: str, rows: Rows | None = None, after: str = "",
                merge: bool = True, mark: bool = True) -> StepOutcome:  # fmt: skip
        """The step's :class:`StepOutcome`: the summary is ``summary``, the
        :attr:`mark` (unless ``mark`` is False) and ``after`` (the figures a summary
        gives after its mark); the info is ``info`` with ``"cached": hit`` (``merge``;
        False: ``info`` as it is); ``rows`` as given."""
        info = {**self.info, "cached": self.hit} if merge else self.info
        return StepOutcome(summary + (self.mark if mark else "") + after, info, rows)


def cached(ctx: RunContext, compute: Callable[[], tuple[dict, dict]]) -> Cached:
    """Run ``compute`` unless the running step's declared outputs are current (their
    manifest records the key :func:`step_cache` derived); return (info, cached) as a
    :class:`Cached`, whose :meth:`~Cached.outcome` ends the step.

    ``compute() -> (tables, info)`` gives the Parquet tables by file name and the info,
    or ``(tables, info, texts)`` with text files by name too; together they are the
    step's declared writes (the tables, the texts and one ``.json`` file for the info),
    checked here."""
    cache = ctx.cache
    if cache is None:
        raise RuntimeError("cached() runs inside a step that declares its settings "
                           "(@declares(..., settings=...)), run by the orchestrator")  # fmt: skip
    infos = [n for n in cache.names if n.endswith(".json")]
    if len(infos) != 1:
        raise ValueError(f"a cached step declares one .json info file, not {infos}")
    if outputs_current(cache.folder, cache.key, cache.names):
        return Cached(json.loads((cache.folder / infos[0]).read_text(encoding="utf-8")), True)
    tables, info, *rest = compute()
    texts = rest[0] if rest else {}
    if sorted([*tables, *texts, infos[0]]) != sorted(cache.names):
        raise AssertionError(f"the step computed {sorted([*tables, *texts])} and declared "
                             f"{sorted(cache.names)}")  # fmt: skip
    write_outputs(cache.folder, cache.key, tables, {infos[0]: info}, texts)
    return Cached(info, False)
