"""Prefect runtime for benchforge commands: settings, the local server, the task runner.

``prefect_runtime(out_dir)`` must be entered before Prefect is imported anywhere in the
process. It sets the environment that this process and the Dask workers it spawns
share: task results (the cache) persist under ``OUT/.cache/prefect``, telemetry is off,
and, unless ``PREFECT_API_URL`` names a server, one temporary Prefect server is started
on 127.0.0.1 for the run (so that the Dask workers report to it instead of each
starting their own) and stopped at the end.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger("benchforge")

_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
    "PREFECT_LOGGING_LEVEL": "INFO",
    "PREFECT_UI_ENABLED": "false",
    "PREFECT_SERVER_UI_ENABLED": "false",
}


def prepare_environment(out_dir: Path) -> None:
    """Settings for Prefect in this process and its children (Dask workers)."""
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)
    os.environ["PREFECT_LOCAL_STORAGE_PATH"] = str((out_dir / ".cache" / "prefect").resolve())
    os.environ.setdefault("PREFECT_HOME", str(Path.home() / ".benchforge" / "prefect"))
    Path(os.environ["PREFECT_HOME"]).expanduser().mkdir(parents=True, exist_ok=True)
    # Dask's own INFO lines drown the run's progress; warnings still show.
    for name in ("distributed", "distributed.scheduler", "distributed.nanny", "distributed.core",
                 "distributed.worker", "distributed.http.proxy", "httpx", "httpcore"):
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "warning")
    os.environ.setdefault("DASK_DISTRIBUTED__DIAGNOSTICS_LINK", "")


@contextlib.contextmanager
def prefect_runtime(out_dir: Path) -> Iterator[str]:
    """Yield the Prefect API URL in use; a temporary local server is stopped on exit."""
    prepare_environment(out_dir)
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_LOCAL_STORAGE_PATH,
        temporary_settings,
    )

    storage = os.environ["PREFECT_LOCAL_STORAGE_PATH"]
    if os.environ.get("PREFECT_API_URL"):
        with temporary_settings({PREFECT_LOCAL_STORAGE_PATH: storage}):
            yield os.environ["PREFECT_API_URL"]
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    log.info("starting a temporary Prefect server on 127.0.0.1")
    server.start()
    os.environ["PREFECT_API_URL"] = server.api_url
    try:
        with temporary_settings({PREFECT_API_URL: server.api_url, PREFECT_LOCAL_STORAGE_PATH: storage}):
            yield server.api_url
            from prefect.logging.handlers import APILogHandler

            APILogHandler().flush()
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()


def dask_task_runner(workers: int | None, address: str | None):  # noqa: ANN201
    """A DaskTaskRunner on an existing scheduler, or on a local cluster of processes."""
    from prefect_dask import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    n = workers or os.cpu_count() or 1
    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": n,
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": None,
            "memory_limit": 0,
        }
    )
