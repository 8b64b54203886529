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
