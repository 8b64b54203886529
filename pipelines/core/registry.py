"""Registries: a stage, split rule, agreement rule, pairing method, translator backend,
annotation config, language or task kind is one registration, never an edit of the
code that uses it.

A :class:`Registry` maps names to objects. Modules register themselves with the
decorator (``@SPLIT_RULES.register("sts")``); a registry knows the package its
members live in and imports every module of it on first lookup, so a new member is a
new module (or a new decorated function) and nothing else. A name that is not
registered is an error that lists the registered names and the nearest one.
``benchforge list`` prints every registry (:func:`registries`).
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from pipelines.core.errors import BenchforgeError

T = TypeVar("T")

_ALL: dict[str, Registry] = {}


class UnknownName(BenchforgeError, KeyError, ValueError):
    """A name no member of the registry has; the message lists the registered names."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


def nearest(name: str, names: list[str]) -> str | None:
    """The registered name closest to ``name`` (difflib), or None when none is close."""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
    return close[0] if close else None


class Registry(Generic[T]):
    """Named members of one kind.

    ``package``: the dotted package whose modules register members (or several, a
    tuple; a plain module is imported as it is); all of them are imported on the first
    lookup (``pkgutil``), so discovery needs no list to edit. Discovery imports by name:
    a registry in ``pipelines.core`` is filled by the layers above it without core
    importing them (the import contracts of ``pyproject.toml``).
    """

    def __init__(
        self, kind: str, package: str | tuple[str, ...] | None = None, describe: str = ""
    ) -> None:
        self.kind, self.package, self.describe = kind, package, describe
        self._members: dict[str, T] = {}
        self._docs: dict[str, str] = {}
        self._loaded = package is None
        self._loading = False
        # Dask and Prefect run tasks in threads: a second thread must wait for the first
        # one's imports, not see a half-filled registry
        self._lock = threading.RLock()
        _ALL[kind] = self

    def register(self, name: str, doc: str | None = None) -> Callable[[T], T]:
        """Decorator: ``@REGISTRY.register("name")``. A second registration of a name
        by another object is an error (two modules claiming one name)."""

        def add(obj: T) -> T:
            self.add(name, obj, doc)
            return obj

        return add

    def add(self, name: str, obj: T, doc: str | None = None) -> None:
        known = self._members.get(name)
        if known is not None and known is not obj and _qualname(known) != _qualname(obj):
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._members[name] = obj
        text = doc or (getattr(obj, "__doc__", None) or "").strip()
        self._docs[name] = " ".join(text.split("\n\n")[0].split()) if text else ""

    def remove(self, name: str) -> None:
        """Unregister ``name`` (tests that register a member for one test)."""
        self._members.pop(name, None)
        self._docs.pop(name, None)

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded or self._loading:  # done, or this thread is importing them
                return
            self._loading = True
            try:
                names = (self.package,) if isinstance(self.package, str) else self.package
                for name in names:
                    package = importlib.import_module(name)
                    for info in pkgutil.iter_modules(getattr(package, "__path__", []), f"{name}."):
                        importlib.import_module(info.name)
                self._loaded = True
            finally:
                self._loading = False

    def get(self, name: str) -> T:
        """The member called ``name``; :class:`UnknownName` names the nearest one."""
        self._load()
        if name not in self._members:
            names = self.names()
            near = nearest(str(name), names)
            hint = f"; did you mean {near!r}?" if near else ""
            raise UnknownName(f"unknown {self.kind} {name!r}{hint} (registered: {names})")
        return self._members[name]

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._members

    def names(self) -> list[str]:
        self._load()
        return sorted(self._members)

    def items(self) -> Iterator[tuple[str, T]]:
        for name in self.names():
            yield name, self._members[name]

    def doc(self, name: str) -> str:
        self.get(name)
        return self._docs.get(name, "")


def _qualname(obj: object) -> str:
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"


def registries() -> dict[str, Registry]:
    """Every registry, by kind (importing the packages that define them)."""
    for module in (
        "pipelines.lang",
        "pipelines.families",
        "pipelines.core.steps",
        "pipelines.splits.base",
        "pipelines.agreement.rules",
        "pipelines.pairing.pairs",
        "pipelines.pairing.translate",
        "pipelines.annotation.configs",
        "pipelines.export.warnings",
        "pipelines.export.figures",
        "pipelines.evaluation.metrics",
    ):
        importlib.import_module(module)
    return dict(sorted(_ALL.items()))
