"""Issue 18 (part): the data card's warnings, each with the figure and the setting that
triggered it, and `benchforge card render`, which renders a finished run's card again."""

from __future__ import annotations

import copy

from pipelines.core.recipe import CardSpec
from pipelines.export.warnings import CARD_WARNINGS, card_warnings

SETTINGS = CardSpec().model_dump()
FACTS = {
    "paper_agreement": {"level": "nominal", "alpha": 0.713, "source": "KLUE 3.1.1 (YNAT)"},
    "agreement": {"krippendorff_alpha": {"nominal": 0.6}},
    "split": {
        "train": {"labels": {"a": 40, "b": 30}},
        "dev+test": {"labels": {"a": 10, "b": 20}},
        "rule_figures": {
            "unseen_term_share": {"dev+test": 0.4, "train": 0.1},
            "source_quotas": {"news": 10.0, "reviews": 6.0},
            "dev_test_per_source": {"news": 10, "reviews": 6},
        },
    },
    "ingest": {
        "stages": [
            {
                "stage": "dedup",
                "unit": "sentence",
                "corpora": {"news": {"in": 100, "kept": 60, "dropped": {"exact_duplicate": 40}}},
            },
        ]
    },  # fmt: skip
    "annotation": {"simulated": False, "overlap": 3},
}


def test_healthy_figures_raise_no_warning():
    assert card_warnings(FACTS, SETTINGS) == []


def test_each_rule_fires_with_its_figure_and_setting():
    facts = copy.deepcopy(FACTS)
    facts["agreement"]["krippendorff_alpha"]["nominal"] = 0.055
    facts["split"]["train"]["labels"] = {"a": 90, "b": 5}
    facts["split"]["rule_figures"]["unseen_term_share"] = {"dev+test": 1.0, "train": 1.0}
    facts["split"]["rule_figures"]["dev_test_per_source"] = {"news": 3, "reviews": 6}
    facts["ingest"]["stages"][0]["corpora"]["news"] = {
        "in": 100, "kept": 19, "dropped": {"exact_duplicate": 81}
    }  # fmt: skip
    facts["annotation"]["simulated"] = True
    found = "\n".join(card_warnings(facts, SETTINGS))
    assert "alpha (nominal) 0.055 against 0.713 in KLUE 3.1.1 (YNAT)" in found
    assert "`card.alpha_ratio_min`" in found
    assert "a is 100 of 125 gold labels (80%" in found and "`card.max_label_share`" in found
    assert "`dedup` dropped 81 of 100 sentences of `news` (81%" in found
    assert "does not discriminate" in found and "Split quota not met" in found
    assert "news 3 of 10" in found and "Simulated rounds** (annotation)" in found
    assert len(found.splitlines()) == 6


def test_thresholds_come_from_the_recipe():
    facts = copy.deepcopy(FACTS)
    assert card_warnings(facts, {**SETTINGS, "max_drop_share": 0.3})  # 40% > 30%
    assert not card_warnings(facts, {**SETTINGS, "alpha_ratio_min": 0.8})  # 0.6 >= 0.57


def test_every_rule_is_registered():
    assert CARD_WARNINGS.names() == [
        "agreement-below-paper", "annotator-far-from-gold", "dominant-label", "heavy-filter",
        "label-absent-from-split", "quota-not-met", "simulated-round", "single-source-split",
        "split-criterion", "split-label-share",
    ]  # fmt: skip


def test_a_single_source_eval_split_and_a_far_annotator_are_named():
    facts = copy.deepcopy(FACTS)
    per_split = {"train": {"news": 50, "reviews": 40}, "dev": {"reviews": 12},
                 "test": {"news": 6, "reviews": 6}}  # fmt: skip
    facts["labels"] = {"sources_per_split": per_split}
    facts["agreement"]["rule"] = "majority"
    facts["agreement"]["annotator_label_agreement"] = [
        {"annotator_id": "u1", "gold_agreement": 0.93, "gold_items": 90},
        {"annotator_id": "u5", "gold_agreement": 0.07, "gold_items": 95},
    ]
    found = card_warnings(facts, SETTINGS)
    assert found == [
        "**An annotator disagrees with the gold labels**: u5 chose the gold label on 7% of 95 "
        "items (below 50%, `card.min_annotator_agreement`); rule `majority` screens no "
        "annotator, so their votes count.",
        "**An evaluation split comes from one source**: dev is 100% `reviews` (12 items) while "
        "the dataset draws on 2 sources.",
    ]
    assert not card_warnings(facts, {**SETTINGS, "min_annotator_agreement": 0.05})[:-1]


def test_the_banner_says_round_by_round_what_is_simulated_and_where_labels_come_from():
    """Issue 34 item 3: a translated dataset's labels are the source's human scores, and
    a round people answered is named as such; a card with no simulated round has no
    banner."""
    from pipelines.export.card_section import CardSection
    from pipelines.export.data_card import simulated_banner

    facts = {"rounds": {
        "postedit": {"project": "p-postedit", "simulated": True},
        "relabel": {"project": "p-relabel", "simulated": False},
    }}  # fmt: skip
    section = CardSection("item", "", "", sections={"labels_from": "Labels are STS-B's."})
    banner = simulated_banner(facts, section)
    assert banner.startswith("> **Simulated rounds.**")
    assert "`p-postedit`; answered by people: `p-relabel`. Labels are STS-B's." in banner
    assert "Every label" not in simulated_banner(facts, None)  # people answered a round
    facts["rounds"]["relabel"]["simulated"] = True
    assert simulated_banner(facts, None).endswith(
        "`p-postedit`, `p-relabel`. Every label in this dataset comes from simulated annotators."
    )
    facts["rounds"] = {"postedit": {"project": "p", "simulated": False}}
    assert simulated_banner(facts, section) == ""


def test_every_rule_runs_on_a_family_release_and_the_label_rules_fire_at_their_setting():
    """Issue 34 item 2: the shared rules run on every card (a family release has no
    ingest statistics or agreement section: they say nothing there); an evaluation split
    without a label, and one label above `max_split_label_share` of a split, warn."""
    facts = {
        "recipe": {},
        "labels": {"numeric": False, "order": ["c", "e", "n"], "per_split": {
            "train": {"c": 50, "e": 12, "n": 17}, "dev": {"c": 14, "n": 5},
            "test": {"e": 2, "n": 13}}},
        "rounds": {"nli": {"project": "jnli-nli", "simulated": False}},
    }  # fmt: skip
    settings = {**SETTINGS, "max_split_label_share": 0.8}
    found = card_warnings(facts, settings)
    assert found == [
        "**A label is absent from an evaluation split**: dev (19 items) has no `e`; a model "
        "is not tested on it there.",
        "**A label is absent from an evaluation split**: test (15 items) has no `c`; a model "
        "is not tested on it there.",
        "**One label fills a split**: `n` is 13 of 15 items of test (87%; more than 80%, "
        "`card.max_split_label_share`).",
    ]
    settings["max_split_label_share"] = 0.87  # 13/15 = 86.7%: at the setting, no warning
    assert not any("fills a split" in w for w in card_warnings(facts, settings))
    facts["labels"]["numeric"] = True  # scores in bins: a bin may well be empty
    assert card_warnings(facts, settings) == []


def test_a_familys_warnings_add_to_the_shared_rules():
    from pipelines.export.card_section import CardSection
    from pipelines.export.data_card import _warnings

    facts = {"recipe": {}, "annotation": {"simulated": True, "overlap": 3}}
    section = CardSection("item", "", "", sections={"warnings": "- A family's own warning."})
    lines = _warnings(facts, section).splitlines()
    assert lines[0].startswith("- **Simulated rounds** (annotation)")
    assert lines[1] == "- A family's own warning."
