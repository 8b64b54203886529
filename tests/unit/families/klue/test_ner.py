"""KLUE-NER's own rules (pipelines/families/klue/ner.py): reference spans re-anchored
after cleaning, the scheme check of gold spans, the correction figures, the public-figure
list, the release records and their KLUE layout, Table 9's counts, and the pieces of the
shared code the family relies on (predictions pre-loaded in a task, a card that counts
entities, not JSON strings)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.annotation.annotate import _records
from pipelines.export.card_facts import NO_ELEMENT, label_facts
from pipelines.families.klue.ner import (
    anchor,
    correction_figures,
    entity_table,
    klue_ner_records,
    prediction,
    public_figures,
    span_problem,
    spans_json,
)
from pipelines.families.klue.ner_layout import NerRelease, NerSentence, read_layout, write_layout


def test_reference_spans_follow_their_text_after_cleaning():
    text = "서울 에서 김철수 씨가"  # the ingest collapsed a double space before 김철수
    ents = [{"start": 0, "end": 2, "label": "LC", "text": "서울"},
            {"start": 7, "end": 10, "label": "PS", "text": "김철수"},
            {"start": 20, "end": 22, "label": "OG", "text": "국회"}]  # fmt: skip
    assert anchor(text, ents) == [(0, 2, "LC"), (6, 9, "PS")]  # 국회 is gone: left out


def test_sentences_over_400_characters_are_dropped_at_the_threshold():
    from pipelines.families.klue.ner import length_reasons

    texts = pd.Series(["가" * 399, "가" * 400, "가" * 401])
    assert length_reasons(texts, 400).tolist() == [None, None, "too_long"]  # KLUE 3.4.1


@pytest.mark.parametrize(
    ("spans", "problem"),
    [
        ([(0, 2, "PS"), (3, 5, "LC")], None),
        ([(0, 2, "PS"), (1, 4, "LC")], "overlapping_spans"),
        ([(0, 12, "PS")], "span_outside_text"),
        ([(2, 2, "PS")], "span_outside_text"),
        ([(0, 2, "PER")], "unknown_entity_type"),
    ],
)
def test_gold_spans_must_fit_klue_ners_flat_scheme(spans, problem):
    assert span_problem(spans, "0123456789") == problem


def test_correction_figures_count_what_annotators_did_to_the_pseudo_labels():
    items = pd.DataFrame({"item_id": ["a"], "pseudo": [spans_json(
        [(0, 2, "PS"), (3, 5, "LC"), (6, 8, "OG"), (9, 10, "DT")], "0123456789")]})  # fmt: skip
    answer = spans_json([(0, 2, "PS"), (3, 5, "OG"), (6, 9, "OG"), (11, 12, "QT")],
                        "0123456789abc")  # fmt: skip
    answers = pd.DataFrame({"item_id": ["a", "a"], "value": [answer, items["pseudo"][0]]})
    got = correction_figures(items, answers)
    # of 8 pseudo entities seen: 5 kept (1 + 4 untouched), 1 retyped, 1 reshaped, 1 removed
    assert got["pseudo_entities_seen"] == 8 and got["kept"] == 0.625
    assert got["retyped"] == got["reshaped"] == got["removed"] == 0.125
    assert got["correction_rate"] == 0.375 and got["added_entities"] == 1
    assert got["annotations_unchanged"] == 0.5


def test_public_figures_read_one_name_a_line(tmp_path):
    path = tmp_path / "figures.txt"
    path.write_text("# public figures\n클린턴\n\n미야자와  기이치  # spaces squeezed\n",
                    encoding="utf-8")  # fmt: skip
    assert public_figures(path) == {"클린턴", "미야자와 기이치"}


def test_records_are_klue_ner_rows_and_write_the_release_layout():
    text = "한국 대표팀이 3일 이겼다"
    label = spans_json([(0, 2, "LC"), (8, 10, "DT")], text)
    gold = pd.DataFrame({"item_id": ["x"], "label": [label]})
    items = pd.DataFrame({"item_id": ["x"], "text": [text], "source": ["kmou"]})
    splits = pd.DataFrame({"item_id": ["x"], "split": ["test"]})
    rec = klue_ner_records(gold, items, splits, "p")["test"][0]
    assert rec["guid"] == "p_test_00000" and rec["sentence"] == "<한국:LC> 대표팀이 <3일:DT> 이겼다"
    assert rec["tokens"] == list(text) and rec["ner_tags"][:3] == ["B-LC", "I-LC", "O"]
    release = NerRelease(
        ["# demo"], [NerSentence(rec["guid"], text, [(0, 2, "LC"), (8, 10, "DT")])]
    )
    written = write_layout(release)
    assert read_layout(written) == release and write_layout(read_layout(written)) == written


def test_table_9_counts_entities_and_distinct_strings_per_split():
    gold = pd.DataFrame({"item_id": ["a", "b", "c"], "label": [
        spans_json([(0, 2, "LC"), (3, 5, "LC")], "서울 서울"),
        spans_json([(0, 2, "LC")], "서울"), spans_json([], "없음")]})  # fmt: skip
    splits = pd.DataFrame({"item_id": ["a", "b", "c"], "split": ["train", "train", "test"]})
    table = entity_table(gold, splits)
    lc = next(r for r in table["rows"] if r["type"] == "LC")
    assert table["splits"] == ["train", "test"]
    assert (lc["train"], lc["train_distinct"], lc["test"]) == (3, 1, 0)


def test_a_prediction_column_becomes_the_tasks_pre_loaded_prediction():
    pred = prediction([(0, 2, "LC")], "서울에", "char-tagger-3")
    records = _records(
        pd.DataFrame({"item_id": ["a"], "text": ["서울에"], "ls_prediction": [pred]})
    )
    assert records[0]["data"] == {"item_id": "a", "text": "서울에"}
    (p,) = records[0]["predictions"]
    assert p["model_version"] == "char-tagger-3"
    assert p["result"][0]["value"] == {"start": 0, "end": 2, "text": "서울", "labels": ["LC"]}
    assert p["result"][0]["from_name"] == "entities" and p["result"][0]["to_name"] == "text"


def test_the_card_counts_span_gold_by_entity_type():
    labels = [spans_json([(0, 2, "LC"), (3, 5, "PS")], "서울 철수"), spans_json([], "없음")]
    gold = pd.DataFrame({"item_id": ["a", "b"], "label": labels})
    items = pd.DataFrame({"item_id": ["a", "b"], "source": ["s", "s"]})
    splits = pd.DataFrame({"item_id": ["a", "b"], "split": ["train", "train"]})
    facts = label_facts(gold, items, splits)
    assert facts["elements"] is True
    assert facts["per_split"]["train"] == {NO_ELEMENT: 1, "LC": 1, "PS": 1}
    # the splits table's per-source column counts items, not entities (issue 54)
    assert facts["sources_per_split"] == {"train": {"s": 2}}
    plain = label_facts(gold.assign(label=["x", "y"]), items, splits)
    assert plain["elements"] is False and plain["per_split"]["train"] == {"x": 1, "y": 1}
    assert json.loads(gold["label"][1]) == []


def _recipe(tmp_path, **ner) -> object:
    import yaml

    from pipelines.core.recipe import load_recipe

    demo = Path(__file__).resolve().parents[4] / "recipes"
    data = yaml.safe_load((demo / "klue-ner-demo.yaml").read_text(encoding="utf-8"))
    for corpus in data["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((demo / corpus[key]).resolve())
    for key in ("train", "dev"):
        data["ner"]["tagger"][key] = str((demo / data["ner"]["tagger"][key]).resolve())
    data["ner"]["public_figures"] = str((demo / data["ner"]["public_figures"]).resolve())
    data["annotation"]["config"] = str((demo / data["annotation"]["config"]).resolve())
    for key, value in ner.items():
        section, _, field = key.partition("__")
        if field:
            data["ner"][section][field] = value
        else:
            data["ner"][section] = value
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_recipe(path)


def test_the_demo_recipe_loads_and_bad_ner_settings_are_named(tmp_path):
    from pipelines.core.recipe import RecipeError

    recipe = _recipe(tmp_path)
    assert recipe.ner.max_chars == 400 and recipe.ner.tagger.mapping["POH"] is None
    with pytest.raises(RecipeError, match=r"ner\.tagger\.mapping: unknown KLUE types \['PERSON'\]"):
        _recipe(tmp_path, tagger__mapping={"PER": "PERSON"})
    with pytest.raises(RecipeError, match=r"ner\.tagger\.train: .*missing\.gz not found"):
        _recipe(tmp_path, tagger__train=str(tmp_path / "missing.gz"))
    with pytest.raises(RecipeError, match=r"ner\.tagger\.settings: unknown settings \['depth'\]"):
        _recipe(tmp_path, tagger__settings={"depth": 3})
    with pytest.raises(RecipeError, match="give train and dev"):
        _recipe(tmp_path, tagger={"dev": recipe.ner.tagger.dev})


def _agreed(drafts: dict[str, list]) -> pd.DataFrame:
    return pd.DataFrame({"item_id": list(drafts), "n_annotations": 3,
                         "label": [spans_json(v, TEXT) for v in drafts.values()]})  # fmt: skip


TEXT = "클린턴 대통령과 김철수 씨가 서울에서"  # 클린턴 0-3, 김철수 8-11, 서울 16-18


def test_without_a_review_the_span_vote_is_gold_then_the_pii_rule():
    from pipelines.families.klue.ner import final_gold

    agreed = _agreed({"a": [(0, 3, "PS"), (16, 18, "LC")], "b": [(8, 11, "PS")],
                      "c": [(16, 18, "LC")], "d": [(0, 3, "PS"), (2, 5, "LC")]})  # fmt: skip
    texts = dict.fromkeys("abcd", TEXT)
    rows, dropped, versions, changed = final_gold(agreed, texts, None, {}, {"클린턴"}, ["PS"])
    assert [r["item_id"] for r in rows] == ["a", "c"] and not any(r["reviewed"] for r in rows)
    why = {d["id"]: d["reason"] for d in dropped}
    assert why == {"b": "pii", "d": "overlapping_spans"}  # 김철수 is no public figure
    assert "김철수" not in json.dumps(dropped, ensure_ascii=False)  # never the person
    assert {v["version"] for v in versions} == {"draft"} and changed == 0
    # no list: no PII step
    rows, dropped, _, _ = final_gold(agreed, texts, None, {}, None, ["PS"])
    assert [r["item_id"] for r in rows] == ["a", "b", "c"]


def test_with_a_review_the_reviewed_version_is_gold():
    from pipelines.families.klue.ner import final_gold

    agreed = _agreed({"a": [(0, 3, "PS")], "b": [(16, 18, "LC")], "c": [(16, 18, "LC")]})
    reviews = pd.DataFrame({"item_id": ["a", "b"], "annotator_id": ["ling", "ling"],
                            "value": [spans_json([(0, 3, "PS"), (16, 18, "LC")], TEXT),
                                      spans_json([(16, 18, "LC")], TEXT)]})  # fmt: skip
    rows, dropped, versions, changed = final_gold(
        agreed, dict.fromkeys("abc", TEXT), reviews, {}, {"클린턴"}, ["PS"]
    )
    gold = {r["item_id"]: r for r in rows}
    assert spans_from_label(gold["a"]["label"]) == [(0, 3, "PS"), (16, 18, "LC")]
    assert gold["a"]["changed_in_review"] and not gold["b"]["changed_in_review"]
    assert changed == 1 and {d["id"]: d["reason"] for d in dropped} == {"c": "not_reviewed"}
    assert sorted(v["version"] for v in versions if v["item_id"] == "a") == ["draft", "reviewed"]
    rows, dropped, _, _ = final_gold(agreed, dict.fromkeys("abc", TEXT), reviews,
                                     {"a": ["personal_information"]}, None, ["PS"])  # fmt: skip
    assert {d["id"]: d["reason"] for d in dropped}["a"] == "reported_in_review"


def spans_from_label(label: str) -> list[tuple[int, int, str]]:
    from pipelines.families.klue.ner import spans_from

    return spans_from(label)


def test_a_sentence_left_without_an_entity_is_dropped_as_klue_did(tmp_path):
    """KLUE 3.4.1: "35 sentences are removed after the inspection by the researchers
    because all annotations are false positives". A sentence whose gold (the reviewed
    version, else the span vote) has no entity left is dropped as ``no_entity`` by
    default (``ner.drop_without_entity: true``); ``false`` keeps it."""
    from pipelines.families.klue.ner import final_gold

    agreed = _agreed({"a": [(16, 18, "LC")], "b": [(0, 3, "PS")], "c": []})
    # the linguist removed b's only entity (a false positive); c's vote found none
    reviews = pd.DataFrame({"item_id": ["a", "b", "c"], "annotator_id": ["ling"] * 3,
                            "value": [spans_json([(16, 18, "LC")], TEXT), spans_json([], TEXT),
                                      spans_json([], TEXT)]})  # fmt: skip
    texts = dict.fromkeys("abc", TEXT)
    rows, dropped, _, _ = final_gold(agreed, texts, reviews, {}, None, ["PS"])
    assert [r["item_id"] for r in rows] == ["a"]
    assert {d["id"]: d["reason"] for d in dropped} == {"b": "no_entity", "c": "no_entity"}
    rows, dropped, _, _ = final_gold(agreed, texts, None, {}, None, ["PS"])  # no review
    assert [r["item_id"] for r in rows] == ["a", "b"] and dropped[0]["reason"] == "no_entity"
    rows, dropped, _, _ = final_gold(agreed, texts, reviews, {}, None, ["PS"],
                                     drop_without_entity=False)  # fmt: skip
    assert [r["item_id"] for r in rows] == ["a", "b", "c"] and not dropped
    recipe = _recipe(tmp_path)
    assert recipe.ner.drop_without_entity is True  # the paper's rule by default
    assert _recipe(tmp_path, drop_without_entity=False).ner.drop_without_entity is False


@pytest.mark.parametrize("config", ["ner.xml", "ner_review.xml"])
def test_the_interfaces_give_each_type_klues_definition_and_the_reports(config):
    """KLUE 3.4.1: the six types with the paper's definitions (in Korean, shown as each
    label's hint) and the reports that discard a text: several sentences, not a
    sentence, a fragment, a list of nouns, hate speech or bias."""
    import xml.etree.ElementTree as ET

    root = ET.parse(Path(__file__).resolve().parents[4] / "annotation_configs" / config)
    hints = {e.get("alias") or e.get("value"): e.get("hint", "") for e in root.iter("Label")}
    assert list(hints) == ["PS", "LC", "OG", "DT", "TI", "QT"]
    want = {"PS": ["개인", "집단"], "LC": ["행정 구역", "지리적"], "OG": ["기관", "기업"],
            "DT": ["날짜", "기간", "시대", "나이"], "TI": ["시간"],
            "QT": ["수량", "숫자", "단위"]}  # fmt: skip
    for typ, words in want.items():
        assert all(w in hints[typ] for w in words), (typ, hints[typ])
    if config == "ner.xml":
        reports = {e.get("alias") or e.get("value") for e in root.iter("Choice")}
        assert {"multiple_sentences", "not_a_sentence", "fragment", "noun_list",
                "hate_or_bias", "personal_information"} <= reports  # fmt: skip
