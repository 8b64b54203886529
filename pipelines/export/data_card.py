"""The data card of a rebuild, written from the stage outputs, for a data steward.

``render_card`` fills ``data_cards/TEMPLATE.md`` (Datasheets for Datasets and Data
Statements, the frameworks KLUE used) with what the stages wrote: sources and licenses,
every filter's settings and its drop counts per reason, classifier model cards and
thresholds, the annotation interface, overlap, annotators and whether they were
simulated, agreement figures, split rules and sizes per split and source, the artifact
report, and the known limitations. Every number comes from a stage output passed in
``facts``; none is computed here, so the card and the data cannot disagree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "data_cards" / "TEMPLATE.md"


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if v is None else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "n/a" if value is None else str(value)


def _sources(facts: dict) -> str:
    rows = []
    for c in facts["recipe"]["corpora"]:
        stats = facts["ingest"]["corpora"].get(c["name"], {})
        rows.append([c["name"], c["license"], c["domain"], c["style"], c["unit"],
                     stats.get("documents_in"), stats.get("sentences_kept"),
                     facts["dates"].get(c["name"], "n/a"), c["path"]])  # fmt: skip
    table = _table(["corpus", "license", "domain", "style", "unit", "documents",
                    "sentences kept", "dates", "file"], rows)  # fmt: skip
    return (
        table + "\n\nLanguage: Korean (ko-KR). Licenses and attribution of the shipped "
        "files are in `data/demo/README.md`; a dataset built from them carries the most "
        "restrictive license of the sources it uses (see *Files*)."
    )


def _filters(facts: dict) -> str:
    rows = []
    for st in facts["ingest"]["stages"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(st["dropped"].items())) or "none"
        rows.append([st["stage"], st["unit"], st["in"], st["kept"], st["dropped_total"], reasons])
    table = _table(["stage", "unit", "in", "kept", "dropped", "dropped per reason"], rows)
    settings = json.dumps(facts["recipe"]["filters"], ensure_ascii=False, indent=2)
    return (
        f"{table}\n\nSettings (the recipe's `filters`, KLUE 2.3 defaults unless set):\n\n"
        f"```json\n{settings}\n```"
    )


def _classifiers(facts: dict) -> str:
    detectors = facts["recipe"]["filters"]["classifiers"]["detectors"]
    if not detectors:
        return (
            "No detector was configured for this rebuild, so no sentence was scored for hate "
            "speech or gender bias (KLUE 2.3 dropped gender bias >= 0.5 and hate >= 0.9). "
            "Train detectors with `benchforge classifiers train` and name them in the "
            "recipe's `filters.classifiers.detectors` to apply the filter."
        )
    rows = []
    for name, spec in detectors.items():
        card = facts["classifier_cards"].get(name, {})
        rows.append([name, spec["model"], spec.get("threshold") or "KLUE default",
                     _fmt(card.get("dev_macro_f1")), card.get("task", "n/a")])  # fmt: skip
    return _table(["detector", "checkpoint", "threshold", "dev macro-F1", "task"], rows)


def _premises(facts: dict) -> str:
    p, items = facts["premises"], facts["items"]
    rejected = ", ".join(f"{k}: {v}" for k, v in sorted(p["rejected"].items())) or "none"
    dropped = ", ".join(f"{k}: {v}" for k, v in sorted(items["premises_dropped"].items()))
    return "\n".join(
        [
            "Premises (KLUE 3.3.1: declarative sentences with a predicate, 20-90 characters; "
            f"rules `{json.dumps(p['rules'], ensure_ascii=False)}`): {p['premises']} chosen out "
            f"of {p['sentences']} ingested sentences by a seeded sample "
            f"(`{json.dumps(p['spec'], ensure_ascii=False)}`).",
            "",
            _table(
                ["source", "sentences passing the rules", "premises chosen"],
                [[k, v, p["per_source"].get(k, 0)] for k, v in p["passing_per_source"].items()],
            ),
            "",
            f"Sentences not chosen, per reason: {rejected} (all in `premises/rejected.parquet`).",
            "",
            f"Hypotheses: {items['items']} premise-hypothesis pairs from "
            f"{items['premises_written']} premises (one per label: "
            + ", ".join(f"{k} {v}" for k, v in sorted(items["per_method"].items()))
            + f"); premises without hypotheses, per reason: {dropped or 'none'} "
            "(`items/dropped_premises.parquet`).",
        ]
    )


def _titles(facts: dict) -> str:
    t = facts["titles"]
    truth = t.get("simulated_truth")
    lines = [
        f"Headlines sent to annotators: {t['items']} of {t['sentences']} ingested sentences "
        f"(seeded sample, `{json.dumps(t['spec'], ensure_ascii=False)}`), per source: "
        + ", ".join(f"{k} {v}" for k, v in sorted(t["per_source"].items()))
        + f"; {t['dated']} of them dated"
        + (" (undated headlines cannot be split by date: see *Splits*)." if t["dated"] < t["items"]
           else "."),
    ]  # fmt: skip
    if truth:
        lines += [
            "",
            "Latent first topics of the simulated annotators (keyword lexicon, "
            "pipelines/tasks/ynat.py; an assumption, not released): "
            + ", ".join(f"{k} {v}" for k, v in truth.items())
            + ".",
        ]
    return "\n".join(lines)


def _construction(facts: dict) -> str:
    if "premises" in facts:
        return _premises(facts)
    if "titles" in facts:
        return _titles(facts)
    pairs = facts["pairs"]
    rows = [[m, n] for m, n in sorted(pairs["pairs"].items())]
    items = facts["items"]
    lines = [
        "Candidate pairs (KLUE 3.2.1: intent and topic pairs from metadata, greedy "
        "sentence matching on ROUGE, round-trip translation when a translator is set):",
        "",
        _table(["method", "pairs"], rows),
        "",
        f"Pairing settings (the recipe's `pairing`): "
        f"`{json.dumps(facts['recipe']['pairing'], ensure_ascii=False)}`; what each method "
        f"made: `{json.dumps(pairs['corpora'], ensure_ascii=False)}`.",
        "",
        f"Items sent to annotators: {items['items']} (seeded sample, "
        f"`{json.dumps(items['spec'], ensure_ascii=False)}`), per method: "
        + ", ".join(f"{k} {v}" for k, v in sorted(items["per_method"].items()))
        + ".",
    ]
    return "\n".join(lines)


def _round(a: dict, title: str | None = None) -> list[str]:
    return ([title, ""] if title else []) + [
        f"- Interface: `{a['config']}` (Label Studio {a['server']}), project `{a['project']}`.",
        f"- Overlap: {a['overlap']} annotations per item; {a['annotators']} distinct "
        f"annotators; {a['annotations']} annotations pulled ({a['skipped']} skipped or "
        "cancelled, kept in the table and not used).",
        f"- Simulated: **{'yes' if a['simulated'] else 'no'}**"
        + (f" ({a['simulate']})" if a["simulated"] else ""),
    ]


def _annotation(facts: dict) -> str:
    if "writing" in facts:
        return "\n".join(
            _round(facts["writing"], "Writing round (KLUE 3.3.1: one writer per premise writes "
                   "an entailed, a contradicted and a neutral hypothesis):")
            + [""]
            + _round(facts["annotation"], "Validation round (each pair labeled by validators; "
                     "the writer's label counts as one more vote):")
        )  # fmt: skip
    return "\n".join(_round(facts["annotation"]))


# settings that only one rule reads: the card shows a rule's own settings only
RULE_SETTINGS = {
    "mean": {"pearson_min", "alpha_min", "min_shared_items", "decimals", "binary_threshold",
             "sd_max", "variance_max"},
    "majority": {"min_votes"},
    "sts": {"bins", "high_score", "binary_threshold"},
    "nli": {"eligible_fraction", "folds", "style_column", "style_shares", "hypothesis_model",
            "device"},
    "tc": {"date_column", "cutoff"},
    "ner": {"entity_column", "unseen_test_share"},
}  # fmt: skip


def _own_settings(settings: dict, rule: str) -> dict:
    others = set().union(*(keys for name, keys in RULE_SETTINGS.items() if name != rule))
    mine = RULE_SETTINGS.get(rule, set())
    return {k: v for k, v in settings.items() if k in mine or k not in others}


def _agreement(facts: dict) -> str:
    g = facts["agreement"]
    settings = {k: v for k, v in _own_settings(g["settings"], g["rule"]).items() if v is not None}
    rows = [
        ["items annotated", g["items"]],
        ["annotators", g["annotators"]],
        ["ratings", g["ratings"]],
        ["gold items kept", g["gold_items"]],
    ]
    rows += [[f"Krippendorff alpha, {k}", _fmt(v)] for k, v in g["krippendorff_alpha"].items()]
    after = g.get("krippendorff_alpha_after_screening") or {}
    rows += [[f"Krippendorff alpha, {k}, after screening", _fmt(v)] for k, v in after.items()]
    kappa = g.get("fleiss_kappa") or {}
    rows.append([f"Fleiss kappa ({kappa.get('items')} items)", _fmt(kappa.get("kappa"))])
    lines = [
        f"Rule `{g['rule']}`, settings `{json.dumps(settings, ensure_ascii=False)}`.",
        "",
        _table(["figure", "value"], rows),
        "",
        "Items dropped per reason: "
        + (", ".join(f"{k}: {v}" for k, v in sorted(g["dropped_items"].items())) or "none")
        + ". Annotators screened out per reason: "
        + (", ".join(f"{k}: {v}" for k, v in sorted(g["dropped_annotators"].items())) or "none")
        + " (each with its Pearson r and alpha in `agree/dropped.parquet`).",
    ]
    nli = g.get("nli_validation")
    if nli:
        lines += ["", "Validation figures as in KLUE's Table 5 (validators' labels against "
                  "the gold label and the writer's label):", "",
                  _table(["figure", "share", "count"],
                         [[k.replace("_", " "), _fmt(v["share"]), f"{v['count']} of {v['of']}"]
                          for k, v in nli.items()])]  # fmt: skip
    table = g.get("annotators_table")
    if table:
        lines += ["", _table(["annotator", "items", "Pearson r vs others", "alpha vs others"],
                             [[a["annotator_id"], a["items"], _fmt(a.get("pearson")),
                               _fmt(a.get("alpha"))] for a in table])]  # fmt: skip
    return "\n".join(lines)


def _splits(facts: dict) -> str:
    s = facts["split"]
    rows = [[k, v, facts["split_sources"].get(k, "")] for k, v in s["splits"].items()]
    settings = {
        k: v for k, v in _own_settings(s["settings"], s["rule"]).items() if v not in ([], {})
    }
    figures = s.get("rule_figures") or {}
    undated = (
        " The items are undated, so KLUE 3.1.1's date criterion was **not** applied: dev and "
        "test hold the units with the most terms found in no other unit."
        if s["rule"] == "tc" and figures.get("dated") is False
        else ""
    )
    return (
        f"Rule `{s['rule']}` (settings `{json.dumps(settings, ensure_ascii=False)}`). Items "
        f"that share a group or a near-duplicate text never straddle two splits.{undated}\n\n"
        + _table(["split", "items", "per source"], rows)
    )


def _artifacts(facts: dict) -> str:
    report = facts["artifacts_md"]
    # the report's own headings go one level down inside the card
    return re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", report, flags=re.M)


def _files(facts: dict) -> str:
    rows = [[name, n] for name, n in facts["export"]["files"].items()]
    return (
        f"Layout: `{facts['export']['layout']}` (the KLUE release's fields). License of the "
        f"dataset: {facts['export']['license']}.\n\n" + _table(["file", "records"], rows)
    )


def _limitations(facts: dict) -> str:
    out = []
    if facts["annotation"]["simulated"]:
        out.append(
            "The labels come from **simulated annotators** (pipelines/annotation/simulate.py noise "
            "model over an assumed latent answer), not from people: the dataset "
            "demonstrates the pipeline and must not be used to evaluate models."
        )
    if "writing" in facts and facts["writing"]["simulated"]:
        out.append(
            "The hypotheses were written by **simulated writers from templates** "
            "(pipelines/tasks/nli.py): stilted, and full of label cues that a "
            "hypothesis-only model learns (see the artifact report)."
        )
    if not facts["recipe"]["filters"]["classifiers"]["detectors"]:
        out.append("No hate-speech or gender-bias detector was applied.")
    if "pairs" in facts and "rtt" not in facts["pairs"]["pairs"]:
        out.append("No round-trip-translation pairs (no translator configured).")
    g, overlap = facts["agreement"], facts["annotation"]["overlap"]
    screened = sum(g.get("dropped_annotators", {}).values())
    left = g["annotators"] - screened
    if left < max(3, overlap):
        out.append(
            f"**Few annotators**: {left} of {g['annotators']} annotators remain after "
            f"screening ({screened} screened out) for an overlap of {overlap} per item; "
            "the gold labels rest on few people, and items may carry fewer ratings than "
            "the interface asked for."
        )
    small = {k: v for k, v in facts["split"]["splits"].items() if k != "train" and v < 100}
    if small:
        out.append(f"Small evaluation splits ({small}): figures on them have wide intervals.")
    out += facts.get("extra_limitations", [])
    return "\n".join(f"- {line}" for line in out) or "- none recorded."


def render_card(facts: dict, template: Path = TEMPLATE) -> str:
    """The card's Markdown: the template with every placeholder filled."""
    simulated = facts["annotation"]["simulated"]
    values = {
        "name": facts["recipe"]["name"],
        "simulated_banner": (
            "> **Simulated annotations.** Every label in this dataset comes from simulated "
            "annotators posted through Label Studio's API (a demo or test run)."
            if simulated
            else ""
        ),
        "motivation": (facts["recipe"].get("description") or "").strip()
        or "(no description in the recipe)",
        "composition": _table(
            ["split", "items"], [[k, v] for k, v in facts["split"]["splits"].items()]
        )
        + f"\n\nTask: {facts['task']}. "
        + (
            "One item is a premise-hypothesis pair with its gold label (entailment, neutral, "
            "contradiction), the writer's label and the validators' labels."
            if "premises" in facts
            else "One item is a news headline with its gold topic (one of YNAT's seven) and "
            "the annotators' first, second and third topics."
            if "titles" in facts
            else "One item is a sentence pair with a 0-5 similarity label, its unrounded "
            "mean, a binary label at 3.0, and the individual ratings."
        ),
        "sources": _sources(facts),
        "filters": _filters(facts),
        "classifiers": _classifiers(facts),
        "construction": _construction(facts),
        "annotation": _annotation(facts),
        "agreement": _agreement(facts),
        "splits": _splits(facts),
        "artifacts": _artifacts(facts),
        "files": _files(facts),
        "limitations": _limitations(facts),
        "provenance": _table(["", ""], [[k, v] for k, v in facts["provenance"].items()]),
    }
    text = template.read_text(encoding="utf-8")
    text = re.sub(r"<!--.*?-->\n*", "", text, flags=re.S)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    left = re.findall(r"\{\{(\w+)\}\}", text)
    if left:
        raise ValueError(f"{template}: no value for placeholders {left}")
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
