"""JCommonsenseQA's construction rules (JGLUE 3.4.2, issue 37): triples read from a TSV
or a ConceptNet export, question sets of three targets on either side, the question and
distractor filters, and the 2-of-3 answer rule at its threshold."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipelines.families.jcqa.concepts import TriplesError, question_sets, read_triples
from pipelines.families.jcqa.section import RELATIONS, JcqaSpec
from pipelines.families.jcqa.steps import UNKNOWN, answer_rule, check_distractors

ROOT = Path(__file__).resolve().parents[4]


def test_the_relations_are_twenty_two_and_leave_out_the_general_ones():
    assert len(RELATIONS) == len(set(RELATIONS)) == 22
    assert not {"RelatedTo", "IsA", "Synonym", "FormOf"} & set(RELATIONS)
    assert JcqaSpec(triples="t").relations == list(RELATIONS)


# JGLUE 3.4.2 footnote 5, word for word (issue 52)
FOOTNOTE_5 = (
    "Antonym, AtLocation, CapableOf, Causes, CausesDesire, DefinedAs, DerivedFrom, Desires, "
    "DistinctFrom, EtymologicallyDerivedFrom, HasA, HasFirstSubevent, HasLastSubevent, "
    "HasPrerequisite, HasProperty, InstanceOf, MadeOf, MotivatedByGoal, NotDesires, PartOf, "
    "SymbolOf, UsedFor"
)


def test_the_relations_are_footnote_5s_list_in_its_order():
    assert list(RELATIONS) == FOOTNOTE_5.split(", ")
    assert JcqaSpec(triples="t").relations == FOOTNOTE_5.split(", ")


def test_a_question_set_is_drawn_over_a_footnote_5_relation_the_old_list_lacked():
    rows = [(h, "InstanceOf", "都市") for h in ("東京", "大阪", "京都")]
    sets, _ = question_sets(_triples(rows), list(RELATIONS), 1, 0)
    assert sets[["source", "relation", "side"]].values.tolist() == [
        ["都市", "InstanceOf", "tail"]]  # fmt: skip
    rows = [("雨", "HasSubevent", t) for t in ("濡れる", "冷える", "曇る")]
    sets, dropped = question_sets(_triples(rows), list(RELATIONS), 1, 0)
    assert sets.empty and set(dropped["reason"]) == {"relation_not_used"}


def test_triples_from_a_tsv_and_a_conceptnet_export(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("# comment\nhead\trelation\ttail\n冷蔵庫\tAtLocation\t台所\n"
                    "/a/[x]\t/r/AtLocation\t/c/ja/包丁/n\t/c/ja/台所\t{}\n"
                    "/a/[y]\t/r/AtLocation\t/c/en/knife\t/c/en/kitchen\t{}\n"
                    "/a/[z]\t/r/UsedFor\t/c/ja/鉛筆\t/c/ja/文字_を_書く\t{}\n",
                    encoding="utf-8")  # fmt: skip
    t = read_triples(path)
    assert t[["head", "relation", "tail"]].values.tolist() == [
        ["冷蔵庫", "AtLocation", "台所"], ["包丁", "AtLocation", "台所"],
        ["鉛筆", "UsedFor", "文字 を 書く"]]  # fmt: skip
    assert t["line"].tolist() == [3, 4, 6]


def test_a_triples_line_with_the_wrong_number_of_fields_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("冷蔵庫\tAtLocation\t台所\n包丁\tAtLocation\n", encoding="utf-8")
    with pytest.raises(TriplesError, match=r"bad.tsv: line 2: expected head<TAB>relation<TAB>"
                                            r"tail .* got 2 field"):  # fmt: skip
        read_triples(path)
    path.write_text("冷蔵庫\t\t台所\n", encoding="utf-8")
    with pytest.raises(TriplesError, match="line 1: an empty field"):
        read_triples(path)


def _triples(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame([(*r, n) for n, r in enumerate(rows, 1)],
                        columns=["head", "relation", "tail", "line"])  # fmt: skip


def test_question_sets_need_three_targets_on_either_side():
    rows = [("冷蔵庫", "AtLocation", "台所"), ("包丁", "AtLocation", "台所"),
            ("まな板", "AtLocation", "台所"),  # three heads of 台所: the tail side
            ("雨", "Causes", "洪水"), ("雨", "Causes", "虹"),  # two: too few
            ("犬", "RelatedTo", "猫"), ("犬", "RelatedTo", "狼"),
            ("犬", "RelatedTo", "狐")]  # fmt: skip
    sets, dropped = question_sets(_triples(rows), list(RELATIONS), 1, 0)
    assert len(sets) == 1
    s = sets.iloc[0]
    assert (s["source"], s["relation"], s["side"]) == ("台所", "AtLocation", "tail")
    assert sorted(s["targets"]) == ["まな板", "冷蔵庫", "包丁"]
    reasons = dropped.groupby("reason")["id"].apply(list).to_dict()
    assert "雨 Causes (head): 2 target(s)" in reasons["fewer_than_three_targets"]
    assert reasons["relation_not_used"] == ["犬 RelatedTo (head): 3 target(s)"]


def test_spelling_variant_targets_drop_the_set_and_more_sets_per_group_are_drawn():
    rows = [("家", "MadeOf", "木"), ("家", "MadeOf", "煉瓦"), ("家", "MadeOf", "レンガ")]
    sets, dropped = question_sets(_triples(rows), list(RELATIONS), 1, 0)
    assert sets.empty and dropped.loc[dropped["kind"] == "set", "reason"].tolist() == [
        "spelling_variants"]  # fmt: skip
    rows = [("犬", "CapableOf", t) for t in ("吠える", "泳ぐ", "走る", "眠る")]
    sets, _ = question_sets(_triples(rows), list(RELATIONS), 3, 0)
    assert len(sets) == 3 and len({tuple(sorted(t)) for t in sets["targets"]}) == 3


@pytest.mark.parametrize(
    ("written", "reason"),
    [("ぶどう@メロン", None), ("ぶどう", "malformed_distractors"),
     ("a@b@c", "malformed_distractors"), ("ぶどう@", "malformed_distractors"),
     ("陸地@海", "existing_choice"),
     ("海@海", "existing_choice"), ("レンガ@海", "existing_choice"),
     ("果物@海", "distractor_in_question")],
)  # fmt: skip
def test_the_two_distractor_filters(written, reason):
    """JGLUE's guideline: no choice already there (spelling variants and identical words
    included), no word of the question."""
    _, why = check_distractors("甘くて赤い果物といえば何？", ["りんご", "陸地", "煉瓦"], written)
    assert why == reason


def test_a_question_is_kept_when_two_of_three_answer_right():
    qs = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "answer": ["谷", "谷", "谷", "谷"]})
    given = {"a": ["谷", "谷", "海"], "b": ["谷", "海", UNKNOWN], "c": ["谷", "谷", "谷"]}
    kept, dropped, fig = answer_rule(qs, given, 2)
    assert kept["item_id"].tolist() == ["a", "c"]
    assert dict(zip(dropped["id"], dropped["reason"], strict=True)) == {
        "b": "too_few_correct", "d": "not_answered"}  # fmt: skip
    assert fig == {"answers": 9, "accuracy": round(6 / 9, 4), "unknown_share": round(1 / 9, 4)}
    kept, _, _ = answer_rule(qs, given, 3)
    assert kept["item_id"].tolist() == ["c"]


def test_the_demo_triples_and_writers_read():
    t = read_triples(ROOT / "data" / "demo" / "jcqa" / "triples.tsv")
    assert len(t) == 28 and "RelatedTo" in set(t["relation"])


def test_the_last_filter_matches_jglues_patterns_then_a_person_removes():
    """JGLUE 3.4.2: "Finally, we filtered out 14 questions based on automatic pattern
    matching and manual checking": a kept question that fails one of JGLUE's question
    filters on its five choices, or repeats a kept question, goes to a checker; only
    those most checkers remove are dropped."""
    from pipelines.families.jcqa.check import check_items, checked

    five = {
        "choice0": "台所",
        "choice1": "浴室",
        "choice2": "寝室",
        "choice3": "庭",
        "choice4": "駅",
    }
    qs = pd.DataFrame(
        [
            {"item_id": "q1", "question": "料理をする場所は？", "answer": "台所", **five},
            {"item_id": "q2", "question": "料理を する場所は？", "answer": "台所", **five},
            {"item_id": "q3", "question": "体を洗う場所は", "answer": "浴室", **five},
            {"item_id": "q4", "question": "眠る場所は？", "answer": "寝室",
             **{**five, "choice3": "寝室"}},
        ]
    )  # fmt: skip
    items = check_items(qs, simulated=True)
    assert items[["item_id", "match"]].values.tolist() == [
        ["q2", "repeated_question"], ["q3", "no_question_mark"],
        ["q4", "spelling_variants"]]  # fmt: skip
    assert set(items["sim_decision"]) == {"remove"}
    votes = pd.DataFrame({"item_id": ["q2", "q3", "q3", "q4"], "field": ["decision"] * 4,
                          "value": ["keep", "remove", "remove", "remove"],
                          "cancelled": [False, False, False, True]})  # fmt: skip
    removed, dropped = checked(votes, items)
    assert removed == {"q3"}  # q2 kept by its checker; q4's only vote was a skip
    assert dropped[0]["reason"] == "manual_check" and "no_question_mark" in dropped[0]["detail"]


def test_the_final_check_runs_before_the_split_unless_the_recipe_departs():
    from pipelines.core.recipe import load_recipe
    from pipelines.rebuild.kinds import task_kind

    recipe = load_recipe(ROOT / "recipes" / "jcqa-demo.yaml")
    steps = task_kind("jcqa").steps_for(recipe)
    at = steps.index("answers")
    assert steps[at + 1 : at + 8] == ["check-items", "push-check", "simulate-check",
                                      "wait-check", "pull-check", "check", "split"]  # fmt: skip
    recipe = load_recipe(ROOT / "recipes" / "jcqa-demo.yaml", {"jcqa": {"final_check": False}})
    assert "check-items" not in task_kind("jcqa").steps_for(recipe)


def test_a_writing_task_its_writer_reported_is_dropped_as_reported():
    """jcqa_writing.xml's report ``cannot_write`` (no quiz separates the three choices)
    drops the task with the flag; a skipped annotation's report does not count (the skip
    passes the task to another writer), and a later annotation's neither."""
    from pipelines.families.jcqa.steps import first_reports

    rows = [
        ("a", 1, 1, "report", "cannot_write", False),
        ("b", 2, 1, "question", "怪我をした時に行くところは？", False),
        ("c", 3, 1, "report", "cannot_write", True),
        ("c", 4, 2, "question", "山と山の間にあるものは？", False),
        ("d", 5, 1, "question", "甘くて赤い果物といえば何？", False),
        ("d", 6, 2, "report", "cannot_write", False),
    ]
    table = pd.DataFrame(rows, columns=["item_id", "annotation_id", "created_at", "field",
                                        "value", "cancelled"])  # fmt: skip
    assert first_reports(table) == {"a": "cannot_write"}
    assert first_reports(table.iloc[0:0]) == {}


def test_the_answer_options_carry_the_hotkeys_1_to_6():
    """jcqa_answer.xml's options come from the task: the five choices in order, then
    わからない, each with its hotkey, the stored code the choice itself."""
    from pipelines.families.jcqa.steps import answer_options

    five = ["駅", "鉄道会社", "線路", "空港", "港"]
    options = answer_options({f"choice{i}": c for i, c in enumerate(five)})
    assert options == [{"value": c, "alias": c, "hotkey": str(k)}
                       for k, c in enumerate([*five, UNKNOWN], start=1)]  # fmt: skip
