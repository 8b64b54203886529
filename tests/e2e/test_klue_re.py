"""``benchforge rebuild`` of recipes/klue-re-demo.yaml made small (issue 36): two tiny
taggers trained on the CPU on the KMOU corpus's two releases, KB-based and uniform
pairs, a real pilot round in Label Studio that excludes the simulated worker who cannot
do the task, the relation round with candidates first, the majority, the KLUE-RE layout
loaded by ``datasets`` and a true card; rerun without duplicate tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_rebuild import load_release, rebuild

from pipelines.annotation import annotate
from pipelines.families.klue.relations import candidates_for, relation_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(family_server):
    """The session's Label Studio server, shared by the family rebuilds
    (tests/conftest.py): this file's projects have names of their own."""
    return family_server


@pytest.fixture(scope="module")
def re_rebuilt(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("klue-re")
    recipe = yaml.safe_load((ROOT / "recipes" / "klue-re-demo.yaml").read_text(encoding="utf-8"))
    here = ROOT / "recipes"
    for corpus in recipe["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((here / corpus[key]).resolve())
    spec = recipe["re"]
    for tagger in spec["taggers"]:
        tagger["train"] = str((here / tagger["train"]).resolve())
        tagger["dev"] = str((here / tagger["dev"]).resolve())
        tagger["train_limit"] = 1200
        tagger["settings"] = {"hidden": 64, "layers": 1, "heads": 2, "intermediate": 128,
                              "epochs": 3, "lr": 0.003}  # fmt: skip
    spec["kb"] = str((here / spec["kb"]).resolve())
    spec["pairs"] = 40
    ann = recipe["annotation"]
    ann["config"] = str(ROOT / "annotation_configs" / "re.xml")
    ann["project"] = "klue-re-test"
    ann["pilot"]["gold"] = str((here / ann["pilot"]["gold"]).resolve())
    ann["pilot"]["project"] = "klue-re-test-pilot"
    path = folder / "klue-re.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    first = rebuild(path, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "first": first.stdout, "again": again.stdout}


def test_two_taggers_unioned_and_pairs_sampled_with_every_row_accounted(re_rebuilt):
    out = re_rebuilt["out"]
    taggers = json.loads((out / "taggers" / "taggers.json").read_text(encoding="utf-8"))
    assert set(taggers) == {"kmou-2016", "kmou-morph"}
    assert all(t["trained"] and t["types"] == ["PER", "ORG", "LOC", "DAT", "POH", "NOH"]
               for t in taggers.values())  # fmt: skip
    cands = json.loads((out / "candidates" / "candidates.json").read_text(encoding="utf-8"))
    kept = pd.read_parquet(out / "candidates" / "sentences.parquet")
    rejects = pd.read_parquet(out / "candidates" / "rejects.parquet")
    assert len(kept) + len(rejects) == cands["sentences"]
    for ents in kept["entities"]:
        spans = json.loads(ents)
        assert len(spans) >= 2 and any(t in ("PER", "ORG") for _, _, t in spans)
    info = json.loads((out / "items" / "items.json").read_text(encoding="utf-8"))
    items = pd.read_parquet(out / "items" / "items.parquet")
    dropped = pd.read_parquet(out / "items" / "rejects.parquet")
    assert len(items) + len(dropped) == info["pairs_possible"] and len(items) <= 40
    assert info["kb"] + info["uniform"] == len(items) and info["kb"] <= 20
    assert set(items["subject_type"]) <= {"PER", "ORG"}
    schema = relation_schema()
    for row in items.itertuples():
        assert row.sentence[row.subject_start : row.subject_end] == row.subject
        options = [o.get("alias") or o["value"] for o in row.relation_options]
        assert options == [*candidates_for(row.subject_type, row.object_type, schema),
                           "no_relation", "other"]  # fmt: skip


def test_the_pilot_excludes_the_worker_who_cannot_do_the_task(re_rebuilt):
    out = re_rebuilt["out"]
    qual = json.loads((out / "pilot" / "qualification.json").read_text(encoding="utf-8"))
    assert qual["rule"] == "min_correct" and qual["threshold"] == 4 and qual["of"] == 5
    failed = {a["annotator_id"] for a in qual["annotators"] if not a["passed"]}
    assert len(failed) == 1 and qual["passed"] == qual["applicants"] - 1
    (loser,) = [a for a in qual["annotators"] if not a["passed"]]
    assert loser["correct"] < 4
    agreement = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    assert agreement["dropped_annotators"] == {"not_qualified": 1}
    excluded = pd.read_parquet(out / "agree" / "excluded_annotations.parquet")
    assert set(excluded["annotator_id"].astype(str)) == failed
    votes = pd.read_parquet(out / "annotate" / "votes.parquet")
    counted = votes[~votes["annotation_id"].isin(set(excluded["annotation_id"]))]
    assert not set(counted["annotator_id"].astype(str)) & failed
    assert "0 tasks created" in re_rebuilt["again"]
    ls = annotate.client()
    items = pd.read_parquet(out / "items" / "items.parquet")
    assert annotate.find_project(ls, "klue-re-test").task_number == len(items)
    assert annotate.find_project(ls, "klue-re-test-pilot").task_number == 5


def test_release_in_the_klue_re_layout_with_a_true_card(re_rebuilt, tmp_path):
    from pipelines.export.card_check import check_card

    out = re_rebuilt["out"]
    loaded = load_release(out / "dataset", tmp_path / "hf")
    labels = {r["label"] for r in relation_schema()}
    for split in loaded["default"].values():
        decode = (
            split.features["label"].int2str
            if hasattr(split.features["label"], "int2str")
            else (lambda x: x)
        )  # a ClassLabel on the Hub (issue 54); the files hold names
        for rec in split:
            rec = {**rec, "label": decode(rec["label"])}
            for side in ("subject_entity", "object_entity"):
                e = rec[side]
                assert rec["sentence"][e["start_idx"] : e["end_idx"] + 1] == e["word"]
            assert rec["subject_entity"]["type"] in ("PER", "ORG") and rec["label"] in labels
    mix = json.loads((out / "agree" / "mix.json").read_text(encoding="utf-8"))
    gold = pd.read_parquet(out / "agree" / "gold.parquet")
    assert mix["gold_pairs"] == len(gold) and sum(mix["relations"].values()) == len(gold)
    result = check_card(out)
    assert not result.mismatches and not result.unchecked
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    for phrase in ("KB-based", "uniform", "no_relation", "written by hand", "show all",
                   "4 of 5", "not_qualified"):  # fmt: skip
        assert phrase in card, phrase


def test_the_html_card_reads_without_raw_markdown(re_rebuilt, tmp_path):
    """Issue 54: the KLUE-RE card in headless Chromium."""
    from browser import assert_card_reads_well

    assert_card_reads_well(re_rebuilt["out"] / "dataset", "klue-re", tmp_path)
