"""KLUE Table 6 as a self-test: "Avg Len Prem and Avg Len Hyp are the mean character
counts of premise and hypothesis sentences". The hypotheses step measures them per source
over the pairs written, and the KLUE-NLI card sets them beside the paper's."""

from __future__ import annotations

import pandas as pd

from pipelines.families.klue.nli import card, lengths_per_source

# KLUE Table 6, as printed: source -> (Avg Len Prem, Avg Len Hyp)
TABLE_6 = {"WIKITREE": (52.81, 26.86), "POLICY": (56.73, 32.93), "WIKINEWS": (64.17, 29.11),
           "WIKIPEDIA": (57.45, 23.70), "NSMC": (27.48, 21.49), "AIRBNB": (24.28, 18.65),
           "Overall": (47.15, 25.46)}  # fmt: skip


def test_mean_character_counts_per_source_by_hand():
    items = pd.DataFrame({
        "premise": ["가" * 20] * 3 + ["나" * 30] * 3,
        "hypothesis": ["다" * 10, "라" * 12, "마" * 14, "바" * 5, "사" * 6, "아" * 7],
        "source": ["news"] * 3 + ["nsmc"] * 3,
    })  # fmt: skip
    got = lengths_per_source(items)
    assert got == {
        "news": {"pairs": 3, "premise": 20.0, "hypothesis": 12.0},
        "nsmc": {"pairs": 3, "premise": 30.0, "hypothesis": 6.0},
        "overall": {"pairs": 6, "premise": 25.0, "hypothesis": 9.0},
    }


def _round() -> dict:
    return {"config": "x.xml", "server": "2.0", "project": "p", "overlap": 4,
            "annotators": 4, "annotations": 16, "skipped": 0, "simulated": False}  # fmt: skip


def test_the_card_sets_the_lengths_beside_klues_table_6():
    lengths = {"nsmc": {"pairs": 3, "premise": 30.0, "hypothesis": 6.0},
               "overall": {"pairs": 3, "premise": 30.0, "hypothesis": 6.0}}  # fmt: skip
    facts = {
        "premises": {"rules": {}, "premises": 1, "sentences": 1, "spec": {}, "per_source": {},
                     "passing_per_source": {}, "rejected": {}},
        "items": {"items": 3, "premises_written": 1, "premises_dropped": {}, "per_method": {},
                  "lengths": lengths},
        "writing": _round(), "annotation": _round(),
    }  # fmt: skip
    text = card(facts).construction
    assert "| nsmc | 3 | 30.00 | 6.00 |" in text
    for source, (prem, hyp) in TABLE_6.items():
        assert f"{source} {prem:.2f} and {hyp:.2f}" in text
    older = {**facts, "items": {k: v for k, v in facts["items"].items() if k != "lengths"}}
    assert "Table 6" not in card(older).construction  # a run from before has no lengths
