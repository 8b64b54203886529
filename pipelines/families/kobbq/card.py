"""The KoBBQ family's part of the data card: the tables, computed here, and the prose in
``card.md.j2`` beside this module."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipelines.core.markdown import settings_table, table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.rebuild.export import round_paragraph

TEMPLATE = Path(__file__).with_name("card.md.j2")


def _count_table(expand: dict) -> str:
    rows = [[r["category"], r["templates"], r["template_rows"], r["samples"],
             r["unique_context_question"], r["paper"], r["difference"]]
            for r in expand["counts"]]  # fmt: skip
    return table(["category", "templates", "template rows", "samples", "unique context + "
                  "question", "paper (Table 1)", "difference"], rows)  # fmt: skip


def _rules_table(ex: dict, readers: dict | None) -> str:
    """What each survey rule did, in KoBBQ 3.2.5's order (``expand.json``'s ``rules``;
    the reading check's row from the check round's figures)."""
    rows = []
    left = None
    for r in ex.get("rules", []):
        if r.get("needs_round"):  # the reading check: the check round's figures
            if readers:
                dropped = readers["dropped_samples"]
                rows.append([r["rule"], r["paragraph"], "applied (check round)",
                             f"{len(readers['templates'])} templates checked",
                             len(readers["dropped_templates"]), dropped,
                             (left or 0) - dropped])  # fmt: skip
            else:
                rows.append([r["rule"], r["paragraph"], "not run (no check round)", "-", "-", "-",
                             left])  # fmt: skip
            continue
        how = r["how"]
        if r.get("checked_only"):
            c = r["checked_only"]
            how += (
                f"; the released fillers kept: applied again the roles would remove "
                f"{c['samples']:,} samples of {c['templates']} templates"
            )
        rows.append([r["rule"], r["paragraph"], how,
                     f"{r['questions_dropped']} of {r['questions']} questions",
                     r["templates_dropped"], r["samples_dropped"], r["samples_left"]])  # fmt: skip
        left = r["samples_left"]
    return table(["rule (3.2.5's order)", "3.2.5 paragraph", "in this rebuild", "dropped",
                  "templates removed", "samples removed", "samples left"], rows)  # fmt: skip


def _score_table(scores: dict) -> str:
    cols = ["acc_amb", "acc_dis", "diff_bias_amb", "max_diff_bias_amb", "diff_bias_dis",
            "max_diff_bias_dis", "ooc_ratio"]  # fmt: skip
    return table(["model", *cols], [[m, *[s["overall"][c] for c in cols]]
                                    for m, s in scores.items()])  # fmt: skip


def card(facts: CardFacts) -> CardSection:
    """Templates, the survey and what its rules removed, the expansion against Table 1,
    the evaluation set and the scores' bounds."""
    from pipelines.families.kobbq.survey import stereotype_table
    from pipelines.families.kobbq.templates import CLASSES

    ex, sv, k = facts["expand"], facts["survey"], facts["recipe"]["kobbq"]
    classes = table(["category", *CLASSES], [[c, *[v.get(x, 0) for x in CLASSES]]
                                             for c, v in ex["classes"].items()])  # fmt: skip
    per_type = table(
        ["type", "questions", "dropped", "share dropped", "paper's share", "reasons"],
        [[t, v["questions"], v["dropped"], v["dropped_share"], v["paper_dropped_share"],
          ", ".join(f"{a} {b}" for a, b in v["reasons"].items()) or "none"]
         for t, v in sv["per_type"].items()])  # fmt: skip
    per_cat = table(
        ["category", "questions", "kept", "type 1", "type 2", "dropped", "templates removed"],
        [[c, v["questions"], v["kept"], v["type1"], v["type2"],
          ", ".join(f"{a} {b}" for a, b in v["dropped"].items()) or "none",
          ", ".join(f"{a} {b}" for a, b in v["templates_removed"].items()) or "none"]
         for c, v in sv["per_category"].items()])  # fmt: skip
    dropped = facts["dropped_stereotypes"]
    return from_template(TEMPLATE, {
        "ex": ex, "sv": sv, "k": k, "task": facts["task"],
        "rules": _rules_table(ex, facts.get("readers")),
        "simulated": facts["annotation"]["simulated"],
        "classes": classes, "counts": _count_table(ex), "per_type": per_type,
        "per_category": per_cat, "roles": sv["role_disagreements"], "rnd": sv.get("round"),
        "dropped_stereotypes": stereotype_table(pd.DataFrame(dropped), dropped_only=True)
        if dropped else "none",
        "round_paragraphs": [round_paragraph(name, facts["rounds"][name], "task")
                             for name in ("survey", "check") if facts["rounds"].get(name)],
        "total": next(r for r in ex["counts"] if r["category"] == "total"),
        "splits": facts["split"]["splits"], "survey_file": Path(k["survey"]).name,
        "sources_table": settings_table({"templates": k["templates"], "survey": k["survey"]}),
        "scores": _score_table(facts["scores"]),
        "readers": facts.get("readers"),
        "reader_table": table(["template", "samples", "answers", "correct", "accuracy"],
                              [[r["template_id"], r["samples"], r["answers"], r["correct"],
                                r["accuracy"]] for r in facts["readers"]["templates"]])
        if facts.get("readers") else "",
    })  # fmt: skip
