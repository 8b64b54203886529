"""Faults and hostile input (issue 32): what a fault probe found, at small scale, against
a real Label Studio server and real runs. Each test names the probe's case it covers."""

from __future__ import annotations

import http.server
import os
import socket
import threading
from pathlib import Path

import pytest

from pipelines.annotation import ls_server

ROOT = Path(__file__).resolve().parent.parent
SHARED_VENV = Path.home() / ".local/share/benchforge/labelstudio/venv"


class _Impostor(http.server.BaseHTTPRequestHandler):
    """Another program on the port: 200 on /health, 401 everywhere else."""

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200 if self.path == "/health" else 401)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def own_home(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHFORGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BENCHFORGE_CONFIG", str(tmp_path / "config"))
    monkeypatch.setenv("BENCHFORGE_LS_VENV", os.environ.get("BENCHFORGE_LS_VENV",
                                                            str(SHARED_VENV)))  # fmt: skip
    monkeypatch.delenv("LABEL_STUDIO_URL", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    yield tmp_path
    ls_server.down()


def test_a_port_taken_after_the_check_gives_one_server_on_its_real_port(own_home, monkeypatch):
    """Case 1: the port is taken by another program after ``up`` checked it; Label Studio
    moves to the next port by itself. ``up`` reads the real port from the process, the
    token check passes against the right server, a second ``up`` reuses it (one process
    for the data folder), and ``down`` stops every server of the folder."""
    impostor = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Impostor)
    taken = impostor.server_address[1]
    threading.Thread(target=impostor.serve_forever, daemon=True).start()
    monkeypatch.setattr(ls_server, "choose_port", lambda port=None: taken)
    try:
        info = ls_server.up()
        assert info["running"] and info["port"] != taken, info
        assert info["port"] in ls_server.listening_ports(info["pid"])
        assert ls_server.connection().url == f"http://127.0.0.1:{info['port']}"
        again = ls_server.up()
        assert again["pid"] == info["pid"] and again["port"] == info["port"]
        assert ls_server.server_pids() == [info["pid"]]
    finally:
        impostor.shutdown()
        impostor.server_close()
    assert ls_server.down()
    assert ls_server.server_pids() == []


def test_down_stops_a_server_the_state_file_lost(own_home):
    """Case 1: a server of the folder that ``server.json`` no longer names (a second
    server, or a state file overwritten) is found by its command line: ``up`` reuses it
    instead of starting a second one on the same database, and ``down`` stops it."""
    info = ls_server.up()
    (Path(os.environ["BENCHFORGE_HOME"]) / "labelstudio" / "server.json").unlink()
    again = ls_server.up()
    assert again["pid"] == info["pid"] and again["running"]
    assert ls_server.down() and ls_server.server_pids() == []


def test_stale_export_snapshots_are_swept(own_home):
    """Case 6: snapshots a killed export left behind are removed by ``up``."""
    export = Path(os.environ["BENCHFORGE_HOME"]) / "labelstudio" / "data" / "export"
    export.mkdir(parents=True)
    old = export / "project-3-at-2026-11-24-00-00-abcdef.json"
    fresh = export / "project-3-at-2026-11-24-09-00-abcdef.json"
    old.write_text("[]")
    fresh.write_text("[]")
    os.utime(old, (0, 0))
    assert ls_server.sweep_snapshots() == 1
    assert not old.exists() and fresh.exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
