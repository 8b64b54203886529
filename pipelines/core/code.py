"""Code keys: which source a cached result depends on.

A cached output is stale when the code that computed it changed, and only then. Hashing
the whole ``pipelines/`` tree would rerun the KLUE ingest after an edit of a KoBEST card;
:func:`code_key` hashes the modules a computation can run instead: the named roots (a
package stands for every module in it, so the members a registry discovers by name,
such as the language packs, count), and everything they import within ``pipelines``,
found on the static import graph (grimp, the graph import-linter checks), with the
templates they render (``*.j2``: a family's card text).

:func:`cache_key` is the one cache key of benchforge: a result is current when the
SHA-256 of the files it read, its settings and the code key of the modules that
computed it are unchanged. The rebuild's orchestrator derives it from a step's
declaration (``pipelines.core.steps.declares``); the split and agreement stages
(``pipelines.splits.run.split_code``, ``pipelines.agreement.rules.agreement_code``) key
their outputs with it; the ingest and pair flows build their task keys from the same
parts.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pipelines.core.io import sha256_file


@functools.cache
def _graph(package: str):  # noqa: ANN202 - grimp's ImportGraph
    import grimp

    return grimp.build_graph(package, cache_dir=None)


def modules_of(roots: Iterable[str], package: str = "pipelines") -> list[str]:
    """The roots (packages with all their modules) and every module of ``package`` they
    import, directly or not; sorted."""
    graph = _graph(package)
    wanted: set[str] = set()
    for root in roots:
        wanted.add(root)
        wanted |= graph.find_descendants(root)
    for module in list(wanted):
        wanted |= graph.find_upstream_modules(module)
    return sorted(m for m in wanted if m.split(".")[0] == package)


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(module)
    return Path(spec.origin)


def templates_of(source: Path) -> list[Path]:
    """The templates a module renders: the ``*.j2`` files beside it whose name starts
    with its own (``card.py``: ``card.md.j2``; ``sts.py``: ``sts.card.md.j2``)."""
    return sorted(source.parent.glob(f"{source.stem}.*.j2"))


def code_key(roots: Iterable[str], package: str = "pipelines") -> str:
    """SHA-256 (first 16) of the source of :func:`modules_of` ``roots`` and of their
    templates (:func:`templates_of`): it changes when one of those files changes, and
    not when any other file of the package does. A root outside ``package`` (a shared
    step of ``flows/``, a test's toy family) counts with its own source only."""
    roots = list(roots)
    inside = [r for r in roots if r.split(".")[0] == package]
    modules = [*modules_of(inside, package), *sorted(r for r in roots if r not in inside)]
    digest = hashlib.sha256()
    for module in modules:
        source = _source(module)
        for path in [source, *templates_of(source)]:
            digest.update(f"{module}:{path.name}".encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_key(inputs: Mapping[str, Path], settings: object, roots: Iterable[str],
              digests: Mapping[str, str] | None = None) -> str:  # fmt: skip
    """The cache key of a result computed from the files ``inputs`` (name -> path; their
    SHA-256) and those whose SHA-256 the caller has already read (``digests``: name ->
    SHA-256), with ``settings`` (JSON-able; a value JSON cannot hold counts as its
    ``str``) by the code of ``roots`` (:func:`code_key`)."""
    hashes = {**(digests or {}), **{name: sha256_file(Path(p)) for name, p in inputs.items()}}
    return json.dumps([hashes, settings, code_key(roots)], sort_keys=True, default=str)
