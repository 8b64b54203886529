"""Issue 54: the card's annotators and ratings are the ones the release holds.

The STS demo's card said "5 of 8 annotators remain after screening (3 screened out)"
while its release holds 7: the rule's 8 annotators already excluded the pilot's and
the control items' exclusions, and the card subtracted them a second time. Its
"ratings 1872" was the count before screening, the release holding 1,618.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.agreement.rules import AgreementSettings, agree, kept_counts
from pipelines.export.card_check import check_card
from pipelines.export.data_card import _agreement, _limitations
from pipelines.export.manifest import refresh_release_manifest, write_release_manifest


def _ratings() -> pd.DataFrame:
    """Six annotators rate 12 items; ``f`` answers against everyone else."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 6, size=12)
    rows = []
    for i, t in enumerate(truth):
        for a in "abcde":
            rows.append({"item_id": f"i{i}", "annotator_id": a,
                         "value": str(int(np.clip(t + rng.integers(-1, 2), 0, 5)))})  # fmt: skip
        rows.append({"item_id": f"i{i}", "annotator_id": "f", "value": str(5 - int(t))})
    return pd.DataFrame(rows)


def test_the_rule_counts_what_screening_kept():
    figures = agree(_ratings(), AgreementSettings(rule="mean", pearson_min=0.5))["figures"]
    assert figures["dropped_annotators"] == {"low_pearson": 1}
    assert figures["annotators"] == 6 and figures["ratings"] == 72
    assert figures["annotators_kept"] == 5 and figures["ratings_kept"] == 60


def test_kept_counts_only_count_gold_items_and_unscreened_people():
    ratings = pd.DataFrame({"item_id": ["1", "1", "2", "2", "3"],
                            "annotator_id": ["a", "b", "a", "b", "a"]})  # fmt: skip
    gold = pd.DataFrame({"item_id": ["1", "3"]})
    dropped = [{"kind": "annotator", "id": "b"}, {"kind": "item", "id": "2"}]
    assert kept_counts(ratings, gold, dropped) == {"annotators_kept": 1, "ratings_kept": 2}


def _sts_facts(kept: int) -> dict:
    """The STS demo's agreement facts at 2764603 (pilot, controls and alpha screening)."""
    return {
        "annotation": {"simulated": False, "overlap": 7},
        "recipe": {"filters": {"classifiers": {"detectors": {"hate": {}}}}},
        "split": {"splits": {"train": 207, "dev": 129, "test": 159}},
        "agreement": {
            "items": 300, "annotators": 8, "ratings": 1872, "gold_items": 295,
            "annotators_kept": kept, "ratings_kept": 1618,
            "dropped_annotators": {"low_alpha": 1, "low_control_accuracy": 1,
                                   "not_qualified": 1},
        },
    }  # fmt: skip


def test_pilot_and_control_exclusions_are_not_subtracted_twice():
    assert "Few annotators" not in _limitations(_sts_facts(kept=7))
    facts = _sts_facts(kept=5)
    assert "**Few annotators**: 5 of 8 annotators remain after screening (3 screened out)" in (
        _limitations(facts)
    )
    old = _sts_facts(kept=7)  # a card.json written before the kept counts
    del old["agreement"]["annotators_kept"], old["agreement"]["ratings_kept"]
    assert "Few annotators" in _limitations(old)


def test_the_agreement_table_says_which_count_is_before_screening():
    facts = _sts_facts(kept=7)
    facts["agreement"]["settings"], facts["agreement"]["rule"] = {}, "mean"
    facts["agreement"].update(dropped_items={}, warnings=[])
    text = _agreement(facts)
    assert "| ratings (before screening) | 1872 |" in text
    assert "| annotators kept after screening | 7 |" in text
    assert "| ratings kept after screening (on gold items) | 1618 |" in text


def _release(folder: Path) -> Path:
    """A KLUE-STS-layout release whose items carry their annotators (3 people, 5 ratings)."""
    dataset = folder / "dataset"
    dataset.mkdir(parents=True)
    rows = {"train": [["a", "b"], ["a", "c"]], "dev": [["b"]]}
    for split, people in rows.items():
        frame = pd.DataFrame({
            "guid": [f"{split}-{i}" for i in range(len(people))],
            "annotations": [{"annotators": p, "annotations": [1] * len(p)} for p in people],
        })  # fmt: skip
        frame.to_parquet(dataset / f"{split}.parquet")
    facts = {"split": {"splits": {"train": 2, "dev": 1}},
             "agreement": {"gold_items": 3, "annotators_kept": 3, "ratings_kept": 5}}  # fmt: skip
    (dataset / "card.json").write_text(json.dumps(facts), encoding="utf-8")
    write_release_manifest(dataset)
    return dataset


def _plant(dataset: Path, **agreement: int) -> None:
    facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
    facts["agreement"].update(agreement)
    (dataset / "card.json").write_text(json.dumps(facts), encoding="utf-8")
    refresh_release_manifest(dataset, ["card.json"])


def test_card_check_counts_the_annotators_the_release_holds(tmp_path):
    dataset = _release(tmp_path)
    result = check_card(tmp_path)
    assert result.ok and {"annotators kept", "ratings kept"} <= set(result.checked)
    _plant(dataset, annotators_kept=5)  # the old card's double subtraction, put back
    result = check_card(tmp_path)
    assert [(m.what, m.card, m.files) for m in result.mismatches] == [("annotators kept", 5, 3)]
    _plant(dataset, annotators_kept=3, ratings_kept=7)  # the count before screening
    assert [m.what for m in check_card(tmp_path).mismatches] == ["ratings kept"]


def test_a_release_that_lost_gold_items_later_is_not_claimed_as_checked(tmp_path):
    dataset = _release(tmp_path)
    _plant(dataset, gold_items=4)
    result = check_card(tmp_path)
    assert "annotators kept" not in result.checked and result.ok


def test_the_simulated_caveat_is_said_once_above_the_table():
    """Issue 54: "(simulated annotators: this figure describes ...)" stood after each of
    nine figures in one table."""
    facts = _sts_facts(kept=7)
    facts["annotation"]["simulated"] = True
    facts["agreement"].update(settings={}, rule="mean", dropped_items={}, warnings=[],
                              krippendorff_alpha={"nominal": 0.28, "interval": 0.80},
                              fleiss_kappa={"kappa": 0.28, "items": 228})  # fmt: skip
    text = _agreement(facts)
    assert text.count("describes the simulator's noise settings") == 1
    assert "| Krippendorff alpha, interval | 0.8 (simulated) |" in text
    assert "nominal: ignores the scale's order) | 0.28 (simulated) |" in text
