"""KLUE Table 5 as a self-test: the KLUE-NLI card puts the rebuild's validation figures,
computed by the agreement step from the run's votes, beside the paper's (KLUE-NLI, SNLI,
MNLI)."""

from __future__ import annotations

import json

import pandas as pd

from pipelines.agreement.rules import AgreementSettings, agree
from pipelines.families.klue.nli import card

# KLUE Table 5, as printed: (SNLI, MNLI, KLUE-NLI)
TABLE_5 = {
    "Unanimous Gold Label": ("58.30%", "58.20%", "76.29%"),
    "Individual Label = Gold Label": ("89.00%", "88.70%", "92.63%"),
    "Individual Label = Author's Label": ("85.80%", "85.20%", "90.92%"),
    "Gold Label = Author's Label": ("91.20%", "92.60%", "96.76%"),
    "Gold Label ≠ Author's Label": ("6.80%", "5.60%", "2.71%"),
    "No Gold Label (No 3 Labels Match)": ("2.00%", "1.80%", "0.53%"),
}


def _votes() -> pd.DataFrame:
    """Four pairs, a writer and four validators each: p1 unanimous, p2 4 of 5, p3 3 of 5
    against the writer, p4 no label with 3 votes."""
    given = {
        "p1": ["e", "e", "e", "e", "e"],
        "p2": ["c", "c", "c", "c", "n"],
        "p3": ["e", "n", "n", "n", "c"],
        "p4": ["n", "n", "e", "e", "c"],
    }
    rows = []
    for item, labels in given.items():
        for k, label in enumerate(labels):
            rows.append({"item_id": item, "annotator_id": f"w{k}" if k else "writer",
                         "value": label, "role": "validator" if k else "author"})  # fmt: skip
    return pd.DataFrame(rows)


def _round() -> dict:
    return {"config": "nli_validation.xml", "server": "2.0", "project": "p", "overlap": 4,
            "annotators": 4, "annotations": 16, "skipped": 0, "simulated": False}  # fmt: skip


def test_the_card_puts_klues_table_5_beside_the_rebuilds():
    figures = agree(_votes(), AgreementSettings(rule="majority", min_votes=3))["figures"]
    figures = json.loads(json.dumps(figures, default=str))  # as agree/agreement.json holds it
    facts = {
        "premises": {"rules": {}, "premises": 4, "sentences": 4, "spec": {}, "per_source": {},
                     "passing_per_source": {}, "rejected": {}},
        "items": {"items": 4, "premises_written": 2, "premises_dropped": {}, "per_method": {}},
        "writing": _round(), "annotation": _round(), "agreement": figures,
    }  # fmt: skip
    text = card(facts).annotation
    rows = {line.split(" | ")[0].lstrip("| "): line for line in text.splitlines()
            if line.startswith("| ") and "%" in line}  # fmt: skip
    assert list(rows) == list(TABLE_5)
    # by hand: 1 of 4 unanimous; validators' labels equal to the gold 4 + 3 + 3 + 0 of 16
    # (p4 has none); equal to the writer's 4 + 3 + 0 + 1 of 16; gold = writer 2 of 4,
    # gold != writer 1 of 4, no gold 1 of 4
    ours = ["25.00% (1 of 4)", "62.50% (10 of 16)", "50.00% (8 of 16)", "50.00% (2 of 4)",
            "25.00% (1 of 4)", "25.00% (1 of 4)"]  # fmt: skip
    for (name, (snli, mnli, klue)), mine in zip(TABLE_5.items(), ours, strict=True):
        assert rows[name] == f"| {name} | {mine} | {klue} | {snli} | {mnli} |"
