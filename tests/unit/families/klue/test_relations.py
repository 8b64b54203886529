"""KLUE-RE's own rules (pipelines/families/klue/relations.py): the 30 classes as data,
the candidates of a pair's types, the union of two taggers' entities, the KB file, the
entity-pair sampling at its thresholds, the "show all" answer folded into the relation,
and the KLUE-RE layout."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from pipelines.families.klue.relations import (
    OTHER,
    candidates_for,
    kb_note,
    klue_re_records,
    marked,
    merge_other,
    read_kb,
    relation_schema,
    sample_pairs,
    union_entities,
)

ROOT = Path(__file__).resolve().parents[4]


def test_the_schema_is_klue_res_30_classes_with_allowed_types():
    schema = relation_schema()
    shared = ROOT.parent / "shared" / "corpora" / "klue-re" / "relation_list.json"
    labels = [r["label"] for r in schema]
    assert len(labels) == 30 and labels[0] == "no_relation"
    if shared.is_file():  # the KLUE repository's list, where the shared corpora are
        assert labels == json.loads(shared.read_text(encoding="utf-8"))["relations"]
    for r in schema[1:]:  # KLUE 3.5.1: subjects PER or ORG, after the label's prefix
        assert r["subject"] == (["PER"] if r["label"].startswith("per:") else ["ORG"])
        assert r["object"] and set(r["object"]) <= {"PER", "ORG", "LOC", "DAT", "POH", "NOH"}
    xml = (ROOT / "annotation_configs" / "re.xml").read_text(encoding="utf-8")
    shown = {c.get("alias"): c for c in ET.fromstring(xml).iter("Choice")}
    assert all(lab in shown for lab in labels)  # "show all", stored as the class's code
    ko = {r["label"]: r["ko"] for r in schema}  # shown with its Korean name (issue 55)
    assert all(shown[lab].get("value") == f"{ko[lab]} {lab}" for lab in labels)


def test_candidates_are_the_relations_the_pair_types_allow():
    schema = relation_schema()
    assert candidates_for("PER", "DAT", schema) == ["per:date_of_birth", "per:date_of_death"]
    assert "per:employee_of" in candidates_for("PER", "ORG", schema)
    assert candidates_for("ORG", "DAT", schema) == ["org:dissolved", "org:founded"]
    assert candidates_for("LOC", "PER", schema) == []


def test_two_taggers_entities_are_unioned_the_longer_of_overlapping_ones_kept():
    a = [(0, 3, "PER"), (5, 8, "ORG")]
    b = [(0, 3, "PER"), (5, 12, "ORG"), (14, 16, "DAT")]
    assert union_entities([a, b]) == [(0, 3, "PER"), (5, 12, "ORG"), (14, 16, "DAT")]
    # equal length: the first tagger's
    assert union_entities([[(0, 2, "ORG")], [(1, 3, "PER")]]) == [(0, 2, "ORG")]


def test_a_kb_file_is_read_and_a_bad_line_is_named(tmp_path):
    labels = {r["label"] for r in relation_schema()}
    path = tmp_path / "kb.tsv"
    path.write_text("# written for a test\n# subject<TAB>relation<TAB>object\n"
                    "김무성\tper:employee_of\t새누리당\n", encoding="utf-8")  # fmt: skip
    assert read_kb(path, labels) == {("김무성", "새누리당"): "per:employee_of"}
    assert kb_note(path) == "written for a test"
    path.write_text("김무성\tper:boss_of\t새누리당\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"kb.tsv:1: unknown relation 'per:boss_of'"):
        read_kb(path, labels)
    path.write_text("# c\n김무성 per:employee_of 새누리당\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"kb.tsv:2: expected subject<TAB>relation<TAB>object"):
        read_kb(path, labels)


def _sentences(n: int) -> pd.DataFrame:
    """``n`` sentences "갑 을 병" with 갑 (PER), 을 (ORG) and 병 (DAT)."""
    text = "갑 을 병"
    ents = json.dumps([[0, 1, "PER"], [2, 3, "ORG"], [4, 5, "DAT"]])
    return pd.DataFrame({"sentence_id": [f"s{k}" for k in range(n)], "text": [text] * n,
                         "entities": [ents] * n})  # fmt: skip


def _spec(**kw) -> SimpleNamespace:
    base = {"pairs": 10, "kb_share": 0.5, "kb_max_per_pair": 3, "subject_types": ["PER", "ORG"],
            "seed": 0}  # fmt: skip
    return SimpleNamespace(**{**base, **kw})


def test_pair_sampling_at_its_thresholds():
    """Subjects PER or ORG only (DAT is never one): 4 pairs a sentence. The KB pair
    (갑, 을) is in every sentence but used at most kb_max_per_pair times; KB pairs fill at
    most kb_share of the pairs; uniform pairs fill the rest; every other pair is a
    dropped row with its reason."""
    sentences, kb = _sentences(5), {("갑", "을"): "per:employee_of"}
    picked, rest, f = sample_pairs(sentences, kb, _spec(), relation_schema())
    assert f["pairs_possible"] == 20 and f["kb_pairs_possible"] == 5
    assert f["kb"] == 3 and f["uniform"] == 7 and len(picked) == 10  # cap 3 of the 5
    assert all(p[2] in ("PER", "ORG") for p in picked["s"])
    reasons = rest["reason"].value_counts().to_dict()
    assert reasons == {"kb_pair_cap": 2, "not_sampled": 8} and len(rest) + len(picked) == 20
    one, _, g = sample_pairs(sentences, kb, _spec(kb_max_per_pair=5, kb_share=0.2),
                             relation_schema())  # fmt: skip
    assert g["kb"] == 2  # the share: 0.2 of 10 pairs
    none, _, h = sample_pairs(sentences, kb, _spec(kb_share=0.0), relation_schema())
    assert h["kb"] == 0 and h["uniform"] == 10
    again, _, _ = sample_pairs(sentences, kb, _spec(), relation_schema())
    assert list(again["pair_id"]) == list(picked["pair_id"])  # seeded
    assert len(one) == 10 and len(none) == 10


def test_an_other_answer_takes_the_relation_chosen_under_show_all():
    rows = [("a", 1, "relation", "per:title"), ("a", 1, "relation_all", "no_relation"),
            ("a", 2, "relation", OTHER), ("a", 2, "relation_all", "per:spouse"),
            ("a", 3, "relation", OTHER), ("a", 3, "report", "wrong_entity")]  # fmt: skip
    table = pd.DataFrame(rows, columns=["item_id", "annotation_id", "field", "value"])
    merged, info = merge_other(table)
    got = merged[merged["field"] == "relation"].set_index("annotation_id")["value"].to_dict()
    assert got == {1: "per:title", 2: "per:spouse", 3: ""}  # 3: other, nothing chosen
    assert info == {"from_show_all": 1, "other_without_choice": 1}
    assert "relation_all" not in set(merged["field"]) and len(merged) == 4


def test_records_are_klue_re_rows_with_inclusive_end_indices():
    sentence = "김무성 새누리당 대표"
    items = pd.DataFrame([{
        "item_id": "x", "sentence": sentence, "subject": "김무성", "subject_start": 0,
        "subject_end": 3, "subject_type": "PER", "object": "새누리당", "object_start": 4,
        "object_end": 8, "object_type": "ORG", "source": "kmou-news"}])  # fmt: skip
    gold = pd.DataFrame({"item_id": ["x"], "label": ["per:employee_of"]})
    splits = pd.DataFrame({"item_id": ["x"], "split": ["train"]})
    (rec,) = klue_re_records(gold, items, splits, "p")["train"]
    assert rec["subject_entity"] == {"word": "김무성", "start_idx": 0, "end_idx": 2, "type": "PER"}
    obj = rec["object_entity"]
    assert sentence[obj["start_idx"] : obj["end_idx"] + 1] == obj["word"] == "새누리당"
    assert rec["label"] == "per:employee_of" and rec["guid"] == "p_train_00000"
    assert marked(sentence, (0, 3, "PER"), (4, 8, "ORG")) == "[S: 김무성] [O: 새누리당] 대표"


def test_table_10_classes_and_the_annotators_instructions_of_step_5():
    """KLUE 3.5.1, Table 10: 18 person-related classes, 11 organization-related and
    no_relation, without the classes the paper removed or merged. Step 5: the interface
    tells annotators to label the current relation, not a past one, and to use the
    sentence alone, not external knowledge."""
    labels = [r["label"] for r in relation_schema()]
    assert sum(lab.startswith("per:") for lab in labels) == 18
    assert sum(lab.startswith("org:") for lab in labels) == 11
    removed = {"org:website", "per:shareholders", "per:cause_of_death", "per:charges",
               "per:age", "org:parents", "org:subsidiaries", "per:country_of_birth",
               "per:city_of_birth", "per:stateorprovince_of_birth"}  # fmt: skip
    assert not removed & set(labels)
    assert {"org:product", "per:product", "per:colleagues"} <= set(labels)
    from pipelines.annotation.label_config import parse_label_config

    config = parse_label_config(ROOT / "annotation_configs" / "re.xml")
    xml = (ROOT / "annotation_configs" / "re.xml").read_text(encoding="utf-8")
    headers = " ".join(re.findall(r'<Header value="([^"]*)"', xml))
    assert "현재" in headers and "과거" in headers and "per:employee_of" in headers
    assert "외부 지식" in headers and "문장 안" in headers
    assert config is not None


def test_the_demo_recipe_has_klue_res_annotation_counts():
    """KLUE 3.5.1: "3 workers are assigned to each example", workers who "correctly
    labelled at least 4 out of 5 questions during the pilot", subjects PER or ORG."""
    from pipelines.core.recipe import load_recipe

    recipe = load_recipe(ROOT / "recipes" / "klue-re-demo.yaml")
    assert recipe.annotation.overlap == 3
    rule = recipe.annotation.pilot.rule
    assert (rule.kind, rule.threshold, rule.of) == ("min_correct", 4, 5)
    assert recipe.re.subject_types == ["PER", "ORG"] and len(recipe.re.taggers) == 2


def test_the_ner_resources_types_map_onto_klue_res_schema():
    """KLUE 3.5.1 step 3: "We modify the named entity types defined in these resources
    to be compatible with our own entity types": KLUE-NER's six (the KMOU 2016 release's)
    and the later release's ten land on PER, ORG, LOC, DAT (date and time), POH, NOH."""
    from pipelines.families.klue.re_section import KMOU_TO_RE, RE_TYPES

    assert set(KMOU_TO_RE.values()) <= set(RE_TYPES)
    assert [KMOU_TO_RE[t] for t in ("PS", "LC", "OG", "DT", "TI", "QT")] == [
        "PER", "LOC", "ORG", "DAT", "DAT", "NOH"]  # fmt: skip
    assert KMOU_TO_RE["TIM"] == "DAT" and KMOU_TO_RE["POH"] == "POH"
    assert RE_TYPES == ("PER", "ORG", "LOC", "DAT", "POH", "NOH")
