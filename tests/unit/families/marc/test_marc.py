"""MARC-ja's rules (JGLUE 3.1, issue 37): ratings to labels with every other review
dropped with its reason, the 500-character cut, train from ratings and dev/test from the
crowd, the divergence, and the simulated raters' truth."""

from __future__ import annotations

import pandas as pd
import pytest

from pipelines.families.marc.export import release_rows
from pipelines.families.marc.section import MarcSpec
from pipelines.families.marc.steps import (
    final_labels,
    rating_labels,
    review_labels,
    text_model_truth,
)


def test_marc_ja_ratings_become_labels_and_three_stars_are_not_used():
    spec = MarcSpec()  # JGLUE 3.1: 1-2 negative, 4-5 positive, 3 not used
    ratings = pd.Series(["1", "2", "3", "4", "5", "6", "0", None, "five", 4.0])
    label, reason = rating_labels(ratings, spec)
    assert label.tolist()[:5] == ["negative", "negative", None, "positive", "positive"]
    assert reason.tolist() == [None, None, "neutral_rating", None, None, "rating_outside_scale",
                               "rating_outside_scale", "no_rating", "no_rating", None]  # fmt: skip
    assert label.iloc[9] == "positive"


def test_a_recipe_maps_its_own_scale_and_bad_mappings_are_refused():
    nsmc = MarcSpec(scale=(1, 10), labels={"negative": [1, 2, 3, 4], "positive": [9, 10]})
    label, reason = rating_labels(pd.Series([4, 5, 8, 9, 11]), nsmc)
    assert label.tolist() == ["negative", None, None, "positive", None]
    assert reason.tolist() == [None, "neutral_rating", "neutral_rating", None,
                               "rating_outside_scale"]  # fmt: skip
    with pytest.raises(ValueError, match="rating 6 is off the scale"):
        MarcSpec(labels={"negative": [1], "positive": [6]})
    with pytest.raises(ValueError, match="rating 2 is both negative and positive"):
        MarcSpec(labels={"negative": [1, 2], "positive": [2, 5]})
    with pytest.raises(ValueError, match="not \\(lowest, highest\\)"):
        MarcSpec(scale=(5, 1))


def test_a_review_over_500_characters_is_dropped_and_500_stays():
    texts = pd.Series(["あ" * 500, "あ" * 501, "あ" * 501])
    label, reason = review_labels(pd.Series([5, 5, 3]), texts, MarcSpec())
    assert label.tolist() == ["positive", None, None]
    assert reason.tolist() == [None, "too_long", "neutral_rating"]  # the rating's reason first
    label, reason = review_labels(pd.Series([5, 5]), texts[:2], MarcSpec(max_chars=None))
    assert label.tolist() == ["positive", "positive"]


def _reviews() -> tuple[pd.DataFrame, pd.DataFrame]:
    reviews = pd.DataFrame({
        "item_id": ["r-1", "r-2", "r-3", "r-4", "r-5"],
        "text": ["良い", "最悪", "普通に良い", "微妙", "素晴らしい"],
        "rating": [5, 1, 4, 2, 5],
        "rating_label": ["positive", "negative", "positive", "negative", "positive"],
        "label": ["positive", "negative", "positive", "negative", "positive"],
    })  # fmt: skip
    splits = pd.DataFrame({"item_id": reviews["item_id"],
                           "split": ["train", "dev", "dev", "test", "test"]})  # fmt: skip
    return reviews, splits


def test_train_keeps_its_ratings_and_dev_test_take_the_crowds_label():
    reviews, splits = _reviews()
    gold = pd.DataFrame({"item_id": ["r-2", "r-3", "r-5"],
                         "label": ["negative", "negative", "positive"]})  # fmt: skip
    dropped = pd.DataFrame({"kind": ["item"], "id": ["r-4"], "reason": ["no_majority"],
                            "detail": ["6 of 10"]})  # fmt: skip
    final, lost, fig = final_labels(reviews, splits, gold, dropped)
    assert dict(zip(final["item_id"], final["label"], strict=True)) == {
        "r-1": "positive", "r-2": "negative", "r-3": "negative", "r-5": "positive"}  # fmt: skip
    assert lost["id"].tolist() == ["r-4"] and lost["reason"].tolist() == ["no_majority"]
    assert fig["diverged"] == 1 and fig["divergence"] == round(1 / 3, 4)
    assert fig["per_rating"] == {"1": {"relabelled": 1, "diverged": 0},
                                 "4": {"relabelled": 1, "diverged": 1},
                                 "5": {"relabelled": 1, "diverged": 0}}  # fmt: skip
    assert fig["train_from_ratings"] == 1 and fig["relabelled_kept"] == 3
    assert release_rows(final.iloc[:1]) == [
        {"review_id": "1", "sentence": "良い", "label": "positive"}]  # fmt: skip


def test_the_simulated_raters_truth_comes_from_a_text_model():
    train = pd.DataFrame({
        "text": ["정말 재미있다 최고", "최고의 영화 강추", "재미있고 감동", "너무 좋다 최고",
                 "지루하고 최악", "최악의 영화 비추", "돈 아깝다 최악", "지루해서 잤다"] * 3,
        "label": ["positive"] * 4 + ["negative"] * 4 + ["positive"] * 4 + ["negative"] * 4
        + ["positive"] * 4 + ["negative"] * 4,
    })  # fmt: skip
    evals = pd.DataFrame({"text": ["최고 재미있다", "최악 지루하다"],
                          "rating_label": ["positive", "positive"]})  # fmt: skip
    truth = text_model_truth(train, evals, 0)
    assert all(len(t) == 10 for t in truth)
    assert truth[0].count("positive") > 5 > truth[1].count("positive")
