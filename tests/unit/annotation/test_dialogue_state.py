"""The dialogue-state value type (KLUE-WoS, issue 58): a ``<Taxonomy>`` of the closed
slots' values and a typed box for the open ones, read as one state per user turn; its
agreement measures, the per-turn vote and the simulated annotator. The result shapes
are the ones Label Studio 1.23 stores (taken from a real server's export)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pipelines.agreement.rules import SpanVoteSettings, span_vote_rule
from pipelines.annotation.annotate import flatten_result
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.simulate import Annotator
from pipelines.annotation.values import VALUE_TYPES, value_type_of

XML = """<View>
  <Paragraphs name="dialogue" value="$dialogue" layout="dialogue" nameKey="author" textKey="text"/>
  <Taxonomy name="state" toName="dialogue" leafsOnly="true" pathSeparator="-">
    <Choice value="식당">
      <Choice value="지역"><Choice value="서울 중앙"/><Choice value="서울 북쪽"/><Choice value="dontcare"/></Choice>
      <Choice value="종류"><Choice value="한식당"/><Choice value="양식당"/></Choice>
      <Choice value="이름"><Choice value="dontcare"/></Choice>
    </Choice>
  </Taxonomy>
  <TextArea name="state_typed" toName="dialogue"/>
</View>"""  # noqa: E501
CONFIG = parse_label_config(XML)
STATE = VALUE_TYPES.get("dialogue_state")


def _result(chosen: list[str], typed: list[str]) -> list[dict]:
    out = []
    if chosen:
        out.append({"id": "t1", "from_name": "state", "to_name": "dialogue", "type": "taxonomy",
                    "value": {"taxonomy": [c.split("-", 2) for c in chosen]}})  # fmt: skip
    if typed:
        out.append({"id": "t2", "from_name": "state_typed", "to_name": "dialogue",
                    "type": "textarea", "value": {"text": typed}})  # fmt: skip
    return out


def test_the_taxonomys_leaves_are_its_paths_and_it_is_a_dialogue_state() -> None:
    control = CONFIG.control("state")
    assert control.options == (
        "식당-지역-서울 중앙",
        "식당-지역-서울 북쪽",
        "식당-지역-dontcare",
        "식당-종류-한식당",
        "식당-종류-양식당",
        "식당-이름-dontcare",
    )
    assert value_type_of(control, None).name == "dialogue_state"


def test_a_turns_state_is_the_chosen_leaves_and_the_typed_lines() -> None:
    got = dict(flatten_result(_result(["식당-종류-한식당", "식당-지역-서울 중앙"],
                                      ["식당-이름-뽀식이네 감자탕\n", " 식당-예약 시간-18:00 "]),
                              CONFIG))  # fmt: skip
    assert json.loads(got["state"]) == ["식당-예약 시간-18:00", "식당-이름-뽀식이네 감자탕",
                                        "식당-종류-한식당", "식당-지역-서울 중앙"]  # fmt: skip
    typed_only = dict(flatten_result(_result([], ["식당-이름-뽀식이네 감자탕"]), CONFIG))
    assert json.loads(typed_only["state"]) == ["식당-이름-뽀식이네 감자탕"]
    assert dict(flatten_result([], CONFIG))["state"] == "[]"  # nothing yet: an answer too


def _ratings(*rows: tuple[str, str, list[str]]) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": i, "annotator_id": a, "value": json.dumps(sorted(s),
                          ensure_ascii=False)} for i, a, s in rows])  # fmt: skip


def test_joint_goal_agreement_slot_f1_and_per_slot_agreement() -> None:
    ratings = _ratings(
        ("t1", "a", ["식당-지역-서울 중앙", "식당-종류-한식당"]),
        ("t1", "b", ["식당-지역-서울 중앙", "식당-종류-한식당"]),
        ("t1", "c", ["식당-지역-서울 북쪽", "식당-종류-한식당"]),
        ("t2", "a", []),
        ("t2", "b", []),
    )
    m = STATE.measures(ratings)
    assert m["pairs"] == 4 and m["joint_goal_agreement"] == 0.5  # (a,b) t1 and t2 agree
    # t1: a-b 2 of 2, a-c 1, b-c 1 shared: F1 = 2 * 4 / (4 + 4 + 4)
    assert m["slot_f1"]["f1"] == round(8 / 12, 4)
    assert m["per_slot"]["식당-지역"] == {"pairs": 3, "agreement": round(1 / 3, 4)}
    assert m["per_slot"]["식당-종류"]["agreement"] == 1.0


def test_the_vote_keeps_what_two_of_three_gave_and_one_value_a_slot() -> None:
    ratings = _ratings(
        ("t1", "a", ["식당-지역-서울 중앙", "식당-종류-한식당"]),
        ("t1", "b", ["식당-지역-서울 중앙", "식당-종류-양식당"]),
        ("t1", "c", ["식당-지역-서울 북쪽", "식당-종류-한식당", "식당-이름-dontcare"]),
    )
    gold, dropped, _ = span_vote_rule(ratings, SpanVoteSettings(value_type="dialogue_state",
                                                                min_votes=2))  # fmt: skip
    assert json.loads(gold["label"].iloc[0]) == ["식당-종류-한식당", "식당-지역-서울 중앙"]
    assert sorted(d["reason"] for d in dropped) == ["few_votes"] * 3


def test_a_simulated_annotator_corrects_the_tracker_and_types_open_values() -> None:
    control = CONFIG.control("state")
    truth = ["식당-지역-서울 중앙", "식당-종류-한식당", "식당-이름-뽀식이네 감자탕"]
    data = {"sim_state": json.dumps(truth, ensure_ascii=False)}
    tracker = _result(["식당-지역-서울 중앙", "식당-종류-양식당"], [])  # one wrong, one missing
    good = Annotator(1, "a@example.org", 0.0, 0.5, 0.9, False)
    careless = Annotator(2, "b@example.org", 0.0, 0.5, 0.9, True)

    def answers(who: Annotator, suggestion: list[dict] | None) -> list[list[str]]:
        out = []
        for seed in range(300):
            regions = STATE.simulate(control, data, who, np.random.default_rng(seed), seed,
                                     suggestion=suggestion)  # fmt: skip
            chosen = [r for r in regions if r["from_name"] == "state"]
            out.append(json.loads(STATE.flatten(control, chosen, regions)[0]))
        return out

    fixed = answers(good, tracker)
    assert sum(a == sorted(truth) for a in fixed) / 300 > 0.6
    typed = [a for a in fixed if "식당-이름-뽀식이네 감자탕" in a]
    assert len(typed) > 200  # the open value typed as written
    assert sum("식당-종류-양식당" in a for a in fixed) < 60  # the tracker's error mostly fixed
    assert sum(a == sorted(truth) for a in answers(careless, tracker)) / 300 < 0.3
