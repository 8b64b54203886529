"""Code keys: which source a cached result depends on.

A cached output is stale when the code that computed it changed, and only then. Hashing
the whole ``pipelines/`` tree would rerun the KLUE ingest after an edit of a KoBEST card;
:func:`code_key` hashes the modules a computation can run instead: the named roots (a
package stands for every module in it, so the members a registry discovers by name,
such as the language packs, count), and everything they import within ``pipelines``,
found on the static import graph (grimp, the graph import-linter checks).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path


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


def code_key(roots: Iterable[str], package: str = "pipelines") -> str:
    """SHA-256 (first 16) of the source of :func:`modules_of` ``roots``: it changes when
    one of those modules changes, and not when any other module of the package does."""
    digest = hashlib.sha256()
    for module in modules_of(roots, package):
        digest.update(module.encode() + b"\0")
        digest.update(_source(module).read_bytes())
    return digest.hexdigest()[:16]
