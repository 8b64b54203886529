"""KLUE 3.2.1's annotation guide for STS: the six points of the 0-5 scale defined by
*important* and *unimportant* content, what counts as important, and the context
example. The interface and the guideline the STS demo's round shows carry them, in
Korean with the paper's English beside it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from pipelines.annotation.guidelines import round_guideline
from pipelines.annotation.label_config import parse_label_config
from pipelines.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[4]

# KLUE 3.2.1, "An annotator should score the similarity as follows", as printed
PAPER = {
    "5": "Two sentences are equivalent in terms of important and unimportant content.",
    "4": "Two sentences are closely equivalent. Some unimportant content differ.",
    "3": "Two sentences are roughly equivalent. Important content are similar to each other, "
    "but difference between unimportant content is not ignorable.",
    "2": "Two sentences are not equivalent. Important content are not similar to each other, "
    "only sharing some unimportant contents.",
    "1": "Two sentences are not equivalent. Important and unimportant content are not similar "
    "to each other. Two sentences only share their topics.",
    "0": "Two sentences are not equivalent. They are not sharing any important and "
    "unimportant contents and even topics.",
}


def _round():  # noqa: ANN202
    recipe = load_recipe(ROOT / "recipes" / "sts-demo.yaml")
    path = recipe.resolve(recipe.annotation.config)
    config = parse_label_config(path)
    guide = round_guideline(path, recipe.annotation.guideline).path.read_text(encoding="utf-8")
    return ET.fromstring(config.xml), " ".join(guide.split())


def test_the_scale_is_klues_six_definitions():
    root, guide = _round()
    (control,) = [c for c in root.iter("Choices") if c.attrib["name"] == "similarity"]
    choices = {c.attrib.get("alias") or c.attrib["value"]: c for c in control.iter("Choice")}
    assert set(choices) == set(PAPER)
    for score, english in PAPER.items():
        korean, _, rest = choices[score].attrib["hint"].partition(": ")
        assert rest == english, score
        assert any("가" <= ch <= "힣" for ch in korean), score
        assert korean in guide and english in guide, score
        # the definition is on screen, not only in the hover (issue 55)
        assert choices[score].attrib["value"] == f"{score}: {korean}", score
        assert choices[score].attrib["hotkey"] == score


def test_the_guide_explains_important_content_and_context():
    _, guide = _round()
    # what is important: the main idea, by sentence type (KLUE 3.2.1)
    for words in ("declarative sentence", "interrogative and imperative sentence",
                  "exclamatory sentence", "auxiliary verbs or function words",
                  "평서문", "의문문", "명령문", "감탄문"):  # fmt: skip
        assert words in guide, words
    # the context example and its two scores
    assert "Check-in was done by someone other than the host." in guide
    assert "Check-in was done by someone." in guide
    assert "Check-out was done by someone other than the host." in guide
    assert "→ 3" in guide and "→ 2" in guide
