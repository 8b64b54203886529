"""`benchforge ingest` end to end: a real Prefect run on a local Dask cluster over the
real demo corpora (a few hundred documents of each), its outputs, its statistics, its
cache, and what bad input does."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "recipes" / "ingest-demo.yaml"
OUTPUTS = ("documents.parquet", "sentences.parquet", "rejects.parquet", "stats.json")


def make_recipe(folder: Path, name: str = "recipe.yaml", limit: int = 300, **filters) -> Path:
    recipe = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((DEMO.parent / corpus["path"]).resolve())
        corpus["limit"] = limit
    for section, values in filters.items():
        recipe["filters"].setdefault(section, {}).update(values)
    path = folder / name
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def ingest(recipe: Path, out: Path, prefect_home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PREFECT_HOME": str(prefect_home)}
    cmd = [
        sys.executable,
        "-m",
        "flows.cli",
        "ingest",
        str(recipe),
        "--out",
        str(out),
        "--workers",
        "1",
        "--shard-size",
        "500",
        "--json",
    ]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def digests(out: Path) -> dict:
    return {n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in OUTPUTS}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    base = tmp_path_factory.mktemp("ingest")
    recipe = make_recipe(base)
    out = base / "out"
    proc = ingest(recipe, out, base / "prefect")
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {
        "base": base,
        "recipe": recipe,
        "out": out,
        "report": json.loads(proc.stdout),
        "sentences": pd.read_parquet(out / "sentences.parquet"),
    }


def test_outputs_and_columns(run):
    out = run["out"]
    for name in (*OUTPUTS, "manifest.json"):
        assert (out / name).is_file()
    sentences = pd.read_parquet(out / "sentences.parquet")
    for col in ("sent_id", "doc_id", "corpus", "text", "license", "style", "domain", "date"):
        assert col in sentences.columns
    assert sentences["sent_id"].is_unique
    assert (sentences["text"].str.strip() != "").all()
    assert set(sentences["corpus"]) == {"nsmc", "parakqc", "khs-comments", "khs-news-titles"}
    nsmc = sentences[sentences["corpus"] == "nsmc"]
    assert nsmc["date"].str.match(r"^20\d\d-\d\d-\d\d$").all()
    assert set(nsmc["license"]) == {"CC0-1.0"}
    rejects = pd.read_parquet(out / "rejects.parquet")
    for col in ("stage", "reason", "text", "row_id"):
        assert col in rejects.columns
    assert rejects["reason"].notna().all()
    documents = pd.read_parquet(out / "documents.parquet")
    assert set(sentences["doc_id"]) <= set(documents["doc_id"])


def test_every_row_is_accounted_for(run):
    stats = json.loads((run["out"] / "stats.json").read_text())
    rejects = pd.read_parquet(run["out"] / "rejects.parquet")
    sentences = pd.read_parquet(run["out"] / "sentences.parquet")
    by_stage = {s["stage"]: s for s in stats["stages"]}
    # the toxic-content filter runs by default (KLUE 2.3), after dedup
    assert list(by_stage) == ["read", "clean", "segment", "noise", "pii", "dedup", "classify"]
    for stage in stats["stages"]:
        assert stage["in"] == stage["kept"] + sum(stage["dropped"].values())
        for corpus in stage["corpora"].values():
            assert corpus["in"] == corpus["kept"] + sum(corpus["dropped"].values())
        counted = rejects[rejects["stage"] == stage["stage"]]["reason"].value_counts().to_dict()
        assert counted == stage["dropped"]
    # each stage takes what the previous kept (segment turns documents into sentences)
    assert by_stage["read"]["in"] == 4 * 300
    assert by_stage["clean"]["in"] == by_stage["read"]["kept"]
    assert by_stage["segment"]["in"] == by_stage["clean"]["kept"]
    assert by_stage["pii"]["in"] == by_stage["noise"]["kept"]
    assert by_stage["dedup"]["in"] == by_stage["pii"]["kept"]
    assert by_stage["classify"]["in"] == by_stage["dedup"]["kept"]
    assert by_stage["classify"]["kept"] == len(sentences)
    assert by_stage["noise"]["in"] == len(sentences) + len(
        rejects[rejects["stage"].isin(["noise", "pii", "dedup", "classify"])]
    )
    pii = rejects[rejects["stage"] == "pii"]
    assert sum(stats["pii_kinds"].values()) >= len(pii)
    assert set(stats["pii_kinds"]) == set(pii["detail"].str.split(",").explode())
    dups = rejects[rejects["stage"] == "dedup"]
    # the sentence a duplicate repeats was kept, or dropped later by the toxic filter
    toxic = rejects.loc[rejects["stage"] == "classify", "sent_id"]
    assert dups["duplicate_of"].isin(pd.concat([sentences["sent_id"], toxic])).all()


def test_rerun_recomputes_nothing_and_changes_nothing(run):
    before = digests(run["out"])
    mtimes = {n: (run["out"] / n).stat().st_mtime_ns for n in OUTPUTS}
    proc = ingest(run["recipe"], run["out"], run["base"] / "prefect")
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert all(t["computed"] == 0 for t in report["tasks"].values()), report["tasks"]
    assert report["written"] is False
    assert digests(run["out"]) == before
    assert {n: (run["out"] / n).stat().st_mtime_ns for n in OUTPUTS} == mtimes


def test_changing_one_setting_recomputes_only_what_depends_on_it(run, tmp_path):
    recipe = make_recipe(tmp_path, pii={"kinds": ["email", "url"]})
    proc = ingest(recipe, run["out"], run["base"] / "prefect")
    assert proc.returncode == 0, proc.stderr[-4000:]
    tasks = json.loads(proc.stdout)["tasks"]
    assert tasks["read"]["computed"] == 0
    assert tasks["clean+segment"]["computed"] == 0
    assert tasks["noise+pii"]["cached"] == 0 and tasks["noise+pii"]["computed"] > 0
    assert tasks["dedup"]["computed"] == 1


def test_bad_input_stops_with_file_and_line_and_keeps_outputs(run, tmp_path):
    before = digests(run["out"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"review": "좋아요"}\n{"review": "나빠요", \n', encoding="utf-8")
    recipe = yaml.safe_load(run["recipe"].read_text(encoding="utf-8"))
    recipe["corpora"].append(
        {
            "name": "bad",
            "path": str(bad),
            "format": "jsonl",
            "text_field": "review",
            "license": "CC0-1.0",
            "domain": "review",
            "style": "colloquial",
        }
    )
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    proc = ingest(path, run["out"], run["base"] / "prefect")
    assert proc.returncode == 2
    assert f"{bad}:2: malformed JSON" in proc.stderr
    assert digests(run["out"]) == before


def test_bad_recipe_and_missing_file_fail_fast(tmp_path):
    recipe = tmp_path / "r.yaml"
    recipe.write_text("name: x\ncorpora:\n  - name: a\n    path: nope.txt\n    format: xml\n")
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "ingest", str(recipe), "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{recipe}: corpora.0.format" in proc.stderr


def test_runs_on_an_existing_dask_scheduler(run, tmp_path):
    """--dask-address sends the shards to a scheduler that the command did not start."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        env = {**os.environ, "PREFECT_HOME": str(run["base"] / "prefect")}
        out = tmp_path / "out"
        cmd = [
            sys.executable,
            "-m",
            "flows.cli",
            "ingest",
            str(run["recipe"]),
            "--out",
            str(out),
            "--dask-address",
            cluster.scheduler_address,
            "--shard-size",
            "500",
            "--json",
        ]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-4000:]
        # the work went through this scheduler: read, segment and filter tasks, each with
        # several state transitions
        assert cluster.scheduler.transition_counter >= 4 * 3
    report = json.loads(proc.stdout)
    assert report["tasks"]["clean+segment"]["computed"] > 0
    assert (out / ".cache" / "prefect").is_dir()
    a = pd.read_parquet(out / "sentences.parquet")
    pd.testing.assert_frame_equal(a, run["sentences"])
