"""Qualification (pilot) rules (issue 35, item 1): KLUE-RE's "at least 4 of 5" (3.5.1)
at its threshold, Pearson with the gold against scipy, the others' majority, the
unqualified accounts' annotations rejected with a reason (nothing lost), and the bad
input the issue names (gold items not in the round, a rule no one can meet)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import pearsonr

from pipelines.agreement.qualification import (
    PassRule,
    QualificationError,
    exclude_unqualified,
    pilot_results,
)

GOLD = pd.DataFrame({"item_id": [f"g{i}" for i in range(5)],
                     "value": ["org:founded", "no_relation", "per:title", "org:members",
                               "per:origin"]})  # fmt: skip


def _answers(who: str, right: int) -> list[dict]:
    """``who`` answers the 5 gold items, the first ``right`` of them right."""
    return [
        {"item_id": g, "annotator_id": who, "value": v if k < right else "no_relation?"}
        for k, (g, v) in enumerate(zip(GOLD["item_id"], GOLD["value"], strict=True))
    ]


def test_klue_re_pilot_passes_four_of_five_and_fails_three():
    """KLUE 3.5.1: workers who got at least 4 of 5 pilot items right."""
    table = pd.DataFrame(_answers("a", 5) + _answers("b", 4) + _answers("c", 3))
    out = pilot_results(table, PassRule("min_correct", 4, of=5), GOLD).set_index("annotator_id")
    assert out["correct"].to_dict() == {"a": 5, "b": 4, "c": 3}
    assert out["passed"].to_dict() == {"a": True, "b": True, "c": False}  # 4 is enough


def test_a_skipped_gold_item_counts_as_wrong():
    rows = _answers("a", 5)
    rows[0]["cancelled"] = True  # skipped: no answer
    table = pd.DataFrame(rows + _answers("b", 5)).assign(
        cancelled=lambda f: f["cancelled"].fillna(False).astype(bool)
    )
    out = pilot_results(table, PassRule("min_correct", 5), GOLD).set_index("annotator_id")
    assert out.loc["a", "correct"] == 4 and not out.loc["a", "passed"]
    assert out.loc["b", "passed"]


def test_pearson_with_the_gold_matches_scipy_at_its_threshold():
    gold = pd.DataFrame({"item_id": [f"s{i}" for i in range(6)],
                         "value": [0, 1, 2, 3, 4, 5]})  # fmt: skip
    ratings = {"close": [0, 1, 2, 3, 5, 5], "noisy": [3, 0, 4, 1, 5, 2], "flat": [3] * 6}
    rows = [{"item_id": f"s{i}", "annotator_id": who, "value": str(v)}
            for who, vs in ratings.items() for i, v in enumerate(vs)]  # fmt: skip
    table = pd.DataFrame(rows)
    r_close = pearsonr(gold["value"], ratings["close"]).statistic
    out = pilot_results(table, PassRule("min_pearson", r_close), gold).set_index("annotator_id")
    assert out.loc["close", "score"] == pytest.approx(r_close)
    assert out.loc["noisy", "score"] == pytest.approx(
        pearsonr(gold["value"], ratings["noisy"]).statistic
    )
    assert out.loc["close", "passed"]  # exactly at the threshold passes
    assert not out.loc["noisy", "passed"] and not out.loc["flat", "passed"]
    assert "too few or all the same" in out.loc["flat", "why"]


def test_agreement_with_the_others_majority_without_gold():
    rows = []
    for i in range(4):  # a, b, c agree on every item; d disagrees on three of four
        for who in "abc":
            rows.append({"item_id": f"i{i}", "annotator_id": who, "value": "entailment"})
        rows.append({"item_id": f"i{i}", "annotator_id": "d",
                     "value": "entailment" if i == 0 else "neutral"})  # fmt: skip
    out = pilot_results(pd.DataFrame(rows), PassRule("min_majority_share", 0.75))
    out = out.set_index("annotator_id")
    assert out.loc["a", "score"] == 1.0 and out.loc["a", "passed"]
    assert out.loc["d", "score"] == 0.25 and not out.loc["d", "passed"]


def test_unqualified_accounts_are_rejected_with_a_reason_and_nothing_is_lost():
    main = pd.DataFrame({"item_id": ["m1", "m1", "m2", "m2"], "annotator_id": ["a", "c", "a", "c"],
                         "value": ["1", "2", "3", "4"]})  # fmt: skip
    kept, rejected = exclude_unqualified(main, {"a"})
    assert len(kept) + len(rejected) == len(main)
    assert set(kept["annotator_id"]) == {"a"}
    assert set(rejected["reason"]) == {"not_qualified"} and set(rejected["annotator_id"]) == {"c"}


def test_bad_pilots_are_clear_errors():
    table = pd.DataFrame(_answers("a", 2) + _answers("b", 3))
    with pytest.raises(QualificationError, match=r"closest is b \(3 of 5 gold items right\)"):
        pilot_results(table, PassRule("min_correct", 4), GOLD)
    extra = pd.concat([GOLD, pd.DataFrame({"item_id": ["g9"], "value": ["x"]})])
    with pytest.raises(QualificationError, match=r"not in the pilot round: \['g9'\]"):
        pilot_results(table, PassRule("min_correct", 4), extra)
    with pytest.raises(QualificationError, match="can never be met"):
        PassRule("min_correct", 6, of=5)
    with pytest.raises(QualificationError, match="expected one of"):
        PassRule("max_correct", 1)
    with pytest.raises(QualificationError, match="needs gold"):
        pilot_results(table, PassRule("min_pearson", 0.5))


def test_the_majority_rule_screens_an_annotator_far_from_the_others_majority():
    """Issue 35 item 3: the majority rule gets the STS rule's kind of screening; an
    annotator exactly at ``majority_share_min`` stays."""
    from pipelines.agreement.rules import AgreementError, AgreementSettings, agree

    rows = []
    for i in range(4):  # a, b, c agree on every item; d on 1 of 4; e on 3 of 4
        for who in "abc":
            rows.append({"item_id": f"n{i}", "annotator_id": who, "value": "entailment"})
        rows.append({"item_id": f"n{i}", "annotator_id": "d",
                     "value": "entailment" if i == 0 else "neutral"})  # fmt: skip
        rows.append({"item_id": f"n{i}", "annotator_id": "e",
                     "value": "neutral" if i == 0 else "entailment"})  # fmt: skip
    table = pd.DataFrame(rows)
    off = agree(table, AgreementSettings(rule="majority", min_votes=3))
    assert off["figures"]["dropped_annotators"] == {}  # off by default
    on = agree(table, AgreementSettings(rule="majority", min_votes=3, majority_share_min=0.75))
    dropped = on["dropped"][on["dropped"]["kind"] == "annotator"]
    assert dropped["id"].tolist() == ["d"] and dropped["reason"].tolist() == ["low_majority_share"]
    assert "1 of 4" in dropped["detail"].iloc[0]  # e, at 3 of 4 = 0.75, stays
    assert len(on["gold"]) == 4
    with pytest.raises(AgreementError, match="majority_share_min"):
        AgreementSettings(rule="majority", min_votes=3, majority_share_min=1.5)
    with pytest.raises(AgreementError, match="every annotator"):
        agree(long_rows_disagreeing(), AgreementSettings(rule="majority", min_votes=1,
                                                         majority_share_min=1.0))  # fmt: skip


def long_rows_disagreeing() -> pd.DataFrame:
    """Four annotators, each the odd one out on one of four items: each gives the others'
    majority on 3 of 4, so a share of 1.0 screens every one of them."""
    return pd.DataFrame([{"item_id": f"x{i}", "annotator_id": who,
                          "value": "odd" if who == "abcd"[i] else "same"}
                         for i in range(4) for who in "abcd"])  # fmt: skip


def test_the_cards_pilot_table_marks_a_failed_applicant_in_bold_not_asterisks() -> None:
    from pipelines.export.card_html import to_html
    from pipelines.export.card_people import screening_section

    people = [
        {"annotator_id": "a", "answered": 5, "why": "mean UAS 0.9", "passed": True},
        {"annotator_id": "b", "answered": 5, "why": "mean UAS 0.5", "passed": False},
    ]
    pilot = {"rule": "min_uas", "describe": "a mean UAS of at least 0.7", "gold_items": 5,
             "applicants": 2, "passed": 1, "excluded_annotators": ["b"],
             "excluded_annotations": 3, "annotators": people}  # fmt: skip
    text = screening_section({"agreement": {"people": {"pilot": pilot}}, "pilot": {}})
    assert "| b | 5 | mean UAS 0.5 | **no** |" in text
    page = to_html(text, {}, "card")
    assert "<strong>no</strong>" in page and "**no**" not in page
