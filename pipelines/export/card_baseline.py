"""The card's *Baselines* section (issue 39): the fine-tuned baseline's figures on dev
and test (``card.json``'s ``baseline``, written by ``benchforge baseline``), beside the
human performance of the people round and the partial-input models of the artifact
review, each with the metric the paper reports. Everything comes from the card's facts;
``benchforge card check`` checks that the baseline was scored on the released files."""

from __future__ import annotations

from pipelines.core.markdown import Markdown, cell, code, escape, table
from pipelines.export.facts import CardFacts

# below this many training items a figure says what the pipeline computes, not how hard
# the paper's dataset is
SMALL_TRAIN = 1000


def _fmt(value: object) -> str:
    return "n/a" if value is None else cell(value)


def _human_rows(facts: CardFacts, metrics: list[str]) -> list[list[str]]:
    h = facts.get("human_performance")
    if not h:
        return []
    c = h.get("combined") or {}
    sim = " (simulated)" if h.get("simulated") else ""
    known = {"accuracy": c.get("accuracy"), "macro_f1": c.get("macro_f1"),
             "pearson": c.get("pearson")}  # fmt: skip
    vals = [known.get(m) for m in metrics]
    if all(v is None for v in vals):
        return []
    # the human round reports fractions and r; the table is x 100 like the papers
    who = "people, mean rating" if h.get("kind") == "rating" else "people, majority answer"
    return [[f"{who}{sim}", "test", str(h.get("items", "")),
             *[_fmt(None if v is None else round(100 * float(v), 2)) for v in vals]]]  # fmt: skip


def _fixed_answers(facts: CardFacts) -> str:
    """KoBBQ's baselines (Jin et al. 2024, 4): fixed answers on the evaluation set (the
    release has no train split to fine-tune on), from the card's ``scores``."""
    scores = facts.get("scores")
    if not isinstance(scores, dict) or not scores:
        return ""
    keys = ["acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"]
    rows = [[escape(str(name)), str(s.get("scored", "")),
             *[_fmt(s.get("overall", {}).get(k)) for k in keys]]
            for name, s in scores.items() if isinstance(s, dict) and "overall" in s]  # fmt: skip
    if not rows:
        return ""
    return "\n".join([
        "**Baselines on the evaluation set.** The release has no train split to fine-tune on "
        "(KoBBQ is an evaluation set); its baselines are fixed answers (and the readers' "
        "majority when there was a check round), scored as KoBBQ 4 scores a model "
        "(`benchforge evaluate RUN_DIR --split test --predictions FILE` scores one):",
        "",
        table(["baseline", "samples", *[k.replace("_", " ") for k in keys]], rows),
    ])  # fmt: skip


def baseline_notes(b: dict) -> list[str]:
    """A sentence per split whose model collapsed or does not beat always answering
    train's majority (``pipelines.evaluation.references``) or the task kind's reference
    rule (a parser's right-branching trees); what the warnings say too."""
    out = []
    for split, s in (b.get("splits") or {}).items():
        c, maj = s.get("collapse") or {}, s.get("majority")
        if c.get("collapsed"):
            out.append(f"**The model learned nothing**: on {split}, {escape(c['summary'])}; "
                       "its figures there are not a result (a constant predictor's metric "
                       "says nothing about the dataset).")  # fmt: skip
        elif maj and (behind := not_above(s["metrics"], maj["metrics"])):
            out.append(f"**The model does not beat always answering train's majority**: on "
                       f"{split}, always {code(maj['answer'])} ({', '.join(behind)}).")  # fmt: skip
        elif (ref := s.get("reference")) and (behind := not_above(s["metrics"], ref["metrics"])):
            out.append(f"**The model does not beat {escape(ref['name'])}**: on {split} "
                       f"({', '.join(behind)}).")  # fmt: skip
        elif (chance := s.get("chance")) and (behind := not_above(s["metrics"], chance["metrics"])):
            out.append(f"**The model does not beat chance**: on {split} ({', '.join(behind)}: "
                       "no correlation with the gold).")  # fmt: skip
    return out


def not_above(model: dict, reference: dict) -> list[str]:
    """Each metric on which ``model`` does not exceed ``reference`` (train's majority or
    chance; both x 100)."""
    return [f"{m.replace('_', ' ')} {v} against {reference[m]}" for m, v in model.items()
            if v is not None and reference.get(m) is not None and v <= reference[m]]  # fmt: skip


def baseline_section(facts: CardFacts) -> str:
    """The Markdown of the section (never empty: without a baseline it says how to run
    one)."""
    b = facts.get("baseline")
    fixed = _fixed_answers(facts)
    if not b and fixed:
        return fixed
    if not b:
        return (
            "No baseline has been run on this release. `benchforge baseline RUN_DIR` "
            "fine-tunes a small encoder on train, scores dev and test with the paper's "
            "metrics and writes the figures here."
        )
    splits = b.get("splits") or {}
    metrics = list(next(iter(splits.values()), {}).get("metrics", {}))
    head = ["model", "split", "items", *[m.replace("_", " ") for m in metrics]]
    rows = []
    for split, s in splits.items():
        collapsed = (s.get("collapse") or {}).get("collapsed")  # a warning, not a result
        figures = (["collapsed (no result)"] * len(metrics) if collapsed
                   else [_fmt(s["metrics"].get(m)) for m in metrics])  # fmt: skip
        rows.append([escape(b["model"]), split, str(s["items"]), *figures])
    for split, s in splits.items():  # what each figure is measured against
        chance, maj, rule = s.get("chance"), s.get("majority"), s.get("reference")
        for who, ref in ((rule and escape(rule["name"]), rule),
                         ("no correlation (chance)", chance),
                         (maj and Markdown(f"always {code(maj['answer'], table=True)} "
                                           "(train's majority)"), maj)):  # fmt: skip
            if ref:
                rows.append([who, split, str(s["items"]),
                             *[_fmt(ref["metrics"].get(m)) for m in metrics]])  # fmt: skip
    rows += _human_rows(facts, metrics)
    protocol = b.get("protocol") or "fine-tuned on train, the epoch with the best dev figure kept"
    lines = [
        f"**Fine-tuned baseline.** {escape(b['model'])}, {escape(protocol)} "
        f"({b['train_items']} train items; {b['seconds']} s on {escape(str(b['device']))}); "
        f"scored with the metrics of {escape(b['metrics_source'])} (x 100). Its predictions "
        "are in `baseline/<split>.predictions.jsonl`; `benchforge evaluate` on them gives "
        "the same figures.",
        "",
        table(head, rows),
    ]
    for note in baseline_notes(b):
        lines += ["", note]
    items = b["train_items"] or sum(s["items"] for s in splits.values())
    if items < SMALL_TRAIN:
        lines += ["", f"With {items} items to learn from, these figures show what the "
                  "pipeline computes, not how hard a dataset of the paper's size is."]  # fmt: skip
    if facts.get("human_performance"):
        lines += ["", "The people row is the human performance round (see *Agreement and "
                  "gold labels*), on the test items it sampled."]  # fmt: skip
    if "partial-input" in (facts.get("artifacts_md") or "") or (
        (facts.get("rules") or {}).get("partial_input_models")
    ):
        lines += ["", "Partial-input models (what part of an item alone predicts) are in the "
                  "*Artifact report*."]  # fmt: skip
    return "\n".join(lines)
