"""Human performance (issue 35 item 5): people's answers on test items scored against
the gold, per person and pooled, checked against scipy and scikit-learn."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import pearsonr
from sklearn.metrics import f1_score

from pipelines.agreement.human import human_scores


def _rows(answers: dict[str, dict[str, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": i, "annotator_id": who, "value": v}
                         for who, vs in answers.items() for i, v in vs.items()])  # fmt: skip


def test_ratings_are_scored_by_pearson_per_person_and_for_the_mean():
    gold = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "label": [0.4, 2.2, 3.8, 5.0]})
    people = {"p1": {"a": "0", "b": "2", "c": "4", "d": "5"},
              "p2": {"a": "1", "b": "3", "c": "3", "d": "4"}}  # fmt: skip
    out = human_scores(_rows(people), gold)
    assert out["kind"] == "rating" and out["items"] == 4 and out["sampled"] == 4
    p1 = next(p for p in out["people"] if p["annotator_id"] == "p1")
    assert p1["pearson"] == pytest.approx(pearsonr([0, 2, 4, 5], gold["label"])[0], abs=1e-4)
    mean = [0.5, 2.5, 3.5, 4.5]
    assert out["combined"]["pearson"] == pytest.approx(pearsonr(mean, gold["label"])[0], abs=1e-4)


def test_labels_are_scored_by_accuracy_and_macro_f1_and_a_tie_is_wrong():
    gold = pd.DataFrame({"item_id": ["a", "b", "c"], "label": ["e", "n", "c"]})
    people = {"p1": {"a": "e", "b": "n", "c": "n"}, "p2": {"a": "e", "b": "c", "c": "c"}}
    out = human_scores(_rows(people), gold)
    p1 = next(p for p in out["people"] if p["annotator_id"] == "p1")
    assert p1["accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert p1["macro_f1"] == pytest.approx(
        f1_score(["e", "n", "c"], ["e", "n", "n"], average="macro", zero_division=0), abs=1e-4
    )
    assert out["combined"]["accuracy"] == pytest.approx(1 / 3, abs=1e-4)  # b and c tie
    expected = f1_score(["e", "n", "c"], ["e", "(tie)", "(tie)"], average="macro",
                        labels=["c", "e", "n"], zero_division=0)  # fmt: skip
    assert out["combined"]["macro_f1"] == pytest.approx(expected, abs=1e-4)  # over e, n, c
