"""Label Studio round trips against a real server, started once for this module.

The server runs from benchforge's own Label Studio virtual environment (installed on
first use, shared across runs through BENCHFORGE_LS_VENV), with a temporary home, data
folder and credentials file, on a free loopback port.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from pipelines.annotation import annotate, ls_server
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "annotation_configs"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


def sts_items(n: int, start: int = 0) -> pd.DataFrame:
    rows = [
        {
            "item_id": f"pair-{i:04d}",
            "sentence1": f"이 영화 정말 재밌어요 {i}",
            "sentence2": f"이 영화는 재미있다 {i}",
            "sim_similarity": float(i % 6),
        }
        for i in range(start, start + n)
    ]
    return pd.DataFrame(rows)


def test_server_credentials_are_private_and_never_printed(server):
    creds_path = ls_server.credentials_path()
    assert stat.S_IMODE(creds_path.stat().st_mode) == 0o600
    assert not str(creds_path).startswith(str(ROOT))
    token = json.loads(creds_path.read_text())["token"]
    status = cli("labelstudio", "status")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["running"] is True
    up_again = cli("labelstudio", "up", "--port", str(server["port"]))
    assert up_again.returncode == 0, up_again.stderr  # already running: left as it is
    log_text = Path(ls_server.status()["log"]).read_text(errors="replace")
    for text in (status.stdout, status.stderr, up_again.stdout, up_again.stderr, log_text):
        assert token not in text
    assert "hidden" in repr(ls_server.connection()) and token not in repr(ls_server.connection())
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert token not in ps  # the token reaches the server through its environment only


@pytest.mark.parametrize("name", sorted(p.stem for p in CONFIGS.glob("*.xml")))
def test_configs_validate_against_the_real_server(server, name):
    config = parse_label_config(CONFIGS / f"{name}.xml")
    ls = annotate.client()
    project = annotate.ensure_project(ls, f"config {name}", config, overlap=2)
    assert project.maximum_annotations == 2
    fetched = ls.projects.get(id=project.id)
    assert annotate._norm(fetched.label_config) == annotate._norm(config.xml)
    assert config.answer_controls  # every config asks for something


def test_server_rejects_a_broken_config(server):
    from label_studio_sdk.core.api_error import ApiError

    broken = parse_label_config(
        "<View><Text name='t' value='$text'/>"
        "<Choices name='c' toName='nowhere'><Choice value='a'/></Choices></View>"
    )
    with pytest.raises(ApiError) as info:
        annotate.ensure_project(annotate.client(), "broken config", broken, overlap=1)
    assert "nowhere" in json.dumps(info.value.body)


def test_push_is_idempotent(server, tmp_path):
    items = tmp_path / "items.parquet"
    sts_items(30).to_parquet(items)
    first = cli(
        "annotate", "push", str(items), "--config", str(CONFIGS / "sts.xml"),
        "--project", "push twice", "--overlap", "3", "--json",
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["created"] == 30
    pd.concat([sts_items(30), sts_items(5, start=30)]).to_parquet(items)
    second = cli(
        "annotate", "push", str(items), "--config", str(CONFIGS / "sts.xml"),
        "--project", "push twice", "--overlap", "3", "--json",
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout)
    assert (result["created"], result["existing"]) == (5, 30)
    assert result["changed"] == []  # the same items: nothing differs
    tasks = annotate.export_tasks(annotate.client(), result["project_id"])
    ids = [t["data"]["item_id"] for t in tasks]
    assert len(ids) == len(set(ids)) == 35
    # an item whose text changed since it was pushed: said, never pushed twice
    edited = pd.concat([sts_items(30), sts_items(5, start=30)], ignore_index=True)
    edited.loc[3, "sentence1"] = "바뀐 문장입니다."
    edited.to_parquet(items)
    third = cli(
        "annotate", "push", str(items), "--config", str(CONFIGS / "sts.xml"),
        "--project", "push twice", "--overlap", "3", "--json",
    )  # fmt: skip
    result = json.loads(third.stdout)
    assert (result["created"], result["existing"]) == (0, 35)
    assert result["changed"] == [str(edited.loc[3, "item_id"])]
    assert "hold other data than their items" in third.stderr
    tasks = annotate.export_tasks(annotate.client(), result["project_id"])
    assert len(tasks) == 35


def test_bad_items_name_the_file_and_row(server, tmp_path):
    config = parse_label_config(CONFIGS / "sts.xml")
    items = sts_items(4)
    items.loc[2, "item_id"] = "pair-0000"
    path = tmp_path / "dup.csv"
    items.to_csv(path, index=False)
    with pytest.raises(annotate.AnnotationError, match=r"dup.csv: row 3: item_id 'pair-0000'"):
        annotate.read_items(path, config)
    path = tmp_path / "nofield.jsonl"
    sts_items(2).drop(columns=["sentence2"]).to_json(path, orient="records", lines=True)
    proc = cli(
        "annotate", "push", str(path), "--config", str(CONFIGS / "sts.xml"),
        "--project", "bad items",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "nofield.jsonl" in proc.stderr and "sentence2" in proc.stderr


@pytest.fixture(scope="module")
def simulated(server, tmp_path_factory):
    config = parse_label_config(CONFIGS / "sts.xml")
    result = annotate.push(sts_items(40), config, "simulated sts", overlap=3, progress=True)
    posted = simulate("simulated sts", annotators=5, seed=7, progress=True)
    return {"push": result, "posted": posted}


def test_simulate_then_pull_returns_exactly_what_was_posted(simulated):
    posted = simulated["posted"]
    table = annotate.pull("simulated sts")
    users = {v: k for k, v in annotate.users_by_id(annotate.client()).items()}
    expected = []
    for p in posted["payloads"]:
        uid = f"ls-user-{users[p['annotator']]}"
        pairs = annotate.flatten_result(p["result"]) or [(None, None)]
        for field, value in pairs:
            expected.append((p["task_id"], uid, field, value, p["was_cancelled"]))
    got = [
        (r.task_id, r.annotator_id, r.field if isinstance(r.field, str) else None,
         r.value if isinstance(r.value, str) else None, r.cancelled)
        for r in table.itertuples()
    ]  # fmt: skip
    assert sorted(got, key=str) == sorted(expected, key=str)
    assert table["simulated"].all()
    lead = {(p["task_id"], p["annotator"]): p["lead_time"] for p in posted["payloads"]}
    assert len(lead) == table["annotation_id"].nunique()
    # every task has 3 completed annotations from 3 distinct accounts; skips are extra rows
    done = table[~table["cancelled"]].groupby("item_id")["annotator_id"].nunique()
    assert (done == 3).all() and len(done) == 40
    per_task = table.drop_duplicates("annotation_id").groupby("item_id")["annotator_id"]
    assert (per_task.count() == per_task.nunique()).all()  # no account annotates twice
    assert len(posted["careless"]) >= 1 and len(set(posted["annotators"])) == 5
    # the export snapshots Label Studio keeps per export are removed after each pull
    snapshots = ls_server.managed_export_dir()
    assert snapshots.is_dir() and list(snapshots.glob("project-*-at-*.json")) == []


def test_bulk_import_gives_the_same_annotations_and_gold(simulated, tmp_path):
    """Tasks imported with their simulated annotations (the rebuild's fast path) hold
    exactly what posting them one by one gave for the same seed, and the same gold."""
    from pipelines.agreement.rules import AgreementSettings, run_agree
    from pipelines.annotation.simulate import with_simulated

    config = parse_label_config(CONFIGS / "sts.xml")
    pushed = annotate.push(
        sts_items(40), config, "simulated sts bulk", overlap=3, progress=True,
        attach=with_simulated(5, seed=7),
    )  # fmt: skip
    assert pushed.created == 40 and pushed.annotations == simulated["posted"]["posted"]
    assert simulate("simulated sts bulk", annotators=5, seed=7, progress=True)["posted"] == 0
    assert annotate.wait("simulated sts bulk", timeout=10, poll=1)["done"]
    cols = ["item_id", "annotator_id", "field", "value", "cancelled", "lead_time",
            "report_flags", "simulated"]  # fmt: skip
    one_by_one = annotate.pull("simulated sts")
    bulk = annotate.pull("simulated sts bulk")
    assert len(bulk) == len(one_by_one) > 0
    key = ["item_id", "annotator_id", "field"]
    pd.testing.assert_frame_equal(
        bulk[cols].sort_values(key).reset_index(drop=True),
        one_by_one[cols].sort_values(key).reset_index(drop=True),
    )
    gold = {}
    for name, table in (("posted", one_by_one), ("bulk", bulk)):
        table.to_parquet(tmp_path / f"{name}.parquet")
        run_agree(tmp_path / f"{name}.parquet", AgreementSettings(), tmp_path / name)
        gold[name] = pd.read_parquet(tmp_path / name / "gold.parquet")
    assert len(gold["bulk"]) > 0
    pd.testing.assert_frame_equal(gold["bulk"], gold["posted"])


def test_simulate_after_a_push_that_created_every_task_skips_the_export(server, monkeypatch):
    """Issue 38: when the same run's push created every task with its simulated
    annotations, simulate prepares the accounts and does not export the whole project
    (50 s at KLUE-STS's size) to find nothing missing; the full check agrees."""
    from pipelines.annotation import simulate as simulate_module
    from pipelines.annotation.simulate import with_simulated

    config = parse_label_config(CONFIGS / "sts.xml")
    pushed = annotate.push(sts_items(12), config, "created with annotations", overlap=3,
                           progress=True, attach=with_simulated(5, seed=3))  # fmt: skip
    assert pushed.created == 12 and pushed.annotations > 0

    def no_export(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the whole project was exported")

    with monkeypatch.context() as patch:
        patch.setattr(simulate_module, "export_tasks", no_export)
        quick = simulate("created with annotations", annotators=5, seed=3, progress=True,
                         complete=True)  # fmt: skip
    full = simulate("created with annotations", annotators=5, seed=3, progress=True)
    assert quick["posted"] == full["posted"] == 0
    assert quick["annotators"] == full["annotators"] and quick["careless"] == full["careless"]


def test_simulate_rerun_posts_nothing_and_wait_is_done(simulated):
    again = simulate("simulated sts", annotators=5, seed=7, progress=True)
    assert again["posted"] == 0
    proc = cli("annotate", "wait", "--project", "simulated sts", "--timeout", "10", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) | {"waited_s": 0} == {
        "done": True, "finished": 40, "tasks": 40, "waited_s": 0
    }  # fmt: skip


def test_as_many_annotators_as_overlap_still_finish_every_task(server):
    """A skip is passed on to another account; with K == overlap there is none, so
    nobody may skip (before, such tasks stayed unfinished for ever)."""
    from pipelines.annotation.simulate import with_simulated

    config = annotate.load_config(CONFIGS / "sts.xml")
    # the annotations simulate() would post (plan), imported with their tasks in one
    # request (test_bulk_import_gives_the_same_annotations_and_gold: the same ones);
    # 450 of them, so that a 2% skip rate would show (0.98^450 < 0.0002)
    pushed = annotate.push(sts_items(150), config, "overlap equals annotators", overlap=3,
                           attach=with_simulated(3, seed=11))  # fmt: skip
    assert pushed.annotations == 450
    assert simulate("overlap equals annotators", annotators=3, seed=11)["posted"] == 0
    assert annotate.wait("overlap equals annotators", timeout=10, poll=1)["done"]
    table = annotate.pull("overlap equals annotators")
    assert table["annotation_id"].nunique() == 450 and not table["cancelled"].any()


def test_wait_times_out_with_exit_3(server, tmp_path):
    config = parse_label_config(CONFIGS / "sts.xml")
    annotate.push(sts_items(3), config, "nobody annotates", overlap=2, progress=True)
    proc = cli("annotate", "wait", "--project", "nobody annotates", "--timeout", "1")
    assert proc.returncode == 3
    assert "0/3 tasks complete" in proc.stdout


def test_noise_model_tracks_the_truth(simulated):
    table = annotate.pull("simulated sts")
    scores = table[(table["field"] == "similarity")].copy()
    scores["truth"] = scores["item_id"].str[-4:].astype(int) % 6
    scores["value"] = scores["value"].astype(float)
    careful = scores.groupby("annotator_id").apply(
        lambda g: g["value"].corr(g["truth"]), include_groups=False
    )
    assert careful.max() > 0.8  # careful annotators follow the latent score
    assert careful.min() < 0.5  # the careless one does not


def test_pull_survives_a_server_restart(simulated, server, tmp_path):
    ls = annotate.client()  # connected, then the server goes away mid-pull
    before = annotate.pull("simulated sts", ls=ls)
    ls_server.down()
    result: dict = {}

    def pull_while_down() -> None:
        result["table"] = annotate.pull("simulated sts", ls=ls)

    thread = threading.Thread(target=pull_while_down)
    thread.start()  # its first requests fail and are retried with backoff
    ls_server.up(server["port"])
    thread.join(timeout=300)
    assert "table" in result
    pd.testing.assert_frame_equal(result["table"], before)
    out = tmp_path / "ann.parquet"
    proc = cli("annotate", "pull", "--project", "simulated sts", "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    pd.testing.assert_frame_equal(pd.read_parquet(out), before)


def test_external_server_from_the_environment(server):
    token = ls_server.credentials()["token"]
    env = {"LABEL_STUDIO_URL": server["url"], "LABEL_STUDIO_API_KEY": token}
    proc = cli("labelstudio", "status", env=env)
    assert json.loads(proc.stdout) == {"running": True, "url": server["url"], "managed": False}
    proc = cli("annotate", "wait", "--project", "simulated sts", "--timeout", "5", env=env)
    assert proc.returncode in (0, 3) and token not in proc.stdout + proc.stderr
    bad = cli(
        "annotate", "wait", "--project", "simulated sts", "--timeout", "5",
        env={"LABEL_STUDIO_URL": server["url"], "LABEL_STUDIO_API_KEY": "wrong-token"},
    )  # fmt: skip
    assert bad.returncode != 0 and "wrong-token" not in bad.stderr


def test_prefect_round_trip_flow(server, tmp_path):
    items = tmp_path / "items.jsonl"
    sts_items(12).to_json(items, orient="records", lines=True, force_ascii=False)
    out = tmp_path / "round.parquet"
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from flows.runtime import prefect_server\n"
        "with prefect_server():\n"
        "    from flows.annotate import annotation_round\n"
        f"    r = annotation_round(Path({str(items)!r}), Path({str(CONFIGS / 'sts.xml')!r}),\n"
        f"        'prefect round', 2, Path({str(out)!r}), simulate_annotators=4, seed=1)\n"
        "    print(json.dumps(r))\n"
    )
    env = {"PREFECT_HOME": str(tmp_path / "prefect")}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["push"]["created"] == 12 and report["wait"]["done"]
    table = pd.read_parquet(out)
    assert table.loc[~table["cancelled"], "item_id"].value_counts().eq(2).all()


# ------------------------------------------------ issue 16: faults never duplicate work


class DropProxy:
    """A proxy on loopback in front of Label Studio that forwards every request and, when
    armed for a method and a path fragment, forwards that request (so the server commits
    it) and then closes the connection instead of answering: a lost response."""

    def __init__(self, upstream: str) -> None:
        import http.server
        import socket
        import urllib.error
        import urllib.request

        self.armed: list[list] = []  # [method, path fragment, times left]
        self.dropped: list[str] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                skip = {"host", "connection", "content-length", "accept-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                req = urllib.request.Request(upstream + self.path, data=body,
                                             method=self.command, headers=headers)  # fmt: skip
                try:
                    with urllib.request.urlopen(req, timeout=120) as resp:
                        status, rheaders, data = resp.status, resp.headers, resp.read()
                except urllib.error.HTTPError as exc:
                    status, rheaders, data = exc.code, exc.headers, exc.read()
                if proxy.take(self.command, self.path):
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)  # committed, never answered
                    return
                self.send_response(status)
                drop = {"transfer-encoding", "connection", "content-length", "content-encoding"}
                for key, value in rheaders.items():
                    if key.lower() not in drop:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = forward

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def arm(self, method: str, fragment: str, times: int = 1) -> None:
        self.armed.append([method, fragment, times])

    def take(self, method: str, path: str) -> bool:
        for entry in self.armed:
            if entry[0] == method and entry[1] in path and entry[2] > 0:
                entry[2] -= 1
                self.dropped.append(f"{method} {path}")
                return True
        return False

    def close(self) -> None:
        self.server.shutdown()


def _exactly(project: str, tasks: int, overlap: int) -> pd.DataFrame:
    """The project holds ``tasks`` tasks, one per item, each with ``overlap`` completed
    annotations and no account twice."""
    ls = annotate.client()
    proj = annotate.find_project(ls, project)
    exported = annotate.export_tasks(ls, proj.id)
    assert len(exported) == tasks
    assert len({t["data"]["item_id"] for t in exported}) == tasks
    table = annotate.pull(project)
    per_ann = table.drop_duplicates("annotation_id")
    assert not per_ann.duplicated(["item_id", "annotator_id"]).any()
    done = per_ann[~per_ann["cancelled"]].groupby("item_id").size()
    assert len(done) == tasks and (done == overlap).all()
    print(f"{project}: {len(exported)} tasks, {len(per_ann)} annotations "
          f"({int(done.sum())} completed, {int(per_ann['cancelled'].sum())} skipped)")  # fmt: skip
    return per_ann


def test_a_lost_response_never_duplicates_tasks_or_annotations(server):
    """Issue 16: the server saves an import or an annotation but its answer is lost; the
    retry reads back what was saved and writes only what is missing."""
    from pipelines.annotation.ls_server import Connection
    from pipelines.annotation.simulate import with_simulated

    token = ls_server.credentials()["token"]
    proxy = DropProxy(server["url"])
    try:
        ls = annotate.client(Connection(proxy.url, token, managed=False))
        config = parse_label_config(CONFIGS / "sts.xml")
        proxy.arm("POST", "/import")
        pushed = annotate.push(sts_items(20), config, "lost import", 3, ls=ls, progress=True)
        assert pushed.created == 20 and proxy.dropped  # the first answer was lost
        proxy.arm("POST", "/annotations", times=3)
        posted = simulate("lost import", annotators=4, seed=3, ls=ls, progress=True)
        assert len(proxy.dropped) == 4
        per_ann = _exactly("lost import", 20, 3)
        assert len(per_ann) == posted["posted"]
        # tasks imported with their annotations, the answer lost
        proxy.arm("POST", "/import")
        bulk = annotate.push(sts_items(20, start=100), config, "lost bulk import", 3, ls=ls,
                             progress=True, attach=with_simulated(4, seed=3))  # fmt: skip
        assert len(proxy.dropped) == 5
        assert len(_exactly("lost bulk import", 20, 3)) == bulk.annotations
    finally:
        proxy.close()


def test_killing_the_server_mid_simulate_and_rerunning_leaves_exact_counts(server):
    config = parse_label_config(CONFIGS / "sts.xml")
    annotate.push(sts_items(60, start=200), config, "killed simulate", 3, progress=True)
    result: dict = {}

    def run() -> None:
        try:
            result["first"] = simulate("killed simulate", annotators=4, seed=5, progress=True)
        except Exception as exc:  # noqa: BLE001 - the run may give up while the server is down
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    import time

    time.sleep(3)  # some annotations are posted, others in flight
    ls_server.down()
    ls_server.up(server["port"])
    thread.join(timeout=300)
    again = simulate("killed simulate", annotators=4, seed=5, progress=True)  # the rerun
    per_ann = _exactly("killed simulate", 60, 3)
    assert again["posted"] < len(per_ann)
    assert simulate("killed simulate", annotators=4, seed=5, progress=True)["posted"] == 0


def test_repair_removes_duplicates_a_past_fault_left(server):
    ls = annotate.client()
    config = parse_label_config(CONFIGS / "sts.xml")
    annotate.push(sts_items(6, start=300), config, "needs repair", 2, progress=True)
    simulate("needs repair", annotators=3, seed=1, progress=True)
    proj = annotate.find_project(ls, "needs repair")
    tasks = annotate.export_tasks(ls, proj.id)
    # what the old retries did: a task imported twice and an annotation posted twice
    ls.projects.import_tasks(proj.id, request=[{"data": tasks[0]["data"]}])
    first = tasks[1]["annotations"][0]
    ls.annotations.create(id=tasks[1]["id"], completed_by=first["completed_by"],
                          result=first["result"], lead_time=1.0)  # fmt: skip
    dry = cli("annotate", "repair", "--project", "needs repair", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    found = json.loads(dry.stdout)
    assert len(found["duplicate_tasks"]) == 1 and len(found["duplicate_annotations"]) == 1
    assert found["duplicate_tasks"][0]["kept_task_id"] == tasks[0]["id"]
    assert found["duplicate_annotations"][0]["kept_annotation_id"] == first["id"]
    fixed = cli("annotate", "repair", "--project", "needs repair")
    assert fixed.returncode == 0 and "removed 1 duplicate tasks and 1 duplicate" in fixed.stdout
    _exactly("needs repair", 6, 2)
    again = json.loads(cli("annotate", "repair", "--project", "needs repair", "--json").stdout)
    assert again["duplicate_tasks"] == [] and again["duplicate_annotations"] == []


def test_server_data_is_private_and_old_installs_are_fixed(server):
    data = Path(ls_server.status()["data_dir"])
    database = data / "label_studio.sqlite3"
    # an install made before: world-readable
    data.chmod(0o755)
    database.chmod(0o644)
    ls_server.down()
    ls_server.up(server["port"])
    for folder in (data, data.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for path in data.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} {mode:o}"
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    state = data.parent / "server.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600


def test_make_private_leaves_every_virtual_environment_executable(tmp_path):
    """CI once found a Label Studio venv whose programs were all 0600: a session had
    used another BENCHFORGE_LS_VENV, and make_private chmodded the default one."""
    server_dir = tmp_path / "labelstudio"
    old_venv = server_dir / "venv"
    (old_venv / "bin").mkdir(parents=True)
    (old_venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    program = old_venv / "bin" / "label-studio"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    secret = server_dir / "data" / "label_studio.sqlite3"
    secret.parent.mkdir(parents=True)
    secret.write_text("tokens")
    secret.chmod(0o644)
    ls_server.make_private(server_dir, skip=tmp_path / "elsewhere")
    assert stat.S_IMODE(program.stat().st_mode) == 0o755
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_an_install_whose_programs_lost_their_modes_is_not_usable(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("label-studio", "python"):
        (venv / "bin" / name).write_text("#!/bin/sh\n")
        (venv / "bin" / name).chmod(0o755)
    (venv / ".benchforge-stamp").write_text("1.0 abc")
    assert ls_server.installed(venv, "1.0 abc")
    assert not ls_server.installed(venv, "1.0 other-pins")
    (venv / "bin" / "label-studio").chmod(0o600)
    assert not ls_server.installed(venv, "1.0 abc")


def test_annotate_status_reports_each_annotators_progress_agreement_and_controls(
    simulated, tmp_path
):
    """Issue 35 item 6: `benchforge annotate status` against a real server: the counts
    add up to the pulled table, agreement so far is the share of the others' majority,
    and --controls gives each annotator's accuracy on the control items."""
    from pipelines.agreement.qualification import PassRule, answers_of, majority_rows

    table = annotate.pull("simulated sts")
    # four items posing as controls, their known answer the latent score
    controls = sts_items(4).rename(columns={"sim_similarity": "value"})[["item_id", "value"]]
    controls.to_csv(tmp_path / "controls.csv", index=False)
    proc = cli("annotate", "status", "--project", "simulated sts", "--json",
               "--controls", str(tmp_path / "controls.csv"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["annotator_id"]: r for r in json.loads(proc.stdout)["annotators"]}
    per_annotation = table.drop_duplicates("annotation_id")
    assert sum(r["done"] + r["skipped"] for r in rows.values()) == len(per_annotation)
    assert set(rows) == set(per_annotation["annotator_id"])
    answers = table[table["field"] == "similarity"]
    plain = answers[~answers["item_id"].isin(set(controls["item_id"]))]
    expected = majority_rows(answers_of(plain), sorted(rows), PassRule("min_majority_share", 1))
    for r in expected:
        if r["answered"]:
            assert rows[r["annotator_id"]]["majority_share"] == pytest.approx(r["score"], abs=1e-4)
    answered = sum(r["control_answered"] for r in rows.values())
    on_controls = answers[answers["item_id"].isin(set(controls["item_id"]))]
    assert answered == len(answers_of(on_controls)) > 0
    assert all(r["median_seconds"] is None or r["median_seconds"] > 0 for r in rows.values())
    text = cli("annotate", "status", "--project", "simulated sts")
    assert (
        text.returncode == 0 and "annotator_id" in text.stdout and "majority_share" in text.stdout
    )
    bad = cli("annotate", "status", "--project", "simulated sts", "--field", "nope")
    assert bad.returncode != 0 and "no field 'nope'" in (bad.stdout + bad.stderr)
