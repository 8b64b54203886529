"""KLUE-WoS's building blocks (issue 58): the ontology, the release layout read and
written byte for byte, its errata checks, joint goal accuracy and slot micro F1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.families.klue.wos_layout import WosLayoutError, errata, parse_wos, write_wos
from pipelines.families.klue.wos_metrics import joint_goal_accuracy, per_domain, slot_micro_f1
from pipelines.families.klue.wos_ontology import (
    OntologyError,
    parse_ontology,
    read_ontology,
    split_state,
)

ROOT = Path(__file__).resolve().parents[4]
ONTOLOGY = ROOT / "data" / "demo" / "klue-wos" / "ontology.json"

DIALOGUE = [
    {"guid": "wos-v1_dev_00001", "domains": ["식당", "택시"], "dialogue": [
        {"role": "user", "text": "서울 중앙에 있는 한식당 좀 찾아 주세요.",
         "state": ["식당-종류-한식당", "식당-지역-서울 중앙"]},
        {"role": "sys", "text": "뽀식이네 감자탕이 있습니다. 예약해 드릴까요?"},
        {"role": "user", "text": "네, 토요일 18:00에 4명으로 예약해 주세요.",
         "state": ["식당-종류-한식당", "식당-지역-서울 중앙", "식당-이름-뽀식이네 감자탕",
                   "식당-예약 요일-토요일", "식당-예약 시간-18:00", "식당-예약 명수-4"]},
        {"role": "sys", "text": "예약되었습니다."},
        {"role": "user", "text": "거기까지 가는 택시도 불러 주세요.",
         "state": ["식당-종류-한식당", "식당-지역-서울 중앙", "식당-이름-뽀식이네 감자탕",
                   "식당-예약 요일-토요일", "식당-예약 시간-18:00", "식당-예약 명수-4",
                   "택시-도착지-뽀식이네 감자탕"]},
    ]},
]  # fmt: skip


def test_the_shipped_ontology_has_kluess_45_slots_over_5_domains() -> None:
    o = read_ontology(ONTOLOGY)
    assert len(o.slots) == 45 and o.domains == ["관광", "숙소", "식당", "지하철", "택시"]
    assert {d: len(o.slots_of(d)) for d in o.domains} == {
        "관광": 9, "숙소": 15, "식당": 13, "지하철": 3, "택시": 5}  # fmt: skip
    assert o.is_open("택시-출발 시간") and not o.is_open("숙소-가격대")
    assert o.value_problem("숙소-가격대", "비싼") is None
    assert "closed slot" in o.value_problem("숙소-가격대", "아주 비싼")
    assert o.value_problem("택시-출발지", "우리 집 앞") is None  # open: typed as written
    assert o.value_problem("숙소-가격대", "dontcare") is None
    assert "'none'" in o.value_problem("숙소-가격대", "none")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"식당": ["none", "dontcare"]}', ":1: key '식당' is not 'domain-slot'"),
        ('{\n "식당-지역": ["none", "dontcare"],\n "식당-a-b": ["none"]\n}', ":3: key '식당-a-b'"),
        ('{"식당-지역": ["서울 중앙", "none"]}', "lack ['dontcare']"),
        ('{"식당-지역": "서울"}', "must be a list of strings"),
        ("[1, 2]", "expected a JSON object"),
        ('{"식당-지역": [', "not JSON"),
    ],
)
def test_a_bad_ontology_names_its_file_and_line(text: str, message: str) -> None:
    with pytest.raises(OntologyError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_ontology(text, "ontology.json")


def test_a_state_string_splits_at_its_first_two_dashes() -> None:
    assert split_state("관광-이름-롯데월드타워&몰") == ("관광-이름", "롯데월드타워&몰")
    assert split_state("택시-출발지-a-b") == ("택시-출발지", "a-b")
    with pytest.raises(OntologyError, match="not 'domain-slot-value'"):
        split_state("식당-지역")


@pytest.mark.parametrize("indent", [None, 2, 4])
def test_the_layout_reads_and_writes_back_byte_for_byte(indent: int | None) -> None:
    text = json.dumps(DIALOGUE, ensure_ascii=False, indent=indent) + "\n"
    release = parse_wos(text, "wos.json")
    assert release.indent == indent and write_wos(release) == text
    (d,) = release.dialogues
    assert [t.role for t in d.turns] == ["user", "sys", "user", "sys", "user"]
    assert d.user_turns()[-1].state[-1] == "택시-도착지-뽀식이네 감자탕"


def test_a_bad_file_names_the_dialogues_line() -> None:
    two = DIALOGUE + [{"guid": "wos-v1_dev_00002", "domains": ["관광"], "dialogue": [
        {"role": "sys", "text": "안녕하세요."}]}]  # fmt: skip
    text = json.dumps(two, ensure_ascii=False, indent=2)
    line = text.splitlines().index('    "guid": "wos-v1_dev_00002",') + 1
    with pytest.raises(WosLayoutError, match=f"wos.json:{line}: wos-v1_dev_00002: .*no user turn"):
        parse_wos(text, "wos.json")
    bad = json.loads(json.dumps(DIALOGUE))
    bad[0]["dialogue"][1]["role"] = "system"
    with pytest.raises(WosLayoutError, match=r"wos.json:3: .*turn 2's role"):
        parse_wos(json.dumps(bad, ensure_ascii=False, indent=2), "wos.json")
    bad = json.loads(json.dumps(DIALOGUE))
    bad[0]["dialogue"][0]["state"] = ["식당-지역"]
    with pytest.raises(WosLayoutError, match="is not 'domain-slot-value'"):
        parse_wos(json.dumps(bad, ensure_ascii=False), "wos.json")


def test_errata_find_values_outside_shrinking_states_and_unlisted_domains() -> None:
    ontology = read_ontology(ONTOLOGY)
    assert errata(parse_wos(json.dumps(DIALOGUE, ensure_ascii=False), "w"), ontology).counts() == {}
    bad = json.loads(json.dumps(DIALOGUE))
    turns = bad[0]["dialogue"]
    turns[0]["state"][0] = "식당-종류-분식"  # not a 식당-종류 value
    turns[2]["state"].remove("식당-지역-서울 중앙")  # leaves the state
    turns[4]["state"].append("숙소-지역-서울 중앙")  # 숙소 is not in domains
    found = errata(parse_wos(json.dumps(bad, ensure_ascii=False), "w"), ontology)
    assert found.counts() == {"value_outside": 1, "state_shrinks": 1, "domain_not_listed": 1}
    assert all(p.fatal for p in found.problems)


def test_joint_goal_accuracy_and_slot_f1_match_sklearn_micro_f1() -> None:
    from sklearn.metrics import f1_score
    from sklearn.preprocessing import MultiLabelBinarizer

    gold = [["식당-지역-서울 중앙"], ["식당-지역-서울 중앙", "식당-종류-한식당"], [],
            ["택시-종류-고급"]]  # fmt: skip
    pred = [["식당-지역-서울 중앙"], ["식당-지역-서울 중앙", "식당-종류-양식당"], [],
            []]  # fmt: skip
    assert joint_goal_accuracy(gold, pred) == 50.0
    binar = MultiLabelBinarizer().fit(gold + pred)
    expected = 100 * f1_score(binar.transform(gold), binar.transform(pred), average="micro")
    assert slot_micro_f1(gold, pred) == round(expected, 2)
    domains = [["식당"], ["식당"], ["식당", "택시"], ["식당", "택시"]]
    by = per_domain(gold, pred, domains)
    assert by["택시"] == {"turns": 2, "jga": 50.0, "slot_f1": 0.0}
    assert by["식당"]["jga"] == 75.0
    with pytest.raises(ValueError, match="4 gold turns against 3"):
        joint_goal_accuracy(gold, pred[:3])


def test_the_synthetic_database_and_goals_are_seeded_and_always_satisfiable() -> None:
    from pipelines.families.klue.wos_goals import (
        DomainGoal,
        Goal,
        GoalError,
        check_goal,
        instruction,
        matching,
        sample_goals,
        venue_database,
    )

    ontology = read_ontology(ONTOLOGY)
    venues = venue_database(ontology, seed=3)
    assert len([v for v in venues if v.domain == "식당"]) == 47  # one per 식당-이름 value
    assert all(ontology.value_problem(f"{v.domain}-{s}", x) is None
               for v in venues for s, x in v.attributes.items())  # fmt: skip
    goals = sample_goals(ontology, venues, 200, seed=3)
    again = sample_goals(ontology, venue_database(ontology, seed=3), 200, seed=3)
    assert [g.final_state() for g in goals] == [g.final_state() for g in again]
    multi = sum(len(g.parts) > 1 for g in goals)
    assert 80 < multi < 160  # multi_share 0.6
    changes = 0
    for goal in goals:
        for part in goal.parts:
            if part.target:  # a venue domain: the constraints match at least the target
                assert matching(venues, part.domain, part.informable)
            if part.change:
                changes += 1
                slot, first, then = part.change
                assert then == part.informable[slot]
                assert not matching(venues, part.domain, {**part.informable, slot: first})
    assert changes > 10
    from pipelines.families.klue.wos_goals import said

    text = instruction(goals[0])
    assert all(said(s, v) in text for p in goals[0].parts for s, v in p.informable.items())
    assert (said("예약 기간", "2"), said("x", "yes")) == ("2박", "예")
    with pytest.raises(GoalError, match="'식당-주차장' is not in the ontology"):
        check_goal(Goal("g", [DomainGoal("식당", {"주차장": "yes"})]), ontology)
    with pytest.raises(GoalError, match="not one of closed slot '식당-가격대'"):
        check_goal(Goal("g", [DomainGoal("식당", {"가격대": "공짜"})]), ontology)


def test_the_tracker_prefills_what_the_user_said_of_the_goal_turn_by_turn() -> None:
    from pipelines.families.klue.wos_goals import DomainGoal, Goal
    from pipelines.families.klue.wos_tracker import track

    ontology = read_ontology(ONTOLOGY)
    goal = Goal("g1", [
        DomainGoal("식당", {"지역": "서울 중앙", "종류": "한식당", "주차 가능": "yes"},
                   booking={"예약 요일": "토요일", "예약 시간": "18:00", "예약 명수": "4"},
                   change=("종류", "양식당", "한식당")),
        DomainGoal("택시", {"도착지": "뽀식이네 감자탕", "출발 시간": "17:30"}),
    ])  # fmt: skip
    turns = [
        ("user", "서울 중앙에 있는 양식당을 찾고 있어요."),
        ("sys", "죄송합니다. 조건에 맞는 양식당이 없습니다."),
        ("user", "그럼 한식당으로 찾아 주세요. 주차도 되면 좋겠어요."),
        ("sys", "뽀식이네 감자탕을 추천드립니다."),
        ("user", "네, 토요일 18:00에 4명 예약해 주세요. 14:00는 안 돼요."),
        ("sys", "예약되었습니다."),
        ("user", "17:30에 뽀식이네 감자탕으로 가는 택시도 불러 주세요."),
    ]
    states = track(turns, goal, ontology)
    assert states[0] == ["식당-종류-양식당", "식당-지역-서울 중앙"]
    assert states[1] == sorted(["식당-주차 가능-yes", "식당-종류-한식당", "식당-지역-서울 중앙"])
    assert "식당-이름-뽀식이네 감자탕" in states[2] and "식당-예약 명수-4" in states[2]
    assert not any(s.endswith("-14:00") for s in states[2])
    assert set(states[2]) < set(states[3]) and "택시-출발 시간-17:30" in states[3]


def test_written_dialogues_are_checked_and_the_simulated_writer_writes_from_the_goal() -> None:
    import numpy as np

    from pipelines.families.klue.wos_dialogues import (
        dialogue_problems,
        josa,
        parse_lines,
        simulated_dialogue,
        written_dialogue,
    )
    from pipelines.families.klue.wos_goals import sample_goals, venue_database
    from pipelines.families.klue.wos_tracker import track

    pairs = [("식당", "을/를"), ("택시", "을/를"), ("서울", "으로/로"), ("한식당", "으로/로"),
             ("18:00", "으로/로"), ("3", "은/는")]  # fmt: skip
    expected = ["식당을", "택시를", "서울로", "한식당으로", "18:00으로", "3은"]
    assert [josa(w, p) for w, p in pairs] == expected
    assert parse_lines("사용자: 식당을 찾아요.\n계속 씁니다.\n시스템: 네.") == [
        ("user", "식당을 찾아요. 계속 씁니다."), ("sys", "네.")]  # fmt: skip
    ontology = read_ontology(ONTOLOGY)
    venues = venue_database(ontology, seed=3)
    goals = sample_goals(ontology, venues, 60, seed=3)
    rng = np.random.default_rng(0)
    missed = 0
    for goal in goals:
        turns, truth = written_dialogue(goal, venues, rng, paraphrase_rate=0.0)
        assert dialogue_problems(turns, goal, venues) == []
        assert len(truth) == sum(r == "user" for r, _ in turns)
        tracked = track(turns, goal, ontology)
        # as written, the tracker finds the whole goal and never invents an item
        assert set(goal.final_state()) <= set(tracked[-1]) <= set(truth[-1])
        turns, truth = written_dialogue(goal, venues, rng)  # some values paraphrased
        assert dialogue_problems(turns, goal, venues) == []
        missed += sum(set(t) != set(x) for t, x in zip(track(turns, goal, ontology), truth,
                                                       strict=True))  # fmt: skip
    assert missed > 20  # what the annotators are there to correct
    careless = [dialogue_problems(simulated_dialogue(g, venues, rng, careless=True), g, venues)
                for g in goals]  # fmt: skip
    found = {r for reasons in careless for r in reasons}
    assert found == {"goal_not_covered", "unknown_venue"}
    turns = simulated_dialogue(goals[0], venues, rng)
    assert dialogue_problems(turns[:3], goals[0], venues)[:1] in (["too_few_turns"],
                                                                 ["not_alternating"])  # fmt: skip
    assert "not_alternating" in dialogue_problems(
        [("sys", "안녕하세요.")] + turns, goals[0], venues
    )


def test_turns_and_back_give_the_release_byte_for_byte_and_name_a_bad_line() -> None:
    from pipelines.families.klue.wos_layout import from_turns, to_turns

    for indent in (None, 4):
        text = json.dumps(DIALOGUE, ensure_ascii=False, indent=indent)
        turns = to_turns(parse_wos(text, "wos.json"))
        assert len(turns.splitlines()) == 1 + 5
        assert write_wos(from_turns(turns, "turns.jsonl")) == text
    lines = turns.splitlines()
    lines[3] = lines[3].replace('"index": 2', '"index": 7')
    with pytest.raises(WosLayoutError, match="turns.jsonl:4: .*turn index 7, expected 2"):
        from_turns("\n".join(lines), "turns.jsonl")
    greeting = {"guid": "g2", "domains": ["관광"], "index": 0, "role": "sys", "text": "안녕하세요."}
    only_sys = [lines[0], json.dumps(greeting, ensure_ascii=False)]
    with pytest.raises(WosLayoutError, match="turns.jsonl:2: g2: the dialogue has no user turn"):
        from_turns("\n".join(only_sys), "turns.jsonl")


def test_the_state_interface_is_made_from_the_ontology_and_rows_are_escaped() -> None:
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.values import value_type_of
    from pipelines.families.klue.wos_goals import DomainGoal, Goal, Venue
    from pipelines.families.klue.wos_interfaces import rows_html, state_config

    ontology = read_ontology(ONTOLOGY)
    made = state_config(ontology)
    committed = (ROOT / "annotation_configs" / "wos_state.xml").read_text(encoding="utf-8")
    assert made == committed, "regenerate annotation_configs/wos_state.xml (state_config)"
    control = parse_label_config(made).control("state")
    assert value_type_of(control, None).name == "dialogue_state"
    assert "식당-가격대-저렴" in control.options and "택시-출발 시간-dontcare" in control.options
    assert not any(o.startswith("택시-출발 시간-1") for o in control.options)  # open: typed
    venues = [Venue("식당", "<script>alert(1)</script>", {"지역": "서울 중앙", "주차 가능": "yes"})]
    goal = Goal("g", [DomainGoal("식당", {"지역": "서울 중앙"}, target=venues[0].name)])
    page = rows_html(goal, venues)
    assert "<script>" not in page and "&lt;script&gt;" in page and "<td>예</td>" in page
    writing = parse_label_config(ROOT / "annotation_configs" / "wos_write.xml")
    assert writing.data_fields == ("goal", "rows")


def test_state_items_preload_the_trackers_state_and_gold_states_stay_cumulative() -> None:
    import numpy as np

    from pipelines.annotation.annotate import flatten_result
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.families.klue.wos_dialogues import parse_lines, written_dialogue
    from pipelines.families.klue.wos_goals import sample_goals, venue_database
    from pipelines.families.klue.wos_gold import cumulative, release
    from pipelines.families.klue.wos_items import state_items, writing_items

    ontology = read_ontology(ONTOLOGY)
    venues = venue_database(ontology, seed=1)
    goals = sample_goals(ontology, venues, 20, seed=1)
    writing = writing_items(goals, venues, seed=1, simulated=True, careless_share=0.25)
    assert list(writing["item_id"]) == [g.goal_id for g in goals]
    assert 0 < writing["sim_careless_writer"].sum() < 20
    assert all(parse_lines(t)[0][0] == "user" for t in writing["sim_dialogue"])
    rng = np.random.default_rng(1)
    written = [(g.goal_id, *written_dialogue(g, venues, rng)) for g in goals[:5]]
    items = state_items([(i, t, g, s) for (i, t, s), g in zip(written, goals, strict=False)],
                        ontology)  # fmt: skip
    assert len(items) == sum(sum(r == "user" for r, _ in t) for _, t, _ in written)
    config = parse_label_config(ROOT / "annotation_configs" / "wos_state.xml")
    for row in items.itertuples():
        preloaded = json.loads(row.ls_prediction)["result"]
        assert json.loads(dict(flatten_result(preloaded, config))["state"]) == json.loads(
            row.tracker)  # the pre-load reads back as the tracker's state  # fmt: skip
        assert row.dialogue[-1]["author"] == "사용자" and row.item_id.endswith(f"-t{row.turn}")
    shrunk = [
        ["식당-지역-서울 중앙"],
        ["식당-종류-한식당"],
        ["식당-종류-양식당", "식당-지역-서울 북쪽"],
    ]
    fixed, carried = cumulative(shrunk)
    assert fixed[1] == ["식당-종류-한식당", "식당-지역-서울 중앙"] and carried == 1
    assert fixed[2] == ["식당-종류-양식당", "식당-지역-서울 북쪽"]  # changed values kept
    turns = [("user", "식당 찾아요."), ("sys", "네."), ("user", "한식당이요."), ("sys", "네.")]
    out = release([("d1", ["식당"], turns, fixed[:2])], "dev")
    ontology_errata = errata(out, ontology)
    assert out.dialogues[0].guid == "wos-v1_dev_00001" and ontology_errata.counts() == {}
    assert parse_wos(write_wos(out), "x").dialogues[0].user_turns()[1].state == fixed[1]


def test_simulated_state_annotators_correct_the_tracker_on_the_state_interface() -> None:
    import numpy as np

    from pipelines.annotation.annotate import flatten_result
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.simulate import Annotator, simulated_annotation
    from pipelines.families.klue.wos_dialogues import written_dialogue
    from pipelines.families.klue.wos_goals import sample_goals, venue_database
    from pipelines.families.klue.wos_items import state_items

    ontology = read_ontology(ONTOLOGY)
    venues = venue_database(ontology, seed=1)
    goals = sample_goals(ontology, venues, 30, seed=1)
    rng = np.random.default_rng(1)
    written = [(g.goal_id, *written_dialogue(g, venues, rng)) for g in goals]
    items = state_items([(i, t, g, s) for (i, t, s), g in zip(written, goals, strict=True)],
                        ontology).to_dict("records")  # fmt: skip
    config = parse_label_config(ROOT / "annotation_configs" / "wos_state.xml")

    def exact(who: Annotator) -> int:
        right = 0
        for row in items:
            shown = json.loads(row["ls_prediction"])["result"]
            payload = simulated_annotation(config, row, who, 0, row["item_id"], False, shown)
            assert not any("simulated edit" in str(r) for r in payload["result"])
            got = json.loads(dict(flatten_result(payload["result"], config))["state"])
            right += got == json.loads(row["sim_state"])
        return right

    tracker = sum(json.loads(r["tracker"]) == json.loads(r["sim_state"]) for r in items)
    careful = exact(Annotator(1, "a@example.org", 0.0, 0.5, 0.9, False))
    careless = exact(Annotator(2, "b@example.org", 0.0, 0.5, 0.9, True))
    assert careless < tracker < careful <= len(items)


def test_the_baseline_tracker_learns_and_beats_all_none() -> None:
    import numpy as np

    from pipelines.families.klue.wos_baseline import all_none, fit_tracker, turn_inputs
    from pipelines.families.klue.wos_dialogues import written_dialogue
    from pipelines.families.klue.wos_goals import sample_goals, venue_database
    from pipelines.families.klue.wos_gold import release

    ontology = read_ontology(ONTOLOGY)
    venues = venue_database(ontology, seed=1)

    def made(n: int, seed: int, split: str):  # noqa: ANN202
        rng = np.random.default_rng(seed)
        rows = []
        for g in sample_goals(ontology, venues, n, seed=seed):
            turns, states = written_dialogue(g, venues, rng)
            rows.append((g.goal_id, g.domains, turns, states))
        return release(rows, split)

    model = fit_tracker(made(120, 1, "train"), ontology)
    texts, gold, domains = turn_inputs(made(40, 2, "test"))
    got, none = model.predict(texts), all_none(texts)
    assert joint_goal_accuracy(gold, got) > joint_goal_accuracy(gold, none) + 20
    assert slot_micro_f1(gold, got) > 70 > slot_micro_f1(gold, none)
    for name, figures in per_domain(gold, got, domains).items():
        assert figures["slot_f1"] > per_domain(gold, none, domains)[name]["slot_f1"], name
