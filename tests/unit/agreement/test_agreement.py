"""Agreement filtering: published worked examples, hand-computed values, edge cases."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipelines.agreement.rules import (
    AgreementError,
    AgreementSettings,
    agree,
    annotator_figures,
)
from pipelines.measures.reliability import alpha, alphas, fleiss, reliability_matrix

ROOT = Path(__file__).resolve().parents[3]


def long_table(matrix: dict[str, list]) -> pd.DataFrame:
    """{annotator: [value or None per item]} -> item_id, annotator_id, value."""
    rows = [
        {"item_id": f"u{i + 1:02d}", "annotator_id": who, "value": v}
        for who, values in matrix.items()
        for i, v in enumerate(values)
        if v is not None
    ]
    return pd.DataFrame(rows)


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, missing values.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def test_krippendorff_published_example():
    ratings = long_table(KRIPPENDORFF_2011)
    ratings["value"] = ratings["value"].astype(str)  # read as text, parsed as numbers
    got = alphas(ratings)
    assert got["nominal"] == pytest.approx(0.743, abs=5e-4)
    assert got["interval"] == pytest.approx(0.849, abs=5e-4)
    assert set(got) == {"nominal", "ordinal", "interval", "ratio"}
    # unit 12 has one value only: not pairable, ignored rather than filled
    matrix = reliability_matrix(ratings, ratings["value"].astype(float))
    assert np.isnan(matrix.loc["A", "u12"]) and matrix.shape == (4, 12)


# Fleiss (1971) as worked on Wikipedia ("Fleiss' kappa", worked example): 10 subjects,
# 14 raters, 5 categories; kappa = 0.210.
FLEISS_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_published_example():
    rows = []
    for subject, counts in enumerate(FLEISS_COUNTS):
        values = [str(cat + 1) for cat, n in enumerate(counts) for _ in range(n)]
        rows += [
            {"item_id": f"s{subject}", "annotator_id": f"r{k}", "value": v}
            for k, v in enumerate(values)
        ]
    got = fleiss(pd.DataFrame(rows))
    assert got["kappa"] == pytest.approx(0.210, abs=5e-4)
    assert (got["items"], got["raters_per_item"]) == (10, 14)


@pytest.mark.parametrize("seed", range(6))
def test_fleiss_kappa_matches_statsmodels(seed):
    """benchforge's own Fleiss' kappa (no statsmodels import at run time) gives
    statsmodels' value on random count tables, and on the published example."""
    from statsmodels.stats.inter_rater import fleiss_kappa as reference

    from pipelines.measures.reliability import fleiss_kappa

    rng = np.random.default_rng(seed)
    raters, cats = int(rng.integers(2, 8)), int(rng.integers(2, 6))
    table = rng.multinomial(raters, rng.dirichlet(np.ones(cats)), size=int(rng.integers(3, 60)))
    if (table.sum(axis=0) > 0).sum() < 2:  # one category only: kappa is undefined
        table[0] = [raters] + [0] * (cats - 1)
        table[1] = [0, raters] + [0] * (cats - 2)
    assert fleiss_kappa(table) == pytest.approx(reference(table, method="fleiss"), abs=1e-12)
    published = np.array(FLEISS_COUNTS)
    assert fleiss_kappa(published) == pytest.approx(reference(published), abs=1e-12)


def test_pearson_against_the_mean_of_the_others_by_hand():
    ratings = long_table({"a": [1, 2, 3, 4], "b": [1, 2, 3, 5], "c": [2, 2, 4, 4]})
    matrix = reliability_matrix(ratings, ratings["value"].astype(float))
    figures = annotator_figures(matrix, min_shared=3).set_index("annotator_id")
    # a against mean(b, c) = [1.5, 2, 3.5, 4.5]
    expected = np.corrcoef([1, 2, 3, 4], [1.5, 2, 3.5, 4.5])[0, 1]
    assert figures.loc["a", "pearson"] == pytest.approx(expected, abs=1e-4)
    assert figures.loc["a", "shared_items"] == 4


def test_nominal_screening_compares_with_the_others_most_common_rating():
    """KLUE 3.2.1 screens STS annotators by Krippendorff's alpha (nominal) < 0.20: a
    nominal alpha against the others' mode (a mean is not a category). An annotator one
    point off on every item agrees at the interval level and not at the nominal one."""
    truth = [0.0, 1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0]
    table = {f"good{k}": list(truth) for k in range(4)}
    table["off_by_one"] = [t + 1 for t in truth]
    ratings = long_table(table)
    matrix = reliability_matrix(ratings, ratings["value"].astype(float))
    nominal = annotator_figures(matrix, 3, "nominal").set_index("annotator_id")
    interval = annotator_figures(matrix, 3, "interval").set_index("annotator_id")
    # by hand: the others' mode is the truth; the pair (t + 1, t) never matches
    expected = alpha(np.vstack([np.array(truth) + 1, truth]), "nominal")
    assert nominal.loc["off_by_one", "alpha"] == pytest.approx(expected, abs=1e-4)
    assert nominal.loc["off_by_one", "alpha"] < 0.20 < interval.loc["off_by_one", "alpha"]
    assert nominal.loc["good0", "alpha"] == pytest.approx(1.0)
    paper = AgreementSettings(rule="mean", pearson_min=None, sd_max=None)
    assert paper.alpha_level == "nominal" and paper.alpha_min == 0.20
    dropped = agree(ratings, paper)["dropped"]
    assert dropped["id"].tolist() == ["off_by_one"]
    assert "alpha (nominal)" in dropped.iloc[0]["detail"]
    as_interval = AgreementSettings(rule="mean", pearson_min=None, sd_max=None,
                                    alpha_level="interval")  # fmt: skip
    assert agree(ratings, as_interval)["dropped"].empty


def test_screening_alpha_threshold_is_strict_and_a_mode_tie_goes_to_the_mean():
    """At the threshold itself the annotator is kept (KLUE 3.2.1: "below 0.20"); the
    others' tied ratings resolve to the one nearest their mean."""
    table = {"a": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], "b": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
             "c": [1.0, 1.0, 2.0, 4.0, 4.0, 3.0], "d": [0.0, 2.0, 2.0, 3.0, 5.0, 5.0]}  # fmt: skip
    ratings = long_table(table)
    matrix = reliability_matrix(ratings, ratings["value"].astype(float))
    measured = annotator_figures(matrix, 3, "nominal").set_index("annotator_id")
    worst = measured["alpha"].idxmin()
    value = float(measured.loc[worst, "alpha"])
    at = AgreementSettings(rule="mean", pearson_min=None, sd_max=None, alpha_min=value)
    assert worst not in set(agree(ratings, at)["dropped"]["id"])
    above = AgreementSettings(rule="mean", pearson_min=None, sd_max=None,
                              alpha_min=round(value + 0.001, 4))  # fmt: skip
    assert worst in set(agree(ratings, above)["dropped"]["id"])
    # the others of "a" (b, c, d) per item: 0,1,0 -> 0; 1,1,2 -> 1; 2,2,2 -> 2;
    # 3,4,3 -> 3; 4,4,5 -> 4; 5,3,5 -> 5
    from pipelines.agreement.annotations import _others_mode, _rating_counts

    values = matrix.to_numpy()
    scale = np.unique(values)
    pos = list(matrix.index).index("a")
    others = np.delete(values, pos, axis=0)
    tie = np.array([[1.0], [2.0]])  # two others, one rating each of 1 and 2
    three = np.array([0.0, 1.0, 2.0])
    got = _others_mode(_rating_counts(np.vstack([[0.0], tie]), three), np.array([0.0]), three,
                       np.array([1.2]))  # fmt: skip
    assert got.tolist() == [1.0]  # the tie between 1 and 2 goes to 1, nearer the mean 1.2
    mode_a = _others_mode(_rating_counts(values, scale), values[pos], scale,
                          np.nanmean(others, axis=0))  # fmt: skip
    assert mode_a.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]


def sts_ratings() -> pd.DataFrame:
    # five careful annotators close to the truth, one who answers the reverse
    truth = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 2.5, 3.5]
    rng = np.random.default_rng(0)
    table = {
        f"good{k}": [float(np.clip(round(t + rng.normal(0, 0.3)), 0, 5)) for t in truth]
        for k in range(5)
    }
    table["reverse"] = [5.0 - t for t in truth]
    return long_table(table)


def test_mean_rule_screens_then_averages_by_hand():
    ratings = sts_ratings()
    result = agree(ratings, AgreementSettings(rule="mean", sd_max=None))
    dropped = result["dropped"]
    assert dropped.loc[dropped["kind"] == "annotator", "id"].tolist() == ["reverse"]
    assert "pearson" in dropped.iloc[0]["detail"]
    gold = result["gold"].set_index("item_id")
    good = ratings[ratings["annotator_id"] != "reverse"].copy()
    good["value"] = good["value"].astype(float)
    means = good.groupby("item_id")["value"].mean()
    for item, mean in means.items():
        assert gold.loc[item, "label"] == round(mean, 1)
        assert gold.loc[item, "binary_label"] == int(round(mean, 1) >= 3.0)
        assert gold.loc[item, "n_annotations"] == 5
    assert result["figures"]["dropped_annotators"] == {"low_pearson": 1}


def test_mean_rule_drops_outlying_disagreement_and_jsts_variance():
    table = {f"a{k}": [1.0] * 10 for k in range(4)}
    for k in range(4):
        table[f"a{k}"][3] = [0.0, 5.0, 0.0, 5.0][k]  # item u04: sd 2.89, others 0
        table[f"a{k}"][6] = [1.0, 2.0, 1.0, 2.0][k]  # item u07: variance 0.333
    ratings = long_table(table)
    settings = AgreementSettings(rule="mean", pearson_min=None, alpha_min=None)
    result = agree(ratings, settings)
    assert result["dropped"]["id"].tolist() == ["u04"]
    assert result["dropped"]["reason"].tolist() == ["disagreement"]
    jsts = AgreementSettings(
        rule="mean", pearson_min=None, alpha_min=None, sd_max=None, variance_max=0.3
    )
    result = agree(ratings, jsts)
    assert sorted(result["dropped"]["id"]) == ["u04", "u07"]
    assert set(result["dropped"]["reason"]) == {"high_variance"}


def test_majority_rule_with_author_and_nli_table_by_hand():
    rows = []
    labels = {
        # item: author, then four validators
        "n1": ["entailment", "entailment", "entailment", "entailment", "entailment"],
        "n2": ["neutral", "neutral", "contradiction", "neutral", "entailment"],
        "n3": ["contradiction", "neutral", "neutral", "neutral", "contradiction"],
        "n4": ["neutral", "entailment", "contradiction", "neutral", "entailment"],
    }
    for item, values in labels.items():
        for k, v in enumerate(values):
            role = "author" if k == 0 else "validator"
            rows.append({"item_id": item, "annotator_id": f"w{k}", "value": v, "role": role})
    result = agree(pd.DataFrame(rows), AgreementSettings(rule="majority", min_votes=3))
    gold = dict(zip(result["gold"]["item_id"], result["gold"]["label"], strict=True))
    assert gold == {"n1": "entailment", "n2": "neutral", "n3": "neutral"}
    assert result["dropped"]["reason"].tolist() == ["no_majority"]  # n4: 2-2-1
    table = result["figures"]["nli_validation"]
    assert table["unanimous_gold_label"] == {"count": 1, "of": 4, "share": 0.25}
    # validator labels equal to gold: n1 4, n2 2, n3 3 (n4 has no gold) of 16
    assert table["individual_label_eq_gold"] == {"count": 9, "of": 16, "share": 0.5625}
    # validator labels equal to the author's: n1 4, n2 2, n3 1, n4 1
    assert table["individual_label_eq_author"]["count"] == 8
    assert table["gold_label_eq_author"]["count"] == 2
    assert table["gold_label_ne_author"]["count"] == 1
    assert table["no_gold_label"]["count"] == 1


def test_majority_tie_is_dropped():
    ratings = long_table({"a": ["x", "y"], "b": ["x", "y"], "c": ["y", "x"], "d": ["y", "x"]})
    result = agree(ratings, AgreementSettings(rule="majority", min_votes=2))
    assert result["gold"].empty
    assert set(result["dropped"]["reason"]) == {"tie"}


def test_report_flags_drop_items_with_that_reason():
    rows = [
        {"item_id": "i1", "annotator_id": "a", "value": "3", "report_flags": ""},
        {"item_id": "i1", "annotator_id": "b", "value": "3", "report_flags": "hate_or_bias"},
        {"item_id": "i2", "annotator_id": "a", "value": "4", "report_flags": ""},
        {"item_id": "i2", "annotator_id": "b", "value": "4", "report_flags": "unlisted_flag"},
    ]
    settings = AgreementSettings(rule="mean", pearson_min=None, alpha_min=None)
    result = agree(pd.DataFrame(rows), settings)
    assert result["dropped"][["id", "reason"]].values.tolist() == [["i1", "hate_or_bias"]]
    assert result["gold"]["item_id"].tolist() == ["i2"]
    settings.report_min = 2  # one annotator's flag is not enough now
    assert agree(pd.DataFrame(rows), settings)["dropped"].empty


def test_edge_cases():
    # one annotator: no agreement figure can be computed; labels are kept as they are
    one = agree(long_table({"a": [1, 2, 3]}), AgreementSettings(rule="mean"))
    assert one["figures"]["krippendorff_alpha"]["interval"] is None
    assert one["gold"]["label"].tolist() == [1.0, 2.0, 3.0]
    assert one["figures"]["annotators_table"][0]["pearson"] is None
    # all agree on varied labels: alpha 1
    same = long_table({"a": [1, 2, 3, 4], "b": [1, 2, 3, 4], "c": [1, 2, 3, 4]})
    figures = agree(same, AgreementSettings(rule="mean"))["figures"]
    assert figures["krippendorff_alpha"]["interval"] == 1.0
    assert figures["fleiss_kappa"]["kappa"] == 1.0
    # constant labels: alpha and kappa undefined (no variation), not a crash
    const = long_table({"a": [2, 2, 2], "b": [2, 2, 2]})
    figures = agree(const, AgreementSettings(rule="mean"))["figures"]
    assert figures["krippendorff_alpha"]["nominal"] is None
    assert figures["fleiss_kappa"]["kappa"] is None
    # all disagree (nominal): alpha below 0
    apart = long_table({"a": ["x", "y", "z"], "b": ["y", "z", "x"], "c": ["z", "x", "y"]})
    figures = agree(apart, AgreementSettings(rule="majority", min_votes=2))["figures"]
    assert figures["krippendorff_alpha"]["nominal"] < 0
    assert figures["gold_items"] == 0 and figures["dropped_items"] == {"no_majority": 3}
    # an annotator with a single item is not screened (too little to judge)
    ratings = sts_ratings()
    ratings = pd.concat(
        [ratings, pd.DataFrame([{"item_id": "u01", "annotator_id": "once", "value": 4.0}])]
    )
    result = agree(ratings, AgreementSettings(rule="mean", sd_max=None))
    assert "once" not in set(result["dropped"]["id"])
    table = {r["annotator_id"]: r for r in result["figures"]["annotators_table"]}
    assert table["once"]["items"] == 1 and table["once"]["pearson"] is None


def test_bad_input_is_named(tmp_path):
    with pytest.raises(AgreementError, match="min-votes"):
        AgreementSettings(rule="majority")
    with pytest.raises(AgreementError, match="row 1: .* value .x. is not a finite number"):
        agree(long_table({"a": ["x"], "b": ["y"]}), AgreementSettings(rule="mean"))
    dup = pd.DataFrame([{"item_id": "i", "annotator_id": "a", "value": 1}] * 2)
    with pytest.raises(AgreementError, match="more than once"):
        agree(dup, AgreementSettings(rule="mean"))
    path = tmp_path / "ann.csv"
    path.write_text("item_id,annotator_id,value\ni1,a,3\n,b,4\n")
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "agree", str(path), "--rule", "mean", "--out",
         str(tmp_path / "out")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "ann.csv: line 3: empty item_id" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_cli_writes_outputs_and_rerun_changes_nothing(tmp_path):
    ratings = sts_ratings()
    ratings["field"] = "similarity"
    ratings["cancelled"] = False
    ratings["simulated"] = True
    skip = {"item_id": "u02", "annotator_id": "good0", "value": None, "field": None,
            "cancelled": True, "simulated": True}  # fmt: skip
    pd.concat([ratings, pd.DataFrame([skip])]).to_parquet(tmp_path / "ann.parquet")
    cmd = [sys.executable, "-m", "flows.cli", "agree", str(tmp_path / "ann.parquet"),
           "--rule", "mean", "--out", str(tmp_path / "out"), "--json"]  # fmt: skip
    first = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    figures = json.loads(first.stdout)
    assert figures["written"] and figures["simulated"] is True
    assert figures["dropped_annotators"] == {"low_pearson": 1}
    gold = pd.read_parquet(tmp_path / "out" / "gold.parquet")
    assert gold["simulated"].all() and len(gold) == figures["gold_items"]
    dropped = pd.read_parquet(tmp_path / "out" / "dropped.parquet")
    assert list(dropped.columns) == ["kind", "id", "reason", "detail"]
    saved = json.loads((tmp_path / "out" / "agreement.json").read_text())
    assert saved["krippendorff_alpha"] == figures["krippendorff_alpha"]
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert json.loads(again.stdout)["written"] is False


def test_marc_ja_seven_of_ten_majority():
    """MARC-ja (JGLUE 3.1): a review's label is kept when 7 or more of its 10 crowd
    votes agree (``majority`` with ``min_votes: 7``); no MARC recipe ships, since the
    Amazon reviews cannot be redistributed."""
    votes = {"r1": ["positive"] * 7 + ["negative"] * 3, "r2": ["positive"] * 6 + ["negative"] * 4,
             "r3": ["negative"] * 10}  # fmt: skip
    rows = [{"item_id": item, "annotator_id": f"w{k}", "value": v}
            for item, values in votes.items() for k, v in enumerate(values)]  # fmt: skip
    result = agree(pd.DataFrame(rows), AgreementSettings(rule="majority", min_votes=7))
    gold = dict(zip(result["gold"]["item_id"], result["gold"]["label"], strict=True))
    assert gold == {"r1": "positive", "r3": "negative"}
    assert result["dropped"]["id"].tolist() == ["r2"]
    assert "6 of 10 votes; 7 needed" in result["dropped"]["detail"].iloc[0]
