"""``benchforge rebuild`` end to end for the KoBBQ, JGLUE (JSTS, JNLI) and KoBEST
families: small rebuilds from the shipped data through a real Prefect run and a real
Label Studio server, checked against their stage outputs. (Kept apart from
``test_rebuild.py`` so that the two test workers share the rebuilds.)"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_rebuild import load_release, rebuild

from pipelines.annotation import annotate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(family_server):
    """The session's Label Studio server, shared by the family rebuilds
    (tests/conftest.py): this file's projects have names of their own."""
    return family_server


@pytest.fixture(scope="module")
def kobbq_rebuilt(server, tmp_path_factory):
    """recipes/kobbq-demo.yaml made small: one survey question per category asked of 3
    simulated respondents, the reading check on one template of 2 categories."""
    folder = tmp_path_factory.mktemp("kobbq")
    recipe = yaml.safe_load((ROOT / "recipes" / "kobbq-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        if corpus.get("license_file"):
            corpus["license_file"] = str((ROOT / "recipes" / corpus["license_file"]).resolve())
    k = recipe["kobbq"]
    k["survey"] = str((ROOT / "recipes" / k["survey"]).resolve())
    k["templates_stage"] = "before-survey"  # the group roles choose the fillers
    k["survey_round"] = {"per_category": 1, "respondents": 3, "project": "kobbq-test-survey",
                         "simulate": {"annotators": 3, "seed": 0}}  # fmt: skip
    k["check_round"] = {"per_category": 1, "respondents": 2, "project": "kobbq-test-check",
                        "simulate": {"annotators": 2, "seed": 0}}  # fmt: skip
    path = folder / "kobbq.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    first = rebuild(path, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "first": first.stdout, "again": again.stdout}


def test_kobbq_rounds_feed_the_survey_rules_without_duplicate_tasks(kobbq_rebuilt):
    out = kobbq_rebuilt["out"]
    assert "0 tasks created" in kobbq_rebuilt["again"] and "(cached)" in kobbq_rebuilt["again"]
    ls = annotate.client()
    for name, per_task in (("survey", 3), ("check", 2)):
        items = pd.read_parquet(out / f"{name}-round" / "items.parquet")
        project = annotate.find_project(ls, f"kobbq-test-{name}")
        assert project.task_number == len(items)  # no duplicate after the rerun
        votes = pd.read_parquet(out / "annotate" / f"{name}.parquet")
        done = votes[~votes["cancelled"] & (votes["field"] == "answer")]
        assert (done.groupby("item_id").size() == per_task).all()
    items = pd.read_parquet(out / "survey-round" / "items.parquet")
    assert items["category"].nunique() == 12 and len(items) == 12
    survey = json.loads((out / "survey" / "survey.json").read_text(encoding="utf-8"))
    assert survey["round"]["questions"] == 12 and survey["round"]["respondents"] == 36
    got = pd.read_parquet(out / "survey" / "round_targets.parquet")
    assert (got["respondents"] == 3).all() and set(got["question_id"]) == set(items["item_id"])


def test_kobbq_export_layout_targets_and_card(kobbq_rebuilt, tmp_path):
    import datasets

    out = kobbq_rebuilt["out"]
    folder = out / "dataset"
    expand = json.loads((out / "expand" / "expand.json").read_text(encoding="utf-8"))
    samples = pd.read_parquet(out / "expand" / "samples.parquet")
    dropped = pd.read_parquet(out / "expand" / "dropped.parquet")
    assert len(samples) + len(dropped) == expand["samples_all"] == 76568  # before-survey
    assert len(dropped) and dropped["reason"].str.startswith("survey:").all()
    lines = (folder / "test_samples.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("sample_id\tlabel_annotation\tcontext\tquestion\tchoices")
    test = pd.read_parquet(out / "evaluation" / "test.parquet")
    assert test["template_id"].nunique() == len(set(samples["template_id"]))
    # KoBBQ 3.2.5: the reading check's low-accuracy templates leave both files, every
    # sample of them kept with its reason (rows in = kept + dropped)
    gone = pd.read_parquet(folder / "dropped_samples.parquet")
    low = set(gone["template_id"])
    assert (gone["reason"] == "low_reader_accuracy").all()
    assert len(lines) - 1 == int((~test["template_id"].isin(low)).sum())
    released = pd.read_parquet(folder / "all_samples.parquet")
    assert len(released) + len(gone) == len(samples)
    card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
    assert sorted(low) == card["readers"]["dropped_templates"]
    checked = {r["template_id"]: r["accuracy"] for r in card["readers"]["templates"]}
    assert all(checked[t] < 0.5 for t in low) and all(
        a >= 0.5 for t, a in checked.items() if t not in low
    )
    cache = {"cache_dir": str(tmp_path / "hf")}
    ds = datasets.load_dataset("json", data_files={"test": str(folder / "test_samples.jsonl")},
                               **cache)  # fmt: skip
    kept_test = test[~test["template_id"].isin(low)]
    assert (
        ds["test"][0]["sample_id"] == kept_test["sample_id"].iloc[0]
        and len(ds["test"][0]["choices"]) == 3
    )
    scores = json.loads((folder / "scores.json").read_text(encoding="utf-8"))
    assert scores["unknown"]["overall"]["acc_amb"] == 1 and "readers (majority)" in scores
    card = (folder / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "76048" in card and "paper (Table 1)" in card and "**simulated**" in card
    assert "no_non_target" in card and "{{" not in card


def _jglue_recipe(folder: Path, name: str, changes: dict) -> Path:
    recipe = yaml.safe_load((ROOT / "recipes" / f"{name}-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
    for key, value in changes.items():
        recipe["jglue"][key] = value
    for key, spec in recipe["jglue"].items():
        if key.endswith("_round"):
            spec["project"] = f"{name}-test-{key.removesuffix('_round')}"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def jglue_rebuilt(server, tmp_path_factory):
    """recipes/jsts-demo.yaml and recipes/jnli-demo.yaml made small, each run twice."""
    folder = tmp_path_factory.mktemp("jglue")
    out = {}
    for name, changes in (("jsts", {"same_image": 16, "other_image": 6}),
                          ("jnli", {"same_image": 8, "writing_captions": 5})):  # fmt: skip
        path = _jglue_recipe(folder, name, changes)
        first = rebuild(path, folder / name, server["port"])
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        again = rebuild(path, folder / name, server["port"])
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        out[name] = {"out": folder / name, "again": again.stdout}
    return out


def _release_files(folder: Path) -> dict[str, list[dict]]:
    """JGLUE's JSON Lines files of an export: train, valid, test (and jsts-c_<split>)."""
    names = [p for p in sorted(folder.glob("*.json"))
             if p.stem in ("train", "valid", "test") or p.stem.startswith("jsts-c_")]  # fmt: skip
    return {p.stem: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()]
            for p in names}  # fmt: skip


def test_jsts_rebuild_keeps_the_low_variance_pairs_in_jglue_layout(jglue_rebuilt, tmp_path):
    import datasets

    run = jglue_rebuilt["jsts"]
    out = run["out"]
    assert "0 tasks created" in run["again"] and "(cached)" in run["again"]
    ls = annotate.client()
    sts = json.loads((out / "sts" / "sts.json").read_text(encoding="utf-8"))
    assert sts["per_kind"]["A"]["pairs"] == 16 and sts["per_kind"]["B"]["pairs"] == 6
    # JSTS-C (JGLUE 3.2.2 step 5): the validated contradictions rated in the same round
    validation = json.loads((out / "validation" / "validation.json").read_text("utf-8"))
    assert sts["per_kind"]["C"]["pairs"] == validation["kept"] > 0
    assert sts["per_kind"]["C"]["paper"]["pairs"] == 3779
    n = 16 + 6 + validation["kept"]
    assert annotate.find_project(ls, "jsts-test-sts").task_number == n  # no duplicates
    assert sts["per_kind"]["A"]["paper"] == {"pairs": 16000, "kept": 10236, "kept_share": 0.6398}
    votes = pd.read_parquet(out / "annotate" / "sts.parquet")
    done = votes[~votes["cancelled"]]
    variance = done.assign(v=done["value"].astype(float)).groupby("item_id")["v"].var()
    gold = pd.read_parquet(out / "sts" / "gold.parquet")
    assert (variance[gold["item_id"]] < 1.0).all()  # JGLUE: variance 1.0 or more dropped
    assert set(variance[variance >= 1.0].index) == set(
        pd.read_parquet(out / "sts" / "dropped.parquet")["id"]
    )
    files = _release_files(out / "dataset")
    assert set(files) == {"train", "valid", "test"}
    assert sum(map(len, files.values())) == len(gold)
    kinds = {
        r["yjcaptions_id"] for rows in files.values() for r in rows if "-g" in r["yjcaptions_id"]
    }
    assert kinds == set(gold.loc[gold["kind"] == "C", "item_id"])  # JSTS-C in JSTS
    for rows in files.values():
        assert [r["sentence_pair_id"] for r in rows] == [str(i) for i in range(len(rows))]
        assert all(list(r) == ["sentence_pair_id", "yjcaptions_id", "sentence1", "sentence2",
                               "label"] for r in rows)  # fmt: skip
    images = {s: {i for r in rows for i in r["yjcaptions_id"].split("-")[0].split("_")}
              for s, rows in files.items()}  # fmt: skip
    assert not images["train"] & (images["valid"] | images["test"])  # no image in two splits
    ds = datasets.load_dataset("json", data_files={"train": str(out / "dataset" / "train.json")},
                               cache_dir=str(tmp_path / "hf"))  # fmt: skip
    assert ds["train"].num_rows == len(files["train"])
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "16,000 -> 10,236" in card and "**simulated**" in card and "{{" not in card


def test_jnli_rebuild_runs_every_round_and_the_rules(jglue_rebuilt):
    run = jglue_rebuilt["jnli"]
    out = run["out"]
    assert "0 tasks created" in run["again"] and "(cached)" in run["again"]
    items = pd.read_parquet(out / "pairs" / "items.parquet")
    assert len(items) == 16 and (items.groupby("pair_id").size() == 2).all()  # both ways
    nli = pd.read_parquet(out / "nli" / "gold.parquet")
    assert set(nli["label"]) <= {"entailment", "neutral"} and (nli["votes"] >= 6).all()
    written = json.loads((out / "written" / "written.json").read_text(encoding="utf-8"))
    assert written["written"] == 20 and written["kept"] + sum(written["dropped"].values()) == 20
    assert written["dropped"].get("edit_distance", 0) >= 1  # the planted unrelated sentences
    validation = json.loads((out / "validation" / "validation.json").read_text(encoding="utf-8"))
    assert validation["items"] == written["kept"]
    assert validation["pairs_with_reverse"] == 2 * validation["kept"]
    files = _release_files(out / "dataset")
    nli_rows = [r for s in ("train", "valid", "test") for r in files.get(s, [])]
    labels = {r["label"] for r in nli_rows}
    assert labels == {"entailment", "neutral", "contradiction"}
    ids = {r["yjcaptions_id"] for r in nli_rows if r["label"] == "contradiction"}
    for pair_id in ids:  # each contradiction with its reverse
        image, a, b = pair_id.split("-")
        assert f"{image}-{b}-{a}" in ids
    sts_c = [r for s, rows in files.items() if s.startswith("jsts-c") for r in rows]
    assert sts_c and all(isinstance(r["label"], float) and "-g" in r["yjcaptions_id"]
                         for r in sts_c)  # fmt: skip
    ls = annotate.client()
    for name in ("nli", "writing", "validation", "sts"):
        table = pd.read_parquet(out / "annotate" / f"{name}.parquet")
        project = annotate.find_project(ls, f"jnli-test-{name}")
        assert project.task_number == table["item_id"].nunique()  # no duplicate task
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "JNLI step 1" in card and "edit distance" in card and "{{" not in card


def _kobest_recipe(folder: Path, name: str, changes: dict) -> Path:
    recipe = yaml.safe_load((ROOT / "recipes" / f"kobest-{name}-demo.yaml").read_text("utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
    recipe["kobest"].update(changes)
    for key, spec in recipe["kobest"].items():
        if key.endswith("_round"):
            spec["project"] = f"kobest-{name}-test-{key.removesuffix('_round')}"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def kobest_rebuilt(server, tmp_path_factory):
    """recipes/kobest-copa-demo.yaml (run twice), kobest-sentineg-demo.yaml (smaller),
    and the BoolQ, WiC and HellaSwag demos."""
    folder = tmp_path_factory.mktemp("kobest")
    out = {}
    for name, changes, runs in (
        ("copa", {}, 2),
        ("sentineg", {"items": 40}, 1),
        ("boolq", {}, 1),
        ("wic", {}, 1),
        ("hellaswag", {}, 1),
    ):
        path = _kobest_recipe(folder, name, changes)
        for _ in range(runs):
            done = rebuild(path, folder / name, server["port"])
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        out[name] = {"out": folder / name, "last": done.stdout}
    return out


def test_kobest_copa_reviews_find_the_planted_swaps_and_cue(kobest_rebuilt, tmp_path):
    import datasets

    run = kobest_rebuilt["copa"]
    out = run["out"]
    assert "0 tasks created" in run["last"] and "(cached)" in run["last"]
    written = json.loads((out / "written" / "written.json").read_text(encoding="utf-8"))
    assert written["dropped"] == {"copa_past_tense": 1, "copa_subject": 2}  # the planted faults
    reviewed = json.loads((out / "reviewed" / "reviewed.json").read_text(encoding="utf-8"))
    assert reviewed["edits"] >= 1 and "rejected" in reviewed["dropped"]
    dup = json.loads((out / "duplicates" / "duplicates.json").read_text(encoding="utf-8"))
    assert dup["swaps_found"] == dup["swaps_planted"] >= 2  # those whose original is kept
    first = json.loads((out / "artifacts-1" / "artifacts.json").read_text(encoding="utf-8"))
    second = json.loads((out / "artifacts-2" / "artifacts.json").read_text(encoding="utf-8"))
    assert any(c["morpheme"].endswith("<NUM>") for c in first["cues"])
    assert first["cue_items_flagged"] >= 1
    assert not any(c["morpheme"].endswith("<NUM>") for c in second["cues"])  # gone
    versions = pd.read_parquet(out / "dataset" / "versions.parquet")
    assert {"writing", "review", "revision1"} <= set(versions["round"])
    ls = annotate.client()
    for name in ("writing", "review", "revision1"):
        table = pd.read_parquet(out / "annotate" / f"{name}.parquet")
        stem = name.rstrip("0123456789")
        project = annotate.find_project(ls, f"kobest-copa-test-{stem}{name[len(stem) :]}")
        assert project.task_number == table["item_id"].nunique()  # no duplicate task
    ds = datasets.load_dataset(
        "json",
        data_files={s: str(out / "dataset" / f"{s}.jsonl") for s in ("train", "dev", "test")},
        cache_dir=str(tmp_path / "cache"),
    )
    assert ds["train"].column_names == [
        "premise",
        "question",
        "alternative_1",
        "alternative_2",
        "label",
    ]
    assert set(ds["train"]["question"]) <= {"원인", "결과"}
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "Artifact review 1" in card and f"planted swaps found: {dup['swaps_found']} of" in card
    assert "{{" not in card


def test_kobest_sentineg_drops_unnegated_and_branded_writing(kobest_rebuilt):
    out = kobest_rebuilt["sentineg"]["out"]
    prompts = pd.read_parquet(out / "prompts" / "items.parquet")
    assert (prompts["label"] == 1 - prompts["original_label"]).all()
    dropped = pd.read_parquet(out / "written" / "dropped.parquet")
    copies = set(prompts.loc[prompts["sim_plant"] == "copy", "item_id"])
    brands = set(prompts.loc[prompts["sim_plant"] == "brand", "item_id"])
    reasons = dict(zip(dropped["item_id"], dropped["reason"], strict=True))
    assert all(reasons.get(i) == "sentineg_negated" for i in copies)
    assert all(reasons.get(i) == "sentineg_brand" for i in brands)
    rows = [
        json.loads(line)
        for s in ("train", "dev", "test")
        for line in (out / "dataset" / f"{s}.jsonl").read_text("utf-8").splitlines()
    ]
    assert rows and all(set(r) == {"sentence", "label"} and r["label"] in (0, 1) for r in rows)


def test_kobest_sentineg_test_set_is_built_from_train_as_the_paper_does(kobest_rebuilt):
    """KoBEST 2.6: train items whose predicted polarity flips once negated are converted
    and relabelled into test; every candidate's outcome is released."""
    out = kobest_rebuilt["sentineg"]["out"]
    info = json.loads((out / "negated" / "negated.json").read_text(encoding="utf-8"))
    candidates = pd.read_parquet(out / "dataset" / "negated_candidates.parquet")
    assert len(candidates) == info["candidates"] == info["splits_before"]["train"]
    moved = candidates[candidates["outcome"] == "converted"]
    assert 0 < len(moved) == info["converted"] <= 8  # the demo's negated_test_items
    assert (moved["predicted"] != moved["predicted_negated"]).all()
    test = pd.read_parquet(out / "dataset" / "test.parquet")
    train = pd.read_parquet(out / "dataset" / "train.parquet")
    converted = test[test["converted_from"] != ""]
    assert set(converted["converted_from"]) == set(moved["item_id"])
    assert not set(moved["item_id"]) & set(train["item_id"])  # they left train
    by_id = moved.set_index("item_id")
    for r in converted.to_dict("records"):
        assert r["sentence"] == by_id.loc[r["converted_from"], "negated"]
        assert r["label"] == 1 - by_id.loc[r["converted_from"], "label"]
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "SentiNeg's test set (KoBEST 2.6)" in card


@pytest.mark.parametrize(
    "name, check, cue",
    [("boolq", "boolq_yes_no", ":혹시"), ("wic", "wic_target", None),
     ("hellaswag", "hellaswag_sentences", ":결국")],
)  # fmt: skip
def test_kobest_boolq_wic_hellaswag_demos_find_their_planted_faults(
    kobest_rebuilt, name, check, cue
):
    out = kobest_rebuilt[name]["out"]
    prompts = pd.read_parquet(out / "prompts" / "items.parquet")
    dropped = pd.read_parquet(out / "written" / "dropped.parquet")
    planted = set(prompts.loc[prompts["sim_plant"].str.contains("guideline"), "item_id"])
    reasons = dict(zip(dropped["item_id"], dropped["reason"], strict=True))
    assert planted and all(reasons.get(i) == check for i in planted)
    reviewed = json.loads((out / "reviewed" / "reviewed.json").read_text(encoding="utf-8"))
    assert "rejected" in reviewed["dropped"]
    # the misspelt item: edited by the linguists (a new version), unless the simulated
    # linguists' noise left it without a majority (then it is dropped with that reason)
    edited = set(pd.read_parquet(out / "reviewed" / "versions.parquet").get("item_id", []))
    review_dropped = set(pd.read_parquet(out / "reviewed" / "dropped.parquet").get("item_id", []))
    misspelt = set(prompts.loc[prompts["sim_plant"].str.contains("review_edit"), "item_id"])
    if name == "wic":  # KoBEST 2.4: a misspelt, ambiguous or polysemous context is no
        # dictionary example (or no homonym): the dictionary checks drop it before review
        broken = set(prompts.loc[prompts["sim_plant"].str.contains("dictionary"), "item_id"])
        assert broken and all(reasons.get(i) in ("wic_examples", "wic_homonym") for i in broken), {
            i: reasons.get(i) for i in broken
        }
    else:
        assert misspelt and misspelt <= edited | review_dropped
    first = json.loads((out / "artifacts-1" / "artifacts.json").read_text(encoding="utf-8"))
    last = json.loads((out / "artifacts-3" / "artifacts.json").read_text(encoding="utf-8"))
    if cue:
        assert any(c["morpheme"].endswith(cue) for c in first["cues"]), first["cues"]
        assert first["cue_items_flagged"] >= 1
        assert not any(c["morpheme"].endswith(cue) for c in last["cues"])  # revised away
    else:  # WiC's partial input is the given word: no cue to plant
        assert first["cue_items"] == 0
    task_fields = {
        "boolq": ["paragraph", "question"],
        "wic": ["word", "context_1", "context_2"],
        "hellaswag": ["context", "ending_1", "ending_2", "ending_3", "ending_4"],
    }
    first_row = json.loads((out / "dataset" / "train.jsonl").read_text("utf-8").splitlines()[0])
    assert list(first_row) == [*task_fields[name], "label"]


def test_card_check_finds_every_family_card_true_to_its_files(
    kobbq_rebuilt, jglue_rebuilt, kobest_rebuilt, tmp_path
):
    """Issue 34: `benchforge card check` on the KoBBQ, JSTS, JNLI and all five KoBEST
    rebuilds. COPA's revision rounds drop items after the split: its card states the
    released items per split, and what the rounds dropped."""
    from pipelines.export.card_check import check_card

    runs = {"kobbq": kobbq_rebuilt["out"], **{k: v["out"] for k, v in jglue_rebuilt.items()},
            **{k: v["out"] for k, v in kobest_rebuilt.items()}}  # fmt: skip
    for name, out in runs.items():
        result = check_card(out)
        assert result.ok, (name, [str(m) for m in result.mismatches])
        assert not result.unchecked, (name, result.unchecked)
        # issue 34 item 4: every family release loads with load_dataset(folder) alone
        loaded = load_release(out / "dataset", tmp_path / name)
        assert sum(v.num_rows for v in loaded["default"].values()) > 0
    copa = json.loads((runs["copa"] / "dataset" / "card.json").read_text(encoding="utf-8"))
    released = sum(copa["split"]["splits"].values())
    assert released == sum(copa["export"]["files"].values())
    if sum(copa["split"]["before_revisions"].values()) > released:
        card = (runs["copa"] / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
        assert "The split (`" in card and "the rounds dropped" in card
    # classes, not STS score bins
    assert copa["labels"]["numeric"] is False and set(copa["labels"]["order"]) <= {"0", "1"}


def test_evaluate_scores_kobbq_as_the_card_scores_its_fixed_answers(kobbq_rebuilt, tmp_path):
    """Issue 39: ``benchforge evaluate`` on KoBBQ's evaluation set uses the family's own
    scorer; always answering "unknown" gives the card's baseline figures (x 100)."""
    import subprocess
    import sys

    out = kobbq_rebuilt["out"]
    records = [json.loads(x) for x in (out / "dataset" / "test_samples.jsonl").read_text(
        encoding="utf-8").splitlines()]  # fmt: skip
    unknown = next(c for c in records[0]["choices"] if c == "알 수 없음")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"guid": r["sample_id"], "prediction": unknown},
                                       ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")  # fmt: skip
    got = subprocess.run([sys.executable, "-m", "flows.cli", "evaluate", str(out), "--split",
                          "test", "--predictions", str(pred), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert got.returncode == 0, got.stderr
    metrics = json.loads(got.stdout)["metrics"]
    card = json.loads((out / "dataset" / "card.json").read_text(encoding="utf-8"))
    want = card["scores"]["unknown"]["overall"]
    for key in ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"):
        assert metrics[key] == pytest.approx(100 * want[key], abs=0.01), key
    assert metrics["acc_amb"] == 100.0  # "unknown" is right in every ambiguous context
    assert "Baselines on the evaluation set" in (out / "dataset" / "DATA_CARD.md").read_text(
        encoding="utf-8")  # fmt: skip


def test_the_html_cards_read_without_raw_markdown(kobbq_rebuilt, jglue_rebuilt, kobest_rebuilt,
                                                  tmp_path):  # fmt: skip
    """Issue 54: KoBBQ, JSTS, JNLI and the five KoBEST cards in headless Chromium (the
    KoBEST artifact reviews showed raw pipes and ####)."""
    from browser import assert_card_reads_well

    cards = {"kobbq": kobbq_rebuilt["out"], **{k: v["out"] for k, v in jglue_rebuilt.items()},
             **{k: v["out"] for k, v in kobest_rebuilt.items()}}  # fmt: skip
    for name, out in cards.items():
        assert_card_reads_well(out / "dataset", name, tmp_path)
