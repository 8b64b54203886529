"""Shared fixtures: a real Label Studio server per test module."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from pipelines.annotation import ls_server

SHARED_VENV = Path.home() / ".local/share/benchforge/labelstudio/venv"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("ls")
    env = {
        "BENCHFORGE_HOME": str(base / "home"),
        "BENCHFORGE_CONFIG": str(base / "config"),
        "BENCHFORGE_LS_VENV": os.environ.get("BENCHFORGE_LS_VENV", str(SHARED_VENV)),
    }
    saved = {k: os.environ.get(k) for k in [*env, "LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"]}
    os.environ.update(env)
    os.environ.pop("LABEL_STUDIO_URL", None)
    os.environ.pop("LABEL_STUDIO_API_KEY", None)
    port = _free_port()
    info = ls_server.up(port)
    try:
        yield {"port": port, "url": info["url"], "base": base, "env": env}
    finally:
        ls_server.down()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
