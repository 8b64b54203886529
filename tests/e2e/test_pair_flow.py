"""`benchforge pair` end to end: a real Prefect run that ingests demo corpora, then builds
GSM pairs (NSMC), intent/topic pairs (ParaKQC) and round-trip pairs through tiny Marian
checkpoints trained in the test; its outputs, its cache, and bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from rouge_score import rouge_scorer
from test_gsm import SEP, _Pretokenized
from tiny_translators import EN_KO, KO_EN

from pipelines.lang.ko import morphemes
from pipelines.pairing.metapairs import metadata_pairs

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "recipes" / "sts-pairs-demo.yaml"


def make_recipe(base: Path, min_rouge: float = 0.3) -> Path:
    recipe = yaml.safe_load(DEMO.read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((DEMO.parent / corpus["path"]).resolve())
        corpus["limit"] = 400
    toy = base / "toy.jsonl"
    toy.write_text(
        "".join(json.dumps({"text": s}, ensure_ascii=False) + "\n" for s, _ in KO_EN),
        encoding="utf-8",
    )
    recipe["corpora"].append(
        {
            "name": "toy",
            "path": str(toy),
            "format": "jsonl",
            "text_field": "text",
            "license": "CC0-1.0",
            "domain": "test",
            "style": "colloquial",
            "unit": "document",
        }
    )
    recipe["runner"] = {"workers": 1, "shard_size": 500}
    recipe["pairing"]["corpora"][0]["gsm"] = {"pool": 200, "pairs": 50}
    recipe["pairing"]["corpora"].append({"corpus": "toy", "rtt": {"sentences": 5}})
    recipe["pairing"]["rtt"] = {
        "pivot": "en",
        "forward": {"backend": "transformers", "model": "ko-en", "batch_size": 2},
        "backward": {"backend": "transformers", "model": "en-ko"},
        "min_rouge": min_rouge,
    }
    path = base / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def pair(base: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PREFECT_HOME": str(base / "prefect")}
    cmd = [sys.executable, "-m", "flows.cli", "pair", str(base / "recipe.yaml"), *args, "--json"]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def run(tmp_path_factory, marian):
    base = tmp_path_factory.mktemp("pair")
    for checkpoint in marian:  # the session's tiny checkpoints (conftest), copied
        shutil.copytree(checkpoint, base / checkpoint.name)
    make_recipe(base)
    proc = pair(base, "--out", str(base / "out"))
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = base / "out"
    return {
        "base": base,
        "out": out,
        "report": json.loads(proc.stdout),
        "pairs": pd.read_parquet(out / "pairs.parquet"),
        "rejects": pd.read_parquet(out / "rejects.parquet"),
        "documents": pd.read_parquet(out / "ingest" / "documents.parquet"),
    }


def test_outputs_hold_every_method(run):
    pairs = run["pairs"]
    assert set(pairs["method"]) == {"gsm", "intent", "topic", "rtt"}
    assert pairs["pair_id"].is_unique
    assert (run["out"] / "manifest.json").is_file()
    stats = run["report"]["stats"]
    assert stats["total_pairs"] == len(pairs)
    assert stats["pairs"] == pairs["method"].value_counts().sort_index().to_dict()


def test_gsm_pairs_scores_are_rouge_l_on_morphemes(run):
    gsm = run["pairs"][run["pairs"]["method"] == "gsm"]
    assert len(gsm) == 50 and (gsm["corpus"] == "nsmc").all()
    used = pd.concat([gsm["sent_id1"], gsm["sent_id2"]])
    assert used.is_unique  # GSM removes both sentences of a pair from the pool
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Pretokenized())
    for row in gsm.itertuples():
        a, b = SEP.join(morphemes(row.sentence1)), SEP.join(morphemes(row.sentence2))
        assert row.score == pytest.approx(scorer.score(a, b)["rougeL"].fmeasure, abs=1e-12)
    assert gsm["draw"].is_monotonic_increasing
    stats = run["report"]["stats"]["corpora"]["nsmc"]["gsm"]
    assert stats["pool"] == 200 and stats["drawn"] == 100
    assert stats["score_first_quarter"] > stats["score_last_quarter"]
    # the pairs thinned out of the draw are kept with their reason: drawn = kept + thinned
    thinned = run["rejects"][run["rejects"]["reason"] == "gsm_thinned"]
    assert len(thinned) == 50 and stats["dropped"] == {"gsm_thinned": 50}
    assert (thinned["stage"] == "gsm").all() and (thinned["unit"] == "pair").all()
    draws = sorted(set(gsm["draw"]) | {json.loads(d)["draw"] for d in thinned["detail"]})
    assert draws == list(range(100))
    assert not set(thinned["row_id"]) & set(gsm["pair_id"])


def test_intent_and_topic_pairs_follow_the_metadata(run):
    docs = run["documents"].set_index("doc_id")
    group = (docs["line"] - 1) // 10
    topic = docs["meta"].map(lambda m: json.loads(m).get("topic") if isinstance(m, str) else None)
    for method in ("intent", "topic"):
        part = run["pairs"][run["pairs"]["method"] == method]
        assert len(part) > 0 and (part["corpus"] == "parakqc").all()
        same_group = group[part["doc_id1"]].to_numpy() == group[part["doc_id2"]].to_numpy()
        same_topic = topic[part["doc_id1"]].to_numpy() == topic[part["doc_id2"]].to_numpy()
        assert same_topic.all()
        assert same_group.all() if method == "intent" else not same_group.any()


def test_rtt_pairs_are_checked_and_drops_are_kept(run):
    rtt = run["pairs"][run["pairs"]["method"] == "rtt"]
    assert sorted(rtt["sentence1"]) == sorted([KO_EN[0][0], KO_EN[4][0]])
    assert set(rtt["sentence2"]) == {EN_KO[0][1], EN_KO[4][1]}
    assert rtt["sent_id2"].isna().all()
    lineage = [json.loads(x) for x in rtt["lineage"]]
    assert {x["pivot"] for x in lineage} == {KO_EN[0][1], KO_EN[4][1]}
    dropped = run["rejects"][run["rejects"]["stage"] == "rtt"]
    assert sorted(dropped["reason"]) == ["rtt_drift", "rtt_identical", "rtt_length_ratio"]
    stats = run["report"]["stats"]["corpora"]["toy"]["rtt"]
    assert stats["in"] == stats["kept"] + sum(stats["dropped"].values()) == 5
    assert stats["translations_made"] == 10


def test_rerun_is_cached_and_new_checks_reuse_translations(run):
    base, out = run["base"], run["out"]
    before = (out / "pairs.parquet").stat().st_mtime_ns
    proc = pair(base, "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert report["tasks"] == {"computed": 0, "cached": 3}
    assert report["written"] is False
    assert (out / "pairs.parquet").stat().st_mtime_ns == before

    make_recipe(base, min_rouge=0.0)
    proc = pair(base, "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    assert report["tasks"] == {"computed": 1, "cached": 2}
    stats = report["stats"]["corpora"]["toy"]["rtt"]
    assert stats.get("translations_made") == 0, stats
    assert stats["translations_cached"] == 10
    assert "rtt_drift" not in stats["dropped"]
    again = pd.read_parquet(out / "pairs.parquet")
    same = again[again["method"] != "rtt"]
    assert same["pair_id"].tolist() == run["pairs"].query("method != 'rtt'")["pair_id"].tolist()


def test_input_without_manifest_is_a_clear_error(run, tmp_path):
    (tmp_path / "sentences.parquet").write_bytes(b"")
    proc = pair(run["base"], "--out", str(tmp_path / "o"), "--input", str(tmp_path))
    assert proc.returncode == 2
    assert "no manifest.json" in proc.stderr and "benchforge ingest" in proc.stderr


def test_metadata_pairs_caps_and_seed():
    groups = pd.Series([0] * 4 + [1] * 4 + [2] * 3 + [3])
    topics = pd.Series(["a"] * 8 + ["b"] * 4)
    drawn = metadata_pairs(groups, topics, similar_per_group=2, dissimilar_per_group=3, seed=1)
    again = metadata_pairs(groups, topics, similar_per_group=2, dissimilar_per_group=3, seed=1)
    pd.testing.assert_frame_equal(drawn, again)
    intent = drawn[drawn["method"] == "intent"]
    assert (groups[intent["i"]].to_numpy() == groups[intent["j"]].to_numpy()).all()
    assert intent.groupby(groups[intent["i"]].to_numpy()).size().to_dict() == {0: 2, 1: 2, 2: 2}
    topic = drawn[drawn["method"] == "topic"]
    assert (topics[topic["i"]].to_numpy() == topics[topic["j"]].to_numpy()).all()
    assert (groups[topic["i"]].to_numpy() != groups[topic["j"]].to_numpy()).all()
    keys = set(zip(drawn["i"], drawn["j"], strict=True))
    assert len(keys) == len(drawn) and all(i < j for i, j in keys)
    big = metadata_pairs(groups, topics, similar_per_group=100, dissimilar_per_group=0, seed=0)
    assert len(big) == 6 + 6 + 3  # every pair of each group, no more
