"""NLI building blocks without a server: KLUE's premise rules, the simulated writers'
templates, hypotheses from a pulled writing round, the author's vote, the KLUE-NLI
export layout."""

from __future__ import annotations

import pandas as pd
import pytest

from pipelines.families.klue.items_section import PremiseRules
from pipelines.families.klue.nli import (
    hypothesis_items,
    klue_nli_records,
    plain_form,
    premise_items,
    templated_hypotheses,
    with_authors,
)
from pipelines.families.klue.nli_premises import premise_reason, select_premises

RULES = PremiseRules()


@pytest.mark.parametrize(
    "text, reason",
    [
        ("영화로선 부족했으나 슈퍼맨은 여전히 영웅이다.", None),
        ("이 영화는 정말 오랜만에 극장에서 끝까지 집중해서 본 작품입니다.", None),
        ("짧은 문장이다.", "too_short"),
        ("가" * 40 + "다. " + "나" * 60 + "다.", "too_long"),
        ("이 영화를 보고 나서 무슨 생각을 하셨는지 궁금하다?", "not_declarative"),
        ("이번 주말에 극장에 가서 이 영화를 꼭 한 번 보세요.", "not_declarative"),
        ("이번 주말에 극장에 가서 이 영화를 꼭 한 번 보니", "not_declarative"),
        ("배우들의 연기와 음악, 그리고 마지막 장면의 여운", "not_declarative"),
    ],
)
def test_premise_rules(text, reason):
    assert premise_reason(text, RULES) == reason


def test_premise_rules_follow_the_recipe():
    polite = "이번 주말에 극장에서 이 영화를 다시 봤어요."
    assert premise_reason(polite, RULES) == "not_declarative"
    assert premise_reason(polite, PremiseRules(endings=["다", "요"])) is None
    assert premise_reason("영화로선 부족했으나 슈퍼맨은 여전히 영웅이다.",
                          PremiseRules(predicate_tags=["NNG"])) is None  # fmt: skip
    assert premise_reason("영화로선 부족했으나 슈퍼맨은 여전히 영웅이다.",
                          PremiseRules(predicate_tags=["XR"])) == "no_predicate"  # fmt: skip
    with pytest.raises(ValueError, match="min_chars"):
        PremiseRules(min_chars=50, max_chars=20)


def test_select_premises_keeps_every_sentence_with_a_reason():
    texts = [
        "영화로선 부족했으나 슈퍼맨은 여전히 영웅이다.",
        "이 영화는 정말 오랜만에 극장에서 끝까지 집중해서 본 작품입니다.",
        "배우들의 연기가 기대 이상으로 훌륭했고 음악도 좋았다.",
        "짧다.",
        "이번 주말에 극장에 가서 이 영화를 꼭 한 번 보세요.",
    ]
    frame = pd.DataFrame({"text": texts, "corpus": ["a", "a", "b", "b", "b"]})
    chosen, rejected = select_premises(frame, RULES, 2, "corpus", seed=0)
    assert len(chosen) == 2 and sorted(chosen["corpus"]) == ["a", "b"]
    assert len(chosen) + len(rejected) == len(frame)
    assert sorted(rejected["reason"]) == ["not_declarative", "not_sampled", "too_short"]
    again, _ = select_premises(frame, RULES, 2, "corpus", seed=0)
    assert again.equals(chosen)


def test_plain_form_and_templates():
    assert (
        plain_form('결혼 실감 안 나, 예쁘게 잘 살겠습니다"') == "결혼 실감 안 나, 예쁘게 잘 살겠다"
    )
    assert plain_form("최선을 다해 노력합니다.") == "최선을 다해 노력한다"
    assert plain_form("슈퍼맨은 여전히 영웅이다...") == "슈퍼맨은 여전히 영웅이다"
    variants = templated_hypotheses("슈퍼맨은 여전히 영웅이다.")
    assert set(variants) == {"entailment", "contradiction", "neutral"}
    assert "슈퍼맨은 여전히 영웅이다고 한다." in variants["entailment"]
    assert all("영웅이다" in v for vs in variants.values() for v in vs)


def _premises() -> pd.DataFrame:
    sentences = pd.DataFrame(
        {
            "sent_id": ["s1", "s2", "s3", "s4"],
            "text": ["전제 하나이다.", "전제 둘이다.", "전제 셋이다.", "전제 넷이다."],
            "corpus": ["nsmc"] * 4,
            "doc_id": ["d1", "d2", "d3", "d4"],
            "style": ["colloquial"] * 4,
            "domain": ["review"] * 4,
            "license": ["CC0-1.0"] * 4,
        }
    )
    return premise_items(sentences, "nli-templates", simulated=True)


def _writing(premises: pd.DataFrame) -> pd.DataFrame:
    ids = list(premises["item_id"])
    rows = []

    def add(item, ann, who, field, value, cancelled=False, flags=""):
        rows.append({"item_id": item, "annotation_id": ann, "annotator_id": who,
                     "field": field, "value": value, "cancelled": cancelled,
                     "report_flags": flags, "simulated": True})  # fmt: skip

    for field, value in [("entailment", "참"), ("contradiction", "거짓"), ("neutral", "모름")]:
        add(ids[0], 1, "ls-user-9", field, value)
    add(ids[1], 2, "ls-user-9", None, None, cancelled=True)  # skipped
    for field, value in [("entailment", "참"), ("contradiction", ""), ("neutral", "모름")]:
        add(ids[2], 3, "ls-user-8", field, value)  # one hypothesis left empty
    add(ids[3], 4, "ls-user-8", "report", "hate_or_bias", flags="hate_or_bias")
    return pd.DataFrame(rows)


def test_premise_items_carry_template_variants_only_when_simulated():
    items = _premises()
    assert items["item_id"].str.startswith("p-").all() and items["item_id"].is_unique
    assert len(items["sim_entailment"].iloc[0]) == 3
    plain = premise_items(pd.DataFrame(_premises().rename(columns={"premise": "text"}).assign(
        corpus="nsmc")), "nli-templates", simulated=False)  # fmt: skip
    assert not any(c.startswith("sim_") for c in plain.columns)


def test_hypothesis_items_and_dropped_premises():
    premises = _premises()
    items, dropped = hypothesis_items(_writing(premises), premises, simulated=True)
    first = premises["item_id"].iloc[0]
    assert list(items["item_id"]) == [f"{first}-e", f"{first}-c", f"{first}-n"]
    assert list(items["hypothesis"]) == ["참", "거짓", "모름"]
    assert (items["author_id"] == "ls-user-9").all()
    assert list(items["sim_label"]) == ["entailment", "contradiction", "neutral"]
    reasons = dict(zip(dropped["item_id"], dropped["reason"], strict=True))
    ids = list(premises["item_id"])
    assert reasons == {ids[1]: "skipped", ids[2]: "empty_hypothesis",
                       ids[3]: "report:hate_or_bias"}  # fmt: skip


def test_author_vote_and_klue_nli_records():
    premises = _premises()
    items, _ = hypothesis_items(_writing(premises), premises, simulated=False)
    stamp = pd.Timestamp("2026-01-01", tz="UTC")
    validation = pd.DataFrame(
        [
            {"item_id": i, "annotation_id": 10 + k, "annotator_id": f"ls-user-{k}",
             "field": "label", "value": v, "cancelled": False, "report_flags": "",
             "simulated": False, "created_at": stamp + pd.Timedelta(seconds=k)}
            for i in items["item_id"]
            for k, v in enumerate(["neutral", "entailment", "entailment", "contradiction"])
        ]
    )  # fmt: skip
    table = with_authors(validation, items)
    authors = table[table["role"] == "author"]
    assert len(authors) == 3 and set(authors["annotator_id"]) == {"ls-user-9"}
    gold = pd.DataFrame({"item_id": items["item_id"], "label": "entailment"})
    splits = pd.DataFrame({"item_id": items["item_id"], "split": "test"})
    records = klue_nli_records(gold, items, splits, table, "x")
    assert records["train"] == [] and len(records["test"]) == 3
    row = records["test"][0]
    assert row["guid"] == "x_test_00000" and row["source"] == "nsmc"
    assert row["author"] == "contradiction"  # the -c item sorts first
    assert [row[f"label{k}"] for k in range(2, 6)] == [
        "neutral", "entailment", "entailment", "contradiction"]  # fmt: skip
