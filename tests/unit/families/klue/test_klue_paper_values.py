"""KLUE 2.3, 3.1.1, 3.2.1 and 3.3.1 at the paper's values: the demo recipes of YNAT,
KLUE-STS and KLUE-NLI and the defaults of the rules they run carry the counts and
thresholds the paper prints (the ledger docs/papers/klue.md cites these tests)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipelines.agreement.settings import AgreementSettings, recipe_agreement_settings
from pipelines.annotation.label_config import parse_label_config
from pipelines.core.recipe import load_recipe
from pipelines.families.klue.items_section import PremiseRules
from pipelines.pairing.settings import RttSettings
from pipelines.quality.settings import DETECTOR_DEFAULTS, ClassifierSettings, NoiseSettings
from pipelines.splits.base import SplitSettings, recipe_split_settings

ROOT = Path(__file__).resolve().parents[4]


def _recipe(name: str):  # noqa: ANN202
    return load_recipe(ROOT / "recipes" / f"{name}.yaml")


def test_ynat_three_annotators_and_two_of_three_on_the_first_topic():
    """KLUE 3.1.1: "three annotators label topics independently"; "we keep only a single
    topic for each headline, selected by at least two annotators out of three"."""
    recipe = _recipe("tc-demo")
    assert recipe.annotation.overlap == 3
    rule = recipe_agreement_settings(recipe)
    assert (rule.rule, rule.min_votes, rule.answer_field) == ("majority", 2, "topic1")
    split = recipe_split_settings(recipe)
    assert split.rule == "tc" and split.dev_share == pytest.approx(1 / 2)  # 9,107 and 9,107


def test_sts_seven_annotators_screening_rounding_and_binary_label():
    """KLUE 3.2.1: "7 different workers labeled all sentence pairs"; annotators with
    "Pearson's correlation < 0.80 or Krippendorff's alpha < 0.20 (nominal)" are filtered
    out; the score "rounded up to the first decimal place"; pairs "larger than 2 standard
    deviation" dropped; "binarized with a threshold 3.0"."""
    recipe = _recipe("sts-demo")
    assert recipe.annotation.overlap == 7
    for rule in (recipe_agreement_settings(recipe), AgreementSettings(rule="mean")):
        assert (rule.pearson_min, rule.alpha_min, rule.alpha_level) == (0.80, 0.20, "nominal")
        assert (rule.decimals, rule.sd_max, rule.binary_threshold) == (1, 2.0, 3.0)
    for split in (recipe_split_settings(recipe), SplitSettings(rule="sts")):
        # "51 bins", dev:test "1:2", least overlap "from score 3-5"
        assert (split.bins, split.high_score, split.binary_threshold) == (51, 3.0, 3.0)
        assert split.dev_share == pytest.approx(1 / 3)
    assert RttSettings().pivot == "en"  # "We set English as an intermediate language"


def test_nli_four_validators_three_of_five_and_the_split():
    """KLUE 3.3.1: "four additional annotators"; "a gold label representing the majority
    of three or more votes out of five"; premises "from 20 to 90 characters"; dev/test
    from the sets "among the lowest 20%", "60% formal and 40% colloquial"."""
    recipe = _recipe("nli-demo")
    assert recipe.annotation.overlap == 4
    rule = recipe_agreement_settings(recipe)
    assert (rule.rule, rule.min_votes) == ("majority", 3)
    assert (PremiseRules().min_chars, PremiseRules().max_chars) == (20, 90)
    assert (recipe.items.premises.min_chars, recipe.items.premises.max_chars) == (20, 90)
    for split in (recipe_split_settings(recipe), SplitSettings(rule="nli")):
        assert split.eligible_fraction == 0.2
        assert split.style_shares == {"formal": 0.6, "colloquial": 0.4}
        assert split.dev_share == pytest.approx(1 / 2)  # 3,000 and 3,000


def test_preprocessing_defaults_are_klue_2_3s():
    """KLUE 2.3: "more than 10 Chinese or Japanese characters"; gender bias "at least
    0.5", hate speech "0.9 or above"; not on "The Korea Economy Daily, ACROFAN, and YNA"."""
    assert NoiseSettings().max_cjk_chars == 10
    assert DETECTOR_DEFAULTS["gender_bias"]["threshold"] == 0.5
    assert DETECTOR_DEFAULTS["hate"]["threshold"] == 0.9
    assert set(ClassifierSettings().skip_publishers) == {"The Korea Economy Daily", "ACROFAN",
                                                         "YNA"}  # fmt: skip


def test_nli_interfaces_define_the_labels_as_klue_does():
    """KLUE 3.3.1 (Williams et al.'s criteria): ENTAILMENT "necessarily true given the
    premise is true", CONTRADICTION "necessarily false", NEUTRAL "may or may not be true";
    in Korean in both rounds' interfaces."""
    recipe = _recipe("nli-demo")
    validation = ET.fromstring(parse_label_config(recipe.resolve(recipe.annotation.config)).xml)
    headers = [h.attrib["value"] for h in validation.iter("Header")]
    assert any(h.startswith("전제가 참일 때 가설은?") for h in headers)  # given the premise is true
    (labels,) = [c for c in validation.iter("Choices") if c.attrib["name"] == "label"]
    hints = {c.attrib.get("alias") or c.attrib["value"]: c.attrib["hint"]
             for c in labels.iter("Choice")}  # fmt: skip
    assert hints["entailment"].startswith("반드시 참")  # necessarily true
    assert hints["contradiction"].startswith("반드시 거짓")  # necessarily false
    assert hints["neutral"].startswith("알 수 없음")  # may or may not be true
    writing = ET.fromstring(
        parse_label_config(recipe.resolve(recipe.annotation.writing.config)).xml
    )
    headers = " ".join(h.attrib["value"] for h in writing.iter("Header"))
    for words in ("definitely true given the premise", "definitely false given the premise",
                  "might be true or false"):  # fmt: skip
        assert words in headers
