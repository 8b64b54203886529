"""``benchforge rebuild`` of recipes/jcqa-demo.yaml (issue 37): JCommonsenseQA's five
steps through four real Label Studio rounds answered by simulated people: question sets
from the triples, the synonym round, the writing round and its three filters (planted
failures caught), the distractor round and its two filters, the 2-of-3 answer rule;
JGLUE's layout passes JCommonsenseQA's filters; a rerun duplicates no task."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_rebuild import load_release, rebuild

from pipelines.annotation import annotate
from pipelines.families.jcqa.filters import read_questions, run_filters

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = ("synonyms", "writing", "distractors", "answers")


@pytest.fixture(scope="module")
def server(family_server):
    """The session's Label Studio server, shared by the family rebuilds
    (tests/conftest.py): this file's projects have names of their own."""
    return family_server


@pytest.fixture(scope="module")
def jcqa(server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("jcqa")
    recipe = yaml.safe_load((ROOT / "recipes" / "jcqa-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
    spec = recipe["jcqa"]
    spec["writers"] = str((ROOT / "recipes" / spec["writers"]).resolve())
    for name in ROUNDS:
        spec[f"{name}_round"]["project"] = f"jcqa-test-{name}"
    path = folder / "jcqa.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    out = folder / "out"
    first = rebuild(path, out, server["port"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    again = rebuild(path, out, server["port"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": out, "again": again.stdout}


def _rows(out: Path, folder: str, name: str) -> pd.DataFrame:
    return pd.read_parquet(out / folder / name)


def test_each_step_accounts_for_its_rows_and_catches_the_planted_failures(jcqa):
    out = jcqa["out"]
    sets = _rows(out, "question-sets", "items.parquet")
    gone = _rows(out, "question-sets", "dropped.parquet")
    assert {"fewer_than_three_targets", "relation_not_used", "spelling_variants"} <= set(
        gone["reason"])  # fmt: skip
    assert all(len(t) == 3 for t in sets["targets"])
    kept = _rows(out, "sets", "sets.parquet")
    syn = _rows(out, "sets", "dropped.parquet")
    assert len(kept) + len(syn) == len(sets) and "synonyms_in_targets" in set(syn["reason"])
    assert not any({"食材", "材料"} <= set(t) for t in kept["targets"])
    tasks = _rows(out, "writing", "items.parquet")
    assert len(tasks) == 3 * len(kept)
    qs, qd = (
        _rows(out, "questions", "questions.parquet"),
        _rows(out, "questions", "dropped.parquet"),
    )
    assert len(qs) + len(qd) == len(tasks)
    assert {"no_question_mark", "contains_choice", "xx_characters"} <= set(qd["reason"])
    five, dd = _rows(out, "distractors", "questions.parquet"), _rows(out, "distractors",
                                                                     "dropped.parquet")  # fmt: skip
    assert len(five) + len(dd) == len(qs) and "existing_choice" in set(dd["reason"])
    final, fd = _rows(out, "final", "questions.parquet"), _rows(out, "final", "dropped.parquet")
    assert len(final) + len(fd) == len(five)
    votes = pd.read_parquet(out / "annotate" / "answers.parquet")
    votes = votes[~votes["cancelled"].fillna(False).astype(bool)]
    for row in final.itertuples():
        mine = votes.loc[votes["item_id"] == row.item_id, "value"]
        assert len(mine) == 3 and (mine == row.answer).sum() >= 2


def test_jglue_layout_passes_the_filters_with_a_true_card(jcqa, tmp_path):
    from pipelines.export.card_check import check_card

    out, data = jcqa["out"], jcqa["out"] / "dataset"
    ids = []
    for name in ("train", "valid", "test"):
        path = data / f"{name}.json"
        if not path.is_file():
            continue
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
        assert all(list(r) == ["q_id", "question", "choice0", "choice1", "choice2", "choice3",
                               "choice4", "label"] for r in rows)  # fmt: skip
        ids += [r["q_id"] for r in rows]
        checked = run_filters(read_questions(path))
        assert checked["kept"].all()
    assert sorted(ids) == list(range(len(ids)))
    load_release(data, tmp_path / "hf")
    assert check_card(out).mismatches == []
    assert "8,939" in (data / "DATA_CARD.md").read_text(encoding="utf-8")
    assert "0 tasks created" in jcqa["again"] and "hold other data" not in jcqa["again"]
    ls = annotate.client()
    for name, folder in zip(ROUNDS, ("question-sets", "writing", "distractor-items",
                                     "answer-items"), strict=True):  # fmt: skip
        n = len(pd.read_parquet(out / folder / "items.parquet"))
        assert annotate.find_project(ls, f"jcqa-test-{name}").task_number == n


def test_the_html_card_reads_without_raw_markdown(jcqa, tmp_path):
    """Issue 54: the JCommonsenseQA card in headless Chromium (its size table followed a
    paragraph with no blank line and showed as pipes)."""
    from browser import assert_card_reads_well

    assert_card_reads_well(jcqa["out"] / "dataset", "jcqa", tmp_path)
