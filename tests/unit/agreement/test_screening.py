"""Who counts in a round's agreement (issue 35): a pilot's qualified set and control
items, applied before every rule, with every excluded row kept with its reason."""

from __future__ import annotations

import pandas as pd
import pytest

from pipelines.agreement.rules import AgreementSettings, agree
from pipelines.agreement.screening import PeopleScreen, screen_people

CONTROLS = pd.DataFrame({"item_id": ["c1", "c2", "c3", "c4"], "value": ["2", "4", "0", "5"]})


def _table(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "item_id": i,
                "annotator_id": a,
                "field": "similarity",
                "value": v,
                "annotation_id": n,
                "cancelled": False,
                "report_flags": "",
            }
            for n, (i, a, v) in enumerate(rows)
        ]  # fmt: skip
    )


def _round() -> pd.DataFrame:
    rows = []
    truth = {"i1": "1", "i2": "3", "i3": "4", "i4": "2"}
    for who, shift in (("a", 0), ("b", 0), ("c", 1), ("bad", 0), ("lazy", 0)):
        for item, value in truth.items():
            rows.append((item, who, str(min(5, int(value) + shift))))
        for item, value in zip(CONTROLS["item_id"], CONTROLS["value"], strict=True):
            answer = "5" if who == "lazy" and item != "c4" else value  # lazy: 1 of 4 right
            rows.append((item, who, str(answer)))
    return _table(rows)


def test_unqualified_and_low_control_accuracy_annotators_are_excluded_with_reasons():
    frame = _round()
    screen = PeopleScreen(qualified={"a", "b", "c", "lazy"}, controls=CONTROLS,
                          min_accuracy=0.5, min_answered=3)  # fmt: skip
    kept, excluded, dropped, figures = screen_people(frame, screen)
    assert len(frame) == len(kept) + len(excluded)  # nothing lost
    assert set(kept["annotator_id"]) == {"a", "b", "c"}
    assert not kept["item_id"].isin(CONTROLS["item_id"]).any()
    reasons = excluded.groupby("reason")["annotation_id"].count().to_dict()
    assert reasons == {"control_item": 20, "not_qualified": 4, "low_control_accuracy": 4}
    assert {(d["id"], d["reason"]) for d in dropped} == {
        ("bad", "not_qualified"), ("lazy", "low_control_accuracy")}  # fmt: skip
    table = {r["annotator_id"]: r for r in figures["controls"]["annotators"]}
    assert table["lazy"]["accuracy"] == 0.25 and table["a"]["accuracy"] == 1.0
    assert "bad" not in table  # the unqualified are out before the controls count
    assert figures["pilot"]["excluded_annotators"] == ["bad"]


def test_the_control_threshold_is_inclusive_and_needs_min_answered():
    frame = _round()
    at = PeopleScreen(controls=CONTROLS, min_accuracy=0.25, min_answered=3)
    assert "lazy" in set(screen_people(frame, at)[0]["annotator_id"])  # 0.25 is not < 0.25
    few = PeopleScreen(controls=CONTROLS, min_accuracy=0.5, min_answered=5)
    assert "lazy" in set(screen_people(frame, few)[0]["annotator_id"])  # 4 answered < 5


def test_the_writers_label_of_an_nli_item_is_not_screened_by_the_validators_pilot():
    frame = _table([("i1", "a", "entailment"), ("i1", "writer-1", "entailment")])
    frame["role"] = ["validator", "author"]
    kept, excluded, _, _ = screen_people(frame, PeopleScreen(qualified={"a"}))
    assert sorted(kept["annotator_id"]) == ["a", "writer-1"] and excluded.empty


def test_agree_screens_before_the_mean_rule_and_drops_items_left_without_annotations():
    frame = _round()
    only_bad = _table([("i9", "bad", "3")]).assign(annotation_id=999)
    frame = pd.concat([frame, only_bad], ignore_index=True)
    settings = AgreementSettings(rule="mean", pearson_min=None, alpha_min=None, sd_max=None)
    screen = PeopleScreen(qualified={"a", "b", "c", "lazy"}, controls=CONTROLS,
                          min_accuracy=0.5)  # fmt: skip
    result = agree(frame, settings, people=screen)
    figures = result["figures"]
    assert figures["items"] == 5  # i1-i4 and i9; the controls are not items
    assert figures["dropped_items"] == {"no_annotations_left": 1}
    assert figures["dropped_annotators"] == {"low_control_accuracy": 1, "not_qualified": 1}
    assert figures["annotators"] == 3 and set(result["gold"]["item_id"]) == {"i1", "i2", "i3", "i4"}
    assert figures["people"]["excluded_rows"]["not_qualified"] == 5
    assert len(result["excluded"]) == 29


def test_agree_screens_before_the_majority_rule_too():
    frame = _round()
    frame["value"] = frame["value"].map({"0": "x", "1": "y", "2": "z", "3": "y", "4": "x",
                                         "5": "z"})  # fmt: skip
    controls = CONTROLS.assign(value=CONTROLS["value"].map({"2": "z", "4": "x", "0": "x",
                                                            "5": "z"}))  # fmt: skip
    settings = AgreementSettings(rule="majority", min_votes=2)
    result = agree(frame, settings, people=PeopleScreen(controls=controls, min_accuracy=0.9))
    assert result["figures"]["dropped_annotators"] == {"low_control_accuracy": 1}


def test_screening_everyone_away_is_an_error():
    frame = _round()
    with pytest.raises(ValueError, match="no annotation is left"):
        agree(frame, AgreementSettings(rule="mean"), people=PeopleScreen(qualified={"nobody"}))


# ------------------------------------------------------------ review of reported items


def _reported_round() -> pd.DataFrame:
    rows = []
    for who in ("a", "b", "c"):
        for item, value in (("i1", "1"), ("i2", "3"), ("i3", "4"), ("i4", "2"), ("i5", "5")):
            rows.append((item, who, value))
    frame = _table(rows)
    frame.loc[(frame["item_id"] == "i1") & (frame["annotator_id"] == "a"), "report_flags"] = (
        "hate_or_bias"
    )
    for item in ("i2", "i3", "i4"):
        frame.loc[(frame["item_id"] == item) & (frame["annotator_id"] == "b"), "report_flags"] = (
            "personal_information"
        )
    return frame


def _review_rows(decisions: dict[str, tuple[str, str, str | None]]) -> pd.DataFrame:
    rows = []
    for n, (item, (decision, reason, fixed)) in enumerate(decisions.items()):
        for field, value in (("decision", decision), ("reason", reason),
                             ("sentence1", fixed or "원문")):  # fmt: skip
            rows.append({"item_id": item, "annotation_id": n, "annotator_id": "rev",
                         "field": field, "value": value, "cancelled": False})  # fmt: skip
    return pd.DataFrame(rows)


def test_reported_items_are_decided_by_their_review_not_dropped_automatically():
    """Issue 35 item 4 (KLUE-STS 3.2.1: "we inspect the reported sentences"): keep and
    fix keep the item (the decision and reviewer with it), drop drops it with the
    reviewer's reason, an item nobody reviewed is dropped as ``auto`` would."""
    from pipelines.agreement.review import apply_fixes, reported_items, review_table

    frame = _reported_round()
    auto = AgreementSettings(rule="mean", pearson_min=None, alpha_min=None, sd_max=None)
    assert agree(frame, auto)["figures"]["dropped_items"] == {
        "hate_or_bias": 1, "personal_information": 3}  # fmt: skip
    review = AgreementSettings(rule="mean", pearson_min=None, alpha_min=None, sd_max=None,
                               reports="review")  # fmt: skip
    reported = reported_items(frame, review)
    assert reported["item_id"].tolist() == ["i1", "i2", "i3", "i4"]
    shown = reported.assign(sentence1="원문")
    reviews = review_table(
        _review_rows(
            {
                "i1": ("keep", "not hateful", None),
                "i2": ("drop", "a phone number", None),
                "i3": ("fix", "masked", "원*"),
            }
        ),  # fmt: skip
        shown,
        ["sentence1"],
    )
    fixes = {
        i: f if isinstance(f, str) else None
        for i, f in zip(reviews["item_id"], reviews["fix"], strict=True)
    }
    assert fixes == {"i1": None, "i2": None, "i3": '{"sentence1": "원*"}'}  # fmt: skip
    result = agree(frame, review, reviews=reviews)
    figures = result["figures"]
    assert figures["dropped_items"] == {"personal_information": 2}  # i2 (reviewed), i4 (not)
    dropped = result["dropped"].set_index("id")["detail"]
    assert "review by rev: drop: a phone number" in dropped["i2"]
    assert "not reviewed" in dropped["i4"]
    assert figures["review"] == {"reported": 4, "kept": 1, "fixed": 1, "fix_without_change": 0,
                                 "dropped": 1, "not_reviewed": 1, "reviewers": ["rev"]}  # fmt: skip
    gold = result["gold"].set_index("item_id")
    assert gold.at["i1", "review_decision"] == "keep" and gold.at["i1", "reviewer"] == "rev"
    assert gold.at["i3", "review_decision"] == "fix"
    items = pd.DataFrame({"item_id": ["i1", "i3"], "sentence1": ["원문", "원문"]})
    fixed = apply_fixes(items, result["gold"])
    assert fixed["sentence1"].tolist() == ["원문", "원*"]


def test_a_review_decision_outside_keep_drop_fix_is_an_error():
    from pipelines.agreement.review import review_table

    bad = _review_rows({"i1": ("maybe", "", None)})
    with pytest.raises(ValueError, match="decision 'maybe'"):
        review_table(bad, pd.DataFrame({"item_id": ["i1"], "sentence1": ["원문"]}), ["sentence1"])
    with pytest.raises(ValueError, match="reports must be one of"):
        agree(_reported_round(), AgreementSettings(rule="mean", reports="later"))
