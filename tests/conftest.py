"""Shared fixtures: a real Label Studio server per test module (``server``) or one per
session shared by the family rebuilds (``family_server``); one trained tiny
detector per session. Tests under tests/e2e (a server or a whole flow) are marked
``e2e``; ``scripts/test.sh --quick`` runs the others (tests/unit)."""

from __future__ import annotations

import os

# Two xdist workers share two cores: each worker's torch (and every process it starts:
# CLI runs, Dask workers) takes one thread. With torch's default of one thread per core
# the two workers' tiny models fought over the cores: a tiny NLLB checkpoint took 178 s
# to train beside another, 30 s with one thread each (measured). Set before any import
# of torch; a value given from outside is kept.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import fcntl  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pipelines.annotation import ls_server

ROOT = Path(__file__).resolve().parent.parent
SHARED_VENV = Path.home() / ".local/share/benchforge/labelstudio/venv"

# Tests run in two pytest-xdist workers (scripts/test.sh): each worker's runs keep their
# own Prefect database, so two workers' temporary Prefect servers never share one SQLite
# file. The folder persists between sessions (Prefect's migrations run once).
if os.environ.get("PYTEST_XDIST_WORKER") and "PREFECT_HOME" not in os.environ:
    os.environ["PREFECT_HOME"] = str(
        Path.home() / ".benchforge" / f"prefect-{os.environ['PYTEST_XDIST_WORKER']}"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    e2e = ROOT / "tests" / "e2e"
    for item in items:
        if e2e in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session", autouse=True)
def prefect_api():
    """One Prefect server per test session (per xdist worker), which every flow and every
    ``benchforge`` subprocess of the tests reports to (``PREFECT_API_URL``): a temporary
    server costs each run about 7 s of CPU to start. Tests of the temporary server itself
    (Ctrl-C, kills, the port it takes) run with ``PREFECT_API_URL`` empty, as a user's
    run does."""
    from flows.runtime import prefect_server

    if os.environ.get("PREFECT_API_URL"):  # a server given from outside
        yield os.environ["PREFECT_API_URL"]
        return
    with prefect_server() as url:
        os.environ["PREFECT_API_URL"] = url
        try:
            yield url
        finally:
            os.environ.pop("PREFECT_API_URL", None)


def _ls_env(base: Path) -> dict[str, str]:
    return {
        "BENCHFORGE_HOME": str(base / "home"),
        "BENCHFORGE_CONFIG": str(base / "config"),
        "BENCHFORGE_LS_VENV": os.environ.get("BENCHFORGE_LS_VENV", str(SHARED_VENV)),
    }


class _Env:
    """``env`` set in os.environ (LABEL_STUDIO_URL and its key taken out: the local server
    is the one to use) until ``restore``."""

    KEYS = ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY")

    def __init__(self, env: dict[str, str]) -> None:
        self.saved = {k: os.environ.get(k) for k in [*env, *self.KEYS]}
        os.environ.update(env)
        for key in self.KEYS:
            os.environ.pop(key, None)

    def restore(self) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Label Studio server of the test module's own (the tests that stop, kill or
    crowd it, or read its accounts)."""
    base = tmp_path_factory.mktemp("ls")
    env = _ls_env(base)
    scope = _Env(env)
    port = _free_port()
    info = ls_server.up(port)
    try:
        yield {"port": port, "url": info["url"], "base": base, "env": env}
    finally:
        ls_server.down()
        scope.restore()


@pytest.fixture(scope="session")
def _shared_ls(tmp_path_factory):
    """One Label Studio server per test session (per xdist worker) for the family
    rebuilds, which only need a server and name their projects apart: a server's first
    start (its database migrations) costs about 25 s of two cores (issue 38)."""
    base = tmp_path_factory.mktemp("ls-shared")
    env = _ls_env(base)
    scope = _Env(env)
    port = _free_port()
    try:
        info = ls_server.up(port)
    finally:
        scope.restore()
    try:
        yield {"port": port, "url": info["url"], "base": base, "env": env}
    finally:
        scope = _Env(env)
        ls_server.down()
        scope.restore()


@pytest.fixture(scope="module")
def family_server(_shared_ls):
    """The session's shared Label Studio server, its environment set for this module."""
    scope = _Env(_shared_ls["env"])
    try:
        yield _shared_ls
    finally:
        scope.restore()


TINY_DETECTOR = ["--layers", "1", "--hidden", "32", "--heads", "2", "--vocab-size", "800"]
# a tiny detector that learns (dev macro-F1 about 0.68); 2 epochs on 600 comments collapse
LEARNS = ["--limit", "2000", "--epochs", "4", "--lr", "2e-3", *TINY_DETECTOR]


def train(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``benchforge classifiers train --out OUT ...`` in a subprocess."""
    cmd = [sys.executable, "-m", "flows.cli", "classifiers", "train", "--out", str(out), *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def shared(tmp_path_factory, name: str, build: Callable[[Path], object]) -> tuple[Path, object]:
    """``build(folder)`` run once per test session and shared by every xdist worker
    (the workers' common base folder and a file lock): a trained model costs its minutes
    once, not once per worker. Returns (folder, what build returned, as JSON)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-of-user/pytest-N, above the workers' folders
    base = root / "shared"
    base.mkdir(exist_ok=True)
    folder, done = base / name, base / f"{name}.json"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            done.write_text(json.dumps(build(folder)), encoding="utf-8")
    return folder, json.loads(done.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory):
    """One trained tiny gender_bias detector per session (shared by the workers):
    (folder, metrics)."""

    def build(out: Path) -> dict:
        proc = train(out, "--task", "gender_bias", *LEARNS, "--json")
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)

    return shared(tmp_path_factory, "gender_bias", build)


@pytest.fixture(scope="session")
def marian(tmp_path_factory) -> tuple[Path, Path]:
    """The tiny ko-en and en-ko Marian checkpoints (tests/tiny_translators.py), trained
    once per session and shared by the workers."""
    from tiny_translators import EN_KO, KO_EN, build_tiny_marian

    def build(root: Path) -> None:
        build_tiny_marian(root / "ko-en", KO_EN)
        build_tiny_marian(root / "en-ko", EN_KO)

    root, _ = shared(tmp_path_factory, "marian", build)
    return root / "ko-en", root / "en-ko"
