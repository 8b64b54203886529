"""Suggestion acceptance (issue 55): what each annotator did with the pre-loaded spans,
and the screening of one who accepts everything while the others edit."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pipelines.agreement.rules import agree
from pipelines.agreement.settings import AgreementError, AgreementSettings
from pipelines.agreement.suggestions import accepting_annotators, suggestion_table
from pipelines.annotation.values import VALUE_TYPES


def spans(*triples: tuple[int, int, str]) -> str:
    return json.dumps([{"start": s, "end": e, "label": lab} for s, e, lab in triples])


SUGGESTED = spans((0, 3, "PS"), (5, 8, "LC"), (10, 12, "DT"))


def test_accepted_edited_deleted_and_added_are_counted_per_annotator() -> None:
    ratings = pd.DataFrame({
        "item_id": ["1", "1"],
        "annotator_id": ["a", "b"],
        # a: PS kept, LC moved (edited), DT removed (deleted), QT added
        "value": [spans((0, 3, "PS"), (5, 9, "LC"), (14, 16, "QT")), SUGGESTED],
        "suggested": [SUGGESTED, SUGGESTED],
    })  # fmt: skip
    table = suggestion_table(ratings, VALUE_TYPES.get("span_set")).set_index("annotator_id")
    a, b, overall = table.loc["a"], table.loc["b"], table.loc["overall"]
    assert (a.accepted, a.edited, a.deleted, a.added, a.unchanged_items) == (1, 1, 1, 1, 0)
    assert a.accepted_share == pytest.approx(1 / 3, abs=1e-3)
    assert (b.accepted, b.unchanged_items, b.accepted_share) == (3, 1, 1.0)
    assert (overall.suggested, overall.accepted, overall["items"]) == (6, 4, 2)


def test_a_relabelled_span_is_edited_not_deleted_and_no_suggestion_gives_none() -> None:
    ratings = pd.DataFrame({"item_id": ["1"], "annotator_id": ["a"],
                            "value": [spans((0, 3, "OG"))],
                            "suggested": [spans((0, 3, "PS"))]})  # fmt: skip
    row = suggestion_table(ratings, VALUE_TYPES.get("span_set")).iloc[0]
    assert (row.edited, row.deleted, row.added) == (1, 0, 0)
    assert suggestion_table(ratings.assign(suggested=None), VALUE_TYPES.get("span_set")) is None
    assert suggestion_table(ratings.drop(columns="suggested"), VALUE_TYPES.get("span_set")) is None


def _round(accepters: int = 1) -> pd.DataFrame:
    rows = []
    for item in range(8):
        suggested = spans((0, 3, "PS"), (5, 8, "LC"))
        truth = spans((0, 3, "PS"), (5, 9, "LC"))  # the tagger cut LC short
        for who in ("a", "b", "c"):
            rows.append({"item_id": str(item), "annotator_id": who, "field": "entities",
                         "value": truth, "suggested": suggested})  # fmt: skip
        for n in range(accepters):
            rows.append({"item_id": str(item), "annotator_id": f"lazy{n}", "field": "entities",
                         "value": suggested, "suggested": suggested})  # fmt: skip
    return pd.DataFrame(rows)


def test_the_screening_excludes_the_one_who_accepts_everything() -> None:
    settings = AgreementSettings(rule="span_vote", min_votes=2, answer_field="entities",
                                 suggestion_accept_max=0.95, suggestion_min_items=5)  # fmt: skip
    result = agree(_round(), settings)
    dropped = result["dropped"]
    (record,) = dropped[dropped["reason"] == "accepts_suggestions"].itertuples()
    assert record.id == "lazy0" and "accepted 16 of 16" in record.detail
    assert result["figures"]["dropped_annotators"] == {"accepts_suggestions": 1}
    table = {r["annotator_id"]: r for r in result["figures"]["suggestions"]}
    assert table["lazy0"]["accepted_share"] == 1.0 and table["a"]["accepted_share"] == 0.5
    # everyone accepting: the model may be right; nobody is singled out
    everyone = _round().assign(value=lambda f: f["suggested"])
    assert "accepts_suggestions" not in set(agree(everyone, settings)["dropped"]["reason"])


def test_accepting_annotators_needs_enough_items_and_the_threshold_is_checked() -> None:
    table = suggestion_table(_round().head(8), VALUE_TYPES.get("span_set"))
    assert accepting_annotators(table, 0.95, 5) == []  # two items each: too few
    with pytest.raises(AgreementError, match="suggestion_accept_max"):
        AgreementSettings(rule="span_vote", min_votes=2, suggestion_accept_max=1.5)


def test_the_status_table_shows_each_annotators_acceptance() -> None:
    from pipelines.agreement.status import annotator_status

    frame = _round().assign(
        annotation_id=lambda f: range(len(f)), cancelled=False, lead_time=10.0, report_flags=""
    )
    status = annotator_status(frame, "entities", kind=VALUE_TYPES.get("span_set"))
    by = status.set_index("annotator_id")
    assert (
        by.loc["lazy0", "suggestions_accepted"] == 1.0 and by.loc["lazy0", "items_unchanged"] == 1.0
    )
    assert by.loc["a", "suggestions_accepted"] == 0.5 and by.loc["a", "items_unchanged"] == 0.0
    assert annotator_status(frame, "entities")["suggestions_accepted"].isna().all()
