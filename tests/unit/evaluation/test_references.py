"""Issue 54: a baseline's figures beside always answering train's majority, and a
collapsed model's figures turned into a warning (pipelines.evaluation.references)."""

from __future__ import annotations

import pytest

from pipelines.core.plugins import TASK_KINDS
from pipelines.evaluation.fitters import BaselineSettings
from pipelines.evaluation.references import collapse, majority_answer, majority_row
from pipelines.evaluation.spec import EvaluationError
from pipelines.export.card_baseline import baseline_section
from pipelines.export.warnings import CARD_WARNINGS


def _marc() -> tuple:
    ev = TASK_KINDS.get("marc-ja").evaluation
    field = ev.gold_field or "label"
    return ev, lambda labels: [{field: x, "sentence": "s"} for x in labels]


def test_majority_is_trains_most_frequent_answer_scored_with_the_tasks_metrics():
    ev, recs = _marc()
    train = recs(["positive"] * 7 + ["negative"] * 3)
    assert majority_answer(ev, train) == "positive"
    test = recs(["positive"] * 91 + ["negative"] * 9)  # MARC-ja's demo test: 91% positive
    assert majority_row(ev, "positive", test) == {"accuracy": 91.0}
    assert majority_answer(ev, []) is None
    assert majority_answer(TASK_KINDS.get("klue-sts").evaluation, train) is None  # a score


def test_a_constant_score_predictor_collapsed_and_a_spread_one_did_not():
    ev = TASK_KINDS.get("klue-sts").evaluation
    gold = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] * 5
    flat = [2.36, 2.80] + [2.55] * 28  # the STS demo: 2.36 to 2.80, sd 0.09 of 1.51
    c = collapse(ev, gold, flat)
    assert c["collapsed"] and c["summary"].startswith("every prediction between 2.36 and 2.80")
    assert not collapse(ev, gold, [g * 0.8 + 0.3 for g in gold])["collapsed"]


def test_one_label_for_nearly_every_item_collapsed_unless_the_gold_has_one():
    ev, _ = _marc()
    gold = ["positive"] * 18 + ["negative"] * 2
    c = collapse(ev, gold, ["positive"] * 20)
    assert c["collapsed"] and c["summary"] == "20 of 20 predictions are 'positive'"
    assert not collapse(ev, gold, ["positive"] * 18 + ["negative"] * 2)["collapsed"]
    assert not collapse(ev, ["positive"] * 20, ["positive"] * 20)["collapsed"]


def _facts(dev: dict, test: dict) -> dict:
    return {"baseline": {
        "model": "benchforge small BERT, trained from scratch", "train_items": 80,
        "seconds": 7.5, "device": "cpu", "metrics_source": "JGLUE 4.1",
        "protocol": "fine-tuned on train", "splits": {"dev": dev, "test": test}}}  # fmt: skip


def test_the_card_shows_the_majority_row_and_says_when_the_model_is_behind_it():
    maj = {"answer": "positive", "metrics": {"accuracy": 91.3}}
    facts = _facts({"items": 42, "metrics": {"accuracy": 95.0}, "majority": maj,
                    "collapse": {"collapsed": False}},
                   {"items": 46, "metrics": {"accuracy": 86.96}, "majority": maj,
                    "collapse": {"collapsed": False}})  # fmt: skip
    text = baseline_section(facts)
    assert "| always `positive` (train's majority) | test | 46 | 91.3 |" in text
    assert "**The model does not beat always answering train's majority**: on test, always " \
           "`positive` (accuracy 86.96 against 91.3)." in text  # fmt: skip
    assert "on dev," not in text
    assert CARD_WARNINGS.get("baseline-learned-nothing")(facts, {}) == [
        "**The model does not beat always answering train's majority**: on test, always "
        "`positive` (accuracy 86.96 against 91.3)."
    ]


def test_a_collapsed_models_row_is_a_warning_not_a_result():
    flat = {"collapsed": True, "summary": "every prediction between 2.36 and 2.80 "
            "(standard deviation 0.09 against the gold's 1.52)"}  # fmt: skip
    facts = _facts(
        {"items": 29, "metrics": {"pearson": -23.06}, "collapse": flat},
        {"items": 59, "metrics": {"pearson": 3.12}, "collapse": flat},
    )
    text = baseline_section(facts)
    assert "-23.06" not in text and "3.12" not in text
    assert "| dev | 29 | collapsed (no result) |" in text
    found = CARD_WARNINGS.get("baseline-learned-nothing")(facts, {})
    assert len(found) == 2 and found[0].startswith(
        "**The model learned nothing**: on dev, every prediction between 2.36 and 2.80"
    )


@pytest.mark.parametrize("value", [0, 1.5, float("nan"), True, "x"])
def test_collapse_thresholds_are_shares(value):
    with pytest.raises(EvaluationError, match="collapse_share"):
        BaselineSettings(collapse_share=value).check()


def test_a_score_model_is_measured_against_no_correlation():
    from pipelines.evaluation.references import chance_row

    ev = TASK_KINDS.get("klue-sts").evaluation
    assert chance_row(ev) == {"pearson": 0.0}  # f1_at_3 has no chance figure here
    assert chance_row(TASK_KINDS.get("marc-ja").evaluation) == {}
    spread = {"collapsed": False}
    facts = _facts({"items": 29, "metrics": {"pearson": -5.0}, "collapse": spread,
                    "chance": {"metrics": {"pearson": 0.0}}},
                   {"items": 59, "metrics": {"pearson": 40.0}, "collapse": spread,
                    "chance": {"metrics": {"pearson": 0.0}}})  # fmt: skip
    text = baseline_section(facts)
    assert "| no correlation (chance) | dev | 29 | 0 |" in text
    assert "**The model does not beat chance**: on dev (pearson -5.0 against 0.0" in text
    assert "on test" not in text
