"""KLUE-DP's task kind (issue 57): the completeness rule, the pre-loaded parse as the
interface reads it back, the correction figures, the balanced split, the pseudo-parser
and the metrics (UAS/LAS and KLUE's baseline variant)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.annotation.annotate import flatten_result
from pipelines.annotation.label_config import parse_label_config
from pipelines.evaluation.spec import EvaluationError
from pipelines.families.klue.dp import completeness, correction_figures, prediction, tree_json
from pipelines.families.klue.dp_metrics import (
    attachment_scores,
    klue_baseline_scores,
    scorer,
    tree_prediction,
)
from pipelines.families.klue.dp_morph import analyse
from pipelines.families.klue.dp_parse import examples, load_treebanks
from pipelines.families.klue.dp_section import DpSpec
from pipelines.models.dep_parser import ParserSettings, load_parser, right_branching, train_parser
from pipelines.splits.balanced import balanced_split
from pipelines.splits.base import SplitSettings

ROOT = Path(__file__).resolve().parents[4]
SPEC = DpSpec(parser={"checkpoint": "x"})


def test_completeness_rule() -> None:
    assert completeness(analyse("그는 눈물을 흘렸다."), SPEC) is None
    assert completeness(analyse("정말 재미있는 영화"), SPEC) == "incomplete"
    assert completeness(analyse("최고다"), SPEC) == "too_short"
    assert completeness(analyse(" ".join(["아주"] * 40 + ["좋다"])), SPEC) == "too_long"
    assert completeness(analyse("이 영화 진짜 좋아요 !!"), SPEC) is None  # symbols after EF


def test_the_preloaded_parse_reads_back_as_the_tree() -> None:
    """What the annotator gets is what an untouched submission gives back."""
    config = parse_label_config((ROOT / "annotation_configs" / "dp.xml").read_text())
    config = type(config)(config.xml, config.data_fields, config.controls,
                          (("relations", "dependency_tree"),))  # fmt: skip
    words = ["그는", "눈물을", "흘렸다."]
    result = json.loads(prediction(words, [3, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"], "v"))["result"]
    assert result[1]["value"] == {"start": 3, "end": 6, "text": "눈물을", "labels": ["W"]}
    value = dict(flatten_result(result, config))["relations"]
    assert json.loads(value) == json.loads(tree_json([3, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"]))


def test_correction_figures() -> None:
    items = pd.DataFrame(
        {"item_id": ["a"], "pseudo": [tree_json([2, 3, 0], ["NP", "NP_OBJ", "VP"])]}
    )
    answers = pd.DataFrame(
        {
            "item_id": ["a", "a"],
            "value": [
                tree_json([2, 3, 0], ["NP", "NP_OBJ", "VP"]),  # unchanged
                tree_json([3, 3, 0], ["NP_SBJ", "NP_AJT", "VP"]),  # re-attached, relabelled
            ],
        }
    )
    f = correction_figures(items, answers)
    assert f == {
        "annotations": 2,
        "pseudo_arcs_seen": 4,
        "kept": 0.5,
        "relabelled": 0.25,
        "reattached": 0.25,
        "correction_rate": 0.5,
        "annotations_unchanged": 0.5,
    }


def test_balanced_split_puts_equal_styles_in_dev_and_test() -> None:
    items = pd.DataFrame({
        "item_id": [f"i{i}" for i in range(300)],
        "text": [f"문장 {i} 번째 {'가' * (i % 7)} {i * 7919}" for i in range(300)],
        "style": ["formal"] * 100 + ["colloquial"] * 200,
    })  # fmt: skip
    settings = SplitSettings(rule="balanced", text_columns=["text"])
    frame, figures = balanced_split(items, settings)
    per = figures["per_split"]
    for split in ("dev", "test"):
        assert per[split]["formal"] == per[split]["colloquial"] > 0
    assert per["dev"]["formal"] + per["test"]["formal"] == figures["target_per_value"] == 47
    assert sum(sum(v.values()) for v in per.values()) == 300
    again, _ = balanced_split(items, settings)
    assert again["split"].tolist() == frame["split"].tolist()


def test_a_small_parser_learns_head_final_trees(tmp_path: Path) -> None:
    data = load_treebanks([ROOT / "data" / "demo" / "ud-korean" / "ko_gsd-ud-dev.conllu.gz"])
    train, dev = examples(data.train[:300]), examples(data.heldout[:40])
    settings = ParserSettings(epochs=3, hidden=32, embed=32, arc_dim=32, label_dim=16)
    info = train_parser(train, dev, settings, tmp_path / "p")
    assert info["dev"]["uas"] > 0.5 and info["right_branching_dev_uas"] is not None
    parser = load_parser(tmp_path / "p", "cpu")
    for (words, _, _), (heads, labels) in zip(dev, parser.parse([d[0] for d in dev]),
                                              strict=True):  # fmt: skip
        n = len(words)
        assert len(heads) == len(labels) == n and heads[-1] == 0
        assert all(h > i for i, h in enumerate(heads[:-1], start=1))
    # trained on the same data and settings: reused, not trained again
    assert train_parser(train, dev, settings, tmp_path / "p")["fingerprint"] == info["fingerprint"]
    assert right_branching([[("a",), ("b",), ("c",)]]) == [[2, 3, 0]]


def test_attachment_and_klue_variant() -> None:
    gold = [([2, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"]), ([2, 0], ["AP", "VP"])]
    pred = [([3, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"]), ([2, 0], ["AP", "VNP"])]
    assert attachment_scores(gold, pred) == {"uas": 80.0, "las": 60.0}
    k = klue_baseline_scores(gold, pred)
    assert k["klue_uas_micro_f1"] == 80.0  # micro F1 over heads is accuracy
    # KLUE's LAS: a wrong head voids the label (word 1), NP_SBJ etc. are top-15 labels
    from sklearn.metrics import f1_score

    y = ["NP_SBJ", "NP_OBJ", "VP", "AP", "VP"]
    p = ["<wrong head>", "NP_OBJ", "VP", "AP", "VNP"]
    assert k["klue_las_macro_f1"] == round(
        100 * f1_score(y, p, average="macro", zero_division=0), 2
    )


def test_scorer_per_style_and_bad_predictions() -> None:
    records = [
        {"guid": "g1", "head": [2, 0], "deprel": ["NP_SBJ", "VP"], "style": "formal"},
        {"guid": "g2", "head": [2, 0], "deprel": ["AP", "VP"], "style": "colloquial"},
    ]
    preds = {
        "g1": {"prediction": {"head": [2, 0], "deprel": ["NP_SBJ", "VP"]}},
        "g2": {"prediction": [[0, "AP"], [0, "VP"]]},
    }
    out = scorer(records, preds, "p.jsonl")
    assert out["uas"] == 75.0 and out["uas_formal"] == 100.0 and out["uas_colloquial"] == 50.0
    with pytest.raises(EvaluationError, match="p.jsonl: guid g1: 1 heads and 1 labels"):
        tree_prediction({"head": [0], "deprel": ["VP"]}, 2, "p.jsonl: guid g1")
    with pytest.raises(EvaluationError, match="head 5 is not 0 or a word"):
        tree_prediction([[5, "NP"], [0, "VP"]], 2, "x")


def test_a_tree_pilot_passes_by_mean_uas_and_gold_trees_are_checked() -> None:
    """The ``min_uas`` pass rule (a pilot of known trees, issue 57 item 4) and the gold
    check of a tree against the interface."""
    from pipelines.agreement.qualification import PassRule, pilot_results
    from pipelines.annotation.gold_items import check_value

    gold = pd.DataFrame({"item_id": ["p1", "p2"],
                         "value": [tree_json([2, 3, 0], ["NP_SBJ", "NP_OBJ", "VP"]),
                                   tree_json([2, 0], ["AP", "VP"])]})  # fmt: skip
    three = ["NP", "NP", "VP"]
    rows = pd.DataFrame([
        {"item_id": "p1", "annotator_id": "good", "value": tree_json([2, 3, 0], three)},
        {"item_id": "p2", "annotator_id": "good", "value": tree_json([2, 0], ["AP", "VP"])},
        {"item_id": "p1", "annotator_id": "poor", "value": tree_json([3, 1, 0], three)},
    ])  # fmt: skip
    out = pilot_results(rows, PassRule("min_uas", 0.8), gold).set_index("annotator_id")
    assert out.loc["good", "passed"] and out.loc["good", "score"] == 1.0
    # poor: p1 1 of 3 heads (the root), p2 never answered (0)
    assert not out.loc["poor", "passed"] and out.loc["poor", "score"] == pytest.approx(
        1 / 6, abs=1e-5
    )
    config = parse_label_config((ROOT / "annotation_configs" / "dp.xml").read_text())
    control = config.answer_control("relations")
    assert check_value(tree_json([2, 0], ["AP", "VP"]), control) is None
    assert "one tree" in check_value(json.dumps([[2, "AP"], [1, "VP"]]), control)
    assert "not the interface" in check_value(json.dumps([[2, "XX"], [0, "ROOT"]]), control)


def test_simulated_linguists_are_careful_unless_the_recipe_says() -> None:
    from pipelines.families.klue.review_section import LinguistReviewSpec

    default = LinguistReviewSpec.model_validate({"simulate": {"annotators": 2, "seed": 1}})
    assert default.simulate.careless == 0
    asked = LinguistReviewSpec.model_validate({"simulate": {"annotators": 2, "careless": 1}})
    assert asked.simulate.careless == 1
    assert LinguistReviewSpec().simulate is None
