"""KoBEST's BoolQ, WiC and HellaSwag demos (issue 34, item 7): the seeds' simulated
writers write what each label asks, the guideline checks (2.2, 2.4, 2.5) drop exactly
the planted faults, the artifact review finds the planted cue and not after the
revision; and SentiNeg's test set as KoBEST 2.6 builds it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.families.kobest import simulate as sim
from pipelines.families.kobest.checks import CheckContext, checks_of, run_checks
from pipelines.families.kobest.negated_set import OUTCOMES, convert
from pipelines.families.kobest.prompts import prompts
from pipelines.families.kobest.review import artifact_review
from pipelines.families.kobest.rules import KobestRules
from pipelines.families.kobest.tasks import kobest_task
from pipelines.lang import language

ROOT = Path(__file__).resolve().parents[4]
KO = language("ko")
CTX = CheckContext(KO, KobestRules())


def _written(name: str, cue: int) -> pd.DataFrame:
    task = kobest_task(name)
    seeds = sim.read_seeds(ROOT / "data" / "demo" / "kobest" / f"{name}_seeds.jsonl", name)
    latent = sim.seeded_latent(
        task, prompts(task, sim.seeded_given(task, seeds, 0), 0), seeds, cue, 0
    )
    return latent.assign(**{f: latent[f"sim_{f}"] for f in task.written})


@pytest.mark.parametrize("name, cue", [("boolq", 10), ("wic", 0), ("hellaswag", 20)])
def test_seeded_writers_write_each_label_and_the_checks_drop_only_the_planted_faults(name, cue):
    task = kobest_task(name)
    items = _written(name, cue)
    counts = items["label"].value_counts()
    assert counts.max() - counts.min() <= 1  # balanced labels (KoBEST balanced its labels)
    checks = checks_of(name, task.checks)
    dropped = {
        r["item_id"]
        for r in items.to_dict("records")
        if any(a == "drop" for _, a, _ in run_checks(r, checks, CTX))
    }
    # WiC's "dictionary" seeds break 2.4's dictionary rules: a polysemy as a homonym, an
    # ambiguous context, a misspelt one (no dictionary example)
    planted = set(items.loc[items["sim_plant"].str.contains("guideline|dictionary"), "item_id"])
    assert planted and dropped == planted
    assert (items["sim_plant"].str.contains("cue")).sum() == cue
    for r in items.to_dict("records"):
        if name == "hellaswag":  # the right ending sits at the label's position
            seed = next(s for s in sim.read_seeds(
                ROOT / "data/demo/kobest/hellaswag_seeds.jsonl", name).to_dict("records")
                if s["id"] == r["seed_id"])  # fmt: skip
            assert r[f"ending_{r['label'] + 1}"].endswith(seed["ending"])
        if name == "wic":
            assert r["word"] in r["context_1"]


def test_a_wic_same_and_other_sense_pair_come_from_the_seed():
    seed = {"word": "배", "a": "배를 탔다.", "b": "배가 떠났다.", "c": "배가 불렀다."}
    task = kobest_task("wic")
    assert sim.written_for(task, seed, 1) == {
        "context_1": "배를 탔다.",
        "context_2": "배가 떠났다.",
    }
    assert sim.written_for(task, seed, 0)["context_2"] == "배가 불렀다."


@pytest.mark.parametrize("name, cue, word", [("boolq", 10, "혹시"), ("hellaswag", 20, "결국")])
def test_the_artifact_review_finds_each_planted_cue_and_not_after_revision(name, cue, word):
    task = kobest_task(name)
    items = _written(name, cue)
    items = items[items["sim_plant"].isin(["", "cue"])].reset_index(drop=True)
    order = pd.Series(range(len(items))).sample(frac=1.0, random_state=0).tolist()
    splits = pd.DataFrame(
        {"item_id": items["item_id"], "split": ["train" if i % 10 < 7 else "dev" for i in order]}
    )
    report, carriers = artifact_review(items, splits, task, KO, 0.7, 3, 0)
    assert [c for c in report["cues"] if c["morpheme"].endswith(f":{word}")], report["cues"]
    cued = set(items.loc[items["sim_plant"] == "cue", "item_id"])
    assert set(carriers["item_id"]) & cued
    revised = items.copy()
    for i, r in revised.iterrows():
        for field, text in json.loads(r["sim_clean"]).items():
            revised.at[i, field] = text
    after, _ = artifact_review(revised, splits, task, KO, 0.7, 3, 0)
    assert not [c for c in after["cues"] if c["morpheme"].endswith(f":{word}")]


def test_a_seed_file_missing_a_field_names_the_file_and_line(tmp_path):
    bad = tmp_path / "wic.jsonl"
    bad.write_text('{"id": "w", "word": "배", "a": "배를 탔다.", "b": "", "c": "x"}\n', "utf-8")
    with pytest.raises(ValueError, match=r"wic.jsonl:1: missing \['b'\]"):
        sim.read_seeds(bad, "wic")
    with pytest.raises(ValueError, match="has no seeds"):
        sim.read_seeds(bad, "sentineg")


# ------------------------------------------------------------ SentiNeg's test set (2.6)

POSITIVE = ["영화가 정말 재미있었다.", "배우들의 연기가 훌륭했다.", "음악이 아름다웠다.",
            "결말이 감동적이었다.", "다시 보고 싶은 영화다.", "연출이 멋졌다."]  # fmt: skip
NEGATIVE = ["영화가 정말 지루했다.", "배우들의 연기가 어색했다.", "음악이 시끄러웠다.",
            "결말이 실망스러웠다.", "다시 보고 싶지 않은 영화다.", "연출이 엉성했다."]  # fmt: skip


def _sentineg(n_test: int = 2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SentiNeg items: a negated sentence of each review, its label the opposite."""
    from pipelines.families.kobest.negation import suggest

    rows = []
    for k, (text, label) in enumerate([(t, 1) for t in POSITIVE] + [(t, 0) for t in NEGATIVE]):
        rows.append({"item_id": f"s{k:02d}", "original": text,
                     "sentence": suggest(text, KO).draft, "label": 1 - label,
                     "version": 1})  # fmt: skip
    items = pd.DataFrame(rows)
    split = ["test" if k % 6 < n_test // 2 else "dev" if k % 6 == 5 else "train" for k in range(12)]
    return items, pd.DataFrame({"item_id": items["item_id"], "split": split})


def test_sentineg_test_set_moves_flipping_train_items_into_test_relabelled():
    task = kobest_task("sentineg")
    items, splits = _sentineg()
    out, out_splits, candidates, report = convert(
        items, splits, KO, checks_of("sentineg", task.checks), CTX, None, 0
    )
    train = set(splits.loc[splits["split"] == "train", "item_id"])
    assert set(candidates["item_id"]) == train  # every train item is a candidate
    assert set(candidates["outcome"]) <= set(OUTCOMES)
    assert sum(report["outcomes"].values()) == len(train)
    moved = candidates.loc[candidates["outcome"] == "converted"]
    assert len(moved) == report["converted"] > 0
    # the prediction flipped on every converted item, on no prediction_unchanged one
    assert (moved["predicted"] != moved["predicted_negated"]).all()
    same = candidates[candidates["outcome"] == "prediction_unchanged"]
    assert (same["predicted"] == same["predicted_negated"]).all()
    # items in = items out; train lost exactly what test gained
    assert len(out) == len(items) and len(out_splits) == len(splits)
    assert report["splits_after"]["test"] - report["splits_before"]["test"] == len(moved)
    assert report["splits_before"]["train"] - report["splits_after"]["train"] == len(moved)
    converted = out[out["converted_from"] != ""].set_index("converted_from")
    for r in moved.to_dict("records"):
        c = converted.loc[r["item_id"]]
        assert c["sentence"] == r["negated"] and c["label"] == 1 - r["label"]
        assert c["original"] == r["sentence"]
        split_of = dict(zip(out_splits["item_id"], out_splits["split"], strict=True))
        assert split_of[c["item_id"]] == "test"
        assert r["item_id"] not in set(out["item_id"])  # the candidate left train


def test_sentineg_test_set_honours_its_limit_and_needs_both_polarities():
    task = kobest_task("sentineg")
    items, splits = _sentineg()
    checks = checks_of("sentineg", task.checks)
    _, _, candidates, report = convert(items, splits, KO, checks, CTX, 1, 0)
    assert report["converted"] == 1
    qualified = report["outcomes"]["converted"] + report["outcomes"]["over_limit"]
    assert qualified > 1 and (candidates["outcome"] == "over_limit").sum() == qualified - 1
    from pipelines.families.kobest.negated_set import train_sentiment

    with pytest.raises(ValueError, match="both polarities"):
        train_sentiment(POSITIVE, [1] * len(POSITIVE), KO, 0)


def test_negated_test_rules_are_checked():
    with pytest.raises(ValueError, match="negated_test_items"):
        KobestRules(negated_test_items=-1)
