"""Issue 56: the built-in CPU detector (calibrated character n-gram SVM), saved without
pickle and loaded back to the same probabilities as scikit-learn's fitted estimators;
its cache in benchforge's data folder; the filter's settings checked at recipe load;
the filter running the built-in detectors by default with reasons and scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.models import builtin_detectors
from pipelines.models.classifier_data import DEFAULT_DATA, TASKS, load_split
from pipelines.models.ngram_detector import (
    NgramDetector,
    NgramDetectorError,
    NgramSettings,
    calibrated_probabilities,
    reliability,
    train_ngram_detector,
)
from pipelines.quality.settings import ClassifierSettings
from pipelines.quality.toxic import detector_folders, filter_toxic, load_detectors, skip_reasons

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def small_data(tmp_path_factory) -> Path:
    """The first 1,500 training comments and the whole dev split (quick to fit)."""
    folder = tmp_path_factory.mktemp("khs")
    train = pd.read_csv(DEFAULT_DATA / "train.tsv", sep="\t", dtype=str, keep_default_na=False,
                        quoting=3)  # fmt: skip
    train.head(1500).to_csv(folder / "train.tsv", sep="\t", index=False, quoting=3)
    (folder / "dev.tsv").write_bytes((DEFAULT_DATA / "dev.tsv").read_bytes())
    return folder


@pytest.fixture(scope="module")
def detectors(small_data, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    out = {}
    for task in ("gender_bias", "hate"):
        folder = tmp_path_factory.mktemp(task)
        out[task] = (folder, train_ngram_detector(task, folder, small_data))
    return out


@pytest.mark.parametrize("task", ["gender_bias", "hate"])
def test_saved_detector_gives_scikit_learns_probabilities(task, detectors, small_data):
    """Refit the same estimators with scikit-learn's own classes and compare: the saved
    vocabulary, idf and weights reproduce ``LogisticRegression.predict_proba`` on
    ``LinearSVC.decision_function`` of ``TfidfVectorizer.transform``."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.svm import LinearSVC

    names = TASKS[task]["labels"]
    texts, labels = load_split(small_data / "train.tsv", task)
    dev, _ = load_split(small_data / "dev.tsv", task)
    y = np.array([names.index(v) for v in labels])
    vec = TfidfVectorizer(analyzer="char", ngram_range=(1, 4), min_df=2, sublinear_tf=True)
    x = vec.fit_transform(texts)
    svm = LinearSVC(C=0.3, random_state=0)
    oof = cross_val_predict(svm, x, y, cv=StratifiedKFold(5, shuffle=True, random_state=0),
                            method="decision_function").reshape(len(y), -1)  # fmt: skip
    svm.fit(x, y)
    cal = LogisticRegression(C=1e4, max_iter=5000).fit(oof, y)
    expected = cal.predict_proba(svm.decision_function(vec.transform(dev)).reshape(len(dev), -1))
    got = NgramDetector(detectors[task][0]).predict_proba(dev)
    np.testing.assert_allclose(got, expected, atol=1e-9)
    assert got.shape == (len(dev), len(names))


def test_calibration_matches_logistic_regression_binary_and_multiclass():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    for k in (1, 3):
        d = rng.normal(size=(200, k))
        y = (d[:, 0] > 0).astype(int) if k == 1 else d.argmax(axis=1)
        lr = LogisticRegression(max_iter=1000).fit(d, y)
        np.testing.assert_allclose(
            calibrated_probabilities(d, lr.coef_, lr.intercept_), lr.predict_proba(d), atol=1e-12
        )


def test_reliability_bins_and_expected_calibration_error():
    scores = np.array([0.05, 0.15, 0.95, 0.95, 0.85, 0.85])
    positive = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.0])
    rel = reliability(scores, positive)
    by_bin = {b["bin"]: b for b in rel["bins"]}
    assert by_bin["0.9-1.0"] == {"bin": "0.9-1.0", "n": 2, "mean_score": 0.95, "positive_rate": 1.0}
    assert by_bin["0.8-0.9"]["positive_rate"] == 0.5
    # (1 * 0.05 + 1 * 0.15 + 2 * 0.05 + 2 * 0.35) / 6
    assert rel["ece"] == pytest.approx((0.05 + 0.15 + 0.1 + 0.7) / 6, abs=1e-4)
    assert sum(b["n"] for b in rel["bins"]) == 6


def test_saved_detector_has_its_model_card_and_no_pickle(detectors):
    folder, metrics = detectors["hate"]
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md", "detector.json", "vocabulary.json", "weights.npz",
    ]  # fmt: skip
    with np.load(folder / "weights.npz", allow_pickle=False) as w:  # no object arrays
        assert set(w.files) == {"idf", "svm_coef", "svm_intercept", "cal_coef", "cal_intercept"}
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert str(metrics["dev"]["macro_f1"]) in card and str(metrics["reliability"]["ece"]) in card
    assert metrics["dev"]["examples"] == 471 and metrics["language"] == "ko"
    assert metrics["dev"]["macro_f1"] > 0.4  # learned something even from 1,500 comments


def test_a_damaged_or_collapsed_detector_is_refused(detectors, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(detectors["hate"][0], broken)
    (broken / "weights.npz").write_bytes(b"not numpy")
    with pytest.raises(NgramDetectorError, match="unreadable detector"):
        NgramDetector(broken)
    collapsed = tmp_path / "collapsed"
    shutil.copytree(detectors["hate"][0], collapsed)
    manifest = json.loads((collapsed / "detector.json").read_text())
    manifest["collapse"] = {"collapsed": True, "summary": "100% 'none'"}
    (collapsed / "detector.json").write_text(json.dumps(manifest))
    with pytest.raises(NgramDetectorError, match="collapsed"):
        NgramDetector(collapsed)
    with pytest.raises(NgramDetectorError, match="no label"):
        NgramDetector(detectors["hate"][0]).label_index(["True"])


def test_builtin_detector_is_trained_once_per_data_and_settings(small_data, tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHFORGE_HOME", str(tmp_path / "home"))
    first = builtin_detectors.builtin_detector("gender_bias", small_data)
    stamp = (first / "detector.json").stat().st_mtime_ns
    assert first.parent == tmp_path / "home" / "detectors"
    again = builtin_detectors.builtin_detector("gender_bias", small_data)
    assert again == first and (first / "detector.json").stat().st_mtime_ns == stamp
    other = builtin_detectors.builtin_detector("gender_bias", small_data, NgramSettings(C=1.0))
    assert other != first  # other settings: another detector, never the stale one
    assert [p.name for p in first.parent.iterdir() if p.name.startswith(".")] == []


def test_an_interrupted_training_leaves_nothing_that_looks_finished(small_data, tmp_path,
                                                                    monkeypatch):  # fmt: skip
    monkeypatch.setenv("BENCHFORGE_HOME", str(tmp_path / "home"))

    def crash(task, out, data_dir, settings):  # noqa: ANN001, ANN202
        out.mkdir(parents=True)
        (out / "vocabulary.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(builtin_detectors, "train_ngram_detector", crash)
    with pytest.raises(KeyboardInterrupt):
        builtin_detectors.builtin_detector("hate", small_data)
    assert list((tmp_path / "home" / "detectors").iterdir()) == []


def _recipe(tmp_path: Path, classifiers: dict | None = None, language: str | None = None,
            **corpus) -> Path:  # fmt: skip
    data = {
        "name": "toxic-test",
        "corpora": [
            {
                "name": "reviews",
                "path": str(ROOT / "data/demo/nsmc/reviews.sample3000.jsonl.gz"),
                "format": "jsonl",
                "text_field": "review",
                "style": "colloquial",
                "domain": "review",
                "license": "CC0-1.0",
                **corpus,
            },
        ],  # fmt: skip
    }
    if language:
        data["language"] = language
    if classifiers is not None:
        data["filters"] = {"classifiers": classifiers}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_the_filter_is_on_by_default_with_the_built_in_detectors(tmp_path):
    recipe = load_recipe(_recipe(tmp_path))
    settings = recipe.filters.classifiers
    assert settings.enabled and sorted(settings.active) == ["gender_bias", "hate"]
    assert all(spec.model is None for spec in settings.active.values())
    assert settings.threshold("gender_bias", "reviews") == 0.5
    assert settings.threshold("hate", "reviews") == 0.9
    assert skip_reasons(settings, recipe) == {}


def test_bad_filter_settings_fail_at_recipe_load(tmp_path, detectors):
    cases = [
        ({"detectors": {"hate": {"model": str(tmp_path / "nowhere")}}},
         "detectors.hate.model: .*not a checkpoint directory"),
        ({"detectors": {"hate": {"threshold": 1.5}}}, "threshold"),
        ({"corpora": {"reviews": {"thresholds": {"hate": -0.1}}}}, "hate"),
        ({"corpora": {"reviews": {"skip": True}}}, "skip: true needs a reason"),
        ({"enabled": False}, "enabled: false needs a reason"),
        ({"corpora": {"elsewhere": {"skip": True, "reason": "x"}}}, "not corpora of this recipe"),
        ({"corpora": {"reviews": {"thresholds": {"toxic": 0.5}}}}, "no detector \\['toxic'\\]"),
    ]  # fmt: skip
    for classifiers, message in cases:
        with pytest.raises(RecipeError, match=message):
            load_recipe(_recipe(tmp_path, classifiers))
    # a detector trained for Korean, named explicitly, on a Japanese corpus
    named = {"detectors": {"hate": {"model": str(detectors["hate"][0])}}}
    with pytest.raises(RecipeError, match="trained for 'ko' text, but corpus 'reviews' is 'ja'"):
        load_recipe(_recipe(tmp_path, named, language="ja"))
    # ... is fine once that corpus is skipped with a reason
    skipped = {**named, "corpora": {"reviews": {"skip": True, "reason": "Japanese text"}}}
    recipe = load_recipe(_recipe(tmp_path, skipped, language="ja"))
    assert skip_reasons(recipe.filters.classifiers, recipe) == {"reviews": "Japanese text"}


def test_built_in_detectors_skip_a_corpus_of_another_language_and_say_why(tmp_path):
    recipe = load_recipe(_recipe(tmp_path, language="ja"))
    reasons = skip_reasons(recipe.filters.classifiers, recipe)
    assert list(reasons) == ["reviews"] and "in 'ja'" in reasons["reviews"]
    yna = load_recipe(_recipe(tmp_path, publisher="yna"))
    assert (
        "KLUE 2.3 did not run the detectors"
        in skip_reasons(yna.filters.classifiers, yna)["reviews"]
    )
    off = load_recipe(_recipe(tmp_path, {"enabled": False, "reason": "KoBBQ states biases"}))
    assert off.filters.classifiers.active == {}


def test_filter_drops_with_reason_and_score_using_saved_detectors(detectors):
    settings = ClassifierSettings.model_validate({
        "detectors": {t: {"model": str(p)} for t, (p, _) in detectors.items()},
        "corpora": {"c1": {"thresholds": {"gender_bias": 0.0}}},
    })  # fmt: skip
    models = detector_folders(settings, Path)
    loaded = load_detectors(settings, models)
    assert all(isinstance(d, NgramDetector) for d in loaded.values())
    frame = pd.DataFrame({
        "sent_id": ["a", "b", "c"], "corpus": ["c1", "c2", "news"],
        "style": ["colloquial"] * 3,
        "text": ["좋은 영화", "여자는 집에서 밥이나 해라", "국회 개최"],
    })  # fmt: skip
    result = filter_toxic(frame, settings, loaded, skips={"news": "formal news"})
    dropped = result.dropped.set_index("sent_id")
    assert dropped.loc["a", "reason"] == "gender_bias"  # threshold 0 for c1
    assert dropped.loc["a", "detail"].startswith("gender_bias ")
    kept = result.kept.set_index("sent_id")
    assert np.isnan(kept.loc["c", "score_gender_bias"]) and np.isnan(kept.loc["c", "score_hate"])
    assert result.rows_in == 3 and len(result.kept) + len(result.dropped) == 3
    # the scores are probabilities, and the shared transform changes none of them
    scored = pd.concat([result.kept, result.dropped]).set_index("sent_id")
    assert scored["score_gender_bias"].dropna().between(0, 1).all()
    alone = loaded["hate"].predict_proba(["좋은 영화", "여자는 집에서 밥이나 해라"])[:, 2]
    np.testing.assert_allclose(scored.loc[["a", "b"], "score_hate"], alone, atol=1e-12)
