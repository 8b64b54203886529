"""JCommonsenseQA's part of the data card: the sizes beside the JGLUE README's; the
prose in ``card.md.j2``."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.markdown import table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.families.jcqa.section import RELATIONS
from pipelines.rebuild.export import round_paragraph

TEMPLATE = Path(__file__).with_name("card.md.j2")


def card(facts: CardFacts) -> CardSection:
    """Question sets, the four rounds and their filters, the sizes."""
    f = facts["family"]
    paper, sizes = facts["paper_sizes"], facts["split"]["splits"]
    size_table = table(
        ["split", "this run", f"paper ({paper['source']})"],
        [[s, sizes.get(s, 0), f"{paper[s]:,}"] for s in ("train", "dev", "test")],
    )
    return from_template(
        TEMPLATE,
        {
            "j": facts["jcqa"],
            "paper_relations": facts["jcqa"]["relations"] == list(RELATIONS),
            "qs": f["question_sets"],
            "sy": f["synonyms"],
            "wr": f["written"],
            "di": f["distractors"],
            "an": f["answers"],
            "check": f.get("check"),
            "size_table": size_table,
            "simulated": facts["annotation"]["simulated"],
            "round_paragraphs": [round_paragraph(n, r, "task") for n, r in facts["rounds"].items()],
        },
    )
