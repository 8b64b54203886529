"""Issue 39 on a real Prefect server: ``benchforge deploy`` makes the STS demo a
deployment a process worker runs, its artifacts are readable through the API, and a
rebuild whose round waits for people is suspended, then resumed by Label Studio's
webhook to ``benchforge webhook serve`` once the annotations are posted, and finishes by
itself. The worker and the endpoint are real processes; the Prefect server is the
session's (tests/conftest.py), Label Studio the shared one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from uuid import UUID

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
POOL = "benchforge-test-pool"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _bf(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def _state(flow_run_id: str) -> object:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(UUID(flow_run_id)).state


def _wait_for(flow_run_id: str, ok, timeout: float, logs: list[Path]) -> object:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    state = None
    while time.monotonic() < deadline:
        state = _state(flow_run_id)
        if state is not None and ok(state):
            return state
        if state is not None and state.is_final() and not state.is_completed():
            break
        time.sleep(1)
    tails = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in logs)
    raise AssertionError(f"flow run {flow_run_id} ended in {state}\n{tails}")


def _run(name: str) -> str:
    from prefect.deployments import run_deployment

    return str(run_deployment(name, timeout=0).id)


@pytest.fixture(scope="module")
def prefect_side(family_server, prefect_api, tmp_path_factory):
    """The worker and the webhook endpoint, with the session's servers' environment."""
    folder = tmp_path_factory.mktemp("deploy")
    env = {**os.environ, **family_server["env"], "PREFECT_API_URL": prefect_api,
           "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_WORKER_PREFETCH_SECONDS": "1",
           "BENCHFORGE_WEBHOOK_PORT": str(_free_port()),
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}  # fmt: skip
    worker_log, hook_log = folder / "worker.log", folder / "webhook.log"
    procs = []
    with worker_log.open("w") as w, hook_log.open("w") as h:
        procs.append(subprocess.Popen(
            [str(Path(sys.executable).with_name("prefect")), "worker", "start", "--pool", POOL,
             "--type", "process"], cwd=ROOT, env=env, stdout=w, stderr=subprocess.STDOUT,
            start_new_session=True))  # fmt: skip
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "flows.cli", "webhook", "serve", "--poll", "0"], cwd=ROOT,
            env=env, stdout=h, stderr=subprocess.STDOUT, start_new_session=True))  # fmt: skip
    try:
        yield {"env": env, "folder": folder, "logs": [worker_log, hook_log]}
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def _artifacts(flow_run_id: str) -> dict[str, object]:
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(flow_run_id)]))
        )
    return {a.key: a for a in found}


def test_a_deployment_of_the_sts_demo_runs_from_a_worker_with_its_artifacts(prefect_side):
    env, out = prefect_side["env"], prefect_side["folder"] / "sts-demo"
    got = _bf("deploy", "recipes/sts-demo.yaml", "--out", str(out), "--pool", POOL,
              "--name", "sts-demo-test", env=env)  # fmt: skip
    assert got.returncode == 0, got.stdout + got.stderr
    assert "benchforge-rebuild/sts-demo-test" in got.stdout
    run_id = _run("benchforge-rebuild/sts-demo-test")
    _wait_for(run_id, lambda s: s.is_completed(), 400, prefect_side["logs"])
    assert (out / "dataset" / "DATA_CARD.md").is_file()
    steps = json.loads((out / "rebuild.json").read_text(encoding="utf-8"))["steps"]
    arts = _artifacts(run_id)
    # every step that keeps or drops rows, as a table of in/kept/dropped per reason
    for step, entry in steps.items():
        if "rows" in entry:
            table = json.loads(arts[f"sts-demo-{step}-rows"].data)
            assert table[0]["in"] == entry["rows"]["in"]
            assert table[0]["kept"] == entry["rows"]["kept"]
            assert {r["reason"]: r["dropped"] for r in table[1:]} == entry["rows"]["dropped"]
    agreement = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    text = arts["sts-demo-agreement"].data
    assert f"gold items: {agreement['gold_items']}" in text
    assert str(agreement["krippendorff_alpha"]["interval"]) in text
    assert (out / "dataset" / "DATA_CARD.html").resolve().as_uri() in arts[
        "sts-demo-data-card"
    ].data
    assert [r["step"] for r in json.loads(arts["sts-demo-steps"].data)] == list(steps)


def test_a_suspended_rebuild_resumes_by_itself_when_its_annotations_arrive(prefect_side):
    """Real annotators (no simulation): the run suspends at `wait`; people's annotations
    make Label Studio call the endpoint (its poll is off), which resumes the run."""
    from pipelines.annotation import annotate

    env, folder = prefect_side["env"], prefect_side["folder"]
    recipe = yaml.safe_load((ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        if corpus.get("license_file"):
            corpus["license_file"] = str((ROOT / "recipes" / corpus["license_file"]).resolve())
    ann = recipe["annotation"]
    ann["config"] = str((ROOT / "recipes" / ann["config"]).resolve())
    for key in ("pilot", "controls", "human", "simulate"):
        ann.pop(key, None)
    ann.update(overlap=3, project="sts-suspend-test", poll=1)
    recipe["agreement"]["reports"] = "auto"
    # four simulated accounts of `annotate simulate` over 30 pairs are too few for
    # KLUE-STS's screening (which pair set the ingest leaves decides whether anyone
    # passes 0.8): this test is about the resume; tests/e2e/test_rebuild.py screens
    recipe["agreement"].update(pearson_min=None, alpha_min=None)
    recipe["items"]["sample"] = 30
    recipe["name"] = "sts-suspend"
    recipe.pop("project_prefix", None)  # the projects are named after this test's recipe
    path = folder / "sts-suspend.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "suspend"
    got = _bf("deploy", str(path), "--out", str(out), "--pool", POOL, "--no-simulate", env=env)
    assert got.returncode == 0, got.stdout + got.stderr
    run_id = _run("benchforge-rebuild/sts-suspend")
    _wait_for(run_id, lambda s: s.is_paused(), 300, prefect_side["logs"])
    assert not (out / "dataset" / "DATA_CARD.md").exists()
    wait_file = Path(env["BENCHFORGE_HOME"]) / "waits" / f"{run_id}.json"
    assert json.loads(wait_file.read_text(encoding="utf-8"))["project"] == "sts-suspend-test"
    ls = annotate.client()
    project = annotate.find_project(ls, "sts-suspend-test")
    hooks = ls.webhooks.list(project=str(project.id))
    assert [h.url for h in hooks] == [
        f"http://127.0.0.1:{env['BENCHFORGE_WEBHOOK_PORT']}/label-studio"
    ]
    # people annotate (the simulator's accounts post them through the API)
    posted = _bf("annotate", "simulate", "--project", "sts-suspend-test", "--annotators", "4",
                 env=env)  # fmt: skip
    assert posted.returncode == 0, posted.stdout + posted.stderr
    _wait_for(run_id, lambda s: s.is_completed(), 300, prefect_side["logs"])
    assert (out / "dataset" / "DATA_CARD.md").is_file()
    assert not wait_file.exists()
    hook_log = prefect_side["logs"][1].read_text(encoding="utf-8")
    assert (
        "Label Studio webhook ANNOTATION" in hook_log and f"flow run {run_id} resumed" in hook_log
    )
    steps = json.loads((out / "rebuild.json").read_text(encoding="utf-8"))["steps"]
    assert steps["wait"]["done"] and steps["wait"]["finished"] == 30
