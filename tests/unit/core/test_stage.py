"""The stage contract: rows in == rows kept + rows dropped, every drop has a reason."""

import pandas as pd
import pytest

from pipelines.core.stage import StageResult, StageStats, split_by_reason


def test_split_by_reason_and_stats():
    df = pd.DataFrame(
        {"sent_id": list("abcd"), "corpus": ["x", "x", "y", "y"], "text": ["가", "나", "다", "라"]}
    )
    r = split_by_reason("noise", "sentence", df, pd.Series([None, "too_short", None, "pii"]))
    assert r.kept["sent_id"].tolist() == ["a", "c"]
    stats = StageStats.merge([r.stats(), r.stats()]).to_dict()["stages"][0]
    assert (stats["in"], stats["kept"], stats["dropped"]) == (8, 4, {"pii": 2, "too_short": 2})
    assert stats["corpora"]["x"] == {"in": 4, "kept": 2, "dropped": {"too_short": 2}}
    rejects = r.rejects()
    assert rejects["row_id"].tolist() == ["b", "d"]
    assert rejects["stage"].unique().tolist() == ["noise"]


def test_a_stage_that_loses_rows_is_refused():
    df = pd.DataFrame({"corpus": ["x"], "text": ["가"]})
    with pytest.raises(AssertionError, match="rows in"):
        StageResult("s", "sentence", df, df.iloc[0:0], rows_in=2)


def test_a_drop_without_reason_is_refused():
    df = pd.DataFrame({"corpus": ["x"], "text": ["가"], "reason": [None]})
    with pytest.raises(AssertionError, match="no reason"):
        StageResult("s", "sentence", df.iloc[0:0], df, rows_in=1)


def test_rows_lost_between_stages_are_caught():
    from pipelines.ingest.shards import check_continuity

    def stage(name, n_in, kept):
        return {
            "stage": name,
            "in": n_in,
            "kept": kept,
            "corpora": {"c": {"in": n_in, "kept": kept, "dropped": {}}},
        }

    good = {
        "stages": [
            stage("read", 5, 5),
            stage("clean", 5, 4),
            stage("segment", 4, 4),
            stage("noise", 9, 8),
            stage("pii", 8, 8),
            stage("dedup", 8, 7),
        ]
    }
    check_continuity(good, sentences_produced=9)
    with pytest.raises(AssertionError, match="segment produced 10 sentences"):
        check_continuity(good, sentences_produced=10)
    bad = {"stages": [*good["stages"][:4], stage("pii", 7, 7), good["stages"][5]]}
    with pytest.raises(AssertionError, match="c: noise kept 8 rows but pii took in 7"):
        check_continuity(bad, sentences_produced=9)
