"""Progress of a long piece of work that the user sees, on a terminal or not (issue 51,
item 13).

tqdm draws a bar on a terminal but, asked to decide by itself (``disable=None``), shows
nothing at all where the output is not one (a log file, CI, a Prefect worker, a pipe):
KorNLI's MT step was silent there for five minutes. :func:`progress` is tqdm's bar on a
terminal and, anywhere else, a line on the logger every ``BENCHFORGE_PROGRESS_SECONDS``
seconds (10 by default) while work goes on, and one when it ends if it took longer than
that, e.g.::

    translate en->ko: 120/400 sentences (30%, 11.8/s, 24 s left)

Its interface is the part of tqdm's the project uses: ``update(n)``, ``set_postfix(**kw)``,
``close()``, iteration over an iterable and use as a context manager.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

from pipelines.core.errors import BenchforgeError

log = logging.getLogger("benchforge.progress")

INTERVAL = 10.0  # seconds between two lines where there is no terminal
VARIABLE = "BENCHFORGE_PROGRESS_SECONDS"


class ProgressSettingError(BenchforgeError):
    """``BENCHFORGE_PROGRESS_SECONDS`` that is not a number of seconds."""


def interval() -> float:
    """Seconds between two progress lines: ``BENCHFORGE_PROGRESS_SECONDS``, else 10."""
    value = os.environ.get(VARIABLE)
    if not value:
        return INTERVAL
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not math.isfinite(seconds) or seconds < 0:
        raise ProgressSettingError(f"{VARIABLE}={value}: seconds between progress lines, 0 or "
                                   f"more (default {INTERVAL:g})")  # fmt: skip
    return seconds


class LogProgress:
    """Progress as log lines, at most one every ``every`` seconds (see the module)."""

    def __init__(self, iterable: Iterable | None = None, total: int | None = None,
                 desc: str = "", unit: str = "it", logger: logging.Logger | None = None,
                 every: float | None = None, initial: int = 0) -> None:  # fmt: skip
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.logger = logger or log
        self.every = interval() if every is None else every
        self.n = self.start_n = initial
        self.started = self.last = time.monotonic()
        self.postfix: dict[str, Any] = {}
        self.lines = 0
        self.closed = False

    def __iter__(self) -> Iterator:
        for item in self.iterable or ():
            yield item
            self.update(1)
        self.close()

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        now = time.monotonic()
        finished = self.total is not None and self.n >= self.total  # close() says that
        if not finished and now - self.last >= self.every:
            self.last = now
            self.emit()

    def set_postfix(self, **kw: Any) -> None:  # noqa: ANN401 - any value, as tqdm's
        self.postfix = kw

    def set_description(self, desc: str) -> None:
        self.desc = desc

    def line(self, done: bool = False) -> str:
        """The progress as one line."""
        elapsed = time.monotonic() - self.started
        plural = self.unit if self.unit.endswith("s") else f"{self.unit}s"
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        rate = (self.n - self.start_n) / elapsed if elapsed > 0 else 0.0
        details = []
        if self.total:
            details.append(f"{100 * self.n / self.total:.0f}%")
        details.append(f"{rate:.1f} {plural}/s" if rate < 10 else f"{rate:.0f} {plural}/s")
        if done:
            details.append(f"{elapsed:.0f} s")
        elif self.total and rate > 0 and self.n < self.total:
            details.append(f"{(self.total - self.n) / rate:.0f} s left")
        details += [f"{k} {v}" for k, v in self.postfix.items()]
        state = "done, " if done else ""
        return f"{self.desc}: {count} {plural} ({state}{', '.join(details)})"

    def emit(self, done: bool = False) -> None:
        self.logger.info("%s", self.line(done))
        self.lines += 1

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # a line said it was under way, or it took longer than a line's interval
        if self.lines or time.monotonic() - self.started >= self.every:
            self.emit(done=True)


class _Silent(LogProgress):
    def emit(self, done: bool = False) -> None:
        pass


def on_terminal() -> bool:
    """True when the user watches a terminal (stderr is one)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(
    iterable: Iterable | None = None,
    *,
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    show: bool | None = None,
    logger: logging.Logger | None = None,
    initial: int = 0,
) -> Any:  # noqa: ANN401 - a tqdm bar or a LogProgress
    """The progress of ``total`` units of work (or of iterating ``iterable``): tqdm's bar
    on a terminal, log lines every ``BENCHFORGE_PROGRESS_SECONDS`` elsewhere (see the
    module); ``show=False``: nothing."""
    if show is False:
        return _Silent(iterable, total, desc, unit, logger, math.inf, initial)
    if on_terminal():
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, desc=desc, unit=unit, initial=initial)
    return LogProgress(iterable, total, desc, unit, logger, initial=initial)
