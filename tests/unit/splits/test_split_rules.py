"""The nli, tc and ner split rules on real Korean text: ParaKQC paraphrases as NLI pairs
with a planted cue word, NSMC reviews with their real dates, news titles with the
programme and people names they quote."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.splits.base import SplitError, SplitSettings
from pipelines.splits.ner import entity_set
from pipelines.splits.run import split_with_figures

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "data" / "demo"
SOURCES = [("wikinews", "formal"), ("policy", "formal"), ("wikipedia", "formal"),
           ("nsmc", "colloquial"), ("airbnb", "colloquial")]  # fmt: skip
CUE = "절대"
# a small, quick hypothesis-only model for tests (the default is larger)
TINY = {"hidden": 64, "layers": 1, "heads": 2, "intermediate": 128, "epochs": 8,
        "vocab_size": 2000, "lr": 3e-3, "batch_size": 32}  # fmt: skip


def nli_items(premises: int = 250, seed: int = 0) -> pd.DataFrame:
    """Premise + three hypotheses per ParaKQC intent: all three are real paraphrases of
    the premise, so the hypothesis alone cannot tell the label; except that in every
    third set the contradiction carries a planted cue word (an annotation artifact)."""
    lines = (DEMO / "parakqc" / "paraKQC_v1.txt").read_text(encoding="utf-8").splitlines()
    texts = [line.split("\t")[-1].strip() for line in lines if line.strip()]
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(premises):
        g = p * 10  # ParaKQC: ten paraphrases per intent
        hyps = [texts[g + 1 + k] for k in rng.permutation(9)[:3]]
        planted = p % 3 == 0
        if planted:
            hyps[2] = f"{CUE} {hyps[2]}"
        source, style = SOURCES[p % len(SOURCES)]
        for label, hyp in zip(("entailment", "neutral", "contradiction"), hyps, strict=True):
            rows.append({"item_id": f"n{p:04d}{label[0]}", "premise": texts[g],
                         "hypothesis": hyp, "label": label, "source": source, "style": style,
                         "planted": planted})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def nli():
    items = nli_items()
    out, figures = split_with_figures(
        items, SplitSettings(rule="nli", hypothesis_model=dict(TINY), seed=0)
    )
    return items, out.merge(items, on="item_id"), figures


def test_nli_keeps_planted_cue_sets_out_of_dev_test(nli):
    items, merged, figures = nli
    planted = merged[merged["planted"]]
    clean = merged[~merged["planted"]]
    # the cross-fitted classifier is more confident on the sets with the cue ...
    assert planted["set_ce"].mean() > clean["set_ce"].mean()
    # ... so (nearly) none of them is eligible, and dev/test is made of the others
    ev = merged[merged["split"] != "train"]
    assert len(ev) == pytest.approx(0.15 * len(items), abs=3)
    assert ev["planted"].mean() < 0.1 < planted.shape[0] / merged.shape[0]
    assert ev["eligible"].all()
    hyp = figures["hypothesis_only"]
    assert hyp["uniform_ce"] == pytest.approx(np.log(3), abs=1e-4)
    assert hyp["accuracy_train"] > hyp["majority_baseline_dev_test"]


def test_nli_ranks_by_the_strongest_partial_input_model(nli):
    """Issue 34 item 6: the rule trains the BERT and a bag-of-morphemes model on the same
    folds and ranks by the one with the higher out-of-fold accuracy; both are reported.
    The planted cue word is a bag-of-morphemes shortcut, so that model wins here and
    its confident sets are the ones kept out of dev/test."""
    items, merged, figures = nli
    models = figures["partial_input_models"]
    assert set(models) == {"bert", "bow"}
    chosen = figures["hypothesis_only"]["chosen"]
    assert models[chosen]["accuracy_all"] == max(m["accuracy_all"] for m in models.values())
    assert figures["hypothesis_only"]["accuracy_all"] == models[chosen]["accuracy_all"]
    # a bag of morphemes alone, on the same folds: what the rule reported for it
    from pipelines.lang import language
    from pipelines.models.hypothesis_only import cross_fitted_bag_of_words
    from pipelines.splits.base import units

    settings = SplitSettings(rule="nli", hypothesis_model=dict(TINY), seed=0)
    unit = units(items, settings)
    probs, names = cross_fitted_bag_of_words(
        [language().morphemes(h) for h in items["hypothesis"]], items["label"].tolist(),
        unit.tolist(), settings.folds, settings.seed)  # fmt: skip
    acc = float((np.array(names)[probs.argmax(axis=1)] == items["label"].to_numpy()).mean())
    assert models["bow"]["accuracy_all"] == pytest.approx(acc, abs=1e-4)
    with pytest.raises(SplitError, match="partial_models"):
        SplitSettings(rule="nli", partial_models=["svm"])


def test_nli_premise_sets_never_split_and_dev_test_halves(nli):
    _, merged, _ = nli
    assert (merged.groupby("premise")["split"].nunique() == 1).all()
    counts = merged["split"].value_counts()
    assert abs(counts["dev"] - counts["test"]) <= 3  # KLUE-NLI: dev and test of equal size


def test_nli_source_quotas(nli):
    _, merged, figures = nli
    ev = merged[merged["split"] != "train"]
    quotas = figures["source_quotas"]
    assert quotas["nsmc"] == pytest.approx(0.4 * figures["target"] / 2)  # 40% colloquial
    assert quotas["policy"] == pytest.approx(0.6 * figures["target"] / 3)  # 60% formal
    per_source = ev["source"].value_counts()
    for source, quota in quotas.items():
        if per_source.get(source, 0) < quota - 3:
            # a source short of its quota had no eligible premise set left over
            left = merged[(merged["source"] == source) & merged["eligible"]]
            assert (left["split"] != "train").all(), source
        else:
            assert per_source[source] <= quota + 6
    style = ev["style"].value_counts(normalize=True)
    short = sum(max(0, q - per_source.get(s, 0)) for s, q in quotas.items())
    assert style["formal"] == pytest.approx(0.6, abs=0.05 + short / len(ev))


def test_nli_same_seed_same_split():
    items = nli_items(60)
    settings = SplitSettings(rule="nli", hypothesis_model={**TINY, "epochs": 2}, folds=3)
    a, _ = split_with_figures(items, settings)
    b, _ = split_with_figures(items, settings)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(SplitError, match="two labels or more"):
        split_with_figures(items.assign(label="entailment"), settings)


def nsmc_items() -> pd.DataFrame:
    with gzip.open(DEMO / "nsmc" / "reviews.sample3000.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    frame = pd.DataFrame(rows)
    return pd.DataFrame(
        {
            "item_id": "r" + frame["review_id"].astype(str),
            "title": frame["review"],
            # NSMC dates are YY.MM.DD
            "date": pd.to_datetime(frame["date"], format="%y.%m.%d").dt.strftime("%Y-%m-%d"),
            "label": np.where(frame["rating"].astype(int) >= 6, "positive", "negative"),
            "movie": frame["movie_id"],
        }
    )


def test_tc_by_date_with_groups():
    items = nsmc_items()
    out, figures = split_with_figures(items, SplitSettings(rule="tc", group_columns=["movie"]))
    merged = out.merge(items[["item_id", "movie"]], on="item_id")
    ev = merged[merged["split"] != "train"]
    tr = merged[merged["split"] == "train"]
    assert len(ev) >= 0.15 * len(items) - 1
    # every dev/test unit is dated on or after the cutoff; train's units before it (a
    # movie's reviews stay together and take their latest date)
    latest = merged.groupby("unit")["date"].max()
    assert (latest[ev["unit"].unique()] >= figures["cutoff"]).all()
    assert (latest[tr["unit"].unique()] < figures["cutoff"]).all()
    assert (merged.groupby("movie")["split"].nunique() == 1).all()
    counts = ev["split"].value_counts()
    assert abs(counts["dev"] - counts["test"]) <= merged.groupby("unit").size().max()
    shares = figures["unseen_term_share"]
    assert 0 <= shares["dev+test"] <= 1


def test_tc_explicit_cutoff_adds_units_with_unseen_terms():
    items = nsmc_items()
    late = sorted(items["date"])[-50]  # only ~50 items on or after it
    out, figures = split_with_figures(items, SplitSettings(rule="tc", cutoff=late))
    ev = out[out["split"] != "train"]
    assert len(ev) == pytest.approx(0.15 * len(items), abs=1)
    added = ev[ev["date"] < late]
    assert len(added) == figures["dev_test_added_for_unseen_terms"] > 300
    assert added["reason"].str.contains("terms found in no other unit").all()
    # what was added brings terms unseen in train far more often than train items do
    shares = figures["unseen_term_share"]
    assert shares["dev+test"] > shares["train (against the rest of train)"] + 0.2
    with pytest.raises(SplitError, match="is not a date"):
        split_with_figures(items.assign(date="어제"), SplitSettings(rule="tc"))


def test_tc_undated_items_go_by_unseen_terms_only():
    items = nsmc_items().drop(columns="date").head(800)
    settings = SplitSettings(rule="tc", date_column=None, group_columns=["movie"])
    out, figures = split_with_figures(items, settings)
    ev = out[out["split"] != "train"]
    assert figures["dated"] is False and figures["cutoff"] is None
    assert len(ev) == pytest.approx(0.15 * len(items), abs=int(out.groupby("unit").size().max()))
    assert ev["reason"].str.startswith("undated, added for terms found in no other unit").all()
    assert (out.loc[out["split"] == "train", "reason"] == "undated").all()
    shares = figures["unseen_term_share"]
    assert shares["dev+test"] > shares["train (against the rest of train)"]
    with pytest.raises(SplitError, match="no column"):
        split_with_figures(items, SplitSettings(rule="tc"))  # dated by default


def news_items() -> pd.DataFrame:
    """News titles; their entities: what they quote ('아스달 연대기', “...”) and the
    name before a comma, as a realistic stand-in for annotated spans."""
    rows = []
    for part in ("train", "dev"):
        path = DEMO / "korean-hate-speech" / "news_title" / f"{part}.news_title.txt"
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            title = line.strip().strip('"')
            ents = re.findall(r"['‘]([^'’]{2,20})['’]", title)
            head = re.match(r"^(?:\[[^\]]*\]\s*)?([가-힣]{2,4}),", title)
            if head:
                ents.append(head.group(1))
            spans = [{"text": e, "labels": ["OG"]} for e in ents]
            if title:
                rows.append({"item_id": f"{part}{i}", "sentence": title, "entities": spans})
    return pd.DataFrame(rows)


def test_ner_test_holds_unseen_entities():
    items = news_items()
    out, figures = split_with_figures(items, SplitSettings(rule="ner"))
    parts = out["split"].value_counts()
    assert parts["test"] == pytest.approx(parts["dev"], abs=10)
    ents = [entity_set(e, i) for e, i in zip(items["entities"], items["item_id"], strict=True)]
    train_ents = set().union(*[e for e, s in zip(ents, out["split"], strict=True) if s == "train"])
    test_has_unseen = [bool(e - train_ents) for e, s in zip(ents, out["split"], strict=True)
                       if s == "test"]  # fmt: skip
    assert np.mean(test_has_unseen) >= 0.5  # unseen_test_share
    assert figures["items_with_unseen_entity"]["test"] == pytest.approx(
        np.mean(test_has_unseen), abs=1e-4
    )
    # more than a random split would give: dev is drawn at random
    assert figures["items_with_unseen_entity"]["test"] > figures["items_with_unseen_entity"]["dev"]


def test_ner_per_source_gives_each_source_its_eval_fraction():
    """KLUE 3.4.1 splits each source: with per_source the dev+test targets are each
    source's eval_fraction of its items; novelty stays global."""
    items = news_items().head(300).copy()
    items["source"] = ["big"] * 240 + ["small"] * 60
    out, figures = split_with_figures(items, SplitSettings(rule="ner", per_source=True))
    per = figures["per_source"]
    assert sum(v["items"] for v in per.values()) == len(items)  # a unit counts for one source
    assert per["small"]["items"] <= 60 + 5 and per["big"]["items"] >= 240 - 5
    for v in per.values():
        assert v["target"] == round(0.15 * v["items"])  # each source's eval_fraction
        assert 0 <= v["target"] - (v["test"] + v["dev"]) <= 2  # multi-item units stop short
    plain, plain_figures = split_with_figures(items, SplitSettings(rule="ner"))
    assert "per_source" not in plain_figures
    with pytest.raises(SplitError, match="per_source: no source column"):
        split_with_figures(items.drop(columns=["source"]),
                           SplitSettings(rule="ner", per_source=True))  # fmt: skip


def test_entity_formats_and_errors():
    assert entity_set('["서울", {"text": " 송중기 "}]', "a") == {"서울", "송중기"}
    assert entity_set(["KBS", "kbs"], "a") == {"kbs"}
    assert entity_set(None, "a") == set()
    with pytest.raises(SplitError, match="item 'x': entities .* is not JSON"):
        entity_set("[서울", "x")
    with pytest.raises(SplitError, match="has no text"):
        entity_set([{"start": 1}], "x")


def test_cli_tc_and_ner(tmp_path):
    items = nsmc_items().head(400)
    items.to_parquet(tmp_path / "tc.parquet")
    cmd = [sys.executable, "-m", "flows.cli", "split", str(tmp_path / "tc.parquet"),
           "--rule", "tc", "--group", "movie", "--out", str(tmp_path / "tc"), "--json"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["rule_figures"]["cutoff"] and sum(result["splits"].values()) == 400
    md = (tmp_path / "tc" / "artifacts.md").read_text(encoding="utf-8")
    assert "What the `tc` rule measured" in md and "## dev+test" in md
    ner = news_items().head(300)
    ner["entities"] = ner["entities"].map(lambda e: json.dumps(e, ensure_ascii=False))
    ner.to_csv(tmp_path / "ner.csv", index=False)
    cmd = [sys.executable, "-m", "flows.cli", "split", str(tmp_path / "ner.csv"),
           "--rule", "ner", "--out", str(tmp_path / "ner")]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    saved = pd.read_parquet(tmp_path / "ner" / "splits.parquet")
    assert set(saved["split"]) == {"train", "dev", "test"}
    nli = [c if c != "ner" else "nli" for c in cmd]  # style shares are the nli rule's
    bad = subprocess.run([*nli, "--style-shares", "formal"], cwd=ROOT, capture_output=True,
                         text=True)  # fmt: skip
    assert bad.returncode == 2 and "--style-shares: expected KEY=VALUE" in bad.stderr
