"""Faults and hostile input (issue 32): what a fault probe found, at small scale, against
a real Label Studio server and real runs. Each test names the probe's case it covers."""

from __future__ import annotations

import http.server
import os
import re
import threading
from pathlib import Path

import pytest

from pipelines.annotation import ls_server

ROOT = Path(__file__).resolve().parents[2]
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
    """Case 1: the port is taken by another program after ``up`` checked it; ``up`` starts
    Label Studio on a fresh free port it chose itself (issue 51: Label Studio's own move to
    port + 1 is off). ``up`` reads the real port from the process, the
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


# ------------------------------------------------------------ bad input before any work

BASE_RECIPE = """
name: bad-input
corpora:
  - {name: nsmc, path: x.jsonl, format: jsonl, license: CC0-1.0, domain: reviews,
     style: colloquial, text_field: text}
"""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("name: again\n", "appears twice"),  # case 12: a duplicate YAML key
        ("items: {sample: true}\n", "expected a number"),  # case 12: true is no number
        ("description: 12\n", "expected text"),  # case 12: a number is not text
        ("filters: {noise: {min_chars: 50, max_chars: 10}}\n", "min_chars 50 > max_chars 10"),
        # case 11: fewer simulated annotators than the overlap hung in `wait`
        ("annotation: {config: a.xml, overlap: 3, simulate: {annotators: 2}}\n",
         "simulate.annotators 2 < overlap 3"),
        ("annotation: {config: a.xml, overlap: 3}\nagreement: {rule: majority, min_votes: 5}\n",
         "min_votes 5 > annotation.overlap 3"),
        # case 12: screening thresholds out of range (-2 and NaN turned screening off)
        ("agreement: {rule: mean, pearson_min: -2}\n", r"pearson_min must be in \[-1, 1\]"),
        ("agreement: {rule: mean, pearson_min: .nan}\n", r"pearson_min must be in \[-1, 1\]"),
        ("agreement: {rule: mean, alpha_min: 1.5}\n", r"alpha_min must be in \[-1, 1\]"),
        ("agreement: {rule: mean, variance_max: -1}\n", "variance_max must be a finite"),
        ("split: {rule: random, eval_fraction: 1.5}\n", r"eval_fraction must be in \(0, 1\)"),
    ],
)  # fmt: skip
def test_recipes_that_cannot_work_fail_at_load(tmp_path, extra, message):
    """Cases 11-12: wrongly accepted recipes are refused at load, naming the setting."""
    from pipelines.core.recipe import RecipeError, load_recipe

    path = tmp_path / "r.yaml"
    path.write_text(BASE_RECIPE + extra, encoding="utf-8")
    with pytest.raises(RecipeError, match=message):
        load_recipe(path)


# --------------------------------------------------------------- projects and writes


@pytest.fixture(scope="module")
def ls(server):
    """An SDK client of conftest's real Label Studio server for this module."""
    from pipelines.annotation import annotate

    return annotate.client()


def _items(n: int):  # noqa: ANN202
    import pandas as pd

    return pd.DataFrame({"item_id": [f"i{k}" for k in range(n)],
                         "sentence1": ["첫 문장"] * n, "sentence2": ["둘째 문장"] * n})  # fmt: skip


def test_a_project_made_with_other_settings_stops_the_run(ls):
    """Case 14: a project made with overlap 2 is not silently reused by a run that asks
    for overlap 3; the error names both settings and the ways out; --reuse-project
    keeps it."""
    from pipelines.annotation import annotate

    config = annotate.load_config(ROOT / "annotation_configs" / "sts.xml")
    annotate.push(_items(4), config, "settings kept", overlap=2, ls=ls)
    with pytest.raises(annotate.AnnotationError) as err:
        annotate.push(_items(4), config, "settings kept", overlap=3, ls=ls)
    text = str(err.value)
    assert "overlap 2" in text and "overlap 3" in text and "--reuse-project" in text
    with pytest.raises(annotate.AnnotationError, match="overlap 2"):  # the preflight too
        annotate.check_project("settings kept", ROOT / "annotation_configs" / "sts.xml", 3)
    done = annotate.push(_items(4), config, "settings kept", overlap=3, ls=ls, reuse=True)
    assert done.created == 0 and done.existing == 4


def test_concurrent_pushes_to_one_project_never_duplicate_tasks(ls):
    """Case 2: four runs push the same items into one project at once; the project lock
    lets one import them and the others find them there."""
    from concurrent.futures import ThreadPoolExecutor

    from pipelines.annotation import annotate

    config = annotate.load_config(ROOT / "annotation_configs" / "sts.xml")
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(
            lambda _: annotate.push(_items(60), config, "pushed at once", 1,
                                    ls=annotate.client()), range(4)))  # fmt: skip
    assert sum(r.created for r in results) == 60
    project = annotate.find_project(ls, "pushed at once")
    assert project.task_number == 60


def test_a_pull_that_meets_duplicate_tasks_names_repair(ls):
    """Case 2: duplicate tasks (a past fault) stop the pull with a message naming them and
    ``benchforge annotate repair``; after the repair the pull works."""
    from pipelines.annotation import annotate

    config = annotate.load_config(ROOT / "annotation_configs" / "sts.xml")
    result = annotate.push(_items(3), config, "has duplicates", 1, ls=ls)
    ls.projects.import_tasks(result.project_id, request=[
        {"data": {"item_id": "i0", "sentence1": "a", "sentence2": "b"}}])  # fmt: skip
    with pytest.raises(annotate.AnnotationError, match="annotate repair has duplicates"):
        annotate.pull("has duplicates", ls=ls)
    assert len(annotate.repair("has duplicates", ls=ls)["duplicate_tasks"]) == 1
    assert annotate.pull("has duplicates", ls=ls).empty


# ------------------------------------------------------------------ interrupts and disks


def _start(args: list[str], env: dict | None = None):  # noqa: ANN202
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "flows.cli", *args], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env={**os.environ, "PREFECT_API_URL": "", **(env or {})},  # its own Prefect server
    )  # fmt: skip


def test_a_killed_run_leaves_no_server_or_worker_behind(tmp_path):
    """SIGKILL to a run's process group (as the probe and the kill tests do) must not
    leave its temporary Prefect server running: that server sits in a session of its
    own (for Ctrl-C), so it is bound to the command by PR_SET_PDEATHSIG."""
    import signal

    import psutil

    proc = _start(["ingest", "recipes/sts-demo.yaml", "--out", str(tmp_path / "out")])
    for line in proc.stdout:
        if "shards" in line:  # the Prefect server and the Dask workers are up
            break
    family = psutil.Process(proc.pid).children(recursive=True)
    assert any("prefect.server" in " ".join(_cmdline(p)) for p in family)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    _, alive = psutil.wait_procs(family, timeout=20)
    assert [" ".join(_cmdline(p))[:120] for p in alive] == []


def _cmdline(process) -> list[str]:  # noqa: ANN001 - a psutil.Process
    import psutil

    try:
        return process.cmdline()
    except psutil.Error:  # gone meanwhile
        return []


@pytest.mark.parametrize("target", ["group", "process"])
def test_ctrl_c_stops_a_run_within_5_s_with_one_line(tmp_path, target):
    """Case 3: SIGINT to the process group (a terminal's Ctrl-C) or to the command alone
    in the middle of an ingest ends it within 5 s: exit 130, one line naming the step, no
    traceback, the lock released; the same command then finishes."""
    import signal
    import time

    out = tmp_path / "out"
    proc = _start(["ingest", "recipes/sts-demo.yaml", "--out", str(out)])
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "shards" in line:  # the Dask workers are busy with the first shard
            break
    started = time.monotonic()
    if target == "group":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    seconds = time.monotonic() - started
    text = "".join(lines) + rest
    assert proc.returncode == 130, text[-3000:]
    assert seconds < 5, seconds
    assert "Traceback" not in text, text[-3000:]
    assert "interrupted during step ingest; run the same command to resume" in text
    assert (out / ".benchforge.lock").read_text() == ""  # no dead pid left behind


def test_a_second_run_into_the_same_folder_stops_before_any_server(tmp_path):
    """Case 5: the output lock is the first thing a run takes."""
    import time

    from pipelines.core.io import output_lock

    out = tmp_path / "out"
    with output_lock(out):
        started = time.monotonic()
        proc = _start(["ingest", "recipes/sts-demo.yaml", "--out", str(out)])
        text, _ = proc.communicate(timeout=60)
        seconds = time.monotonic() - started
    assert proc.returncode == 2 and "another benchforge run is writing here" in text
    assert "Prefect server" not in text and seconds < 10


def test_a_full_disk_is_one_error_line_naming_the_folder(tmp_path):
    """Case 4: no space left ends as one ``benchforge: error:`` line naming the path,
    exit 2, no traceback (a 64 KB tmpfs; needs root to mount it)."""
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:  # fmt: skip
        pytest.skip("this machine does not let the tests mount a tmpfs")
    try:
        (mount / "filler").write_bytes(b"\0" * 60_000)
        proc = _start(["ingest", "recipes/sts-demo.yaml", "--out", str(mount / "out")])
        text, _ = proc.communicate(timeout=300)
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
    assert proc.returncode == 2, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert re.search(r"benchforge: error: .*small.*no space left", text), text[-3000:]


def test_only_errors_a_retry_can_change_are_retried():
    """Case 13: a config reading fields the items lack was pushed 3 more times, 10 s
    apart, before the run failed; a server that is restarting is still retried."""
    import httpx
    from prefect.states import Failed

    from flows.annotate import pull_task, push_task
    from pipelines.annotation.annotate import AnnotationError
    from pipelines.annotation.label_config import LabelConfigError

    for task in (push_task, pull_task):
        assert task.retries == 3
        retry = task.retry_condition_fn
        assert not retry(task, None, Failed(data=AnnotationError("reads ['x'], not in items")))
        assert not retry(task, None, Failed(data=LabelConfigError("not valid XML")))
        assert retry(task, None, Failed(data=httpx.ConnectError("connection refused")))
