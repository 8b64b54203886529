"""The card's account of who counted (issue 35): the qualification (pilot) round, its
applicants, pass rule and results, the control items and each annotator's accuracy on
them, and what was excluded, all from the agreement step's figures
(``agreement.people``, ``pipelines.agreement.screening``) and the pilot round's facts.
Annotator ids are escaped: they are account names, data."""

from __future__ import annotations

from pipelines.core.markdown import Markdown, cell, code, escape, table
from pipelines.export.facts import CardFacts


def _fmt(value: object) -> str:
    return "n/a" if value is None else cell(value)


def review_section(facts: CardFacts) -> str:
    """The review round of reported items (``reports: review``), or ""."""
    r = (facts.get("agreement") or {}).get("review")
    if not r:
        return ""
    project = (facts.get("review") or {}).get("project", "review")
    reviewers = ", ".join(code(x) for x in r.get("reviewers", [])) or "none"
    return (
        f"**Review of reported items.** With `reports: review`, the {r['reported']} items "
        f"annotators reported went to a review round (project {code(project)}, "
        f"reviewer(s) {reviewers}) instead of an automatic drop: **kept {r['kept']}, fixed "
        f"{r['fixed']}, dropped {r['dropped']}**"
        + (f", a fix that changed no text {r['fix_without_change']} (kept as it was)"
           if r.get("fix_without_change") else "")
        + (f", not reviewed {r['not_reviewed']} (dropped, as `reports: auto` would)"
           if r.get("not_reviewed") else "")
        + ". Each decision, its reviewer and reason are in `agree/gold.parquet` (columns "
        "`review_decision`, `reviewer`, `review_reason`, `review_fix`) or, for a drop, in "
        "`agree/dropped.parquet`; a fixed text is the released one."
    )  # fmt: skip


def human_section(facts: CardFacts) -> str:
    """The human performance round (``annotation.human``), or ""."""
    h = facts.get("human_performance")
    if not h:
        return ""
    project = (facts.get("human") or {}).get("project", "human")
    sim = " (simulated people: the figures describe the simulator)" if h.get("simulated") else ""
    if h["kind"] == "rating":
        head, keys = ["person", "items", "Pearson r with the gold"], ["pearson"]
        combined = f"Pearson r of their mean rating per item: **{_fmt(h['combined']['pearson'])}**"
    else:
        head, keys = ["person", "items", "accuracy", "macro F1"], ["accuracy", "macro_f1"]
        c = h["combined"]
        combined = (f"their majority answer per item: accuracy **{_fmt(c['accuracy'])}**, "
                    f"macro F1 **{_fmt(c['macro_f1'])}** (a tie counts as wrong)")  # fmt: skip
    rows = [[escape(str(p["annotator_id"])), p["items"], *[_fmt(p.get(k)) for k in keys]]
            for p in h["people"]]  # fmt: skip
    return "\n".join([
        f"**Human performance{sim}.** {len(h['people'])} people who did not annotate the "
        f"dataset ({h['overlap']} per item) answered {h['items']} of {h['sampled']} sampled "
        "test items as a model "
        f"would (project {code(project)}), scored against the gold labels: "
        f"{combined}. KLUE, JGLUE and KoBEST report human performance beside their "
        "models'.",
        "",
        table(head, rows),
    ])  # fmt: skip


def screening_section(facts: CardFacts) -> str:
    """The Markdown, or "" when the rebuild had neither a pilot nor control items."""
    people = (facts.get("agreement") or {}).get("people")
    lines: list[str] = []
    for part in (review_section(facts), human_section(facts)):
        if part:
            lines += [part, ""]
    if not people:
        return "\n".join(lines).strip()
    pilot = people.get("pilot")
    if pilot:
        round_facts = facts.get("pilot") or {}
        failed = [a for a in pilot.get("annotators", []) if not a.get("passed")]
        lines += [
            "**Qualification (pilot) round.** "
            f"{pilot.get('applicants')} applicants answered the {pilot.get('gold_items')} gold "
            f"items of the pilot (project {code(round_facts.get('project', 'pilot'))}"
            f"); pass rule {code(pilot.get('rule'))}: {escape(str(pilot.get('describe')))}. "
            f"**{pilot.get('passed')} of {pilot.get('applicants')} passed**"
            + (f"; {len(failed)} did not" if failed else "")
            + ". The main round's annotations by an account that did not pass are excluded "
            f"(reason `not_qualified`): {pilot.get('excluded_annotations', 0)} annotations by "
            f"{len(pilot.get('excluded_annotators', []))} account(s).",
            "",
            table(
                ["applicant", "gold items answered", "result", "passed"],
                [
                    [
                        escape(str(a["annotator_id"])),
                        a.get("answered"),
                        escape(str(a.get("why"))),
                        "yes" if a.get("passed") else Markdown("**no**"),
                    ]
                    for a in pilot.get("annotators", [])
                ],
            ),  # fmt: skip
            "",
        ]
    controls = people.get("controls")
    if controls:
        share = controls.get("share")
        tolerance = controls.get("tolerance") or 0
        lines += [
            "**Control items.** "
            f"{controls.get('shown')} items with known answers were shuffled into the round"
            + (f" ({share:.0%} of it)" if share else "")
            + ", shown as any other item; they measure the annotators and never enter the "
            "gold. An annotator right on fewer than "
            f"{controls.get('min_accuracy'):.0%} of them (over {controls.get('min_answered')} "
            "or more answered"
            + (
                f"; a rating within {tolerance:g} of the known one counts as right"
                if tolerance
                else ""
            )
            + ") is screened out of the agreement (reason `low_control_accuracy`): "
            + (", ".join(code(a) for a in controls.get("screened", [])) or "none")
            + ".",
            "",
            table(
                ["annotator", "controls answered", "right", "accuracy", "screened out"],
                [
                    [
                        escape(str(a["annotator_id"])),
                        a.get("answered"),
                        a.get("correct"),
                        _fmt(a.get("accuracy")),
                        Markdown("**yes**") if a.get("screened") else "no",
                    ]
                    for a in controls.get("annotators", [])
                ],
            ),  # fmt: skip
            "",
        ]
    excluded = people.get("excluded_rows") or {}
    if excluded:
        lines.append(
            "Annotation rows set apart before the rule (`agree/excluded_annotations.parquet`), "
            "per reason: " + ", ".join(f"{k}: {v}" for k, v in sorted(excluded.items())) + "."
        )
    return "\n".join(lines).strip()
