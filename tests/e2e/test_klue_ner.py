"""``benchforge rebuild`` of recipes/klue-ner-demo.yaml made small (issue 36): a tiny
character tagger trained on the CPU on the shipped KMOU sentences, a real Prefect run and
a real Label Studio server with the pseudo-labels pre-loaded as predictions, the
linguists' review, the PII rule, the split, the release in the Hub's and KLUE's layouts
and a true card; rerun without duplicate tasks."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
import yaml
from seqeval.metrics import f1_score
from test_rebuild import load_release, rebuild

from pipelines.annotation import annotate
from pipelines.families.klue.ner import public_figures, spans_from
from pipelines.families.klue.ner_layout import read_file
from pipelines.models.char_tagger import bio_tags

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(family_server):
    """The session's Label Studio server, shared by the family rebuilds
    (tests/conftest.py): this file's projects have names of their own."""
    return family_server


@pytest.fixture(scope="module")
def ner_rebuilt(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("klue-ner")
    recipe = yaml.safe_load((ROOT / "recipes" / "klue-ner-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((ROOT / "recipes" / corpus[key]).resolve())
        corpus["limit"] = 40 if corpus["name"] == "kmou-test" else 60
    ner = recipe["ner"]
    for key in ("train", "dev"):
        ner["tagger"][key] = str((ROOT / "recipes" / ner["tagger"][key]).resolve())
    ner["public_figures"] = str((ROOT / "recipes" / ner["public_figures"]).resolve())
    ner["tagger"]["train_limit"] = 1500
    ner["tagger"]["settings"] = {"hidden": 64, "layers": 1, "heads": 2, "intermediate": 128,
                                 "epochs": 4, "lr": 0.003}  # fmt: skip
    recipe["agreement"]["element_f1_min"] = None  # every annotation counts: seqeval check
    recipe["agreement"]["suggestion_accept_max"] = None  # (the screening is tested below)
    ner["review"]["project"] = "klue-ner-test-linguists"
    recipe["annotation"]["project"] = "klue-ner-test"
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "ner.xml")
    path = folder / "klue-ner.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    first = rebuild(path, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {
        "out": out,
        "first": first.stdout,
        "again": again.stdout,
        "recipe": recipe,
        "path": path,
    }


def test_the_tagger_pseudo_labels_and_keeps_sentences_with_entities(ner_rebuilt):
    out = ner_rebuilt["out"]
    tagger = json.loads((out / "tagger" / "tagger.json").read_text(encoding="utf-8"))
    assert (
        tagger["trained"] and tagger["train_sentences"] == 1500 and tagger["dev_sentences"] == 366
    )
    assert 0 <= tagger["dev"]["entity_f1"] <= 1 and "MODEL_CARD.md" in {
        p.name for p in (out / "tagger").iterdir()}  # fmt: skip
    info = json.loads((out / "items" / "items.json").read_text(encoding="utf-8"))
    items = pd.read_parquet(out / "items" / "items.parquet")
    rejects = pd.read_parquet(out / "items" / "rejects.parquet")
    assert len(items) + len(rejects) == info["sentences"]  # rows in = kept + dropped
    assert set(rejects["reason"]) <= {"no_pseudo_entity", "too_long"}
    assert all(spans_from(p) for p in items["pseudo"])  # every item has an entity
    for source, s in info["per_source"].items():
        assert s["kept"] == int((items["source"] == source).sum())
        assert s["keep_rate"] == round(s["kept"] / s["pseudo_labelled"], 4)


def test_label_studio_tasks_carry_the_pseudo_labels_and_are_not_duplicated(ner_rebuilt):
    out = ner_rebuilt["out"]
    assert "0 tasks created" in ner_rebuilt["again"] and "(cached)" in ner_rebuilt["again"]
    items = pd.read_parquet(out / "items" / "items.parquet").set_index("item_id")
    ls = annotate.client()
    project = annotate.find_project(ls, "klue-ner-test")
    tasks = annotate.export_tasks(ls, project.id)
    assert len(tasks) == len(items)
    predictions = {}
    for pred in ls.predictions.list(project=project.id):
        predictions.setdefault(pred.task, []).append(pred)
    for task in tasks:
        (pred,) = predictions[task["id"]]  # one prediction per task, after two runs
        spans = sorted((r["value"]["start"], r["value"]["end"], r["value"]["labels"][0])
                       for r in pred.result)  # fmt: skip
        assert spans == spans_from(items.loc[task["data"]["item_id"], "pseudo"])
        assert pred.model_version.startswith("char-tagger")
        assert "ls_prediction" not in task["data"]
    reviews = annotate.find_project(ls, "klue-ner-test-linguists")
    assert reviews.task_number == len(pd.read_parquet(out / "agree" / "gold.parquet"))


def test_span_agreement_is_seqevals_f1_over_annotator_pairs(ner_rebuilt):
    """The agreement step's entity F1 over the pulled annotations equals seqeval's
    micro F1 with one annotator of each pair as the reference."""
    out = ner_rebuilt["out"]
    agreement = json.loads((out / "agree" / "agreement.json").read_text(encoding="utf-8"))
    table = pd.read_parquet(out / "annotate" / "annotations.parquet")
    rows = table[(table["field"] == "entities") & ~table["cancelled"].astype(bool)]
    texts = pd.read_parquet(out / "items" / "items.parquet").set_index("item_id")["text"]
    assert not agreement["dropped_annotators"]  # no screening in this run
    y_a, y_b = [], []
    for item, group in rows.groupby("item_id", sort=True):
        n = len(texts[item])
        for a, b in combinations(list(group["value"]), 2):
            y_a.append(bio_tags(n, spans_from(a)))
            y_b.append(bio_tags(n, spans_from(b)))
    assert agreement["entity_f1"]["f1"] == pytest.approx(f1_score(y_a, y_b), abs=1e-4)
    assert agreement["entity_f1"]["pairs"] == len(y_a)
    assert 0 < agreement["character_alpha"] <= 1


def test_gold_is_the_reviewed_version_and_keeps_no_private_person(ner_rebuilt):
    out = ner_rebuilt["out"]
    agreed = pd.read_parquet(out / "agree" / "gold.parquet")
    gold = pd.read_parquet(out / "gold" / "gold.parquet")
    dropped = pd.read_parquet(out / "gold" / "dropped.parquet")
    info = json.loads((out / "gold" / "gold.json").read_text(encoding="utf-8"))
    assert len(gold) + sum(info["dropped"].values()) == len(agreed)
    assert set(info["dropped"]) <= {"pii", "reported_in_review", "not_reviewed",
                                    "overlapping_spans", "span_outside_text",
                                    "unknown_entity_type", "no_entity"}  # fmt: skip
    assert all(spans_from(label) for label in gold["label"])  # KLUE 3.4.1: none empty
    versions = pd.read_parquet(out / "gold" / "versions.parquet")
    reviewed = versions[versions["version"] == "reviewed"].set_index("item_id")["spans"]
    for row in gold.itertuples():
        assert row.reviewed and spans_from(row.label) == spans_from(reviewed[row.item_id])
        kinds = set(versions.loc[versions["item_id"] == row.item_id, "version"])
        assert kinds == {"pseudo", "annotation", "draft", "reviewed"}
    figures = public_figures(ROOT / "data" / "demo" / "kmou-ner" / "public_figures.txt")
    texts = pd.read_parquet(out / "items" / "items.parquet").set_index("item_id")["text"]
    for row in gold.itertuples():
        for s, e, lab in spans_from(row.label):
            assert lab != "PS" or " ".join(texts[row.item_id][s:e].split()) in figures
    pii = dropped[dropped["reason"] == "pii"]
    assert len(pii) == info["dropped"].get("pii", 0)
    for detail in pii["detail"]:  # the dropped row names the item, never the person
        assert "not on the public-figure list" in detail
    c = info["correction"]
    assert 0 <= c["correction_rate"] <= 1 and c["annotations"] > 0


def test_release_in_the_hubs_and_klues_layouts_with_a_true_card(ner_rebuilt, tmp_path):
    from pipelines.export.card_check import check_card

    out = ner_rebuilt["out"]
    splits = pd.read_parquet(out / "split" / "splits.parquet")
    assert set(splits["rule"]) == {"ner"}
    loaded = load_release(out / "dataset", tmp_path / "hf")
    train = loaded["default"]["train"]
    assert set(train.column_names) >= {"guid", "sentence", "tokens", "ner_tags", "entities"}
    for split in ("train", "dev", "test"):
        release = read_file(out / "release" / f"klue-ner-v1.1_{split}.tsv")
        records = [
            json.loads(x)
            for x in (out / "dataset" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        assert [s.guid for s in release.sentences] == [r["guid"] for r in records]
        for s, r in zip(release.sentences, records, strict=True):
            assert s.tags() == r["ner_tags"] and list(s.text) == r["tokens"]
    result = check_card(out)
    assert not result.mismatches and not result.unchecked
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    for phrase in ("KLUE Table 9", "keep rate", "correction rate", "entity F1",
                   "Review by linguists", "public figures"):  # fmt: skip
        assert phrase in card, phrase


def test_the_tagger_baseline_scores_entity_and_character_macro_f1(ner_rebuilt, tmp_path):
    """Issue 39: the character tagger fine-tuned on the release's train split, scored as
    KLUE 3.4.2 scores NER; its predictions give the same figures in ``evaluate``."""
    import shutil
    import subprocess
    import sys

    out = tmp_path / "run"
    shutil.copytree(ner_rebuilt["out"], out)
    got = subprocess.run([sys.executable, "-m", "flows.cli", "baseline", str(out), "--epochs",
                          "2"], cwd=ROOT, capture_output=True, text=True, timeout=600)  # fmt: skip
    assert got.returncode == 0, got.stdout[-2000:] + got.stderr[-2000:]
    result = json.loads((out / "baseline" / "baseline.json").read_text(encoding="utf-8"))
    test = result["splits"]["test"]
    assert set(test["metrics"]) == {"entity_macro_f1", "char_macro_f1"}
    predictions = out / "baseline" / "test.predictions.jsonl"
    ev = subprocess.run([sys.executable, "-m", "flows.cli", "evaluate", str(out), "--split",
                         "test", "--predictions", str(predictions), "--json"], cwd=ROOT,
                        capture_output=True, text=True, timeout=300)  # fmt: skip
    assert ev.returncode == 0, ev.stderr
    assert json.loads(ev.stdout)["metrics"] == test["metrics"]


def test_the_html_card_reads_without_raw_markdown(ner_rebuilt, tmp_path):
    """Issue 54: the KLUE-NER card in headless Chromium."""
    from browser import assert_card_reads_well

    assert_card_reads_well(ner_rebuilt["out"] / "dataset", "klue-ner", tmp_path)


def test_the_demos_suggestion_screening_catches_the_one_who_accepts_everything(ner_rebuilt):
    """Issue 55: the pulled rows carry the tagger's pseudo-labels as the suggestion; with
    the demo recipe's ``suggestion_accept_max`` the simulated account that submits every
    suggestion unchanged (``simulate.accepting: 1``) is screened out, and nobody else."""
    from pipelines.agreement.rules import agree
    from pipelines.agreement.settings import AgreementSettings

    out = ner_rebuilt["out"]
    table = pd.read_parquet(out / "annotate" / "annotations.parquet")
    answers = table[(table["field"] == "entities") & ~table["cancelled"].astype(bool)]
    items = pd.read_parquet(out / "items" / "items.parquet").set_index("item_id")
    pseudo = answers["item_id"].map(items["pseudo"])
    assert answers["suggested"].notna().all()
    assert [sorted(spans_from(s)) for s in answers["suggested"]] == [
        sorted(spans_from(p)) for p in pseudo
    ]
    demo = yaml.safe_load((ROOT / "recipes" / "klue-ner-demo.yaml").read_text(encoding="utf-8"))
    settings = AgreementSettings(**{**demo["agreement"], "element_f1_min": None})
    result = agree(table, settings)
    screened = result["dropped"][result["dropped"]["reason"] == "accepts_suggestions"]
    accepting = next(r for r in result["figures"]["suggestions"] if r.get("screened"))
    assert list(screened["id"]) == [accepting["annotator_id"]]
    assert accepting["accepted_share"] == 1.0 and accepting["unchanged_share"] == 1.0
    others = [r for r in result["figures"]["suggestions"]
              if r["annotator_id"] not in ("overall", accepting["annotator_id"])]  # fmt: skip
    assert others and max(r["accepted_share"] for r in others) < 0.95


def test_annotate_status_shows_every_round_with_progress_and_acceptance(ner_rebuilt):
    """Issue 55, item 5: ``benchforge annotate status --recipe`` is the project manager's
    view: per round of the run, its progress and, per annotator, time per task,
    agreement so far and suggestion acceptance, as JSON and as a table."""
    import subprocess
    import sys

    def status(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "flows.cli", "annotate", "status", "--recipe",
             str(ner_rebuilt["path"]), "--out", str(ner_rebuilt["out"]), *extra],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    got = status("--json")
    assert got.returncode == 0, got.stderr[-2000:]
    rounds = {r["round"]: r for r in json.loads(got.stdout)["rounds"]}
    assert set(rounds) == {"main", "linguists"}
    main = rounds["main"]
    assert main["state"] == "done" and main["complete"] == main["tasks"] > 0
    people = main["annotators"]
    assert all(p["done"] > 0 and p["median_seconds"] is not None for p in people)
    assert all(p["majority_share"] is not None for p in people)
    accepted = sorted(p["suggestions_accepted"] for p in people)
    assert accepted[-1] == 1.0 and accepted[-2] < 0.95  # the one who accepts everything
    table = status()
    assert table.returncode == 0 and "main (klue-ner-test): done" in table.stdout
    assert "suggestions_accepted" in table.stdout
