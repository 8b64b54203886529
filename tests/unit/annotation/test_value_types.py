"""Annotation value types (issue 33, item 2): which control carries which type, how a
Label Studio result becomes rows, the measures (entity F1 against seqeval), the span
vote at its threshold, and the simulated annotator of each type."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from seqeval.metrics import f1_score

from pipelines.agreement.rules import AgreementError, AgreementSettings, agree
from pipelines.annotation.annotate import flatten_result
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.simulate import Annotator, simulated_annotation
from pipelines.annotation.values import VALUE_TYPES, value_type_of
from pipelines.annotation.values.spans import NO_ANSWER, answer_f1, span_id
from pipelines.annotation.values.tree import is_tree

SPANS_XML = """<View>
  <Labels name="entities" toName="text"><Label value="PS"/><Label value="OG"/></Labels>
  <Text name="text" value="$text"/>
  <Relations><Relation value="per:employee_of"/><Relation value="org:members"/></Relations>
</View>"""

QA_XML = """<View>
  <Text name="context" value="$context"/><Header value="$question"/>
  <Labels name="answer" toName="context"><Label value="answer"/></Labels>
</View>"""

TREE_XML = """<View>
  <Labels name="words" toName="text"><Label value="W"/></Labels>
  <Text name="text" value="$text"/>
  <Relations><Relation value="NP_SBJ"/><Relation value="VP"/><Relation value="NP_OBJ"/></Relations>
</View>"""

ALL_XML = """<View>
  <Text name="text" value="$text"/>
  <Choices name="label" toName="text"><Choice value="a"/><Choice value="b"/></Choices>
  <Choices name="tags" toName="text" choice="multiple"><Choice value="x"/></Choices>
  <Rating name="stars" toName="text" maxRating="5"/>
  <Number name="score" toName="text" min="0" max="5"/>
  <TextArea name="edit" toName="text"/>
</View>"""


def person(accuracy: float = 1.0, careless: bool = False, email: str = "a@x") -> Annotator:
    return Annotator(1, email, bias=0.0, noise=0.0, accuracy=accuracy, careless=careless)


def test_the_shipped_types_are_registered_and_each_control_finds_its_own():
    assert set(VALUE_TYPES.names()) >= {
        "choice", "multiple_choice", "rating", "free_text", "span_set", "relation",
        "answer_span", "dependency_tree",
    }  # fmt: skip
    config = parse_label_config(ALL_XML)
    kinds = {c.name: value_type_of(c).name for c in config.answer_controls}
    assert kinds == {"label": "choice", "tags": "multiple_choice", "stars": "rating",
                     "score": "rating", "edit": "free_text"}  # fmt: skip
    spans = parse_label_config(SPANS_XML)
    assert value_type_of(spans.control("entities")).name == "span_set"
    assert value_type_of(spans.control("relations")).name == "relation"
    assert value_type_of(spans.control("relations"), "dependency_tree").name == "dependency_tree"
    assert value_type_of(parse_label_config(QA_XML).control("answer")).name == "answer_span"
    with pytest.raises(ValueError, match="did you mean 'span_set'"):
        value_type_of(spans.control("entities"), "span_sets")


def test_plain_results_flatten_as_before():
    """Choices, text and ratings keep the rows they always had (the demos' bytes)."""
    result = [
        {"from_name": "label", "type": "choices", "value": {"choices": ["a"]}},
        {"from_name": "tags", "type": "choices", "value": {"choices": ["x", "y"]}},
        {"from_name": "edit", "type": "textarea", "value": {"text": ["one", "two"]}},
        {"from_name": "stars", "type": "rating", "value": {"rating": 4}},
        {"from_name": "score", "type": "number", "value": {"number": 2.5}},
    ]
    want = [("label", "a"), ("tags", "x|y"), ("edit", "one\ntwo"), ("stars", "4"),
            ("score", "2.5")]  # fmt: skip
    assert flatten_result(result) == want
    assert flatten_result(result, parse_label_config(ALL_XML)) == want


def _span(start: int, end: int, label: str, text: str, **extra: object) -> dict:
    return {
        "from_name": "entities",
        "to_name": "text",
        "type": "labels",
        "value": {"start": start, "end": end, "text": text, "labels": [label]},
        **extra,
    }


def test_spans_relations_answers_and_trees_become_one_canonical_row_each():
    config = parse_label_config(SPANS_XML)
    text = "김철수는 삼성전자에 다닌다"
    result = [
        _span(5, 9, "OG", text[5:9], id=span_id(5, 9, "OG")),
        _span(0, 3, "PS", text[0:3], id=span_id(0, 3, "PS")),
        {
            "from_id": span_id(0, 3, "PS"),
            "to_id": span_id(5, 9, "OG"),
            "type": "relation",
            "direction": "right",
            "labels": ["per:employee_of"],
        },
        {"from_id": "gone", "to_id": span_id(5, 9, "OG"), "type": "relation", "labels": ["x"]},
    ]
    rows = dict(flatten_result(result, config))
    spans = json.loads(rows["entities"])
    assert [(s["start"], s["end"], s["label"], s["text"]) for s in spans] == [
        (0, 3, "PS", "김철수"), (5, 9, "OG", "삼성전자")]  # fmt: skip
    assert json.loads(rows["relations"]) == [
        {"from": [0, 3, "PS"], "to": [5, 9, "OG"], "label": "per:employee_of"}]  # fmt: skip
    # an answered annotation that marked nothing: an empty set, not a missing row
    empty = dict(flatten_result([{"from_name": "other", "type": "choices",
                                  "value": {"choices": ["z"]}}], config))  # fmt: skip
    assert empty["entities"] == "[]" and empty["relations"] == "[]"

    qa = parse_label_config(QA_XML)
    context = "東京は日本の首都である"
    answered = [{"from_name": "answer", "type": "labels", "value": {
        "start": 0, "end": 2, "text": "東京", "labels": ["answer"]}}]  # fmt: skip
    assert json.loads(dict(flatten_result(answered, qa))["answer"]) == {
        "start": 0, "end": 2, "text": context[:2]}  # fmt: skip
    other = [{"from_name": "note", "type": "textarea", "value": {"text": ["?"]}}]
    assert dict(flatten_result(other, qa))["answer"] == NO_ANSWER

    tree_config = parse_label_config(TREE_XML)
    tree_config = type(tree_config)(
        tree_config.xml,
        tree_config.data_fields,
        tree_config.controls,
        (("relations", "dependency_tree"),),
    )
    words = [
        {
            "id": f"w{i}",
            "from_name": "words",
            "type": "labels",
            "value": {"start": 0, "end": 1, "text": "w", "labels": ["W"]},
        }
        for i in (1, 2, 3)
    ]
    arcs = [
        {"from_id": "w1", "to_id": "w3", "type": "relation", "labels": ["NP_SBJ"]},
        {"from_id": "w2", "to_id": "w3", "type": "relation", "labels": ["NP_OBJ"]},
    ]
    tree = json.loads(dict(flatten_result(words + arcs, tree_config))["relations"])
    assert tree == [[3, "NP_SBJ"], [3, "NP_OBJ"], [0, "ROOT"]]


def _bio(spans: list[tuple[int, int, str]], length: int) -> list[str]:
    tags = ["O"] * length
    for start, end, label in spans:
        tags[start] = f"B-{label}"
        for i in range(start + 1, end):
            tags[i] = f"I-{label}"
    return tags


def _span_rows(by_annotator: dict[str, dict[str, list[tuple]]]) -> pd.DataFrame:
    rows = []
    for who, items in by_annotator.items():
        for item, spans in items.items():
            value = [{"start": s, "end": e, "label": lab, "text": ""} for s, e, lab in spans]
            rows.append({"item_id": item, "annotator_id": who, "value": json.dumps(value)})
    return pd.DataFrame(rows)


def test_entity_f1_between_two_annotators_is_seqevals_entity_f1():
    """Entity-level F1 of one annotator against the other is symmetric and equals
    seqeval's micro F1 over the same sentences (exact start, end and type)."""
    a = {"s1": [(0, 3, "PS"), (5, 9, "OG")], "s2": [(2, 4, "DT")], "s3": [],
         "s4": [(0, 2, "PS"), (3, 6, "LC"), (7, 9, "QT")]}  # fmt: skip
    b = {"s1": [(0, 3, "PS"), (5, 8, "OG")], "s2": [(2, 4, "TI")], "s3": [(1, 2, "QT")],
         "s4": [(0, 2, "PS"), (3, 6, "LC"), (7, 9, "QT")]}  # fmt: skip
    ratings = _span_rows({"a": a, "b": b})
    ours = VALUE_TYPES.get("span_set").measures(ratings, {"lengths": dict.fromkeys(a, 10)})
    expected = f1_score([_bio(a[k], 10) for k in sorted(a)], [_bio(b[k], 10) for k in sorted(b)])
    assert ours["entity_f1"]["f1"] == pytest.approx(expected, abs=1e-4)
    # 4 spans shared, 6 and 7 marked: 2 * 4 / 13
    assert ours["entity_f1"] == {"f1": pytest.approx(8 / 13, abs=1e-4), "pairs": 4, "exact": 0.25}
    same = VALUE_TYPES.get("span_set").measures(_span_rows({"a": a, "b": a}), {})
    assert same["entity_f1"]["f1"] == 1.0 and same["character_alpha"] == 1.0
    assert 0 < ours["character_alpha"] < 1


def test_span_vote_keeps_what_min_votes_annotators_share_and_records_the_rest():
    """KLUE 3.4.1 without a review: the spans K of the annotators marked. At the
    threshold: 2 of 3 keep a span, 1 of 3 does not; a voted span overlapping one with
    more votes goes; every left-out span is a dropped row with its reason."""
    ratings = _span_rows({
        "a": {"s1": [(0, 3, "PS"), (5, 9, "OG")], "s2": []},
        "b": {"s1": [(0, 3, "PS"), (5, 8, "OG")], "s2": []},
        "c": {"s1": [(0, 3, "PS"), (5, 8, "OG"), (6, 9, "LC")], "s2": [(0, 1, "QT")]},
    })  # fmt: skip
    settings = AgreementSettings(rule="span_vote", min_votes=2)
    result = agree(ratings, settings)
    gold = result["gold"].set_index("item_id")
    assert [(s["start"], s["end"], s["label"]) for s in json.loads(gold.at["s1", "label"])] == [
        (0, 3, "PS"), (5, 8, "OG")]  # fmt: skip
    assert gold.at["s2", "label"] == "[]"  # two of three marked nothing
    dropped = result["dropped"]
    spans = dropped[dropped["kind"] == "span"]
    assert sorted(spans["reason"]) == ["few_votes", "few_votes", "few_votes"]
    assert len(spans) + sum(gold["elements"]) == 5  # the distinct spans marked, each accounted
    figures = result["figures"]
    assert figures["value_type"] == "span_set"
    assert figures["measures"] == ["entity_f1", "character_alpha"]
    # conflict: with K = 1 every span is voted; the overlapping ones with fewer votes go
    loose = agree(ratings, AgreementSettings(rule="span_vote", min_votes=1))
    reasons = loose["dropped"].query("kind == 'span'").set_index("id")["reason"].to_dict()
    assert reasons == {'s1/[5, 9, "OG"]': "conflict", 's1/[6, 9, "LC"]': "conflict"}
    with pytest.raises(AgreementError, match="needs --min-votes"):
        AgreementSettings(rule="span_vote")
    with pytest.raises(AgreementError, match="not voted on element by element"):
        AgreementSettings(rule="span_vote", min_votes=2, value_type="choice")
    with pytest.raises(AgreementError, match="rule 'mean' cannot aggregate span_set"):
        agree(ratings, AgreementSettings(rule="mean"), value_type="span_set")


def test_span_vote_screens_an_annotator_far_from_the_others_majority():
    """Issue 35 item 3: the span rule's screening (``element_f1_min``): an annotator's
    mean element F1 against the spans most of the others marked, at the threshold
    (exactly at it stays), over ``min_screened_items`` items or more."""
    good = {f"s{k}": [(0, 3, "PS"), (5, 8, "OG")] for k in range(4)}
    half = {f"s{k}": [(0, 3, "PS")] for k in range(4)}  # F1 2/3 on every item
    ratings = _span_rows({"a": good, "b": good, "c": good, "f": good, "d": half,
                          "e": {f"s{k}": [(9, 12, "LC")] for k in range(4)}})  # fmt: skip
    settings = AgreementSettings(rule="span_vote", min_votes=2, element_f1_min=2 / 3)
    result = agree(ratings, settings)
    screened = result["dropped"].query("kind == 'annotator'").set_index("id")["reason"]
    assert screened.to_dict() == {"e": "low_element_f1"}  # d at 2/3 exactly stays
    stricter = agree(ratings, AgreementSettings(rule="span_vote", min_votes=2,
                                                element_f1_min=0.7))  # fmt: skip
    assert set(stricter["dropped"].query("kind == 'annotator'")["id"]) == {"d", "e"}
    few = agree(ratings, AgreementSettings(rule="span_vote", min_votes=2, element_f1_min=0.7,
                                           min_screened_items=5))  # fmt: skip
    assert not len(few["dropped"].query("kind == 'annotator'"))  # 4 items < 5: not judged
    with pytest.raises(AgreementError, match="element_f1_min must be in"):
        AgreementSettings(rule="span_vote", min_votes=2, element_f1_min=1.5)
    # an item only the screened annotator marked keeps no rating: dropped with its reason
    alone = _span_rows({"a": good, "b": good, "c": good, "f": good, "d": half,
                        "e": {**{f"s{k}": [(9, 12, "LC")] for k in range(4)},
                              "s9": [(0, 1, "QT")]}})  # fmt: skip
    result = agree(alone, settings)
    items = result["dropped"].query("kind == 'item'").set_index("id")["reason"].to_dict()
    assert items == {"s9": "annotators_screened"}
    assert result["figures"]["items"] == result["figures"]["gold_items"] + 1


def test_answer_spans_exact_match_character_f1_and_a_majority():
    def row(who: str, item: str, start: int | None, text: str = "") -> dict:
        value = (
            NO_ANSWER
            if start is None
            else json.dumps(
                {"end": start + len(text), "start": start, "text": text}, ensure_ascii=False
            )
        )
        return {"item_id": item, "annotator_id": who, "value": value}

    ratings = pd.DataFrame([
        row("a", "q1", 0, "東京都"), row("b", "q1", 0, "東京都"), row("c", "q1", 0, "東京"),
        row("a", "q2", None), row("b", "q2", None), row("c", "q2", 3, "日本"),
    ])  # fmt: skip
    kind = VALUE_TYPES.get("answer_span")
    assert answer_f1(ratings.value[0], ratings.value[2]) == pytest.approx(0.8)  # 2 of 3 / 2 of 2
    measures = kind.measures(ratings)
    # q1: (1, 0.8, 0.8); q2: (1, 0, 0): EM 2 of 6, F1 (1 + 0.8 + 0.8 + 1) / 6
    assert measures == {
        "exact_match": pytest.approx(2 / 6, abs=1e-4),
        "character_f1": pytest.approx(3.6 / 6, abs=1e-4),
        "pairs": 6,
    }
    result = agree(ratings, AgreementSettings(rule="majority", min_votes=2), "answer_span")
    gold = result["gold"].set_index("item_id")["label"]
    assert json.loads(gold["q1"])["text"] == "東京都" and gold["q2"] == NO_ANSWER


def test_trees_attachment_scores_and_a_vote_that_must_make_a_tree():
    def tree(*arcs: tuple[int, str]) -> str:
        return json.dumps([list(a) for a in arcs])

    good = tree((3, "NP_SBJ"), (3, "NP_OBJ"), (0, "VP"))
    ratings = pd.DataFrame([
        {"item_id": "t1", "annotator_id": "a", "value": good},
        {"item_id": "t1", "annotator_id": "b", "value": tree((3, "NP_SBJ"), (1, "NP_OBJ"),
                                                            (0, "VP"))},
        {"item_id": "t1", "annotator_id": "c", "value": tree((3, "NP_OBJ"), (3, "NP_OBJ"),
                                                            (0, "VP"))},
        {"item_id": "t2", "annotator_id": "a", "value": tree((2, "X"), (0, "VP"))},
        {"item_id": "t2", "annotator_id": "b", "value": tree((0, "VP"), (1, "X"))},
    ])  # fmt: skip
    measures = VALUE_TYPES.get("dependency_tree").measures(ratings)
    # t1: a-b heads 2/3 labels 2/3, a-c 3/3 2/3, b-c 2/3 1/3; t2: 0/2 0/2
    assert measures == {"uas": pytest.approx(7 / 11, abs=1e-4),
                        "las": pytest.approx(5 / 11, abs=1e-4), "pairs": 4}  # fmt: skip
    result = agree(ratings, AgreementSettings(rule="span_vote", min_votes=2,
                                              value_type="dependency_tree"))  # fmt: skip
    gold = result["gold"].set_index("item_id")["label"]
    assert json.loads(gold["t1"]) == json.loads(good)
    assert result["dropped"].query("kind == 'item'")["id"].tolist() == ["t2"]
    assert is_tree([3, 3, 0]) and not is_tree([2, 1, 0]) and not is_tree([0, 0])


def test_each_type_simulates_answers_that_flatten_back():
    config = parse_label_config(SPANS_XML)
    text = "김철수는 삼성전자에 다닌다"
    truth = [{"start": 0, "end": 3, "label": "PS"}, {"start": 5, "end": 9, "label": "OG"}]
    data = {
        "item_id": "s1",
        "text": text,
        "sim_entities": truth,
        "sim_relations": [{"from": truth[0], "to": truth[1], "label": "per:employee_of"}],
    }
    exact = simulated_annotation(config, data, person(1.0), 7, "s1", can_skip=False)
    rows = dict(flatten_result(exact["result"], config))
    assert [(s["start"], s["end"], s["label"]) for s in json.loads(rows["entities"])] == [
        (0, 3, "PS"), (5, 9, "OG")]  # fmt: skip
    assert json.loads(rows["relations"])[0]["label"] == "per:employee_of"
    again = simulated_annotation(config, data, person(1.0), 7, "s1", can_skip=False)
    assert again == exact  # seeded
    # a noisy annotator over many items slips sometimes, never invents a new span
    slips = 0
    for i in range(60):
        payload = simulated_annotation(
            config,
            {**data, "item_id": f"s{i}"},
            person(0.5, email="b@x"),
            7,
            f"s{i}",
            can_skip=False,
        )
        got = {(s["start"], s["end"]) for s in json.loads(
            dict(flatten_result(payload["result"], config))["entities"])}  # fmt: skip
        slips += got != {(0, 3), (5, 9)}
        assert got <= {(0, 3), (5, 9), (0, 2), (5, 8)}
    assert 10 < slips < 60

    qa = parse_label_config(QA_XML)
    answer = simulated_annotation(qa, {"item_id": "q", "context": "東京は日本の首都",
                                       "sim_answer": {"start": 0, "end": 2}}, person(), 1, "q",
                                  can_skip=False)  # fmt: skip
    assert json.loads(dict(flatten_result(answer["result"], qa))["answer"])["text"] == "東京"
    none = simulated_annotation(qa, {"item_id": "q", "context": "x", "sim_answer": None},
                                person(), 1, "q", can_skip=False)  # fmt: skip
    assert none["result"] == [] or dict(flatten_result(none["result"], qa))["answer"] == NO_ANSWER

    stars = parse_label_config(ALL_XML)
    rated = simulated_annotation(stars, {"item_id": "r", "text": "t", "sim_stars": 4},
                                 person(), 1, "r", can_skip=False)  # fmt: skip
    assert dict(flatten_result(rated["result"], stars))["stars"] == "4"


def _tree_sim(truth, suggestion, accuracy, careless=False, runs=400):  # noqa: ANN001, ANN202
    """The heads simulated annotators give over ``runs`` seeds."""
    import numpy as np

    from pipelines.annotation.simulate import Annotator
    from pipelines.annotation.values.tree import WORD_ID

    control = parse_label_config(TREE_XML).control("relations")
    who = Annotator(1, "a@example.org", 0.0, 0.5, accuracy, careless)
    data = {"words": [f"w{i}" for i in range(len(truth))], "head_final": True,
            "sim_relations": json.dumps(truth)}  # fmt: skip
    kind = VALUE_TYPES.get("dependency_tree")
    out = []
    for seed in range(runs):
        regions = kind.simulate(control, data, who, np.random.default_rng(seed), seed,
                                suggestion=suggestion)  # fmt: skip
        heads = [0] * len(truth)
        for r in regions:
            if r.get("type") == "relation":
                heads[int(WORD_ID.match(r["from_id"]).group(1)) - 1] = int(r["to_id"][1:])
        out.append(heads)
    return out


def test_a_simulated_tree_corrector_reads_the_suggestion_and_errs_near_and_projectively():
    from pipelines.families.klue.dp import prediction
    from pipelines.families.klue.dp_layout import non_projective

    truth = [[2, "NP_SBJ"], [6, "NP_OBJ"], [4, "NP_SBJ"], [5, "NP_OBJ"], [6, "VP"], [0, "VP"]]
    heads = [h for h, _ in truth]
    words = [f"w{i}" for i in range(6)]
    right = json.loads(prediction(words, heads, [lab for _, lab in truth], "t"))["result"]
    wrong_heads = [2, 6, 5, 5, 6, 0]  # word 3 shown attached to 5, not 4
    wrong = json.loads(prediction(words, wrong_heads, ["NP_SBJ"] * 5 + ["VP"], "t"))["result"]
    p = 0.8
    # a right suggestion is kept but for slips: far better than answering from nothing
    kept = sum(h == heads for h in _tree_sim(truth, right, p)) / 400
    alone = sum(h == heads for h in _tree_sim(truth, None, p)) / 400
    assert kept > 0.75 > alone
    # a shown error is fixed about p of the time, else left as it was shown
    third = [h[2] for h in _tree_sim(truth, wrong, p)]
    assert abs(third.count(4) / 400 - p) < 0.06 and third.count(4) + third.count(5) > 390
    # errors are head-final near misses that cross no true arc
    for got in _tree_sim(truth, None, 0.6):
        assert all(h > d for d, h in enumerate(got[:-1], start=1)) and got[-1] == 0
        assert not non_projective(got)
    # a careless annotator ignores the suggestion and attaches anywhere later
    careless = _tree_sim(truth, right, 0.9, careless=True)
    assert sum(h == heads for h in careless) / 400 < 0.2
    assert any(non_projective(h) for h in careless)
