"""The reading-comprehension family's part of the data card (JSQuAD and KLUE-MRC): the
figures table beside the paper's and the release's own, computed here; the prose in
``card.md.j2`` beside this module."""

from __future__ import annotations

from pathlib import Path

from pipelines.core.markdown import table
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.facts import CardFacts
from pipelines.rebuild.export import round_paragraph

TEMPLATE = Path(__file__).with_name("card.md.j2")


def _figures(facts: CardFacts) -> str:
    """JGLUE Tables 2-6's kind of figures: sizes, kept shares per step, agreement and
    overlap, this run beside the paper's sizes and the source release's own questions."""
    f = facts["family"]
    q, a, ref = f["written"], f["answers"], (f["written"].get("reference") or {})
    paper = facts.get("paper_sizes") or {}
    sizes = facts["final_splits"]
    rows = [
        [f"{s} questions", sizes.get(s, 0), f"{paper[s]:,}" if s in paper else "-", "-"]
        for s in ("train", "dev", "test")
    ]
    rows += [
        [
            "written questions kept by the checks",
            f"{q['questions']} of {q['tasks']}",
            "-",
            f"{ref['question_check_pass']} pass the question check" if ref else "-",
        ],
        ["lexical overlap, mean", q["overlap_mean"], "-", ref.get("overlap_mean", "-")],
        [
            f"overlap at or over {q['overlap_max']}",
            q["overlap_flagged_share"],
            "-",
            ref.get("overlap_flagged", "-"),
        ],
        [
            "dev/test kept by validation",
            f"{a['kept'] - sizes.get('train', 0)} of {a['evaluation_questions']}",
            "-",
            "-",
        ],
        ["exact match, writer vs validator", a["exact_match"], "-", ref.get("exact_match", "-")],
        ["character F1, writer vs validator", a["character_f1"], "-", ref.get("character_f1", "-")],
    ]
    header = ["figure", "this run"]
    if paper:
        header.append(f"paper ({paper['source']})")
    if ref:
        header.append(f"source release's questions ({ref['questions']})")
    keep = [0, 1] + ([2] if paper else []) + ([3] if ref else [])
    return table(header, [[row[i] for i in keep] for row in rows])


def card(facts: CardFacts) -> CardSection:
    """Articles, paragraphs, the two rounds, the checks and the figures."""
    f = facts["family"]
    corpora = {c["name"]: c for c in facts["recipe"]["corpora"]}
    sources = "; ".join(
        f"{s['corpus']} (reader `{s['reader']}`: {corpora[s['corpus']].get('attribution') or ''}, "
        f"{corpora[s['corpus']]['license']})"
        for s in facts["reading"]["sources"]
    )
    sim = f["writing"].get("simulated_from") or {}
    return from_template(
        TEMPLATE,
        {
            "mrc": facts["task_kind"] == "klue-mrc",
            "r": facts["reading"],
            "p": f["paragraphs"],
            "w": f["writing"],
            "q": f["written"],
            "a": f["answers"],
            "ref": f["written"].get("reference"),
            "sources": sources,
            "figures_table": _figures(facts),
            "simulated": facts["annotation"]["simulated"],
            "sim_sources": ", ".join(f"{k} {v}" for k, v in sorted(sim.items())) or "none",
            "round_paragraphs": [round_paragraph(n, r, "task") for n, r in facts["rounds"].items()],
        },
    )
