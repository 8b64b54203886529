"""JGLUE 3.2.2 as the paper prints it (issue 52): JSTS is built from JSTS-A, B and C
("We constructed JSTS from JSTS-A, B, and C"), so a JSTS recipe writes and validates
contradictions (step 4) and rates them with the A and B pairs (step 5); the paper's
counts per step; JNLI's and JSTS's rounds take the paper's numbers of people by default.
The whole chain runs through Label Studio in tests/e2e/test_rebuild_families.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.families.jglue.construct import PAPER_JSTS
from pipelines.families.jglue.rounds import preflight, task_rounds
from pipelines.families.jglue.section import JglueSpec
from pipelines.rebuild.kinds import task_kind

ROOT = Path(__file__).resolve().parents[4]
CONTRADICTIONS = ["writing-items", "push-writing", "simulate-writing", "wait-writing",
                  "pull-writing", "written", "push-validation", "simulate-validation",
                  "wait-validation", "pull-validation", "validation"]  # fmt: skip


def _recipe(tmp_path: Path, name: str, edit) -> object:
    data = yaml.safe_load((ROOT / "recipes" / f"{name}.yaml").read_text(encoding="utf-8"))
    for corpus in data["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
    edit(data["jglue"])
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_recipe(path)


def test_jsts_is_built_from_jsts_a_b_and_c_by_default():
    """3.2.2: JSTS-C is the validated contradictions rated in the same way as steps 1
    and 2; the JSTS demo writes and validates them before the one STS round."""
    assert JglueSpec(releases=["x"]).jsts_c is True
    recipe = load_recipe(ROOT / "recipes" / "jsts-demo.yaml")
    steps = task_kind("jsts").steps_for(recipe)
    at = steps.index("writing-items")
    assert steps[at : at + len(CONTRADICTIONS)] == CONTRADICTIONS
    assert steps.index("validation") < steps.index("push-sts") < steps.index("sts")
    assert task_rounds(recipe) == ["writing", "validation", "sts", "check"]


def test_a_jsts_recipe_without_the_contradiction_rounds_is_refused_or_says_it_departs(
    tmp_path,
):
    def without(jglue: dict) -> None:
        del jglue["writing_round"], jglue["validation_round"]

    recipe = _recipe(tmp_path, "jsts-demo", without)
    with pytest.raises(RecipeError, match=r"writing_round.*validation_round.*jsts_c: false"):
        preflight(recipe)

    def departs(jglue: dict) -> None:
        without(jglue)
        jglue["jsts_c"] = False

    recipe = _recipe(tmp_path, "jsts-demo", departs)
    preflight(recipe)
    steps = task_kind("jsts").steps_for(recipe)
    assert not set(CONTRADICTIONS) & set(steps) and task_rounds(recipe) == ["sts", "check"]


def test_the_papers_counts_per_jsts_step():
    """3.2.2 steps 1, 2 and 5: 16,000 -> 10,236 (A), 4,000 -> 2,970 (B), 3,779 ->
    2,303 (C); the card prints them beside the run's."""
    assert PAPER_JSTS == {
        "A": {"pairs": 16000, "kept": 10236},
        "B": {"pairs": 4000, "kept": 2970},
        "C": {"pairs": 3779, "kept": 2303},
    }


def test_each_round_takes_the_papers_number_of_people_by_default():
    """3.2.2: five workers rate similarity, 10 answer the NLI task and 10 the one-way
    validation; a round that names no ``raters`` gets these."""
    spec = JglueSpec(releases=["x"], sts_round={}, nli_round={}, validation_round={},
                     writing_round={})  # fmt: skip
    assert (spec.sts_round.raters, spec.nli_round.raters, spec.validation_round.raters,
            spec.writing_round.raters) == (5, 10, 10, 1)  # fmt: skip
    assert JglueSpec(releases=["x"], nli_round={"raters": 12}).nli_round.raters == 12


@pytest.mark.parametrize(
    ("kind", "metrics", "section"),
    [("marc-ja", ("accuracy",), "3.1"), ("jsts", ("pearson", "spearman"), "3.2.3"),
     ("jnli", ("accuracy",), "3.2.3"), ("jsquad", ("exact_match", "char_f1"), "3.3.1"),
     ("jcqa", ("accuracy",), "3.4.3")],
)  # fmt: skip
def test_each_dataset_is_scored_by_the_metric_of_its_section(kind, metrics, section):
    evaluation = task_kind(kind).evaluation
    assert tuple(evaluation.metrics) == metrics
    assert evaluation.source == f"JGLUE (Kurihara et al. 2022) {section}"


def test_the_sizes_the_cards_print_beside_the_runs():
    """Table 1 and Table 2 (MARC-ja 187,528 / 5,654 / 5,639); JCommonsenseQA's card
    prints the v1.3 README's sizes (train 8,939 where Table 1 says 9,012; dev and test
    1,119 and 1,118 as in Table 1)."""
    from pipelines.families.jcqa.export import PAPER_SIZES as JCQA
    from pipelines.families.marc.export import PAPER_SIZES as MARC

    assert (MARC["train"], MARC["dev"], MARC["test"]) == (187528, 5654, 5639)
    assert (JCQA["dev"], JCQA["test"]) == (1119, 1118)


def test_the_last_filter_matches_then_a_person_removes():
    """3.2.2: "we filtered out 12 sentence pairs from JSTS and 44 pairs from JNLI based
    on automatic matching and manual checking": the matched pairs go to a checker, and
    only those most checkers remove are dropped."""
    import pandas as pd

    from pipelines.families.jglue.check import check_items, checked

    items = pd.DataFrame(
        {
            "item_id": ["1-2-3", "1-3-2", "4-5-6", "7-8-9", "7-9-8"],
            "sentence1": ["犬が走る。", "猫が寝る。", "空が青い。", "車が走る。", "バスが止まる。"],
            "sentence2": [
                "猫が寝る。",
                "犬が走る。",
                "空が 青い。",
                "バスが止まる。",
                "車が走る。",
            ],
            "label": [1.2, 1.2, 5.0, "neutral", "neutral"],
            "kind": ["A", "A", "A", "A", "A"],
        }
    )
    sts = check_items(items.iloc[:3], directed=False)
    assert sts[["item_id", "match"]].values.tolist() == [
        ["1-3-2", "repeated_pair"], ["4-5-6", "same_sentences"]]  # fmt: skip
    nli = check_items(items.iloc[3:], directed=True)
    assert nli.empty  # the other direction is another NLI pair
    release = {("空が青い。", "空が 青い。"): 5.0}
    sim = check_items(items.iloc[:3], directed=False, release=release)
    assert sim["sim_decision"].tolist() == ["remove", "keep"]  # the release kept 4-5-6
    votes = pd.DataFrame(
        {
            "item_id": ["1-3-2", "1-3-2", "1-3-2", "4-5-6", "4-5-6"],
            "field": ["decision"] * 5,
            "value": ["remove", "remove", "keep", "remove", "keep"],
            "cancelled": [False] * 5,
        }
    )
    removed, dropped = checked(votes, sts)
    assert removed == {"1-3-2"}  # 2 of 3 say remove; a tie keeps 4-5-6
    assert dropped[0]["reason"] == "manual_check" and "repeated_pair" in dropped[0]["detail"]


def test_both_recipes_end_with_the_final_check_before_the_split(tmp_path):
    for name in ("jsts-demo", "jnli-demo"):
        recipe = load_recipe(ROOT / "recipes" / f"{name}.yaml")
        steps = task_kind(recipe.task).steps_for(recipe)
        at = steps.index("check-items")
        assert steps[at : at + 6] == ["check-items", "push-check", "simulate-check",
                                      "wait-check", "pull-check", "check"]  # fmt: skip
        assert steps[at + 6] == "split" and task_rounds(recipe)[-1] == "check"

    def without(jglue: dict) -> None:
        del jglue["check_round"]

    with pytest.raises(RecipeError, match=r"check_round.*final_check: false"):
        preflight(_recipe(tmp_path, "jnli-demo", without))

    def departs(jglue: dict) -> None:
        without(jglue)
        jglue["final_check"] = False

    recipe = _recipe(tmp_path, "jnli-demo", departs)
    preflight(recipe)
    assert "check-items" not in task_kind("jnli").steps_for(recipe)


def test_table_6_the_mean_and_spread_of_each_pairs_rating_variance():
    """Table 6 (mean 0.420, standard deviation 0.286 of the per-pair variance), computed
    over the kept pairs the way the variance rule computes a pair's variance."""
    import pandas as pd

    from pipelines.families.jglue.construct import PAPER_VARIANCE, variance_figures

    ratings = {"a": [3, 3, 4, 4, 4], "b": [0, 0, 0, 0, 0], "c": [5, 1, 5, 1, 5]}
    rows = [(i, "similarity", str(v), False) for i, vs in ratings.items() for v in vs]
    rows += [("a", "similarity", None, True)]  # a skip counts for nothing
    frame = pd.DataFrame(rows, columns=["item_id", "field", "value", "cancelled"])
    got = variance_figures(frame, ["a", "b"])  # c was dropped by the variance rule
    assert got["pairs"] == 2 and got["mean"] == 0.15 and got["sd"] == 0.212
    assert got["paper"] == PAPER_VARIANCE == {"mean": 0.420, "sd": 0.286}


def test_tables_4_and_5_beside_the_runs_counts():
    """Table 4 (JSTS per similarity range: 12,451 / 1,457 / 1,589) and Table 5 (JNLI per
    label: 20,073 / 2,434 / 2,508), the run's counts first."""
    import pandas as pd

    from pipelines.families.jglue.construct import PAPER_TABLES, paper_table, similarity_range

    assert [sum(v[i] for v in PAPER_TABLES["jsts"].values()) for i in range(3)] == [
        12451, 1457, 1589]  # fmt: skip
    assert [sum(v[i] for v in PAPER_TABLES["jnli"].values()) for i in range(3)] == [
        20073, 2434, 2508]  # fmt: skip
    assert [similarity_range(v) for v in (0.0, 0.99, 1.0, 4.2, 5.0)] == [
        "0-1", "0-1", "1-2", "4-5", "4-5"]  # fmt: skip
    items = pd.DataFrame({"item_id": ["a", "b", "c"], "label": [0.4, 3.0, 5.0]})
    splits = pd.DataFrame({"item_id": ["a", "b", "c"], "split": ["train", "train", "test"]})
    rows = paper_table("jsts", items, splits)
    assert rows[0] == ["0-1", "1 (2,837)", "0 (353)", "0 (405)", "1 (3,595)"]
    assert rows[-1] == ["overall", "2 (12,451)", "0 (1,457)", "1 (1,589)", "3 (15,497)"]


def test_marc_ja_table_2_beside_the_runs_labels():
    """Table 2: positive 165,477 / 4,832 / 4,895, negative 22,051 / 822 / 744 (overall
    187,528 / 5,654 / 5,639, Table 1's sizes)."""
    import pandas as pd

    from pipelines.families.marc.export import PAPER_SIZES, PAPER_TABLE_2, table_2

    assert [sum(v[i] for v in PAPER_TABLE_2.values()) for i in range(3)] == [
        PAPER_SIZES["train"], PAPER_SIZES["dev"], PAPER_SIZES["test"]]  # fmt: skip
    final = pd.DataFrame({"label": ["positive", "positive", "negative"],
                          "split": ["train", "dev", "train"]})  # fmt: skip
    rows = table_2(final)
    assert rows[0] == ["positive", "1 (165,477)", "1 (4,832)", "0 (4,895)", "2 (175,204)"]
    assert rows[1] == ["negative", "1 (22,051)", "0 (822)", "0 (744)", "1 (23,617)"]
    assert rows[2] == ["overall", "2 (187,528)", "1 (5,654)", "0 (5,639)", "3 (198,821)"]
