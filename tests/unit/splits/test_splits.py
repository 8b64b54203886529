"""Split rules on realistic data: real Korean sentences (ParaKQC) paired with labels."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.splits.annotation_artifacts import artifact_report
from pipelines.splits.base import SplitError, SplitSettings, units
from pipelines.splits.run import split_items

ROOT = Path(__file__).resolve().parents[3]
PARAKQC = ROOT / "data" / "demo" / "parakqc" / "paraKQC_v1.txt"


def utterances() -> list[str]:
    lines = PARAKQC.read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[-1].strip() for line in lines if line.strip()]


def sts_items(n: int = 900, seed: int = 0) -> pd.DataFrame:
    """Pairs of real utterances; labels skewed towards low scores, as raw STS pools are;
    three sources of different sizes; a document id shared by some pairs."""
    texts = utterances()
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        a = texts[(i * 11) % len(texts)]
        same = rng.random() < 0.35
        b = texts[(i * 11 + 1) % len(texts)] if same else texts[(i * 7919 + 3) % len(texts)]
        label = rng.uniform(3.5, 5) if same else rng.beta(0.8, 4) * 5
        rows.append(
            {
                "item_id": f"p{i:04d}",
                "sentence1": a,
                "sentence2": b,
                "label": round(float(label), 1),
                "source": ["nsmc", "parakqc", "news"][0 if i % 10 < 5 else 1 if i % 10 < 8 else 2],
                # a fifth of the pairs come two from one source document
                "doc": f"d{i // 2}" if i % 10 < 2 else f"s{i}",
            }
        )
    return pd.DataFrame(rows)


def settings(**kw) -> SplitSettings:
    return SplitSettings(rule="sts", group_columns=["doc"], **kw)


@pytest.fixture(scope="module")
def split():
    items = sts_items()
    return items, split_items(items, settings())


def test_eval_bins_are_near_uniform(split):
    items, out = split
    labels = items.set_index("item_id")["label"]
    ev = out[out["split"] != "train"]
    per_bin = ev["score_bin"].value_counts()
    pool_bins = set((items["label"] * 10).round().astype(int))
    assert len(per_bin) == len(pool_bins)  # every bin of the pool is represented
    # far flatter than the pool, which is skewed towards low scores
    pool = (labels * 10).round().astype(int).value_counts()
    assert per_bin.std() / per_bin.mean() < 0.5 * pool.std() / pool.mean()
    assert per_bin.max() <= 3 * per_bin.median()
    assert len(ev) == pytest.approx(0.15 * len(items), abs=6)


def test_dev_test_ratio_and_binary_label(split):
    items, out = split
    counts = out["split"].value_counts()
    assert counts["test"] / counts["dev"] == pytest.approx(2.0, rel=0.15)
    merged = out.merge(items, on="item_id")
    assert (merged["binary_label"] == (merged["label"] >= 3.0).astype(int)).all()


def test_groups_never_straddle_splits(split):
    items, out = split
    merged = out.merge(items[["item_id", "doc"]], on="item_id")
    assert (merged.groupby("doc")["split"].nunique() == 1).all()


def test_near_duplicates_never_straddle_splits():
    items = sts_items(300)
    # plant near copies of train-bound sentences in other pairs
    items.loc[150, "sentence2"] = items.loc[10, "sentence1"] + "!!"
    items.loc[220, "sentence1"] = items.loc[10, "sentence1"]
    unit = units(items, settings())
    assert unit[150] == unit[10] == unit[220]
    out = split_items(items, settings())
    assert out.loc[[10, 150, 220], "split"].nunique() == 1


def test_overlap_preference_within_bins(split):
    items, out = split
    ev = out[out["split"] != "train"]
    tr = out[out["split"] == "train"]
    high_ev = ev[ev["score_bin"] >= 3.0]["morpheme_overlap"].mean()
    high_tr = tr[tr["score_bin"] >= 3.0]["morpheme_overlap"].mean()
    low_ev = ev[ev["score_bin"] < 3.0]["morpheme_overlap"].mean()
    low_tr = tr[tr["score_bin"] < 3.0]["morpheme_overlap"].mean()
    assert high_ev < high_tr  # similar pairs in dev/test share fewer morphemes
    assert low_ev > low_tr  # dissimilar pairs in dev/test share more


def test_sources_keep_their_share(split):
    items, out = split
    merged = out.merge(items[["item_id", "source"]], on="item_id")
    share_all = merged["source"].value_counts(normalize=True)
    share_ev = merged[merged["split"] != "train"]["source"].value_counts(normalize=True)
    for source in share_all.index:
        assert share_ev[source] == pytest.approx(share_all[source], abs=0.05)


def test_same_seed_same_split_other_seed_other_split():
    items = sts_items(300)
    a = split_items(items, settings(seed=3))
    b = split_items(items, settings(seed=3))
    c = split_items(items, settings(seed=4))
    pd.testing.assert_frame_equal(a, b)
    assert (a["split"] != c["split"]).any()


def test_report_finds_a_planted_cue_word():
    items = sts_items(600)
    rng = np.random.default_rng(1)
    high = items["label"] >= 3.0
    plant = high & (rng.random(len(items)) < 0.8)
    items.loc[plant, "sentence2"] = "진짜로 " + items.loc[plant, "sentence2"]
    out = split_items(items, settings())
    report = artifact_report(items, out, ["sentence1", "sentence2"])
    skewed = {r["morpheme"]: r for r in report["train"]["cues"]["skewed"]}
    assert "진짜" in skewed and skewed["진짜"]["label"] == "high"
    top_high = [r["morpheme"] for r in report["train"]["cues"]["pmi"]["high"][:5]]
    assert "진짜" in top_high
    # a last-column-only model now beats the majority baseline: the cue is a shortcut
    only = report["last_column_only"]
    assert only["accuracy"] > only["majority_baseline"]


def test_bad_input_and_cli(tmp_path):
    items = sts_items(120)
    with pytest.raises(SplitError, match="label must be a number in 0-5"):
        split_items(items.assign(label=7.0), settings())
    with pytest.raises(SplitError, match="no column"):
        split_items(items.drop(columns=["doc"]), settings())
    gold = items[["item_id", "label"]]
    gold.to_parquet(tmp_path / "gold.parquet")
    items.drop(columns=["label"]).to_json(
        tmp_path / "items.jsonl", orient="records", lines=True, force_ascii=False
    )
    cmd = [sys.executable, "-m", "flows.cli", "split", str(tmp_path / "gold.parquet"),
           "--items", str(tmp_path / "items.jsonl"), "--rule", "sts", "--group", "doc",
           "--out", str(tmp_path / "out"), "--json"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["written"] and sum(result["splits"].values()) == 120
    saved = pd.read_parquet(tmp_path / "out" / "splits.parquet")
    assert list(saved.columns[:4]) == ["item_id", "split", "rule", "reason"]
    md = (tmp_path / "out" / "artifacts.md").read_text(encoding="utf-8")
    assert "Last-column-only classifier" in md and "## dev+test" in md
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert json.loads(again.stdout)["written"] is False
    missing = subprocess.run(
        [*cmd[:4], str(tmp_path / "nope.parquet"), *cmd[5:]], cwd=ROOT, capture_output=True,
        text=True,
    )  # fmt: skip
    assert missing.returncode == 2 and "nope.parquet: file not found" in missing.stderr


def test_a_list_group_value_joins_every_group_it_names():
    """A JSTS-B pair of two images is in both images' groups (issue 21)."""
    items = pd.DataFrame({
        "item_id": ["a", "b", "c", "d"],
        "sentence1": ["犬が走っている。", "猫が寝ている。", "空が青い。", "海が広い。"],
        "sentence2": ["鳥が飛んでいる。", "車が止まっている。", "山が高い。", "川が流れる。"],
        "images": [["1"], ["1", "2"], ["2"], ["3"]],
    })  # fmt: skip
    got = units(items, SplitSettings(rule="random", group_columns=["images"]))
    assert got[0] == got[1] == got[2] and got[3] != got[0]


def test_a_span_set_gold_gets_no_label_and_cue_tables():
    """Issue 54: KLUE-NER's gold is a span set per sentence; read as one label per item
    it filled the card with PMI lines of JSON strings."""
    import json

    from pipelines.splits.annotation_artifacts import artifact_report, report_markdown

    spans = [json.dumps([{"start": 0, "end": 2, "label": lab, "text": "서울"}], ensure_ascii=False)
             for lab in ("LC", "OG", "PS", "LC")]  # fmt: skip
    items = pd.DataFrame({"item_id": list("abcd"), "text": ["서울에", "서울은", "서울로", "서울"],
                          "label": spans})  # fmt: skip
    splits = pd.DataFrame({"item_id": list("abcd"), "split": ["train", "train", "dev", "test"]})
    report = artifact_report(items, splits, ["text"])
    assert report["structured"] and "train" not in report and "last_column_only" not in report
    md = report_markdown(report, "random")
    assert "span sets" in md and "PMI" not in md and "| dev | 1 |" in md
