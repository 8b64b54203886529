"""MARC-ja's part of the data card: the rating-to-crowd table and the sizes beside the
JGLUE README's, computed here; the prose in ``card.md.j2``."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.markdown import table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.rebuild.export import round_paragraph

TEMPLATE = Path(__file__).with_name("card.md.j2")


def card(facts: CardFacts) -> CardSection:
    """Ratings to labels, the relabelling round, the divergence and the sizes."""
    f = facts["family"]
    lab, agreement = f["labels"], f["agreement"]
    paper = facts["paper_sizes"]
    sizes = lab["splits"]
    rounds = facts["rounds"]
    main = next(iter(rounds.values()), {})
    rating_table = table(
        ["rating", "relabelled and kept", "crowd label differs"],
        [[k, v["relabelled"], v["diverged"]] for k, v in lab["per_rating"].items()],
    )
    size_table = table(
        ["split", "this run", f"paper ({paper['source']})"],
        [[s, sizes.get(s, 0), f"{paper[s]:,}"] for s in ("train", "dev", "test")],
    )
    table_2 = table(["label", "train", "dev", "test", "total"], facts.get("table_2") or [])
    kappa = agreement.get("fleiss_kappa") or {}
    alpha = agreement.get("krippendorff_alpha") or {}
    return from_template(
        TEMPLATE,
        {
            "m": facts["marc"],
            "r": f["ratings"],
            "l": lab,
            "crowd": f["crowd"],
            "labels": sorted(facts["marc"]["labels"]),
            "rating_table": rating_table,
            "size_table": size_table,
            "table_2": table_2 if facts.get("table_2") else "",
            "agreement": agreement,
            "kappa": kappa.get("kappa") if isinstance(kappa, dict) else kappa,
            "alpha": alpha.get("nominal") if isinstance(alpha, dict) else alpha,
            "overlap": main.get("overlap", facts["recipe"]["annotation"]["overlap"]),
            "min_votes": facts["recipe"]["agreement"].get("min_votes"),
            "simulated": facts["annotation"]["simulated"],
            "round_paragraphs": [
                round_paragraph(n or "relabel", r, "review") for n, r in rounds.items()
            ],
        },
    )
