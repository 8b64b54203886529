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
from typing import TYPE_CHECKING

from pipelines.lang import language

if TYPE_CHECKING:
    from pipelines.tasks import CardSection

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "data_cards" / "TEMPLATE.md"


def table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("" if v is None else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def json_text(value: object) -> str:
    """``value`` as one line of JSON, non-ASCII kept (settings quoted in the card)."""
    return json.dumps(value, ensure_ascii=False)


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
    tbl = table(["corpus", "license", "domain", "style", "unit", "documents",
                    "sentences kept", "dates", "file"], rows)  # fmt: skip
    return (
        tbl + f"\n\nLanguage: {language(facts['recipe'].get('language')).label}. Licenses "
        "and attribution of the shipped files are in `data/demo/README.md`; a dataset built "
        "from them carries the most restrictive license of the sources it uses (see *Files*)."
    )


def _filters(facts: dict) -> str:
    rows = []
    for st in facts["ingest"]["stages"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(st["dropped"].items())) or "none"
        rows.append([st["stage"], st["unit"], st["in"], st["kept"], st["dropped_total"], reasons])
    tbl = table(["stage", "unit", "in", "kept", "dropped", "dropped per reason"], rows)
    settings = json.dumps(facts["recipe"]["filters"], ensure_ascii=False, indent=2)
    return (
        f"{tbl}\n\nSettings (the recipe's `filters`, KLUE 2.3 defaults unless set):\n\n"
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
    return table(["detector", "checkpoint", "threshold", "dev macro-F1", "task"], rows)


def annotation_round(a: dict, title: str | None = None) -> str:
    """One Label Studio round's interface, overlap, annotators and simulation."""
    return "\n".join(
        ([title, ""] if title else [])
        + [
            f"- Interface: `{a['config']}` (Label Studio {a['server']}), project `{a['project']}`.",
            f"- Overlap: {a['overlap']} annotations per item; {a['annotators']} distinct "
            f"annotators; {a['annotations']} annotations pulled ({a['skipped']} skipped or "
            "cancelled, kept in the table and not used).",
            f"- Simulated: **{'yes' if a['simulated'] else 'no'}**"
            + (f" ({a['simulate']})" if a["simulated"] else ""),
        ]
    )


def _agreement(facts: dict) -> str:
    g = facts["agreement"]
    settings = {k: v for k, v in g["settings"].items() if v is not None}
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
        table(["figure", "value"], rows),
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
                  table(["figure", "share", "count"],
                         [[k.replace("_", " "), _fmt(v["share"]), f"{v['count']} of {v['of']}"]
                          for k, v in nli.items()])]  # fmt: skip
    annotators = g.get("annotators_table")
    if annotators:
        lines += ["", table(["annotator", "items", "Pearson r vs others", "alpha vs others"],
                             [[a["annotator_id"], a["items"], _fmt(a.get("pearson")),
                               _fmt(a.get("alpha"))] for a in annotators])]  # fmt: skip
    return "\n".join(lines)


def _splits(facts: dict) -> str:
    s = facts["split"]
    rows = [[k, v, facts["split_sources"].get(k, "")] for k, v in s["splits"].items()]
    settings = {k: v for k, v in s["settings"].items() if v not in ([], {})}
    figures = s.get("rule_figures") or {}
    undated = (
        " The items are undated, so KLUE 3.1.1's date criterion was **not** applied: dev and "
        "test hold the units with the most terms found in no other unit."
        if figures.get("dated") is False
        else ""
    )
    return (
        f"Rule `{s['rule']}` (settings `{json.dumps(settings, ensure_ascii=False)}`). Items "
        f"that share a group or a near-duplicate text never straddle two splits.{undated}\n\n"
        + table(["split", "items", "per source"], rows)
    )


def _artifacts(facts: dict) -> str:
    report = facts["artifacts_md"]
    # the report's own headings go one level down inside the card
    return re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", report, flags=re.M)


def _files(facts: dict) -> str:
    rows = [[name, n] for name, n in facts["export"]["files"].items()]
    return (
        f"Layout: `{facts['export']['layout']}` (the KLUE release's fields). License of the "
        f"dataset: {facts['export']['license']}.\n\n" + table(["file", "records"], rows)
    )


def _limitations(facts: dict, section: CardSection | None = None) -> str:
    out = []
    if facts["annotation"]["simulated"]:
        out.append(
            "The labels come from **simulated annotators** (pipelines/annotation/simulate.py noise "
            "model over an assumed latent answer), not from people: the dataset "
            "demonstrates the pipeline and must not be used to evaluate models."
        )
    if not facts["recipe"]["filters"]["classifiers"]["detectors"]:
        out.append("No hate-speech or gender-bias detector was applied.")
    out += section.limitations if section else []
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


def _warnings(facts: dict) -> str:
    from pipelines.core.recipe import CardSpec
    from pipelines.export.warnings import card_warnings

    settings = {**CardSpec().model_dump(), **(facts["recipe"].get("card") or {})}
    found = card_warnings(facts, settings)
    return "\n".join(f"- {w}" for w in found) or "- none raised."


def regenerate(run_dir: Path) -> Path:
    """Render RUN_DIR/dataset/DATA_CARD.md again from the finished run's ``card.json`` and
    ``split/artifacts.md`` (``benchforge card``): nothing is recomputed. The manifest keeps
    its key and records the new card's hash."""
    from pipelines.core.io import read_manifest, sha256_file, write_json, write_text
    from pipelines.tasks import task_kind

    dataset = run_dir / "dataset"
    manifest = read_manifest(dataset)
    facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
    name = facts.get("task_kind") or facts["recipe"].get("task")
    if not name:
        raise ValueError(f"{dataset / 'card.json'}: no task kind recorded; rebuild the run")
    kind = task_kind(name)
    facts["paper_agreement"] = kind.paper_agreement  # the kind's current figure
    facts["artifacts_md"] = (run_dir / "split" / "artifacts.md").read_text(encoding="utf-8")
    card = render_card(facts, kind.card(facts))
    path = dataset / "DATA_CARD.md"
    write_text(card, path)
    manifest["files"]["DATA_CARD.md"] = sha256_file(path)
    write_json(manifest, dataset / "manifest.json")
    return path


def render_card(facts: dict, section: CardSection, template: Path = TEMPLATE) -> str:
    """The card's Markdown: the template with every placeholder filled; ``section`` is
    the task kind's part (what an item is, how items were built, its rounds, its own
    limitations)."""
    simulated = facts["annotation"]["simulated"]
    values = {
        "name": facts["recipe"]["name"],
        "simulated_banner": (
            "> **Simulated annotations.** Every label in this dataset comes from simulated "
            "annotators posted through Label Studio's API (a demo or test run)."
            if simulated
            else ""
        ),
        "warnings": _warnings(facts),
        "motivation": (facts["recipe"].get("description") or "").strip()
        or "(no description in the recipe)",
        "composition": table(
            ["split", "items"], [[k, v] for k, v in facts["split"]["splits"].items()]
        )
        + f"\n\nTask: {facts['task']}. {section.item}",
        "sources": _sources(facts),
        "filters": _filters(facts),
        "classifiers": _classifiers(facts),
        "construction": section.construction,
        "annotation": section.annotation,
        "agreement": _agreement(facts),
        "splits": _splits(facts),
        "artifacts": _artifacts(facts),
        "files": _files(facts),
        "limitations": _limitations(facts, section),
        "provenance": table(["", ""], [[k, v] for k, v in facts["provenance"].items()]),
    }
    text = template.read_text(encoding="utf-8")
    text = re.sub(r"<!--.*?-->\n*", "", text, flags=re.S)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    left = re.findall(r"\{\{(\w+)\}\}", text)
    if left:
        raise ValueError(f"{template}: no value for placeholders {left}")
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"
