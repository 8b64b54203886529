"""KLUE 3.1.1: "For precise annotation, we also present key terms of each topic to
annotators. The terms are subsections of corresponding topics in NAVER news platform as
shown in Table 3." The topic interface a YNAT round pushes to Label Studio shows each
topic's key terms in Korean, the terms of Table 3."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pipelines.annotation.label_config import parse_label_config
from pipelines.core.recipe import load_recipe
from pipelines.families.klue.ynat import KEY_TERMS, TOPICS

ROOT = Path(__file__).resolve().parents[4]

# KLUE Table 3, the "Key Terms" column, as the paper prints it
TABLE_3 = {
    "정치": ["Blue House", "Ministry", "Parliament", "North Korea", "Political parties",
             "Defense", "Diplomacy"],
    "경제": ["Stock", "Finance", "Industry Enterprise", "Real estate"],
    "사회": ["Education", "Labor", "Journalism", "Environment", "Human rights",
             "Food and drugs"],
    "생활문화": ["Health", "Transportation", "Leisure", "Hot places", "Fashion", "Beauty",
                 "Performance", "Exhibition", "Books", "Weather"],
    "세계": ["Asia/Australia", "America", "Europe", "Middle East/Africa"],
    "IT과학": ["Mobile", "IT", "Internet Social media", "Communication", "Computer", "Game",
               "Scientific journalism"],
    "스포츠": ["Baseball", "Basketball", "Volleyball", "E-sports"],
}  # fmt: skip


def test_key_terms_are_table_3s():
    assert set(KEY_TERMS) == set(TOPICS)
    assert {topic: [en for en, _ in terms] for topic, terms in KEY_TERMS.items()} == TABLE_3
    assert all(any("가" <= ch <= "힣" for ch in ko) for terms in KEY_TERMS.values()
               for _, ko in terms)  # fmt: skip


def _interface() -> ET.Element:
    """The labeling config the tc-demo recipe's round sends to Label Studio."""
    recipe = load_recipe(ROOT / "recipes" / "tc-demo.yaml")
    config = parse_label_config(recipe.resolve(recipe.annotation.config))
    return ET.fromstring(config.xml)


def test_the_topic_interface_shows_each_topics_key_terms_in_korean():
    root = _interface()
    shown = " ".join(el.attrib.get("value", "") for el in root.iter("Header"))
    for topic, terms in KEY_TERMS.items():
        line = next((h.attrib["value"] for h in root.iter("Header")
                     if h.attrib.get("value", "").startswith(f"{topic}:")), None)  # fmt: skip
        assert line is not None, f"no key-term line for {topic} in {shown!r}"
        assert line == f"{topic}: " + ", ".join(ko for _, ko in terms)
    # each topic's choice, in every ranked field, carries its key terms as its hint
    for field in ("topic1", "topic2", "topic3"):
        (control,) = [c for c in root.iter("Choices") if c.attrib["name"] == field]
        hints = {c.attrib["value"]: c.attrib.get("hint") for c in control.iter("Choice")}
        assert hints == {t: ", ".join(ko for _, ko in KEY_TERMS[t]) for t in TOPICS}


def test_the_card_says_the_interface_showed_the_key_terms():
    from pipelines.families.klue.ynat import card

    titles = {"items": 3, "sentences": 5, "spec": {"sample": 3}, "per_source": {"a": 3},
              "dated": 0, "simulated_truth": None}  # fmt: skip
    round_ = {"config": "topic.xml", "server": "2.0", "project": "p", "overlap": 3,
              "annotators": 3, "annotations": 9, "skipped": 0, "simulated": False}  # fmt: skip
    text = card({"titles": titles, "annotation": round_}).annotation
    assert "each topic with its key terms" in text and "KLUE 3.1.1, Table 3" in text
    other = card({"titles": titles, "annotation": {**round_, "config": "mine.xml"}})
    assert "key terms" not in other.annotation  # another interface: the card claims nothing
