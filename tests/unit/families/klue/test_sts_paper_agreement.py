"""KLUE 3.2.1: "We report inter-annotator agreement (IAA) by using Krippendorff's alpha
... (Krippendorff's alpha (interval) = 0.85)", on the annotators kept after screening.
A KLUE-STS rebuild's data card puts its own figure, computed by the agreement step from
the run's ratings, beside the paper's, and warns when it falls far below it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pipelines.agreement.rules import AgreementSettings, agree
from pipelines.core.plugins import TASK_KINDS
from pipelines.export.data_card import _agreement
from pipelines.export.settings import CardSpec
from pipelines.export.warnings import agreement_below_paper


def _ratings(noise: float) -> pd.DataFrame:
    """Seven annotators rate 12 pairs near a latent score; the seventh at random."""
    rng = np.random.default_rng(1)
    truth = rng.uniform(0, 5, 12)
    rows = []
    for k in range(7):
        for i, t in enumerate(truth):
            value = rng.uniform(0, 5) if k == 6 else t + rng.normal(0, noise)
            rows.append({"item_id": f"p{i:02d}", "annotator_id": f"a{k}",
                         "value": float(np.clip(round(value), 0, 5))})  # fmt: skip
    return pd.DataFrame(rows)


def _facts(noise: float) -> dict:
    figures = agree(_ratings(noise), AgreementSettings(rule="mean", sd_max=2.0))["figures"]
    figures = json.loads(json.dumps(figures, default=str))  # as agree/agreement.json holds it
    return {
        "agreement": figures,
        "annotation": {"simulated": False},
        "paper_agreement": TASK_KINDS.get("klue-sts").paper_agreement,
    }


def test_the_sts_kind_carries_klue_3_2_1s_figure():
    paper = TASK_KINDS.get("klue-sts").paper_agreement
    assert paper["level"] == "interval" and paper["alpha"] == 0.85
    assert paper["source"].startswith("KLUE 3.2.1") and paper["after_screening"] is True


def test_the_card_puts_the_rebuilds_alpha_beside_the_papers():
    facts = _facts(0.4)
    g = facts["agreement"]
    assert g["dropped_annotators"] == {"low_pearson": 1}  # the random one, as 3.2.1 screens
    measured = g["krippendorff_alpha_after_screening"]["interval"]
    assert measured > g["krippendorff_alpha"]["interval"]
    text = _agreement(facts)
    row = next(line for line in text.splitlines() if "the paper's Krippendorff alpha" in line)
    assert row == (
        "| the paper's Krippendorff alpha, interval, after screening annotators "
        f"| 0.85 (KLUE 3.2.1 (STS)); this rebuild: {measured:.4f} |"
    )


def test_the_warning_compares_the_alpha_after_screening():
    """The paper's 0.85 is the kept annotators' figure: the warning reads the rebuild's
    figure after screening, not the one before it."""
    settings = CardSpec().model_dump()
    paper = TASK_KINDS.get("klue-sts").paper_agreement
    facts = {
        "paper_agreement": paper,
        "agreement": {
            "krippendorff_alpha": {"interval": 0.30},
            "krippendorff_alpha_after_screening": {"interval": 0.80},
        },
    }
    assert agreement_below_paper(facts, settings) == []
    facts["agreement"] = {
        "krippendorff_alpha": {"interval": 0.80},
        "krippendorff_alpha_after_screening": {"interval": 0.30},
    }
    (warning,) = agreement_below_paper(facts, settings)
    assert "alpha (interval, after screening annotators) 0.3 against 0.85 in KLUE 3.2.1 (STS)" in (
        warning
    )
