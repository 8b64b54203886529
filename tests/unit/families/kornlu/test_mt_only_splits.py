"""Ham et al. 2020, 3.1 (and Tables 1 and 3): the training sets of KorNLI and KorSTS are
machine translated only; only the development and test sets are post-edited by
professional translators. ``translation.mt_only_splits`` (default ``[train]``) keeps the
pairs of those splits out of the post-editing rounds, on the shipped STS-B / KorSTS rows.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.core.steps import RunContext, step_cache, step_function
from pipelines.families.kornlu.card import PAPER_TABLES, table_figures
from pipelines.families.kornlu.sources import NLI_LABELS, SourceError, read_pairs, source_tables
from pipelines.rebuild.kinds import task_kind

ROOT = Path(__file__).resolve().parents[4]
DEMO = ROOT / "data" / "demo" / "korsts"
ROWS = 8


def _memory(path: Path) -> Path:
    """A translation memory of the first rows' English -> KorSTS Korean (a team's previous
    release): every sentence of the test is translated from it, no model needed."""
    with (DEMO / "stsb-en-dev.demo.csv").open(encoding="utf-8") as f:
        english = list(csv.reader(f))[:ROWS]
    with (DEMO / "korsts-dev.demo.tsv").open(encoding="utf-8") as f:
        korean = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1 : ROWS + 1]
    pairs = {}
    for en, ko in zip(english, korean, strict=True):
        pairs[en[0]], pairs[en[1]] = ko[5], ko[6]
    path.write_text("source\ttarget\n" + "".join(f"{s}\t{t}\n" for s, t in pairs.items()),
                    encoding="utf-8")  # fmt: skip
    return path


def _rebuild(recipe: Path, out: Path) -> None:
    """``benchforge rebuild RECIPE --out OUT`` as a user runs it; it must succeed."""
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "rebuild", str(recipe), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env=os.environ.copy(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _recipe(tmp_path: Path, **translation: object) -> Path:
    """recipes/korsts-demo.yaml on its first rows, translated from a memory only."""
    recipe = yaml.safe_load((ROOT / "recipes" / "korsts-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        corpus["limit"] = ROWS
    t = recipe["translation"]
    t["memory"] = {"path": str(_memory(tmp_path / "tm.tsv")), "fuzzy_threshold": 100}
    t.pop("train")
    t.update(translation)
    if t.get("other_splits"):  # the same English file read again as another split's
        recipe["corpora"].append({**recipe["corpora"][0], "name": "stsb-en-again"})
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def _run(ctx: RunContext, name: str) -> object:
    """One step as the orchestrator runs it (its cache from its declaration)."""
    fn, arg = step_function(ctx.task.name, name)
    ctx.cache = step_cache(ctx, fn, arg)
    try:
        return fn(ctx, arg)
    finally:
        ctx.cache = None


def test_train_split_is_machine_translated_only_and_never_posted_for_editing(tmp_path):
    """A recipe of STS-B train pairs: no post-editing or cross-check round (Ham 3.1), no
    Label Studio; the released Korean is the machine translation itself."""
    path = _recipe(tmp_path, split="train")
    recipe = load_recipe(path)
    kind = task_kind("korsts")
    steps = kind.steps_for(recipe)
    assert not [s for s in steps if "postedit" in s or "crosscheck" in s], steps
    assert not kind.uses_label_studio(recipe)
    assert steps[:2] == ["mt-model", "translate"] and "export" in steps
    out = tmp_path / "out"
    _rebuild(path, out)
    assert not (out / "postedit").exists() and not (out / "annotate").exists()
    sentences = pd.read_parquet(out / "translate" / "sentences.parquet").set_index("sentence_id")
    assert not sentences["postedit"].any()
    kept = pd.read_parquet(out / "relabel" / "pairs.parquet").sort_values("row")
    lines = (out / "dataset" / "train.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "genre\tfilename\tyear\tid\tscore\tsentence1\tsentence2"
    rows = [line.split("\t") for line in lines[1:]]
    assert len(rows) == len(kept) >= ROWS - 2 and not (out / "dataset" / "dev.tsv").exists()
    for row, pair in zip(rows, kept.itertuples(), strict=True):
        assert row[5] == sentences.at[pair.s1, "draft"] and row[6] == sentences.at[pair.s2, "draft"]
    qa = json.loads((out / "qa" / "qa.json").read_text(encoding="utf-8"))
    assert qa["figures"]["per_split"] == {} and qa["figures"]["mt_only"]["train"]["pairs"] == ROWS
    card = (out / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "Machine translated only, never sent to post-editing: train." in card
    assert "| train | stsb-en-dev | 8 | machine only |" in card
    assert "{{" not in card


def test_train_and_dev_of_one_recipe_only_dev_goes_to_the_posteditors(tmp_path):
    """The paper's process in one recipe: dev post-edited, train machine translated only.
    The same English sentence in both keeps two ids: the dev copy is post-edited, the
    train copy is not; the two post-editors share the dev pairs half and half."""
    path = _recipe(tmp_path, other_splits=[{"source": "stsb-en-again", "split": "train"}])
    recipe = load_recipe(path)
    pairs, sentences = source_tables(recipe, True, "score")
    assert pairs.groupby("split").size().to_dict() == {"dev": ROWS, "train": ROWS}
    assert pairs.groupby("split")["postedit"].all().to_dict() == {"dev": True, "train": False}
    assert set(pairs.loc[pairs["split"] == "train", "half"]) == {""}
    assert pairs.loc[pairs["split"] == "dev", "half"].value_counts().to_dict() == {
        "a": ROWS // 2, "b": ROWS // 2}  # fmt: skip
    train, dev = (pairs[pairs["split"] == s] for s in ("train", "dev"))
    assert list(train["en1"]) == list(dev["en1"]) and not set(train["s1"]) & set(dev["s1"])

    kind = task_kind("korsts")
    assert kind.uses_label_studio(recipe)
    ctx = RunContext(recipe, path, tmp_path / "out", kind, True)
    _run(ctx, "translate")
    _run(ctx, "postedit")
    items = pd.concat([pd.read_parquet(tmp_path / "out" / "postedit" / f"items-{h}.parquet")
                       for h in "ab"])  # fmt: skip
    dev_ids = set(dev["s1"]) | set(dev["s2"])
    assert set(items["item_id"]) == dev_ids
    assert not set(items["item_id"]) & (set(train["s1"]) | set(train["s2"]))
    rounds = kind.rounds(ctx)
    assert {"postedit-a", "postedit-b", "crosscheck-a", "crosscheck-b"} <= set(rounds)


def test_every_split_post_edited_when_the_recipe_says_so(tmp_path):
    """``mt_only_splits: []`` (benchforge before issue 52): train goes to the rounds too."""
    recipe = load_recipe(_recipe(tmp_path, split="train", mt_only_splits=[]))
    pairs, sentences = source_tables(recipe, True, "score")
    assert pairs["postedit"].all() and sentences["postedit"].all()
    assert any("postedit" in s for s in task_kind("korsts").steps_for(recipe))


@pytest.mark.parametrize(
    ("translation", "message"),
    [({"other_splits": [{"source": "stsb-en-again", "split": "dev"}]},
      "one English dataset per split"),
     ({"other_splits": [{"source": "nowhere", "split": "train"}]},
      "translation.other_splits[0].source: no corpus named 'nowhere'")],
)  # fmt: skip
def test_other_splits_are_checked(tmp_path, translation, message):
    path = _recipe(tmp_path, **translation)
    with pytest.raises((RecipeError, ValueError), match=message.replace("[", r"\[")):
        load_recipe(path)


def test_a_score_outside_0_to_5_is_refused_naming_the_line(tmp_path):
    """Ham 2.2: "The similarity score ranges from 0 ... to 5"."""
    spec = load_recipe(ROOT / "recipes" / "korsts-demo.yaml").corpora[0]
    bad = tmp_path / "bad.csv"
    bad.write_text("A cat sits.,A cat is sitting.,5.0\nA dog runs.,A dog is running.,5.2\n",
                   encoding="utf-8")  # fmt: skip
    with pytest.raises(SourceError, match=r"bad.csv: line 2: score 5.2 outside 0-5"):
        read_pairs(bad, spec, "score", None)
    assert list(read_pairs(bad, spec.model_copy(update={"limit": 1}), "score", None)["label"]) == [
        5.0
    ]


SHARED = ROOT.parent / "shared" / "corpora"


@pytest.mark.skipif(not (SHARED / "korsts-kornli").is_dir(), reason="../shared/corpora absent")
def test_released_korsts_and_kornli_give_table_1_and_table_3_figures():
    """Ham Table 3 (KorSTS train 5,749 pairs of 7.5 words, dev 1,500 of 8.7) and Table 1
    (KorNLI dev 2,490 pairs, premise 13.0 and hypothesis 6.8 words), computed by the
    card's code from the released files read as a rebuild reads them; STS-B's English
    dev and test give Table 3's pairs (1,500 / 1,379)."""
    recipe = load_recipe(ROOT / "recipes" / "korsts-demo.yaml")
    tsv, csv_ = recipe.corpora[1], recipe.corpora[0]
    records = {}
    for split, name in (("train", "sts-train.tsv"), ("dev", "sts-dev.tsv")):
        pairs = read_pairs(SHARED / "korsts-kornli" / name, tsv, "score", None)
        records[split] = [{"sentence1": a, "sentence2": b} for a, b in
                          zip(pairs["sentence1"], pairs["sentence2"], strict=True)]  # fmt: skip
    figures = table_figures("korsts", records)
    for split in ("train", "dev"):
        assert figures[split] == PAPER_TABLES["korsts"][split]
    # STS-B's English dev and test, read pair for pair, are Table 3's; its train holds a
    # control character on line 2919 the reader refuses (the ledger's row on Table 3)
    english = {s: len(read_pairs(SHARED / "stsb-en" / f"stsb-en-{s}.csv", csv_, "score", None))
               for s in ("dev", "test")}  # fmt: skip
    assert english == {s: PAPER_TABLES["korsts"][s]["pairs"] for s in english}
    nli = read_pairs(SHARED / "korsts-kornli" / "xnli.dev.ko.tsv", tsv, "gold_label", NLI_LABELS)
    rows = [{"sentence1": a, "sentence2": b} for a, b in zip(nli["sentence1"], nli["sentence2"],
                                                           strict=True)]  # fmt: skip
    assert table_figures("kornli", {"dev": rows})["dev"] == PAPER_TABLES["kornli"]["dev"]
