"""The data card of a rebuild, written from the stage outputs, for a data steward.

``render_card`` fills ``data_cards/TEMPLATE.md`` (every section of Datasheets for
Datasets and Data Statements, the frameworks KLUE used) with what the stages wrote:
sources and licences, every filter's settings and its drop counts per reason, the
collection timeframe, classifier model cards and thresholds, the annotation interface,
overlap, annotators and whether they were simulated, agreement figures per annotator,
gold labels per split and per source, split rules and sizes, the artifact report, the
resolved release licence with attribution lines, provenance, warnings, and the known
limitations. What only the team can say (uses, distribution, maintenance, annotator
demographics and pay, ethics review) comes from the recipe's ``card`` section; each
answer left out is a visible placeholder listed in a *To complete before release* box.

Every number comes from a stage output passed in ``facts`` (the export's ``card.json``);
none is computed here, so the card and the data cannot disagree. The result is the
Markdown, the same content as one HTML file with the figures embedded, and the figures
as PNGs (``figures/<name>.png``, linked from the Markdown).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.core.licenses import licence_link
from pipelines.core.markdown import (
    cell,
    code,
    code_block,
    escape,
    inline,
    neutralize,
    settings_table,
    table,
)
from pipelines.export.card_baseline import baseline_section
from pipelines.export.card_people import screening_section
from pipelines.export.card_summary import biases, collapsed, contents, personal_information, summary
from pipelines.export.facts import CardFacts
from pipelines.export.rounds import card_rounds
from pipelines.lang import language

if TYPE_CHECKING:
    from pipelines.export.card_section import CardSection

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "data_cards" / "TEMPLATE.md"
SIMULATED_NOTE = (
    "simulated annotators: this figure describes the simulator's noise settings, not people"
)

__all__ = ["Card", "annotation_round", "inline", "regenerate", "render_card", "table"]


@dataclass(frozen=True)
class Card:
    """A rendered card: Markdown, the same as one self-contained HTML file, and the
    figures the Markdown links (``figures/<name>.png`` -> PNG bytes)."""

    markdown: str
    html: str
    figures: dict[str, bytes]
    # dataset/README.md: the Hub's card (pipelines.export.hf_card); None for facts
    # without the release layout (a card.json of an older benchforge)
    readme: str | None = None
    # NOTICES.md: the sources' licence notices (MIT's), None when none has one
    notices: str | None = None

    @property
    def texts(self) -> dict[str, str]:
        """The card's text files by name in the release folder."""
        out = {"DATA_CARD.md": self.markdown, "DATA_CARD.html": self.html}
        if self.notices is not None:
            out["NOTICES.md"] = self.notices
        return {**out, "README.md": self.readme} if self.readme is not None else out


def _fmt(value: object) -> str:
    return "n/a" if value is None else cell(value)


def _figure(facts: CardFacts, name: str) -> str:
    """The Markdown image of figure ``name`` with its caption, when it was drawn."""
    from pipelines.export.figures import CAPTIONS

    if f"figures/{name}.png" not in facts.get("_figures", ()):
        return ""
    return f"\n\n![{CAPTIONS[name]}](figures/{name}.png)\n\n*{CAPTIONS[name]}*"


def _texts(facts: CardFacts) -> dict[str, str | None]:
    from pipelines.export.settings import CARD_TEXTS

    card = facts["recipe"].get("card") or {}
    return {key: (card.get(key) or "").strip() or None for key in CARD_TEXTS}


def _answer(facts: CardFacts, key: str) -> str:
    """The team's answer from the recipe's ``card.<key>``, or a visible placeholder."""
    from pipelines.export.settings import CARD_TEXTS

    text = _texts(facts)[key]
    if text:
        return escape(text, lines=True)  # the team's words are text, not markup
    return f"**To complete before release** ({CARD_TEXTS[key]}; the recipe's `card.{key}`)."


def _to_complete(facts: CardFacts) -> str:
    from pipelines.export.settings import CARD_TEXTS

    missing = [CARD_TEXTS[k] + f" (`card.{k}`)" for k, v in _texts(facts).items() if v is None]
    if not missing:
        return "Nothing: the recipe's `card` section answers every question below."
    return "\n".join(
        ["> **Draft.** Only the team can answer these; until the recipe's `card` section "
         "does, this card is a draft:", ">"]
        + [f"> - {m}" for m in missing]
    )  # fmt: skip


def _uses(facts: CardFacts) -> str:
    return "\n".join([
        f"- Intended uses: {_answer(facts, 'intended_uses')}",
        f"- Out-of-scope uses: {_answer(facts, 'out_of_scope_uses')}"
        + (" Labels from simulated annotators must not be used to evaluate models."
           if facts["annotation"]["simulated"] else ""),
    ])  # fmt: skip


def _label_tables(facts: CardFacts) -> str:
    lab = facts.get("labels")
    if not lab:
        return ""
    splits, sources = list(lab["per_split"]), list(lab["per_source"])
    head = "score bin" if lab["numeric"] else "element label" if lab.get("elements") else "label"
    unit = (
        "elements (an item without any counts once as (none))" if lab.get("elements") else "items"
    )

    def shares(counts: dict[str, int], key: str) -> str:
        total = sum(counts.values())
        n = counts.get(key, 0)
        return f"{n} ({n / total:.0%})" if total else "0"

    per_split = table([head, *splits], [[k, *(shares(lab["per_split"][s], k) for s in splits)]
                                        for k in lab["order"]])  # fmt: skip
    per_source = table([head, *sources], [[k, *(shares(lab["per_source"][s], k) for s in sources)]
                                          for k in lab["order"]])  # fmt: skip
    return (
        f"Gold labels per split ({unit}, share of the split):\n\n{per_split}\n\n"
        f"Gold labels per source:\n\n{per_source}"
        + _figure(facts, "labels")
        + _figure(facts, "scores")
    )


def _composition(facts: CardFacts, section: CardSection) -> str:
    from pipelines.export.field_origins import field_rows, public_note

    sizes = table(["split", "items"], [[k, v] for k, v in facts["split"]["splits"].items()])
    rows = field_rows(facts) if facts.get("release") else []
    origins = (
        "\n\nWhere each released field comes from (the task kind's declaration, "
        "`pipelines/export/field_origins.py`):\n\n"
        + table(["field", "origin", "in this build, by"], rows)
        + (f"\n\n{public_note(facts)}" if public_note(facts) else "")
        if rows else ""
    )  # fmt: skip
    return (f"{sizes}\n\nTask: {facts['task']}. {section.item}{origins}\n\n"
            f"{_label_tables(facts)}")  # fmt: skip


def _sources(facts: CardFacts) -> str:
    rows = []
    for c in facts["recipe"]["corpora"]:
        stats = facts["ingest"]["corpora"].get(c["name"], {})
        rows.append([c["name"], c["license"], c["domain"], c["style"], c["unit"],
                     stats.get("documents_in"), stats.get("sentences_kept"),
                     facts["dates"].get(c["name"], "n/a"), Path(c["path"]).name])  # fmt: skip
    tbl = table(["corpus", "licence", "domain", "style", "unit", "documents",
                 "sentences kept", "dates", "file"], rows)  # fmt: skip
    return (
        tbl + f"\n\nLanguage: {language(facts['recipe'].get('language')).label}. The release "
        "licence and the attribution lines are under *Distribution and licence*."
    )


def _filters(facts: CardFacts) -> str:
    rows = []
    for st in facts["ingest"]["stages"]:
        reasons = ", ".join(f"{k}: {v}" for k, v in sorted(st["dropped"].items())) or "none"
        rows.append([st["stage"], st["unit"], st["in"], st["kept"], st["dropped_total"], reasons])
    tbl = table(["stage", "unit", "in", "kept", "dropped", "dropped per reason"], rows)
    filters = {k: v for k, v in facts["recipe"]["filters"].items() if k != "classifiers"}
    return (
        f"{tbl}{_figure(facts, 'funnel')}\n\nSettings (the recipe's `filters`, KLUE 2.3 "
        f"defaults unless set):\n\n{settings_table(filters, skip_empty=False)}"
    )


def _timeframe(facts: CardFacts) -> str:
    lines = ["Source texts: " + (", ".join(f"{k} {v}" for k, v in sorted(facts["dates"].items()))
                                 or "n/a") + "."]  # fmt: skip
    rows = []
    # a family release's own rounds (issue 54: MARC-ja showed n/a for its 850
    # annotations, whose times its round facts hold), else the shared export's
    for name, a in card_rounds(facts):
        t = a.get("timeframe") or {}
        rows.append([name, t.get("first") or "n/a", t.get("last") or "n/a",
                     _fmt(t.get("median_seconds")), _fmt(t.get("total_hours"))])  # fmt: skip
    lines += ["", "Annotation (Label Studio's `created_at` and `lead_time` of each annotation):",
              "", table(["round", "first", "last", "median seconds per annotation",
                         "hours in all"], rows)]  # fmt: skip
    if facts["annotation"]["simulated"]:
        lines += ["", f"The times are those of the simulated annotations ({SIMULATED_NOTE})."]
    return "\n".join(lines)


def _classifiers(facts: CardFacts) -> str:
    """KLUE 2.3's toxic-content filter as this rebuild ran it: off (with the recipe's
    reason), or each detector with its model, thresholds, dev figures and what it
    dropped, and each corpus it did not run on with the reason (the ingest's stats)."""
    classifiers = facts["recipe"]["filters"]["classifiers"]
    if not classifiers.get("enabled", True) or not classifiers["detectors"]:
        return (
            "The toxic-content filter was **off** for this rebuild: "
            f"{escape(classifiers.get('reason') or 'no detector was configured')}. "
            "No sentence was scored for hate speech or gender bias (KLUE 2.3 drops gender "
            "bias >= 0.5 and hate >= 0.9)."
        )
    ingest = facts.get("ingest") or {}
    ran = ingest.get("classify") or {}
    stage = next((s for s in ingest.get("stages", []) if s["stage"] == "classify"), None)
    dropped = (stage or {}).get("dropped", {})
    rows = []
    for name, spec in classifiers["detectors"].items():
        card = facts["classifier_cards"].get(name, {})
        model = (
            spec["model"]
            or f"built-in ({card.get('kind', 'char n-gram')}, {card.get('folder', 'n/a')})"
        )
        overrides = {c: o["thresholds"][name] for c, o in classifiers["corpora"].items()
                     if name in o.get("thresholds", {})}  # fmt: skip
        default = spec.get("threshold") or {"gender_bias": 0.5, "hate": 0.9}[name]
        threshold = ", ".join([f"{default}"] + [f"{c}: {t}" for c, t in sorted(overrides.items())])
        rows.append([name, code(model), threshold, _fmt(card.get("dev_macro_f1")),
                     _fmt(card.get("ece")), int(dropped.get(name, 0))])  # fmt: skip
    lines = [
        "KLUE 2.3's toxic-content filter ran on the ingested sentences after the rule "
        "filters: a sentence a detector scores at or over its threshold is dropped with "
        "reason `gender_bias` or `hate` and its scores (the ingest's `rejects.parquet`). The "
        "scores are calibrated probabilities (the built-in detectors: "
        "`pipelines/models/ngram_detector.py`; ECE is their expected calibration error "
        "on the Korean HateSpeech dev set).",
        "",
        table(
            [
                "detector",
                "model",
                "threshold (default, per corpus)",
                "dev macro-F1",
                "dev ECE",
                "sentences dropped",
            ],
            rows,
        ),  # fmt: skip
    ]
    if stage is None:
        lines += ["", "**Warning**: the ingest's statistics hold no `classify` stage."]
    skipped = ran.get("skipped_corpora") or {}
    if skipped:
        lines += ["", "Not run on:", ""]
        lines += [f"- `{c}`: {escape(r)}" for c, r in sorted(skipped.items())]
    settings = {k: v for k, v in classifiers.items()
                if k not in ("detectors", "corpora", "enabled", "reason")}  # fmt: skip
    return "\n".join(lines) + "\n\n" + settings_table(settings)


LANGUAGE_NAMES = {"ko": "Korean", "ja": "Japanese"}


def _guideline_line(g: dict | None) -> str:
    if not g:
        return "- Guideline: **none was shown** before labelling."
    language = LANGUAGE_NAMES.get(g["lang"], g["lang"])
    return (f"- Guideline: {code(g['file'])} ({language}, with an English summary), shown "
            f"before labelling; {g['hotkeys']} options with a hotkey.")  # fmt: skip


def annotation_round(a: dict, title: str | None = None) -> str:
    """One Label Studio round's interface, overlap, annotators and simulation."""
    sim = a.get("simulate") or {}
    kinds = [f"{sim[k]} {word}" for k, word in (
        ("careless", "careless (answers at random after any pilot)"),
        ("unqualified", "unable to do the task (answers at random, fails the pilot)"),
    ) if sim.get(k)]  # fmt: skip
    simulated = (
        f"**yes**: {sim.get('annotators')} simulated annotators"
        + (f" ({', '.join(kinds)})" if kinds else "")
        + f", seed {sim.get('seed')} (pipelines/annotation/simulate.py)"
        if a["simulated"]
        else "no"
    )
    return "\n".join(
        ([title, ""] if title else [])
        + [
            f"- Interface: {code(a['config'])} (Label Studio {a['server']}), project "
            f"{code(a['project'])}.",
            _guideline_line(a.get("guideline")),
            f"- Overlap: {a['overlap']} annotations per item; {a['annotators']} distinct "
            f"annotators; {a['annotations']} annotations pulled ({a['skipped']} skipped or "
            "cancelled, kept in the table and not used).",
            f"- Simulated: {simulated}.",
        ]
    )


def _annotators(facts: CardFacts) -> str:
    sim = facts["annotation"]["simulated"]
    return "\n".join([
        "- Recruitment and pay: " + _answer(facts, "compensation"),
        "- Demographics (age range, gender, language varieties, training): "
        + (_answer(facts, "annotator_demographics") if not sim
           else "none: every annotator of this run is simulated. "
           + _answer(facts, "annotator_demographics")),
        "- Speech situation: the annotators read the items in Label Studio (the interface "
        "under *Annotation*) and answered asynchronously.",
    ])  # fmt: skip


def _people(facts: CardFacts) -> str:
    """Data Statements' people: who wrote the source texts, their and the annotators'
    consent, the funding, the creators and how to reach them (the team's answers)."""
    return "\n".join(
        [
            f"- Speaker demographic: {_answer(facts, 'speaker_demographic')}",
            f"- Consent: {_answer(facts, 'consent')}",
            f"- Funding: {_answer(facts, 'funding')}",
            f"- Creators and contact: {_answer(facts, 'creators_contact')}",
        ]
    )


def _per_annotator(g: dict) -> str:
    screened = g.get("annotators_table")
    if screened:
        return table(["annotator", "items", "Pearson r vs others", "alpha vs others"],
                     [[a["annotator_id"], a["items"], _fmt(a.get("pearson")),
                       _fmt(a.get("alpha"))] for a in screened])  # fmt: skip
    labels = g.get("annotator_label_agreement")
    if labels:
        itself = "itself " if g.get("people") or g.get("suggestions") else ""
        return (
            f"Rule {code(g['rule'])} {itself}screens no annotator; "
            "how often each chose the gold label and "
            "what the other annotators' majority chose:\n\n"
            + table(
                [
                    "annotator",
                    "items",
                    "items with gold",
                    "agrees with gold",
                    "agrees with others' majority",
                ],
                [
                    [
                        a["annotator_id"],
                        a["items"],
                        a["gold_items"],
                        _fmt(a.get("gold_agreement")),
                        _fmt(a.get("others_agreement")),
                    ]
                    for a in labels
                ],
            )  # fmt: skip
        )
    return ""


def _measure(value: object) -> str:
    """A value type's measure as the card prints it: a number, or its figures."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_fmt(v)}" for k, v in value.items())
    return _fmt(value)


def _accepting_note(annotation: dict) -> str:
    if not annotation.get("simulated"):
        return ""
    n = (annotation.get("simulate") or {}).get("accepting") or 0
    return (f" The annotators are simulated; {n} of them set to accept every suggestion "
            "unchanged (`simulate.accepting`)." if n else
            " The annotators are simulated; none is set to accept every suggestion.")  # fmt: skip


def suggestions_section(g: dict, annotation: dict) -> str:
    """What annotators did with the pre-loaded suggestions (issue 55,
    ``pipelines.agreement.suggestions``), per annotator and overall; "" when the round
    had none."""
    rows = g.get("suggestions")
    if not rows:
        return ""
    limit = g["settings"].get("suggestion_accept_max")
    rule = (
        f"an annotator who accepts {limit} or more of them unchanged over "
        f"{g['settings'].get('suggestion_min_items')} items or more, while the others "
        "accept less, is screened out (reason `accepts_suggestions`)"
        if limit is not None
        else "no screening on it (`suggestion_accept_max` is off)"
    )
    head = ("**Suggestion acceptance.** The model's suggestions were pre-loaded; of the "
            "suggested elements each annotator kept some exactly (accepted), changed "
            "(edited), removed (deleted), and marked others (added); " + rule + "."
            + _accepting_note(annotation))  # fmt: skip
    body = table(
        ["annotator", "items", "suggested", "accepted", "edited", "deleted", "added",
         "accepted share", "items left unchanged", "screened out"],
        [[escape(str(r["annotator_id"])), r["items"], r["suggested"], r["accepted"],
          r["edited"], r["deleted"], r["added"], _fmt(r["accepted_share"]),
          _fmt(r["unchanged_share"]), "yes" if r.get("screened") else ""] for r in rows],
    )  # fmt: skip
    return head + "\n\n" + body


def _agreement(facts: CardFacts) -> str:
    g = facts["agreement"]
    # the simulated caveat once, above the table, and a mark on each figure it concerns
    # (issue 54: the sentence was repeated nine times in one table)
    simulated = bool(facts["annotation"]["simulated"])
    sim = " (simulated)" if simulated else ""
    rows = [
        ["items annotated", g["items"]],
        ["annotators (after any pilot and control items)", g["annotators"]],
        ["ratings (before screening)", g["ratings"]],
    ]
    if "annotators_kept" in g:  # what the release holds (issue 54; card check counts it)
        rows += [["annotators kept after screening", g["annotators_kept"]],
                 ["ratings kept after screening (on gold items)", g["ratings_kept"]]]  # fmt: skip
    rows.append(["gold items kept", g["gold_items"]])
    rows += [
        [f"Krippendorff alpha, {k}", _fmt(v) + sim]
        for k, v in (g.get("krippendorff_alpha") or {}).items()
    ]
    if "krippendorff_alpha" not in g:  # a structured value type's own measures
        rows += [[name.replace("_", " "), _measure(g.get(name)) + sim]
                 for name in g.get("measures", [])]  # fmt: skip
    after = g.get("krippendorff_alpha_after_screening") or {}
    rows += [[f"Krippendorff alpha, {k}, after screening", _fmt(v) + sim]
             for k, v in after.items()]  # fmt: skip
    kappa = g.get("fleiss_kappa")
    if kappa is not None or "krippendorff_alpha" in g:
        kappa = kappa or {}
        ordered = {"interval", "ordinal"} & set(g.get("krippendorff_alpha") or {})
        scale = ", nominal: ignores the scale's order" if ordered else ""
        rows.append([f"Fleiss kappa ({kappa.get('items')} items{scale})",
                     _fmt(kappa.get("kappa")) + sim])  # fmt: skip
    paper = facts.get("paper_agreement")
    if paper:  # the paper's figure, and this rebuild's at the same level beside it
        scope = ", after screening annotators" if paper.get("after_screening") else ""
        ours = after if paper.get("after_screening") else g.get("krippendorff_alpha") or {}
        mine = ours.get(paper["level"])
        beside = "" if mine is None else f"; this rebuild: {_fmt(mine)}{sim}"
        rows.append([f"the paper's Krippendorff alpha, {paper['level']}{scope}",
                     f"{paper['alpha']} ({paper['source']}){beside}"])  # fmt: skip
    screens = "Pearson r and alpha" if g.get("annotators_table") else "figures"
    lines = [
        f"Rule {code(g['rule'])}:",
        "",
        settings_table({k: v for k, v in g["settings"].items() if k != "rule"}),
        "",
        *(
            [
                "Figures marked simulated come from simulated annotators: each such "
                "figure describes the simulator's noise settings, not people.",
                "",
            ]
            if simulated
            else []
        ),
        table(["figure", "value"], rows),
        "",
        "Items dropped per reason: "
        + (", ".join(f"{k}: {v}" for k, v in sorted(g["dropped_items"].items())) or "none")
        + ". Annotators screened out per reason: "
        + (", ".join(f"{k}: {v}" for k, v in sorted(g["dropped_annotators"].items())) or "none")
        + f" (each annotator's {screens} below)."
        + (
            " Annotations without a value (dropped): "
            + ", ".join(f"{k}: {v}" for k, v in sorted(g["dropped_ratings"].items()))
            + "."
            if g.get("dropped_ratings")
            else ""
        ),
    ]
    for warning in g.get("warnings", []):
        lines += ["", f"**Warning:** {escape(warning)}."]
    nli = g.get("nli_validation")
    if nli:
        lines += ["", "Validation figures as in KLUE's Table 5 (validators' labels against "
                  "the gold label and the writer's label):", "",
                  table(["figure", "share", "count"],
                         [[k.replace("_", " "), _fmt(v["share"]), f"{v['count']} of {v['of']}"]
                          for k, v in nli.items()])]  # fmt: skip
    people = screening_section(facts)
    if people:
        lines += ["", people]
    accepted = suggestions_section(g, facts["annotation"])
    if accepted:
        lines += ["", accepted]
    per = _per_annotator(g)
    if per:
        lines += ["", per]
    return "\n".join(lines) + _figure(facts, "annotators")


def _splits(facts: CardFacts) -> str:
    s = facts["split"]
    per = facts["labels"]["sources_per_split"]
    rows = [[k, v, ", ".join(f"{src} {n}" for src, n in per.get(k, {}).items())]
            for k, v in s["splits"].items()]  # fmt: skip
    settings = {k: v for k, v in s["settings"].items() if k != "rule"}
    figures = s.get("rule_figures") or {}
    undated = (
        " The items are undated, so KLUE 3.1.1's date criterion was **not** applied: dev and "
        "test hold the units with the most terms found in no other unit."
        if figures.get("dated") is False
        else ""
    )
    return (
        f"Rule {code(s['rule'])}. Items that share a group or a near-duplicate text never "
        f"straddle two splits.{undated}\n\n"
        + table(["split", "items", "per source"], rows)
        + (
            f"\n\nSettings of the rule:\n\n{settings_table(settings)}"
            if any(v not in (None, [], {}) for v in settings.values())
            # issue 54: KoBEST's card showed an empty settings table
            else "\n\nThe rule was run with no settings recorded for it."
        )
    )


def _artifacts(facts: CardFacts) -> str:
    report = facts["artifacts_md"]
    # the report's own headings go one level down inside the card
    report = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", report, flags=re.M)
    before = (facts.get("split") or {}).get("before_revisions")
    note = ""
    if report.strip() and before and before != facts["split"].get("splits"):
        # issue 54: KoBEST's revision rounds and MARC-ja's 7-of-10 rule drop items after
        # the split the report read
        shown = ", ".join(f"{k} {v}" for k, v in before.items())
        now = ", ".join(f"{k} {v}" for k, v in facts["split"]["splits"].items())
        note = (f"This report describes the split as drawn, before later rounds dropped "
                f"items ({shown}); the release holds {now}.\n\n")  # fmt: skip
    return note + collapsed(report, "The whole artifact report") + _figure(facts, "cues")


def _distribution(facts: CardFacts) -> str:
    lic = facts["export"]["licence"]
    rows = [[name, n] for name, n in facts["export"]["files"].items()]
    return "\n".join([
        f"- Release licence: **{licence_link(lic['release'])}**: {lic['explain']}. Each "
        "exported row carries its source's licence in its `license` field.",
        "- Attribution (one line per source used):",
        *[f"  - {line}" for line in lic["attribution"]],
        f"- Distribution: {_answer(facts, 'distribution')}",
        "",
        f"Layout: {code(facts['export']['layout'])} (the fields of that release, plus `license`; "
        "`README.md` lists them with an example record). "
        "Licence resolution: pipelines/core/licenses.py, a summary of the Creative Commons "
        "terms for a data steward, not legal advice.",
        *_scraped(lic),
        "",
        table(["file", "records"], rows),
        *_notices(lic),
    ])  # fmt: skip


def _scraped(lic: dict) -> list[str]:
    """The caveat for text scraped from a website's users (``scraped_user_text``)."""
    return [
        f"- **Scraped user text** ({code(name)}): the texts were posted by the users of a website "
        f"and collected by a third party; the licence ({lic['sources'].get(name)}) is the "
        "collector's grant, not the authors'. The authors did not consent to this use, the "
        "texts may name or identify people, and the website's terms may restrict reuse: "
        "check them before redistributing."
        for name in lic.get("scraped") or []
    ]


def _notices(lic: dict) -> list[str]:
    """Where each source's licence notice is: ``NOTICES.md`` beside the card holds them
    as the sources ship them (MIT: the copyright notice and the permission notice in all
    copies), so the card links them rather than pasting them (issue 54)."""
    names = sorted(lic.get("notices") or {})
    if not names:
        return []
    return ["", f"The licence notices of {', '.join(code(n) for n in names)}, as the "
            "sources ship them and their licences require in every copy: "
            "[NOTICES.md](NOTICES.md)."]  # fmt: skip


def notices_file(lic: dict) -> str | None:
    """``NOTICES.md``: every source's licence notice, reproduced as its licence requires;
    None when no source has one."""
    notices = lic.get("notices") or {}
    if not notices:
        return None
    out = ["# Licence notices", "", "The notices of the sources this dataset adapts, as "
           "each source ships them.", ""]  # fmt: skip
    for name, text in sorted(notices.items()):
        out += [f"## {escape(name)}", "", *code_block(text, "text"), ""]
    return "\n".join(out)


def _simulated(facts: CardFacts) -> tuple[list[str], list[str]]:
    """The rounds simulated people answered, and those people answered."""
    from pipelines.export.rounds import round_states

    states = round_states(facts)
    return [n for n, s in states if s], [n for n, s in states if not s]


def _labels_from(section: CardSection | None) -> str:
    """What the family says its labels come from (its template's ``labels_from``)."""
    return (section.sections.get("labels_from") or "").strip() if section else ""


def simulated_banner(facts: CardFacts, section: CardSection | None) -> str:
    """Round by round, which rounds simulated people answered and which people did, and
    where the labels come from: the family's ``labels_from`` (a translated dataset's
    labels are the source's human scores; KoBBQ's answers come from its templates), else
    every label comes from the simulated rounds when no round had people."""
    simulated, people = _simulated(facts)
    if not simulated:
        return ""
    rounds = "Label Studio rounds answered by **simulated** people through its API (a demo "
    rounds += f"or test run): {', '.join(code(n) for n in simulated)}"
    rounds += f"; answered by people: {', '.join(code(n) for n in people)}." if people else "."
    from pipelines.export.field_origins import public_note, simulated_fields

    fields = simulated_fields(facts)
    written = (
        "The simulated rounds wrote or labelled "
        + ", ".join(code(f.split(" (")[0]) + (f" ({f.split(' (', 1)[1]}" if " (" in f else "")
                    for f in fields)
        + "; the *Composition* table says where every other field comes from."
        if fields else "Every label in this dataset comes from simulated annotators."
    )  # fmt: skip
    if public := public_note(facts).split(":")[0]:
        written += f" {public} (see *Warnings*)."
    origin = _labels_from(section) or (written if not people else "")
    return "> **Simulated rounds.** " + rounds + (f" {origin}" if origin else "")


def _limitations(facts: CardFacts, section: CardSection | None = None) -> str:
    out = []
    simulated, people = _simulated(facts)
    origin = _labels_from(section)
    if simulated and origin:
        out.append(
            f"Rounds answered by **simulated** people ({', '.join(simulated)}). {origin} "
            "What those rounds decided demonstrates the pipeline, not people's judgement."
        )
    elif simulated:
        out.append(
            "The labels come from **simulated annotators** (pipelines/annotation/simulate.py noise "
            "model over an assumed latent answer), not from people: the dataset "
            "demonstrates the pipeline and must not be used to evaluate models."
        )
    classifiers = facts["recipe"]["filters"]["classifiers"]
    if not classifiers.get("enabled", True) or not classifiers["detectors"]:
        out.append("No hate-speech or gender-bias detector was applied.")
    else:
        out.append(
            "The hate and gender-bias detectors are trained on 7,896 entertainment-news "
            "comments; they miss some toxic sentences and drop some harmless ones (see "
            "their dev figures under Classifiers): what they leave is what people reviewed."
        )
    out += section.limitations if section else []
    g, overlap = facts.get("agreement") or {}, facts["annotation"]["overlap"]
    # the rule's "annotators" already excludes the pilot's and the control items'
    # exclusions, which dropped_annotators counts too: the kept count is the release's
    screened = sum(g.get("dropped_annotators", {}).values())
    left = g["annotators_kept"] if "annotators_kept" in g else g.get("annotators", 0) - screened
    screened = g.get("annotators", 0) - left
    if "annotators" in g and left < max(3, overlap):
        out.append(
            f"**Few annotators**: {left} of {g['annotators']} annotators remain after "
            f"screening ({screened} screened out) for an overlap of {overlap} per item; "
            "the gold labels rest on few people, and items may carry fewer ratings than "
            "the interface asked for."
        )
    small = {k: v for k, v in facts["split"]["splits"].items() if k != "train" and v < 100}
    if small:
        out.append(
            "Small evaluation splits ("
            + ", ".join(f"{k} {v} items" for k, v in small.items())
            + "): figures on them have wide intervals."
        )
    out += facts.get("extra_limitations", [])
    return "\n".join(f"- {line}" for line in out) or "- none recorded."


def _warnings(facts: CardFacts, section: CardSection | None = None) -> str:
    """The shared rules' warnings, then the family's own (its template's ``warnings``
    block adds lines; it does not replace the shared rules)."""
    from pipelines.export.settings import CardSpec
    from pipelines.export.warnings import card_warnings, one_per_cause

    settings = {**CardSpec().model_dump(), **(facts["recipe"].get("card") or {})}
    found = card_warnings(facts, settings)
    own = (section.sections.get("warnings") or "") if section else ""
    for line in (x.strip() for x in own.split("\n")):
        if line.startswith("- ") and line != "- none":
            found.append(line[2:])
        elif line and line != "- none" and found:  # a wrapped line of the item before
            found[-1] += " " + line
    return "\n".join(f"- {w}" for w in one_per_cause(found)) or "- none raised."


def rendered(run_dir: Path) -> Card:
    """The card of the finished run ``run_dir`` rendered again from its ``card.json`` and
    ``split/artifacts.md``, written nowhere (``regenerate`` writes it; the committed
    cards' test compares it with the committed one)."""
    from pipelines.core.plugins import TASK_KINDS

    dataset = run_dir / "dataset"
    facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
    name = facts.get("task_kind") or facts["recipe"].get("task")
    if not name:
        raise ValueError(f"{dataset / 'card.json'}: no task kind recorded; rebuild the run")
    missing = [k for k in ("labels", "funnel") if k not in facts]
    missing += [] if "licence" in facts.get("export", {}) else ["export.licence"]
    if missing:
        raise ValueError(
            f"{dataset / 'card.json'} lacks {', '.join(missing)}: it was written by an older "
            "benchforge; run the rebuild again (finished steps are cached, only the export "
            "is redone)"
        )
    kind = TASK_KINDS.get(name)
    facts["paper_agreement"] = kind.paper_agreement  # the kind's current figure
    if "hub" in facts:  # the kind's current declarations (its fields' origins)
        facts["hub"] = dict(kind.hub)
    artifacts = run_dir / "split" / "artifacts.md"  # none for a translated dataset
    facts["artifacts_md"] = artifacts.read_text(encoding="utf-8") if artifacts.is_file() else ""
    return render_card(facts, kind.card(facts))


def regenerate(run_dir: Path) -> Path:
    """Render RUN_DIR/dataset/DATA_CARD.md, DATA_CARD.html and the figures again from
    the finished run's ``card.json`` and ``split/artifacts.md`` (``benchforge card render``):
    nothing is recomputed. The manifest keeps its key and records the new files' hashes."""
    from pipelines.core.io import read_manifest, sha256_file, write_bytes, write_json, write_text

    dataset = run_dir / "dataset"
    manifest = read_manifest(dataset)
    card = rendered(run_dir)
    files = card.texts
    for rel, text in files.items():
        write_text(text, dataset / rel)
    for rel, blob in card.figures.items():
        write_bytes(blob, dataset / rel)
    for rel in [*files, *card.figures]:
        manifest["files"][rel] = sha256_file(dataset / rel)
    write_json(manifest, dataset / "manifest.json")
    from pipelines.export.manifest import refresh_release_manifest

    refresh_release_manifest(dataset, [*files, *card.figures])
    return dataset / "DATA_CARD.md"


def copy_card(run_dir: Path, folder: Path) -> Path:
    """Copy the run's card (Markdown, HTML and figures) into ``folder`` (atomically, file
    by file; figures no longer drawn are removed there)."""
    from pipelines.core.io import write_bytes

    dataset = run_dir / "dataset"
    names = ["DATA_CARD.md", "DATA_CARD.html"]
    names += sorted(str(p.relative_to(dataset)) for p in (dataset / "figures").glob("*.png"))
    for stale in (folder / "figures").glob("*.png"):
        if str(stale.relative_to(folder)) not in names:
            stale.unlink()
    for name in names:
        write_bytes((dataset / name).read_bytes(), folder / name)
    return folder / "DATA_CARD.md"


def render_card(facts: CardFacts, section: CardSection, template: Path = TEMPLATE) -> Card:
    """The card: the template with every placeholder filled (``section`` is the task
    kind's part: what an item is, how items were built, its rounds, its own
    limitations), as Markdown and HTML, with its figures."""
    from pipelines.export.card_html import to_html
    from pipelines.export.figures import render_figures

    figures = render_figures(facts)
    facts = {**facts, "_figures": set(figures)}
    computed = {
        "name": lambda: escape(facts["recipe"]["name"]),
        "simulated_banner": lambda: simulated_banner(facts, section),
        "to_complete": lambda: _to_complete(facts),
        "warnings": lambda: _warnings(facts, section),
        "motivation": lambda: (
            escape((facts["recipe"].get("description") or "").strip(), lines=True)
            or "(no description in the recipe)"
        ),
        "uses": lambda: _uses(facts),
        "composition": lambda: _composition(facts, section),
        "sources": lambda: _sources(facts),
        "filters": lambda: _filters(facts),
        "timeframe": lambda: _timeframe(facts),
        "classifiers": lambda: _classifiers(facts),
        "construction": lambda: section.construction,
        "annotation": lambda: section.annotation,
        "annotators": lambda: _annotators(facts),
        "people": lambda: _people(facts),
        "agreement": lambda: _agreement(facts),
        "splits": lambda: _splits(facts),
        "artifacts": lambda: _artifacts(facts),
        "baselines": lambda: baseline_section(facts),
        "distribution": lambda: _distribution(facts),
        "maintenance": lambda: _answer(facts, "maintenance"),
        "ethics": lambda: _answer(facts, "ethics_review"),
        "limitations": lambda: _limitations(facts, section),
        "personal": lambda: personal_information(facts),
        "provenance": lambda: table(
            ["", ""], [[k, _fmt(v)] for k, v in facts["provenance"].items()]
        ),
    }
    # a family's own sections replace the shared ones (computed only when not given),
    # except its warnings, which add to the shared rules' (_warnings)
    values = {k: section.sections[k] if k in section.sections and k != "warnings" else v()
              for k, v in computed.items()}  # fmt: skip
    if "filters" in section.sections:  # the funnel figure goes with the family's filters
        values["filters"] += _figure(facts, "funnel")
    lines = [w[2:] for w in values["warnings"].split("\n")
             if w.startswith("- ") and w != "- none raised."]  # fmt: skip
    values["summary"] = summary(facts, lines, _labels_from(section),
                                bool(values["simulated_banner"]))  # fmt: skip
    values["biases"] = section.sections.get("biases") or biases(facts, lines)
    text = template.read_text(encoding="utf-8")
    text = re.sub(r"<!--.*?-->\n*", "", text, flags=re.S)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    text = text.replace("{{contents}}", contents(text))
    left = re.findall(r"\{\{(\w+)\}\}", text)
    if left:
        raise ValueError(f"{template}: no value for placeholders {left}")
    markdown = neutralize(re.sub(r"\n{3,}", "\n\n", text).strip() + "\n")
    page = to_html(
        markdown, figures, facts["recipe"]["name"], facts["recipe"].get("language", "ko")
    )
    from pipelines.export.hf_card import readme

    hub = readme(facts, markdown) if facts.get("release") else None
    return Card(markdown, page, figures, hub, notices_file(facts["export"]["licence"]))
