"""``benchforge rebuild`` end to end: small STS, NLI and TC rebuilds from the shipped
corpora through a real Prefect run and a real Label Studio server (STS and NLI killed
midway and resumed), checked against their own stage outputs and loaded with the
``datasets`` library."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from browser import headless_chromium

from pipelines.annotation import annotate

ROOT = Path(__file__).resolve().parents[2]


def small_recipe(folder: Path, project: str) -> Path:
    """recipes/sts-demo.yaml made small: fewer documents, pairs, items and annotators."""
    recipe = yaml.safe_load((ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        corpus["limit"] = 600
    recipe["pairing"]["corpora"][0]["gsm"] = {"pool": 300, "pairs": 60}
    recipe["items"]["sample"] = 30
    # the pilot, the control items and the review round have their own test
    # (test_people_rounds.py)
    recipe["annotation"].pop("pilot")
    recipe["annotation"].pop("controls")
    recipe["annotation"].pop("guideline", None)
    recipe["annotation"].pop("human")
    recipe["agreement"]["reports"] = "auto"
    recipe["annotation"].update(
        config=str(ROOT / "annotation_configs" / "sts.xml"),
        project=project,
        overlap=3,
        simulate={"annotators": 5, "seed": 0},
    )
    recipe["split"]["eval_fraction"] = 0.3
    path = folder / f"{project}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def rebuild(recipe: Path, out: Path, port: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", "rebuild", str(recipe), "--out", str(out),
         "--port", str(port)],
        cwd=ROOT, capture_output=True, text=True, timeout=900, env=os.environ.copy(),
    )  # fmt: skip


def kill_after(recipe: Path, out: Path, port: int, marker: str) -> str:
    """Start a rebuild and kill it (its whole process group, Prefect server included) as
    soon as ``marker`` is printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "rebuild", str(recipe), "--out", str(out),
         "--port", str(port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True, env=os.environ.copy(),
    )  # fmt: skip
    seen = []
    deadline = time.monotonic() + 600
    for line in proc.stdout:
        seen.append(line)
        if marker in line or time.monotonic() > deadline:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return "".join(seen)


@pytest.fixture(scope="module")
def rebuilt(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rebuild")
    recipe = small_recipe(folder, "sts-rebuild-test")
    out = folder / "out"
    before = kill_after(recipe, out, server["port"], "[3/10] push")
    assert "[3/10] push" in before, before[-3000:]
    assert not (out / "dataset").exists()  # killed before the end
    resumed = rebuild(recipe, out, server["port"])
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    return {"recipe": recipe, "out": out, "folder": folder, "resumed": resumed.stdout}


def test_resume_after_kill_finishes_without_duplicate_tasks(rebuilt):
    out, log = rebuilt["out"], rebuilt["resumed"]
    assert "items (cached)" in log  # finished steps are not redone
    assert "0 tasks created, 30 already there" in log
    ls = annotate.client()
    project = annotate.find_project(ls, "sts-rebuild-test")
    assert project.task_number == 30  # no duplicate Label Studio task
    items = pd.read_parquet(out / "items" / "items.parquet")
    tasks = annotate.export_tasks(ls, project.id)
    assert sorted(t["data"]["item_id"] for t in tasks) == sorted(items["item_id"])
    for split in ("train", "dev", "test"):
        assert (out / "dataset" / f"{split}.jsonl").is_file()
        assert (out / "dataset" / f"{split}.parquet").is_file()


def test_pairs_not_sampled_are_kept_with_their_reason(rebuilt):
    """in = kept + dropped for item sampling too: every pair is an item or a reject."""
    out = rebuilt["out"]
    pairs = pd.read_parquet(out / "pairs" / "pairs.parquet")
    items = pd.read_parquet(out / "items" / "items.parquet")
    rejects = pd.read_parquet(out / "items" / "rejects.parquet")
    assert set(rejects["reason"]) == {"not_sampled"} and len(items) == 30
    assert sorted([*items["item_id"], *rejects["row_id"]]) == sorted(pairs["pair_id"])
    info = json.loads((out / "items" / "items.json").read_text(encoding="utf-8"))
    assert info["in"] == len(pairs) and info["dropped"] == {"not_sampled": len(pairs) - 30}


def test_export_follows_the_klue_sts_layout(rebuilt):
    out = rebuilt["out"]
    gold = pd.read_parquet(out / "agree" / "gold.parquet").set_index("item_id")
    rows = [
        json.loads(line)
        for s in ("train", "dev", "test")
        for line in (out / "dataset" / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == len(gold)
    first = rows[0]
    assert set(first) == {"guid", "source", "sentence1", "sentence2", "labels", "annotations",
                          "license"}  # fmt: skip
    # issue 18: every row carries its source's licence
    licences = {"nsmc": "CC0-1.0", "parakqc": "CC-BY-SA-4.0"}
    assert all(row["license"] == licences[row["source"].split("-")[0]] for row in rows)
    assert set(first["labels"]) == {"label", "real-label", "binary-label"}
    assert set(first["annotations"]) == {"agreement", "annotators", "annotations"}
    for row in rows:
        counts = [int(c) for c in row["annotations"]["agreement"].split(":")]
        assert len(counts) == 6 and sum(counts) == len(row["annotations"]["annotations"])
        assert row["labels"]["binary-label"] == int(row["labels"]["label"] >= 3.0)
    assert sorted(r["labels"]["real-label"] for r in rows) == sorted(gold["real_label"])
    # the simulated truth never reaches the release
    assert "sim_similarity" not in (out / "dataset" / "train.jsonl").read_text(encoding="utf-8")
    frame = pd.read_parquet(out / "dataset" / "train.parquet")
    assert len(frame) == sum(1 for r in rows if "_train_" in r["guid"])


def test_card_numbers_match_the_stage_outputs(rebuilt):
    out = rebuilt["out"]
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "{{" not in card and "> **Simulated rounds.**" in card
    agreement = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    splits = pd.read_parquet(out / "split" / "splits.parquet")["split"].value_counts()
    annotations = pd.read_parquet(out / "annotate" / "annotations.parquet")
    assert f"| gold items kept | {agreement['gold_items']} |" in card
    interval = agreement["krippendorff_alpha"]["interval"]
    assert f"| Krippendorff alpha, interval | {interval:.4g} (simulated) |" in card
    assert card.count("describes the simulator's noise settings, not people.") == 1
    assert f"| annotators kept after screening | {agreement['annotators_kept']} |" in card
    for split, n in splits.items():
        assert f"| {split} | {n} |" in card
    assert f"{annotations['annotation_id'].nunique()} annotations pulled" in card
    assert "5 distinct annotators" in card
    ingest = json.loads((out / "pairs" / "ingest" / "stats.json").read_text(encoding="utf-8"))
    dedup = next(s for s in ingest["stages"] if s["stage"] == "dedup")
    assert f"| dedup | sentence | {dedup['in']} | {dedup['kept']} |" in card
    assert "CC-BY-SA-4.0" in card and "CC0-1.0" in card
    # issue 18: the resolved release licence, one attribution line per source, provenance
    assert (
        "Release licence: **[CC-BY-SA-4.0](https://spdx.org/licenses/CC-BY-SA-4.0.html)**: "
        "derived; governed by parakqc (CC-BY-SA-4.0)"
    ) in card
    assert card.count("Adapted: sentences selected") == 2
    assert "| Label Studio (main round) | 1.23.2 |" in card  # read from the server
    assert re.search(r"\| git commit \| ([0-9a-f]{40}|unknown \(not a git checkout\))", card)
    gold = pd.read_parquet(out / "agree" / "gold.parquet")
    top = gold["label"].astype(float).max()
    assert "| score bin | train | dev | test |" in card and top <= 5
    for name in ("labels", "scores", "annotators", "funnel"):
        assert f"](figures/{name}.png)" in card, name
        assert (out / "dataset" / "figures" / f"{name}.png").is_file()


def test_benchforge_card_renders_the_same_card_again(rebuilt, tmp_path):
    """Issue 18: `benchforge card render RUN` renders the card from the finished run without
    recomputing anything; the card has its warnings section, and the manifest stays
    current."""
    import shutil

    from pipelines.core.io import read_manifest, sha256_file

    run = tmp_path / "run"
    shutil.copytree(rebuilt["out"], run, ignore=shutil.ignore_patterns(".benchforge.lock"))
    card = run / "dataset" / "DATA_CARD.md"
    before = card.read_bytes()
    assert b"## Warnings" in before and b"**Simulated rounds** (" in before
    card.write_text("stale", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "flows.cli", "card", "render", str(run)], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    html, figure = run / "dataset" / "DATA_CARD.html", run / "dataset" / "figures" / "labels.png"
    pages = (html.read_bytes(), figure.read_bytes())
    html.unlink()
    figure.unlink()
    proc = subprocess.run([sys.executable, "-m", "flows.cli", "card", "render", str(run)], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert card.read_bytes() == before
    assert (html.read_bytes(), figure.read_bytes()) == pages  # the figures are deterministic
    files = read_manifest(run / "dataset")["files"]
    assert files["DATA_CARD.md"] == sha256_file(card)
    assert files["figures/labels.png"] == sha256_file(figure)
    bad = subprocess.run([sys.executable, "-m", "flows.cli", "card", "render",
                          str(tmp_path / "none")], cwd=ROOT, capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode == 2 and "no manifest.json" in bad.stderr


def test_rerun_changes_nothing_and_same_seed_same_dataset(rebuilt, server):
    out, recipe = rebuilt["out"], rebuilt["recipe"]
    stamp = {p.name: p.stat().st_mtime_ns for p in (out / "dataset").iterdir()}
    again = rebuild(recipe, out, server["port"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 missing annotations posted" in again.stdout
    assert {p.name: p.stat().st_mtime_ns for p in (out / "dataset").iterdir()} == stamp
    # a fresh run into another project and folder gives the same dataset, byte for byte
    other = small_recipe(rebuilt["folder"], "sts-rebuild-test-2")
    fresh = rebuild(other, rebuilt["folder"] / "out2", server["port"])
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    for split in ("train", "dev", "test"):
        a = (out / "dataset" / f"{split}.jsonl").read_bytes()
        b = (rebuilt["folder"] / "out2" / "dataset" / f"{split}.jsonl").read_bytes()
        assert a == b, split


def _fault_probe():  # noqa: ANN202 - the module scripts/fault_probe.py
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "fault_probe", ROOT / "scripts" / "fault_probe.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kills_at_named_step_boundaries_resume_to_the_same_bytes_and_counts(rebuilt, server):
    """Issue 32's fault suite at small scale: a second folder on the same project is
    killed with SIGKILL (the whole process group) after ``pull`` (step 6 of 9) and, on the
    rerun, after ``split`` (step 8), then finished: every data file has the bytes of the
    reference run's, and the project still holds 30 tasks and as many annotations.
    ``scripts/fault_probe.py`` does the same after every step of a whole demo."""
    probe = _fault_probe()
    ls = annotate.client()
    project = annotate.find_project(ls, "sts-rebuild-test")
    tasks = annotate.export_tasks(ls, project.id)
    before = (len(tasks), sum(len(t["annotations"]) for t in tasks))
    out = rebuilt["folder"] / "killed"
    killed = [probe.kill_after_step(rebuilt["recipe"], out, server["port"], k)[0]
              for k in (6, 8)]  # fmt: skip
    assert killed == ["pull", "split"]
    assert not (out / "dataset").exists()
    probe.run_to_end(rebuilt["recipe"], out, server["port"])
    reference, after = probe.digests(rebuilt["out"]), probe.digests(out)
    assert sorted(after) == sorted(reference)
    assert [p for p in reference if reference[p] != after[p]] == []
    tasks = annotate.export_tasks(ls, project.id)
    assert (len(tasks), sum(len(t["annotations"]) for t in tasks)) == before
    assert before[0] == 30


# ------------------------------------------------------------------ the NLI recipe


def small_nli_recipe(folder: Path, name: str) -> Path:
    """recipes/nli-demo.yaml made small: fewer documents and premises."""
    recipe = yaml.safe_load((ROOT / "recipes" / "nli-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        corpus["limit"] = 800
    recipe["name"] = name
    recipe.pop("project_prefix", None)  # the projects are named after this test's recipe
    recipe["items"]["sample"] = 10
    for key in ("pilot", "controls", "human"):  # their own test: test_people_rounds.py
        recipe["annotation"].pop(key)
    recipe["annotation"]["simulate"] = {"annotators": 5, "seed": 0}
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "nli_validation.xml")
    recipe["annotation"]["writing"]["config"] = str(
        ROOT / "annotation_configs" / "nli_hypothesis.xml"
    )
    for section in (recipe["annotation"], recipe["annotation"]["writing"]):
        if section.get("guideline"):  # the recipe's own guideline, from the repository
            section["guideline"] = str((ROOT / "recipes" / section["guideline"]).resolve())
    recipe["split"]["eval_fraction"] = 0.3
    recipe["split"]["hypothesis_model"] = {"epochs": 2}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def nli_rebuilt(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rebuild-nli")
    recipe = small_nli_recipe(folder, "nli-rebuild-test")
    out = folder / "out"
    # killed after the writing round and the validation push: both rounds must resume
    before = kill_after(recipe, out, server["port"], "[8/15] push")
    assert "[8/15] push" in before, before[-3000:]
    assert not (out / "dataset").exists()
    resumed = rebuild(recipe, out, server["port"])
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    return {"recipe": recipe, "out": out, "resumed": resumed.stdout}


def _nli_rows(out: Path) -> list[dict]:
    return [
        json.loads(line)
        for s in ("train", "dev", "test")
        for line in (out / "dataset" / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def test_nli_resume_keeps_both_rounds_without_duplicates(nli_rebuilt):
    out, log = nli_rebuilt["out"], nli_rebuilt["resumed"]
    premises = pd.read_parquet(out / "premises" / "premises.parquet")
    items = pd.read_parquet(out / "items" / "items.parquet")
    assert f"0 tasks created, {len(premises)} already there" in log
    assert f"0 tasks created, {len(items)} already there" in log
    ls = annotate.client()
    assert annotate.find_project(ls, "nli-rebuild-test-writing").task_number == len(premises)
    assert annotate.find_project(ls, "nli-rebuild-test").task_number == len(items)


def test_nli_premises_follow_klue_rules_and_nothing_is_lost(nli_rebuilt):
    from pipelines.families.klue.items_section import PremiseRules
    from pipelines.families.klue.nli_premises import premise_reason

    out = nli_rebuilt["out"]
    premises = pd.read_parquet(out / "premises" / "premises.parquet")
    rejected = pd.read_parquet(out / "premises" / "rejected.parquet")
    sentences = pd.read_parquet(out / "ingest" / "sentences.parquet")
    assert len(premises) == 10
    assert len(premises) + len(rejected) == len(sentences)
    rules = PremiseRules()
    assert all(premise_reason(t, rules) is None for t in premises["premise"])
    assert set(rejected["reason"]) <= {"too_short", "too_long", "formula_or_list",
                                       "not_declarative", "no_predicate",
                                       "not_sampled"}  # fmt: skip
    for row in rejected.sample(50, random_state=0).itertuples():
        expected = premise_reason(row.text, rules) or "not_sampled"
        assert row.reason == expected
    # three hypotheses per written premise, and every other premise has its reason
    items = pd.read_parquet(out / "items" / "items.parquet")
    dropped = pd.read_parquet(out / "items" / "dropped_premises.parquet")
    assert (items.groupby("premise_id").size() == 3).all()
    assert items["premise_id"].nunique() + len(dropped) == len(premises)


def test_nli_export_layout_votes_and_groups(nli_rebuilt):
    out = nli_rebuilt["out"]
    rows = _nli_rows(out)
    gold = pd.read_parquet(out / "agree" / "gold.parquet")
    assert len(rows) == len(gold) > 0
    labels = {"entailment", "neutral", "contradiction"}
    for row in rows:
        assert set(row) == {"guid", "source", "premise", "hypothesis", "gold_label", "author",
                            "label2", "label3", "label4", "label5", "license"}  # fmt: skip
        votes = [row["author"]] + [row[f"label{k}"] for k in range(2, 6)]
        assert set(votes) <= labels
        assert votes.count(row["gold_label"]) >= 3  # KLUE: 3 of 5 including the author
    # validators are never the writer of the hypothesis they label
    table = pd.read_parquet(out / "annotate" / "annotations.parquet")
    authors = table[table["role"] == "author"].set_index("item_id")["annotator_id"]
    validators = table[(table["role"] == "validator") & (table["field"] == "label")]
    assert not any(
        authors[i] == a
        for i, a in zip(validators["item_id"], validators["annotator_id"], strict=True)
    )
    # a premise's hypotheses never straddle two splits
    splits = pd.read_parquet(out / "split" / "splits.parquet")
    items = pd.read_parquet(out / "items" / "items.parquet")
    merged = splits.merge(items[["item_id", "premise_id"]], on="item_id")
    assert (merged.groupby("premise_id")["split"].nunique() == 1).all()
    assert "sim_label" not in (out / "dataset" / "train.jsonl").read_text(encoding="utf-8")


def test_nli_card_numbers_match_the_stage_outputs(nli_rebuilt, server):
    out = nli_rebuilt["out"]
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "{{" not in card and "simulated writers from templates" in card
    agreement = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    premises = json.loads((out / "premises" / "premises.json").read_text(encoding="utf-8"))
    assert f"| gold items kept | {agreement['gold_items']} |" in card
    unanimous = agreement["nli_validation"]["unanimous_gold_label"]
    assert f"| unanimous gold label | {unanimous['share']:.4g} | {unanimous['count']} of" in card
    assert f"{premises['premises']} chosen out of {premises['sentences']}" in card
    items = pd.read_parquet(out / "items" / "items.parquet")
    assert f"Hypotheses: {len(items)} premise-hypothesis pairs" in card
    # a rerun posts nothing and rewrites nothing
    stamp = {p.name: p.stat().st_mtime_ns for p in (out / "dataset").iterdir()}
    again = rebuild(nli_rebuilt["recipe"], out, server["port"])
    assert again.returncode == 0, again.stderr[-3000:]
    progress = [line for line in again.stdout.splitlines() if line.startswith("[")]
    assert (
        sum("] simulate" in line and " 0 missing annotations posted" in line for line in progress)
        == 2
    )
    assert {p.name: p.stat().st_mtime_ns for p in (out / "dataset").iterdir()} == stamp


# ------------------------------------------------------------------- the TC recipe


@pytest.fixture(scope="module")
def tc_rebuilt(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("rebuild-tc")
    recipe = yaml.safe_load((ROOT / "recipes" / "tc-demo.yaml").read_text(encoding="utf-8"))
    recipe["corpora"][0]["path"] = str((ROOT / "recipes" / recipe["corpora"][0]["path"]).resolve())
    recipe["corpora"][0]["limit"] = 1500
    recipe["name"] = "tc-rebuild-test"
    recipe.pop("project_prefix", None)  # the projects are named after this test's recipe
    recipe["items"]["sample"] = 20
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "topic.xml")
    path = folder / "tc-rebuild-test.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    done = rebuild(path, folder / "out", server["port"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {"recipe": path, "out": folder / "out", "log": done.stdout}


def test_tc_export_layout_majority_and_undated_split(tc_rebuilt):
    out = tc_rebuilt["out"]
    rows = [
        json.loads(line)
        for s in ("train", "dev", "test")
        for line in (out / "dataset" / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    gold = pd.read_parquet(out / "agree" / "gold.parquet")
    assert len(rows) == len(gold) > 0
    topics = {"IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"}
    for row in rows:
        assert set(row) == {"guid", "title", "label", "annotations", "url", "date", "license"}
        assert row["license"] == "CC-BY-SA-4.0"
        given = row["annotations"]["annotations"]
        assert set(given) == {"first-scope", "second-scope", "third-scope"}
        assert len(row["annotations"]["annotators"]) == 3 == len(given["first-scope"])
        assert row["label"] in topics
        assert given["first-scope"].count(row["label"]) >= 2  # KLUE-TC: 2 of 3
        assert row["date"] is None  # the shipped headlines are undated
    splits = pd.read_parquet(out / "split" / "splits.parquet")
    assert (splits.loc[splits["split"] == "train", "reason"] == "undated").all()
    assert splits.loc[splits["split"] != "train", "reason"].str.contains("no other unit").all()
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "date criterion was **not** applied" in card and "{{" not in card
    assert f"| gold items kept | {len(gold)} |" in card
    assert "sim_topic1" not in (out / "dataset" / "train.jsonl").read_text(encoding="utf-8")
    # every headline is an item or kept with reason not_sampled
    sentences = pd.read_parquet(out / "ingest" / "sentences.parquet")
    rejects = pd.read_parquet(out / "items" / "rejects.parquet")
    assert set(rejects["reason"]) == {"not_sampled"}
    assert len(rejects) + 20 == len(sentences)
    assert rejects["sent_id"].is_unique and set(rejects["sent_id"]) <= set(sentences["sent_id"])


def _load_with_datasets(folder: Path, cache: Path) -> tuple:
    """The exported splits as a user loads them: ``datasets.load_dataset`` on the JSON
    Lines and on the Parquet files (offline)."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets

    splits = ("train", "dev", "test")
    kwargs = {"cache_dir": str(cache)}
    as_json = datasets.load_dataset(
        "json", data_files={s: str(folder / f"{s}.jsonl") for s in splits}, **kwargs
    )
    as_parquet = datasets.load_dataset(
        "parquet", data_files={s: str(folder / f"{s}.parquet") for s in splits}, **kwargs
    )
    return as_json, as_parquet


@pytest.mark.parametrize("which", ["rebuilt", "nli_rebuilt", "tc_rebuilt", "korsts_rebuilt"])
def test_card_check_finds_the_card_true_to_its_files(which, request):
    """Issue 34: `benchforge card check` on each rebuild: every count the card states
    (release files, splits, label distributions) is what the files hold."""
    out = request.getfixturevalue(which)["out"]
    proc = subprocess.run([sys.executable, "-m", "flows.cli", "card", "check", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " 0 mismatch(es), 0 unchecked" in proc.stdout


@pytest.mark.parametrize("which", ["rebuilt", "nli_rebuilt", "tc_rebuilt"])
def test_exports_load_with_the_datasets_library(which, request, tmp_path):
    out = request.getfixturevalue(which)["out"]
    as_json, as_parquet = _load_with_datasets(out / "dataset", tmp_path)
    for split in ("train", "dev", "test"):
        lines = (out / "dataset" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        assert as_json[split].num_rows == as_parquet[split].num_rows == len(lines)
        assert as_json[split].column_names == list(json.loads(lines[0]))
        assert as_parquet[split][0] == as_json[split][0] == json.loads(lines[0])


def load_release(folder: Path, cache: Path) -> dict:
    """Issue 34 item 4: ``datasets.load_dataset(folder)`` with no other argument (the Hub
    card's ``configs`` name the files) loads every split its README lists, each with the
    records of the Parquet file it names; returns {config: DatasetDict}."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import datasets

    from pipelines.export.hf_card import validate_readme

    text = (folder / "README.md").read_text(encoding="utf-8")
    assert validate_readme(text, folder) == []
    meta = yaml.safe_load(text.split("---", 2)[1])
    loaded = {}
    for config in meta["configs"]:
        name = config["config_name"]
        args = [str(folder)] if name == "default" else [str(folder), name]
        ds = datasets.load_dataset(*args, cache_dir=str(cache))
        expected = {f["split"]: len(pd.read_parquet(folder / f["path"]))
                    for f in config["data_files"]}  # fmt: skip
        assert {k: v.num_rows for k, v in ds.items()} == expected, name
        loaded[name] = ds
    return loaded


@pytest.mark.parametrize("which", ["rebuilt", "nli_rebuilt", "tc_rebuilt", "korsts_rebuilt"])
def test_the_release_folder_loads_as_a_hugging_face_dataset(which, request, tmp_path):
    out = request.getfixturevalue(which)["out"]
    loaded = load_release(out / "dataset", tmp_path)
    meta = yaml.safe_load((out / "dataset" / "README.md").read_text(encoding="utf-8")
                          .split("---", 2)[1])  # fmt: skip
    # the first split's file: the Hub names a split validation, the file keeps dev/valid
    path = next(c for c in meta["configs"] if c["config_name"] == "default")["data_files"][0]
    first = json.loads((out / "dataset" / path["path"]).with_suffix(".jsonl")
                       .read_text(encoding="utf-8").splitlines()[0])  # fmt: skip
    split = next(iter(loaded["default"].values()))
    # a class task's gold is a ClassLabel on the Hub (issue 54): its names are the file's
    row = {k: split.features[k].int2str(v) if hasattr(split.features[k], "int2str") else v
           for k, v in split[0].items()}  # fmt: skip
    assert row == first


def test_html_card_opens_in_a_real_browser_with_its_figures(rebuilt):
    """Issue 18: DATA_CARD.html is one file a steward opens in a browser; headless
    Chromium (Debian's chromium + chromium-driver, installed by scripts/test.sh) loads it
    from disk and every figure decodes."""
    browser = headless_chromium()
    page = rebuilt["out"] / "dataset" / "DATA_CARD.html"
    figures = sorted((rebuilt["out"] / "dataset" / "figures").glob("*.png"))
    try:
        browser.get(page.resolve().as_uri())
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, "
            "i.src.slice(0, 22)]);"
        )
        headings = browser.execute_script(
            "return Array.from(document.querySelectorAll('h2')).map(h => h.textContent);"
        )
    finally:
        browser.quit()
    assert len(images) == len(figures) >= 4
    assert all(done and width > 100 for done, width, _ in images), images
    assert {src for _, _, src in images} == {"data:image/png;base64,"}  # embedded, no files
    for heading in (
        "Warnings",
        "Uses",
        "Collection timeframe",
        "Distribution and licence",
        "Maintenance",
        "Ethics review",
        "Provenance",
    ):
        assert heading in headings, headings


@pytest.fixture(scope="module")
def korsts_rebuilt(server, tmp_path_factory):
    """recipes/korsts-demo.yaml made small: 10 pairs, a tiny MT model trained on the spot."""
    folder = tmp_path_factory.mktemp("korsts")
    recipe = yaml.safe_load((ROOT / "recipes" / "korsts-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        corpus["limit"] = 10
    t = recipe["translation"]
    t["memory"]["path"] = str((ROOT / "recipes" / t["memory"]["path"]).resolve())
    t["train"] = {"parallel": str((ROOT / "recipes" / t["train"]["parallel"]).resolve()),
                  "epochs": 1, "d_model": 32, "ffn_dim": 64, "layers": 1, "heads": 2,
                  "limit": 200, "heldout": 10}  # fmt: skip
    t["postedit"]["project"] = "korsts-rebuild-test"
    # flag pairs whose length ratio is merely unusual, and send them to a relabel round
    t["qa"] = {"on_flag": "relabel", "length_ratio_z": 1.0,
               "relabel": {"overlap": 3, "project": "korsts-rebuild-test-relabel"}}  # fmt: skip
    path = folder / "korsts.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    first = rebuild(path, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "first": first.stdout, "again": again.stdout}


HOSTILE = [
    "<script>document.title='pwned-1';window.pwned=1</script>",
    "<svg onload=\"document.title='pwned-2'\">",
    "<img src=x onerror=\"document.title='pwned-3'\">",
    "[y](javascript:document.title='pwned-4')",
    "[z](&#106;avascript:document.title='pwned-5')",
    "</td></tr></table><script>window.pwned=6</script>",
    "a | b | c",
    "=cmd|' /C calc'!A0",
]


def test_hostile_corpus_and_recipe_text_never_runs_in_the_card(korsts_rebuilt, tmp_path):
    """Issue 32, cases 7-9: markup in the corpus text that reaches the KorSTS card's
    review table, in the recipe's description and card answers and in the attribution
    lines is shown as text. The card is rendered again from the run's facts with hostile
    lines in every one of those places; the Markdown holds no tag and no live
    ``javascript:`` link, the review table keeps its columns, and headless Chromium runs
    no script and finds no ``javascript:`` link in the HTML, under a
    Content-Security-Policy."""
    import shutil

    import markdown as md

    from pipelines.export.data_card import regenerate

    run = tmp_path / "run"
    shutil.copytree(korsts_rebuilt["out"], run)
    card_json = run / "dataset" / "card.json"
    facts = json.loads(card_json.read_text(encoding="utf-8"))
    payload = "\n".join(HOSTILE)
    facts["recipe"]["description"] = payload
    facts["recipe"]["card"] = {k: payload for k in ("intended_uses", "maintenance",
                                                    "distribution", "ethics_review")}  # fmt: skip
    facts["export"]["licence"]["attribution"] += HOSTILE
    assert facts.get("review"), "the small KorSTS run flags pairs for review"
    for n, row in enumerate(facts["review"]):
        for k, key in enumerate(("en1", "en2", "ko1", "ko2", "details")):
            row[key] = HOSTILE[(n + k) % len(HOSTILE)]
    card_json.write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    text = regenerate(run).read_text(encoding="utf-8")

    rendered = md.markdown(text, extensions=["tables"])  # as any Markdown viewer would
    assert not re.search(r"<(script|svg)\b|<img src=\"x\"", rendered, re.I)  # no tag from text
    assert not re.search(r"<[^>]*\son\w+\s*=", rendered)  # no event handler on a tag
    assert 'href="javascript' not in rendered.lower()
    header = next(line for line in text.splitlines() if line.startswith("| pair | checks"))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "pwned" in line]
    assert rows
    columns = len(re.findall(r"(?<!\\)\|", header))
    assert all(len(re.findall(r"(?<!\\)\|", line)) == columns for line in rows)

    page = run / "dataset" / "DATA_CARD.html"
    assert "Content-Security-Policy" in page.read_text(encoding="utf-8")
    browser = headless_chromium()
    try:
        browser.get(page.resolve().as_uri())
        time.sleep(0.5)
        seen = browser.execute_script(
            "return {title: document.title, pwned: window.pwned === undefined ? null : "
            "window.pwned, scripts: document.scripts.length, "
            "js_links: Array.from(document.links).filter(a => /^\\s*javascript:/i"
            ".test(a.getAttribute('href') || '')).length, "
            "handlers: Array.from(document.querySelectorAll('*')).filter(e => "
            "Array.from(e.attributes).some(a => a.name.startsWith('on'))).length, "
            "text: document.body.innerText};"
        )
    finally:
        browser.quit()
    assert "pwned" not in seen["title"] and seen["pwned"] is None
    assert seen["scripts"] == seen["js_links"] == seen["handlers"] == 0
    assert "<script>document.title='pwned-1'" in seen["text"]  # shown as the text it is


def test_korsts_rounds_halves_crosscheck_and_no_duplicate_tasks(korsts_rebuilt):
    out = korsts_rebuilt["out"]
    assert "0 tasks created" in korsts_rebuilt["again"] and "(cached)" in korsts_rebuilt["again"]
    ls = annotate.client()
    items = {h: pd.read_parquet(out / "postedit" / f"items-{h}.parquet") for h in "ab"}
    assert not set(items["a"]["item_id"]) & set(items["b"]["item_id"])  # each takes half
    assert "score" not in items["a"].columns and "label" not in items["a"].columns  # no label
    editors = {}
    for round_ in ("postedit", "crosscheck"):
        for h in "ab":
            project = annotate.find_project(ls, f"korsts-rebuild-test-{round_}-{h}")
            assert project.task_number == len(items[h])  # no duplicate task after the rerun
            table = pd.read_parquet(out / "annotate" / f"{round_}-{h}.parquet")
            editors[round_, h] = set(table["annotator_id"])
    # the other post-editor cross-checks each half
    assert editors["crosscheck", "a"] == editors["postedit", "b"]
    assert editors["crosscheck", "b"] == editors["postedit", "a"]
    assert editors["postedit", "a"] != editors["postedit", "b"]


def test_korsts_flagged_pairs_are_relabelled_in_their_own_round(korsts_rebuilt):
    out = korsts_rebuilt["out"]
    review = pd.read_parquet(out / "qa" / "review.parquet")
    final = pd.read_parquet(out / "relabel" / "pairs.parquet").set_index("pair_id")
    votes = pd.read_parquet(out / "annotate" / "relabel.parquet")
    gone = pd.read_parquet(out / "relabel" / "dropped.parquet")
    reported = set(votes.loc[~votes["cancelled"] & (votes["report_flags"] != ""), "item_id"])
    assert set(gone["pair_id"]) == reported and (gone["reason"] == "relabel_report").all()
    votes = votes[~votes["cancelled"] & (votes["field"] == "similarity")]
    assert len(review) >= 1
    assert set(votes["item_id"]) - reported == set(review["pair_id"]) & set(final.index)
    project = annotate.find_project(annotate.client(), "korsts-rebuild-test-relabel")
    assert project.task_number == len(set(votes["item_id"]))  # no duplicate after the rerun
    for pair_id, group in votes[~votes["item_id"].isin(reported)].groupby("item_id"):
        assert len(group) == 3 and final.at[pair_id, "relabelled"]
        assert final.at[pair_id, "label"] == round(group["value"].astype(float).mean(), 2)
    untouched = final[~final["relabelled"]]
    assert (untouched["label"] == untouched["label_en"]).all()
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "Relabel round (`qa.on_flag: relabel`)" in card


def test_korsts_export_carries_english_labels_and_final_translations(korsts_rebuilt):
    out = korsts_rebuilt["out"]
    sentences = pd.read_parquet(out / "qa" / "sentences.parquet").set_index("sentence_id")
    kept = pd.read_parquet(out / "relabel" / "pairs.parquet")
    dropped = pd.concat([pd.read_parquet(out / "qa" / "dropped.parquet"),
                         pd.read_parquet(out / "relabel" / "dropped.parquet")])  # fmt: skip
    pairs = pd.read_parquet(out / "translate" / "pairs.parquet")
    assert len(kept) + len(dropped) == len(pairs) == 10 and dropped["reason"].notna().all()
    lines = (out / "dataset" / "dev.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "genre\tfilename\tyear\tid\tscore\tsentence1\tsentence2"
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == len(kept)
    for row, pair in zip(rows, kept.sort_values("row").itertuples(), strict=True):
        assert float(row[4]) == pytest.approx(pair.label)  # English, or the relabel round's
        assert pair.relabelled or pair.label == pair.label_en
        assert row[5] == sentences.at[pair.s1, "final"] and row[6] == sentences.at[pair.s2, "final"]
        assert row[1] in ("images", "track5.en-en")
    # simulated post-editors aim at the KorSTS human translation
    ref = pairs.set_index("s1")["ref1"]
    assert (sentences.loc[ref.index, "final"] == ref).mean() > 0.8
    qa = json.loads((out / "qa" / "qa.json").read_text(encoding="utf-8"))
    assert qa["figures"]["per_split"]["dev"]["mt_vs_final"]["sentences"] == len(sentences)


def test_korsts_card_gives_qa_beside_the_paper_and_says_simulated(korsts_rebuilt):
    card = (korsts_rebuilt["out"] / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    qa = json.loads((korsts_rebuilt["out"] / "qa" / "qa.json").read_text(encoding="utf-8"))
    dev = qa["figures"]["per_split"]["dev"]["mt_vs_final"]
    assert "73.26" in card and "53%" in card  # the paper's figures
    assert f"| dev | {dev['sentences']} | {dev['bleu']} | {dev['chrf']} |" in card
    assert "**simulated**" in card and "korsts-dev" in card
    assert "Label-risk checks" in card and "CC-BY-SA-4.0" in card
    assert "{{" not in card


def test_korsts_export_loads_with_the_datasets_library(korsts_rebuilt, tmp_path):
    import datasets

    folder = korsts_rebuilt["out"] / "dataset"
    cache = {"cache_dir": str(tmp_path / "hf")}
    as_json = datasets.load_dataset("json", data_files={"dev": str(folder / "dev.jsonl")}, **cache)
    as_parquet = datasets.load_dataset("parquet", data_files={"dev": str(folder / "dev.parquet")},
                                       **cache)  # fmt: skip
    first = json.loads((folder / "dev.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert as_json["dev"].column_names == ["genre", "filename", "year", "id", "score",
                                           "sentence1", "sentence2", "license"]  # fmt: skip
    assert as_json["dev"][0] == as_parquet["dev"][0] == first


# -- issue 39: baseline, evaluate, harness export ---------------------------------------


def _bf(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip


def test_baseline_writes_its_row_into_the_card_and_evaluate_gives_its_figures(rebuilt, tmp_path):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(rebuilt["out"], out)  # the fixture's run stays as the rebuild left it
    got = _bf("baseline", str(out), "--epochs", "2")
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    result = json.loads((out / "baseline" / "baseline.json").read_text(encoding="utf-8"))
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    section = card.split("## Baselines", 1)[1].split("\n## ", 1)[0]
    for split, s in result["splits"].items():
        n = len((out / "dataset" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines())
        assert s["items"] == n
        row = f"| {result['model']} | {split} | {n} |"
        assert row in section
        # the predictions it wrote score the same with `benchforge evaluate`
        ev = _bf("evaluate", str(out), "--split", split, "--predictions",
                 str(out / "baseline" / f"{split}.predictions.jsonl"), "--json")  # fmt: skip
        assert ev.returncode == 0, ev.stderr
        assert json.loads(ev.stdout)["metrics"] == s["metrics"]
        assert set(s["metrics"]) == {"pearson", "f1_at_3"}
    assert "people, majority answer" not in section or "pearson" in section
    check = _bf("card", "check", str(out))
    assert check.returncode == 0, check.stdout
    again = _bf("baseline", str(out), "--epochs", "2")
    assert "(cached: the same files and settings)" in again.stdout
    # a release file changed after the baseline: the card no longer states its files
    dev = out / "dataset" / "dev.jsonl"
    dev.write_text(dev.read_text(encoding="utf-8").replace("0.", "1.", 1), encoding="utf-8")
    check = _bf("card", "check", str(out))
    assert check.returncode == 1 and "baseline's dev file dev.jsonl" in check.stdout


def test_lm_eval_runs_the_exported_topic_classification_task(tc_rebuilt, tmp_path):
    from tiny_lm import release_texts, run_lm_eval, tiny_lm

    dataset = tc_rebuilt["out"] / "dataset"
    info = json.loads((dataset / "lm_eval" / "harness.json").read_text(encoding="utf-8"))
    assert info["task"] == "benchforge_tc_rebuild_test"
    model = tiny_lm(tmp_path / "model", release_texts(dataset))
    got = run_lm_eval(model, info["task"], dataset / "lm_eval", tmp_path / "lm")
    scores = got["results"][info["task"]]
    assert 0.0 <= scores["acc,none"] <= 1.0 and "f1,none" in scores  # accuracy and macro-F1
    n_test = len((dataset / "test.jsonl").read_text(encoding="utf-8").splitlines())
    assert got["n-samples"][info["task"]]["effective"] == n_test


def test_lm_eval_scores_the_exported_similarity_task_by_pearson(rebuilt, tmp_path):
    """Issue 54: an STS release's harness task reports Pearson's r (and F1 at 3.0), runs
    by its benchmark's tag, and names the release hash as its version."""
    from tiny_lm import release_texts, run_lm_eval, tiny_lm

    dataset = rebuilt["out"] / "dataset"
    info = json.loads((dataset / "lm_eval" / "harness.json").read_text(encoding="utf-8"))
    model = tiny_lm(tmp_path / "model", release_texts(dataset))
    got = run_lm_eval(model, "benchforge_klue", dataset / "lm_eval", tmp_path / "lm")
    scores = got["results"][info["task"]]
    assert "pearson,none" in scores and "f1,none" in scores and "acc,none" not in scores
    pearson = scores["pearson,none"]
    assert pearson != pearson or -1.0 <= pearson <= 1.0  # NaN for a constant predictor
    config = yaml.safe_load((dataset / "lm_eval" / f"{info['task']}.yaml").read_text(
        encoding="utf-8").replace("!function", ""))  # fmt: skip
    assert got["versions"][info["task"]] == config["metadata"]["version"]


@pytest.mark.parametrize("which", ["rebuilt", "nli_rebuilt", "tc_rebuilt", "korsts_rebuilt"])
def test_the_html_card_reads_without_raw_markdown(which, request, tmp_path):
    """Issue 54: STS, NLI, YNAT and KorSTS cards in headless Chromium."""
    from browser import assert_card_reads_well

    out = request.getfixturevalue(which)["out"]
    assert_card_reads_well(out / "dataset", which, tmp_path)
