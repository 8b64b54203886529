"""A pulled row carries the task's pre-loaded suggestion, and the simulated account that
trusts the model submits it unchanged (issue 55)."""

from __future__ import annotations

import json

from pipelines.annotation.annotate import annotations_table
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.simulate import Annotator, plan

XML = """<View><Labels name="entities" toName="text"><Label value="PS 인물" alias="PS" hotkey="1"/>
<Label value="LC 지명" alias="LC" hotkey="2"/></Labels><Text name="text" value="$text"/>
<Choices name="report" toName="text" choice="multiple">
<Choice value="혐오" alias="hate_or_bias" hotkey="q"/></Choices></View>"""


def region(start: int, end: int, label: str) -> dict:
    return {"from_name": "entities", "to_name": "text", "type": "labels",
            "value": {"start": start, "end": end, "text": "x", "labels": [label]}}  # fmt: skip


def test_the_pulled_row_holds_the_suggestion_beside_the_value() -> None:
    config = parse_label_config(XML)
    assert config.control("entities").options == ("PS", "LC")  # the stored codes
    task = {"id": 1, "data": {"item_id": "s1", "text": "홍길동은 서울"},
            "predictions": [{"result": [region(0, 3, "PS"), region(5, 7, "LC")]}],
            "annotations": [{"id": 9, "completed_by": 3,
                             "result": [region(0, 3, "PS")]}]}  # fmt: skip
    table = annotations_table([task], {3: "a@x.org"}, "p", config)
    row = table[table["field"] == "entities"].iloc[0]
    assert [(s["start"], s["end"], s["label"]) for s in json.loads(row["value"])] == [(0, 3, "PS")]
    assert [s["label"] for s in json.loads(row["suggested"])] == ["PS", "LC"]
    task.pop("predictions")
    assert annotations_table([task], {}, "p", config)["suggested"].isna().all()


def test_the_accepting_account_submits_the_prediction_and_others_do_not() -> None:
    config = parse_label_config(XML)
    people = [Annotator(i, f"a{i}@simulated.benchforge.local", 0.0, 0.5, 0.8, False,
                        accepts=i == 2) for i in range(3)]  # fmt: skip
    suggestion = [region(0, 3, "PS")]
    tasks = [{"data": {"item_id": str(n), "text": "홍길동은 서울",
                       "sim_entities": json.dumps([{"start": 5, "end": 7, "label": "LC"}])},
              "annotations": [], "predictions": [{"result": suggestion}]}
             for n in range(6)]  # fmt: skip
    jobs = plan(config, tasks, people, 3, seed=0)
    by = {(i, who.user_id): p for i, who, p in jobs if not p["was_cancelled"]}
    accepted = [p["result"] for (i, u), p in by.items() if u == 2]
    assert accepted and all(r == suggestion for r in accepted)
    assert all(p["result"] != suggestion for (i, u), p in by.items() if u != 2)
    pilot = plan(config, tasks, people, 3, seed=0, phase="pilot")
    assert all(p["result"] != suggestion for _, who, p in pilot if not p["was_cancelled"])
