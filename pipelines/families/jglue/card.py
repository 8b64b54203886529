"""The JGLUE family's part of the data card (JSTS and JNLI): the tables, computed here,
and the prose in ``card.md.j2`` beside this module."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.markdown import Markdown, table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.rebuild.export import inline_counts, round_paragraph

TEMPLATE = Path(__file__).with_name("card.md.j2")


def _kind_table(per_kind: dict) -> str:
    names = {"A": "JSTS-A (one image)", "B": "JSTS-B (two images)", "C": "JSTS-C (contradictions)"}
    rows = []
    for kind, v in per_kind.items():
        paper = v.get("paper")
        rows.append(
            [
                names.get(kind, kind),
                v["pairs"],
                v["kept"],
                v["kept_share"],
                Markdown(f"{paper['pairs']:,} -> {paper['kept']:,} ({paper['kept_share']})")
                if paper
                else "not reported",
                ", ".join(f"{a} {b}" for a, b in v["dropped"].items()) or "none",
            ]
        )
    return table(["pairs", "rated", "kept", "kept share", "paper (3.2.2)", "dropped"], rows)


def _paper_table(facts: CardFacts) -> str:
    """JGLUE Table 4 (JSTS) or Table 5 (JNLI): the run's counts, the paper's in brackets."""
    rows = facts.get("paper_table")
    if not rows:
        return ""
    first = "similarity range" if facts["task_kind"] == "jsts" else "label"
    return table([first, "train", "dev", "test", "total"], rows)


def card(facts: CardFacts) -> CardSection:
    """Captions, the pairs, each round's rule and its counts beside the paper's."""
    f = facts["family"]
    return from_template(TEMPLATE, {
        "jnli": facts["task_kind"] == "jnli", "j": facts["recipe"]["jglue"],
        "contradictions": f.get("validation") is not None,
        "cap": f["captions"], "pairs": f["pairs"], "sts": f["sts"], "nli": f.get("nli"),
        "wr": f.get("written"), "va": f.get("validation"), "rules": facts["rules"],
        "check": f.get("check"),
        "paper_table": _paper_table(facts),
        "kind_table": _kind_table(f["sts"]["per_kind"]),
        "alpha": f["sts"]["krippendorff_alpha"], "inline_counts": inline_counts,
        "simulated": facts["annotation"]["simulated"],
        "round_paragraphs": [round_paragraph(n, r) for n, r in facts["rounds"].items()],
    })  # fmt: skip
