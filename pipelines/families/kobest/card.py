"""The KoBEST family's part of the data card: the tables, computed here, and the prose
in ``card.md.j2`` beside this module."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.markdown import docstring, table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.families.kobest.export import iteration_rows
from pipelines.families.kobest.tasks import kobest_task
from pipelines.rebuild.export import inline_counts, round_paragraph

TEMPLATE = Path(__file__).with_name("card.md.j2")
REVIEW_COLUMNS = ["review", "items", "partial-input accuracy", "majority baseline", "cues",
                  "items following a cue", "planted cue items flagged",
                  "revision round"]  # fmt: skip


def _report_block(k: str, md: str) -> str:
    body = md.replace("\n# ", "\n#### ").replace("\n## ", "\n##### ")
    body = body.replace("# Artifact report", "#### Artifact report", 1)
    return f"<details><summary>Artifact review {k}</summary>\n\n{body}\n</details>"


def card(facts: CardFacts) -> CardSection:
    """The prompts, the checks, the linguists' review, the duplicate review and every
    artifact review, per iteration."""
    from pipelines.families.kobest.checks import CHECKS

    f, rules = facts["family"], facts["rules"]
    n = rules["iterations"] + 1
    wr = f["written"]
    check_rows = [[name, v["drop"], v["flag"], docstring(CHECKS.doc(name), table=True)]
                  for name, v in wr["checks"].items()]  # fmt: skip
    pairs = facts.get("pairs")
    # SentiNeg's test set (2.6) moves items after the revisions: the drops are counted
    # against the split before it
    ng = f.get("negated")
    after = ng["splits_before"] if ng and not ng.get("skipped") else facts["split"]["splits"]
    return from_template(TEMPLATE, {
        "task": kobest_task(facts["kobest_task"]), "rules": rules, "pr": f["prompts"],
        "wr": wr, "rv": f["reviewed"], "du": f["duplicates"], "inline_counts": inline_counts,
        "check_table": table(["check", "dropped", "flagged", "rule"], check_rows)
        if check_rows else "",
        "pairs_table": table(["item a", "item b", "kind", "score"],
                             [[p["item_a"], p["item_b"], p["kind"], p["score"]]
                              for p in pairs[:10]]) if pairs else "",
        "iteration_table": table(REVIEW_COLUMNS, iteration_rows(f, n)),
        "report_blocks": [_report_block(k, md) for k, md in facts.get("reports_md", {}).items()
                          if md],
        "round_paragraphs": [round_paragraph(name, r) for name, r in facts["rounds"].items()],
        "simulated": facts["annotation"]["simulated"],
        "last_cues": len((f.get(f"artifacts-{n}") or {}).get("cues") or []),
        "corpora": [c["name"] for c in facts["recipe"]["corpora"]],
        "split": facts["split"],
        "ng": ng,
        "sizes_table": sizes_table(facts["kobest_task"], facts["split"]["splits"]),
        "split_drops": {s: n - after.get(s, 0)
                        for s, n in facts["split"].get("before_revisions", {}).items()
                        if n != after.get(s, 0)},
    })  # fmt: skip


def sizes_table(task: str, splits: dict[str, int]) -> str:
    """The release's split sizes beside KoBEST Table 1's for the task (``PAPER_SIZES``)."""
    from pipelines.families.kobest.tasks import PAPER_SIZES

    paper = dict(zip(("train", "dev", "test"), PAPER_SIZES[task], strict=True))
    rows = [["KoBEST (Kim et al. 2022, Table 1)", *(f"{paper[s]:,}" for s in paper)],
            ["this rebuild", *(f"{splits.get(s, 0):,}" for s in paper)]]  # fmt: skip
    return "Sizes beside the paper's:\n\n" + table(["", "train", "dev", "test"], rows)
