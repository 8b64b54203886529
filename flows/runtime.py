"""Prefect runtime for benchforge commands: settings, the local server, the task runner.

``prefect_server()`` must be entered before Prefect is imported anywhere in the
process. It sets the environment that this process and the Dask workers it spawns
share (telemetry off, quiet server logs) and, unless ``PREFECT_API_URL`` names a
server, starts one temporary Prefect server on 127.0.0.1 (so that the Dask workers
report to it instead of each starting their own) on a free port that the operating
system chooses (``pipelines.core.ports``), and stops it at the end.
``result_storage(out_dir)`` makes task results (the cache) persist under
``OUT/.cache/prefect``.

The temporary server runs in a process group of its own (issue 32): a terminal's Ctrl-C
goes to the command's process group, and the server must outlive the command's clean
exit (the flow reports its end to it) instead of dying first and leaving the command to
retry against a dead server for minutes. ``current_step`` names the step a run is in,
for the one line an interrupted run prints.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

log = logging.getLogger("benchforge")
_STEP: list[str] = []


def enter_step(name: str | None) -> None:
    """Record the step a run is in now (None: between steps)."""
    _STEP[:] = [name] if name else []


def current_step() -> str | None:
    """The step a run is in, for the line an interrupted run prints."""
    return _STEP[0] if _STEP else None


_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_LOGGING_LEVEL": "WARNING",
    "PREFECT_LOGGING_LEVEL": "INFO",
    "PREFECT_UI_ENABLED": "false",
    "PREFECT_SERVER_UI_ENABLED": "false",
    # Prefect waits 20 s for its temporary server; on a busy 2-core machine (two test
    # workers, a Label Studio starting) its first start with migrations took longer
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
}


def prepare_environment() -> None:
    """Settings for Prefect in this process and its children (Dask workers)."""
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("PREFECT_HOME", str(Path.home() / ".benchforge" / "prefect"))
    Path(os.environ["PREFECT_HOME"]).expanduser().mkdir(parents=True, exist_ok=True)
    # Dask's and httpx's INFO lines drown the run's progress; warnings still show.
    for name in (
        "distributed",
        "distributed.scheduler",
        "distributed.nanny",
        "distributed.core",
        "distributed.worker",
        "distributed.http.proxy",
        "httpx",
        "httpcore",
    ):
        logging.getLogger(name).setLevel(logging.WARNING)
    os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "warning")


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has Linux send the child SIGTERM when this process dies
    (``prctl(PR_SET_PDEATHSIG)``), by any signal, SIGKILL included; None elsewhere. The
    child exits at once if this process died before it was set."""
    import ctypes
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # loaded before the fork
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)

    return preexec


class PrefectServer:
    """Prefect's temporary API server as ``prefect.server.api.server.SubprocessASGIServer``
    runs it (uvicorn on ``create_app``, the UI off, ``PREFECT__SERVER_EPHEMERAL``), started
    without importing that module here: it pulls in the whole server (FastAPI, the
    database layer: 1.7 s of the main job, issue 38) only to start another process. The
    server runs in a session (process group) of its own, so that a terminal's Ctrl-C does
    not kill it before the run has reported, and is bound to the life of this process: it
    gets SIGTERM when the command dies, even by SIGKILL (else every killed run left a
    server behind)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process = None

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def spawn(self) -> None:
        import importlib.util
        import subprocess
        import sys

        spec = importlib.util.find_spec("prefect")
        assert spec is not None and spec.origin is not None
        env = {**os.environ, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1",
               "PREFECT__SERVER_FINAL": "1"}  # fmt: skip
        env.pop("PREFECT_API_URL", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--app-dir",
             str(Path(spec.origin).parent.parent), "--factory",
             "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port",
             str(self.port), "--log-level", "error", "--lifespan", "on"],
            env=env, start_new_session=True, preexec_fn=die_with_parent(),
        )  # fmt: skip

    def wait(self, timeout: float) -> None:
        """Until ``/api/health`` answers; a port taken meanwhile (uvicorn exits 3) is
        replaced by another free one, as Prefect does."""
        import time
        import urllib.error
        import urllib.request

        from pipelines.core.ports import free_port

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code == 3:
                self.port = free_port()
                self.spawn()
                continue
            if code is not None:
                raise RuntimeError(f"the temporary Prefect server exited with code {code}")
            try:
                with urllib.request.urlopen(f"{self.api_url}/health", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the temporary Prefect server did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        import subprocess

        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


@contextlib.contextmanager
def prefect_server() -> Iterator[str]:
    """Yield the Prefect API URL in use; a temporary local server is stopped on exit."""
    prepare_environment()
    if os.environ.get("PREFECT_API_URL"):
        yield os.environ["PREFECT_API_URL"]
        return
    from pipelines.core.ports import free_port

    # Prefect would draw a port from 8000-8999 itself, where Label Studio's 8080 lies
    server = PrefectServer(free_port())
    log.info("starting a temporary Prefect server on 127.0.0.1:%d", server.port)
    server.spawn()
    try:
        # Prefect's client imports while the server starts
        from prefect.settings import PREFECT_API_URL, temporary_settings

        server.wait(float(os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"]))
        os.environ["PREFECT_API_URL"] = server.api_url
        with temporary_settings({PREFECT_API_URL: server.api_url}):
            try:
                yield server.api_url
            finally:
                # send the run's last log lines while the server still answers (else a
                # failed run ends with "Error logging to API" noise)
                from prefect.logging.handlers import APILogHandler

                with contextlib.suppress(Exception):
                    APILogHandler().flush()
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        server.stop()


@contextlib.contextmanager
def result_storage(out_dir: Path) -> Iterator[Path]:
    """Persist task results (the cache) under ``OUT/.cache/prefect`` while inside."""
    from prefect.settings import PREFECT_LOCAL_STORAGE_PATH, temporary_settings

    storage = (out_dir / ".cache" / "prefect").resolve()
    previous = os.environ.get("PREFECT_LOCAL_STORAGE_PATH")
    os.environ["PREFECT_LOCAL_STORAGE_PATH"] = str(storage)  # seen by the Dask workers
    try:
        with temporary_settings({PREFECT_LOCAL_STORAGE_PATH: str(storage)}):
            yield storage
    finally:
        if previous is None:
            os.environ.pop("PREFECT_LOCAL_STORAGE_PATH", None)
        else:
            os.environ["PREFECT_LOCAL_STORAGE_PATH"] = previous


def dask_task_runner(workers: int | None, address: str | None):  # noqa: ANN201
    """A DaskTaskRunner on an existing scheduler, or on a local cluster of processes."""
    import dask.config
    from prefect_dask import DaskTaskRunner

    # Dask's statistical profiler samples every worker thread's stack every 10 ms; on
    # kss's deep pure-Python call stacks that costs a third of the run (measured: a
    # 20,000-review shard took 44 s with it and 33 s without).
    dask.config.set({"distributed.worker.profile.enabled": False})

    if address:
        return DaskTaskRunner(address=address)
    n = workers or os.cpu_count() or 1
    return DaskTaskRunner(
        cluster_class=local_cluster,
        cluster_kwargs={
            "n_workers": n,
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": None,
            "memory_limit": 0,
        },
    )


def local_cluster(**kwargs: object):  # noqa: ANN201 - a distributed.LocalCluster
    """A local Dask cluster whose worker processes ignore SIGINT (issue 32): a terminal's
    Ctrl-C reaches every process of its group, and workers that each printed a
    KeyboardInterrupt traceback buried the one line the command prints. The command
    itself stops them: on an interrupt their processes are killed at once (a worker busy
    in kss would otherwise hold the exit for 4 s) before the cluster closes."""
    import signal
    import threading

    from distributed import LocalCluster

    class Cluster(LocalCluster):
        def __exit__(self, exc_type, exc, tb):  # noqa: ANN001, ANN204
            if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
                for nanny in list(self.workers.values()):
                    pid = getattr(nanny, "pid", None)
                    if pid:
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
            return super().__exit__(exc_type, exc, tb)

    if threading.current_thread() is not threading.main_thread():
        return Cluster(**kwargs)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by the workers
    try:
        return Cluster(**kwargs)
    finally:
        signal.signal(signal.SIGINT, previous)
