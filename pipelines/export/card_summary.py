"""The parts of the data card a data steward reads first, and the Datasheets questions
the other sections leave open (issue 54).

- :func:`summary`: what the dataset is, its size, how it was made, what is simulated,
  its licence, and its first three warnings, before anything else;
- :func:`contents`: a table of contents, one link per section, with GitHub's (and the
  Hub's) heading anchors, which :func:`slug` gives the HTML card too;
- :func:`personal_information` and :func:`biases`: Datasheets for Datasets' questions
  on personal and sensitive information and on biases (Gebru et al. 2021, Composition),
  answered from what the run recorded (the PII rule of KLUE 2.3 and what it dropped, the
  sources scraped from a website's users, the toxic-content detectors, the warnings on
  labels a source or a cue predicts); a family may answer them itself (its template's
  ``personal`` and ``biases`` blocks: KoBBQ, a bias benchmark, does);
- :func:`collapsed`: a long report as its headline and the report in a ``<details>``
  block (the HTML card renders the Markdown inside it, ``card_html.to_html``).
"""

from __future__ import annotations

import re
import unicodedata

from pipelines.core.licenses import licence_link
from pipelines.core.markdown import code
from pipelines.export.facts import CardFacts

_HEADING = re.compile(r"^## (.+)$", re.M)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading (and the Hub, which follows it): lowercase,
    every character that is not a letter, a digit, a space, ``-`` or ``_`` removed,
    each space a ``-``. Python-Markdown's ``toc`` extension is given this function, so
    the HTML card's anchors are the same."""
    text = unicodedata.normalize("NFC", heading).strip().lower()
    text = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LNM")
    return text.replace(" ", "-")


def toc_slugify(value: str, separator: str) -> str:
    """:func:`slug` in the signature of Python-Markdown's ``toc`` ``slugify`` option."""
    return slug(value)


def contents(markdown: str) -> str:
    """A one-line table of contents of ``markdown``'s sections (its ``## `` headings)."""
    names = _HEADING.findall(markdown)
    return "**Contents:** " + " · ".join(f"[{short(n)}](#{slug(n)})" for n in names)


def short(heading: str) -> str:
    """A section's name without its parenthesised gloss (``Sources (data statement:
    ...)`` -> ``Sources``)."""
    return heading.split(" (", 1)[0]


def _size(facts: CardFacts) -> str:
    splits = facts["split"]["splits"]
    total = sum(splits.values())
    parts = ", ".join(f"{k} {v:,}" for k, v in splits.items())
    return f"{total:,} items ({parts})"


def _made(facts: CardFacts, rounds: list[tuple[str, bool]]) -> str:
    corpora = [c["name"] for c in facts["recipe"].get("corpora") or []]
    made = f"from {', '.join(code(c) for c in corpora)}" if corpora else "from its recipe's inputs"
    if rounds:
        made += f"; {len(rounds)} Label Studio round" + ("s" if len(rounds) != 1 else "")
    rule = (facts.get("split") or {}).get("rule")
    if rule:
        made += f"; split rule {code(rule)}"
    return made + " (see *Item construction*, *Annotation* and *Splits*)."


def _simulated_line(rounds: list[tuple[str, bool]], labels_from: str) -> str:
    simulated = [n for n, s in rounds if s]
    if not rounds:
        return "no annotation round (nothing answered by people or by a simulator)."
    if not simulated:
        return "nothing: every round was answered by people."
    line = f"{len(simulated)} of {len(rounds)} rounds were answered by simulated annotators"
    line += ", none by people." if len(simulated) == len(rounds) else "."
    return line + (f" {labels_from}" if labels_from else "")


def _warning_titles(warnings: list[str]) -> str:
    from pipelines.export.warnings import cause_of

    titles = []
    for w in warnings:
        titles.append(cause_of(w) or re.split(r"[:;(]", w, maxsplit=1)[0].strip())
    if not titles:
        return "none raised."
    shown = "; ".join(titles[:3])
    more = len(titles) - 3
    return shown + (f"; and {more} more" if more > 0 else "") + " (see *Warnings*)."


def summary(facts: CardFacts, warnings: list[str], labels_from: str, banner: bool) -> str:
    """The card's summary (see the module docstring); ``warnings`` are the card's
    warning lines, ``labels_from`` what the family says its labels come from; with
    ``banner`` (the simulated-rounds banner stands above it) the line on what is
    simulated is the banner."""
    from pipelines.export.rounds import round_states

    rounds = round_states(facts)
    motivation = (facts["recipe"].get("description") or "").strip()
    # the first sentence: a stop followed by a capital (not "et al. 2022")
    what = re.split(r"(?<=[.!?])\s+(?=[A-Z])", " ".join(motivation.split()), maxsplit=1)[0]
    lic = facts["export"]["licence"]
    return "\n".join([
        f"- **What**: {_escape(what) if what else facts['task']}",
        f"- **Size**: {_size(facts)}.",
        f"- **How it was made**: {_made(facts, rounds)}",
        *([] if banner else [f"- **Simulated**: {_simulated_line(rounds, labels_from)}"]),
        f"- **Licence**: {licence_link(lic['release'])} ({lic['explain']}).",
        f"- **Main warnings**: {_warning_titles(warnings)}",
    ])  # fmt: skip


def _escape(text: str) -> str:
    from pipelines.core.markdown import escape

    return escape(text)


def _stage(facts: CardFacts, name: str) -> dict | None:
    stages = (facts.get("ingest") or {}).get("stages") or []
    return next((s for s in stages if s["stage"] == name), None)


def personal_information(facts: CardFacts) -> str:
    """What the run did about personal information, and what it could not do."""
    pii = (facts["recipe"].get("filters") or {}).get("pii") or {}
    stage = _stage(facts, "pii")
    lines = []
    if pii.get("enabled") and stage is not None:
        lines.append(
            f"- KLUE 2.3's rule: a sentence holding {', '.join(pii.get('kinds') or [])} is "
            f"dropped; it dropped {stage['dropped_total']:,} of {stage['in']:,} sentences "
            "(kept with their kinds in the stage's `rejects.parquet`)."
        )
    elif pii.get("enabled"):
        lines.append("- KLUE 2.3's personal-information rule is on, but no sentence went "
                     "through it in this build (its texts were not ingested).")  # fmt: skip
    else:
        lines.append("- **No personal-information rule ran** (the recipe's `filters.pii`).")
    lines.append(
        "- Names are not detected (KLUE did not remove them: public figures' names are "
        "not personal information), nor addresses, ages or health details in free text."
    )
    scraped = (facts["export"]["licence"].get("scraped")) or []
    if scraped:
        lines.append(
            f"- Text posted by a website's users ({', '.join(code(s) for s in scraped)}) "
            "may identify or describe people; see *Distribution and licence*."
        )
    return "\n".join(lines)


def biases(facts: CardFacts, warnings: list[str]) -> str:
    """What the run knows of the dataset's biases: the toxic-content detectors (KLUE
    2.3) and the warnings on shortcuts a model could learn."""
    detectors = ((facts["recipe"].get("filters") or {}).get("classifiers") or {}).get(
        "detectors"
    ) or {}
    stage = _stage(facts, "classify")
    lines = []
    if detectors and stage is not None:
        lines.append(
            f"- Toxic-content detectors ({', '.join(code(d) for d in sorted(detectors))}, "
            f"KLUE 2.3) dropped {stage['dropped_total']:,} of {stage['in']:,} sentences; "
            "see *Toxic-content classifiers*."
        )
    else:
        lines.append(
            "- **No hate-speech or gender-bias detector ran** (KLUE 2.3 used both on online "
            "text): the texts may hold hateful or biased language."
        )
    shortcuts = [w for w in warnings if "predicts the label" in w or "cue" in w.lower()]
    if shortcuts:
        lines.append(f"- {len(shortcuts)} warning(s) above name a source or a cue that "
                     "predicts the label: a model can learn it instead of the task.")  # fmt: skip
    domains = sorted({f"{c.get('domain')}, {c.get('style')}"
                      for c in facts["recipe"].get("corpora") or []})  # fmt: skip
    if domains:
        lines.append(
            "- The texts come from few domains and styles ("
            + "; ".join(domains)
            + "): they do not represent the language as a whole."
        )
    return "\n".join(lines)


def collapsed(report: str, what: str) -> str:
    """``report`` as its headline (its first paragraph that is plain text, not a heading,
    a table or a list) and the whole report in a ``<details>`` block."""
    if not report.strip():
        return report
    headline = next(
        (p.strip() for p in report.split("\n\n")
         if p.strip() and not p.lstrip().startswith(("#", "|", "-", "<", "!", ">"))),
        "",
    )  # fmt: skip
    return (
        f"{headline}\n\n" if headline else ""
    ) + f"<details>\n<summary>{what}</summary>\n\n{report.strip()}\n\n</details>"
