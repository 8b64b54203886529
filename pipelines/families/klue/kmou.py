"""The KMOU NER corpus as character spans over KLUE's six types (issue 36, item 2: the
corpus KLUE 3.4.1 trained its pseudo-labeller on).

The 2016 release (``kmou-ner/ner.{train,dev,test}``) is a run of sentence blocks
separated by a blank line: a ``; <raw sentence>`` line, a ``$<sentence with inline
<entity:TYPE> tags>`` line, then one morpheme a line. The inline line carries the
character spans; the raw line is its text without the tags.

Contract (:func:`read_kmou`): one row per sentence (``sentence_id``, ``text``,
``entities``: a list of ``{start, end, label, text}`` with ``end`` exclusive and the
label mapped to KLUE's types by ``mapping``), and one dropped row per sentence that
cannot be used, with its reason: ``text_mismatch`` (the inline line without its tags is
not the raw line), ``no_inline_line``. An entity whose type the mapping sends to None
is left out (counted per type). Rows in = kept + dropped. Files may use CRLF line ends
and may be gzipped (``.gz``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, read_text
from pipelines.core.stage import value_counts

if TYPE_CHECKING:
    from pipelines.models.char_tagger import TaggerSettings


class KmouError(BenchforgeError, ValueError):
    """A KMOU-format file that cannot be used; the message names the file (and line)."""


# KMOU types -> KLUE's six (KLUE 3.4.1: PS, LC, OG, DT, TI, QT). The 2016 release has
# PS, LC, OG, DT, TI; the later one's ten types map by meaning (POH, "other proper
# noun", has no KLUE type).
KLUE_MAPPING: dict[str, str | None] = {
    "PS": "PS", "LC": "LC", "OG": "OG", "DT": "DT", "TI": "TI", "QT": "QT",
    "PER": "PS", "LOC": "LC", "ORG": "OG", "DAT": "DT", "TIM": "TI",
    "DUR": "QT", "MNY": "QT", "PNT": "QT", "NOH": "QT", "POH": None,
}  # fmt: skip

INLINE = re.compile(r"<([^<>]+?):([A-Z]+)>")


def parse_inline(tagged: str) -> tuple[str, list[tuple[int, int, str]]]:
    """The plain text of an inline-tagged sentence and its spans ``(start, end, TYPE)``."""
    out, spans, at = [], [], 0
    length = 0
    for match in INLINE.finditer(tagged):
        before = tagged[at : match.start()]
        out.append(before)
        length += len(before)
        word = match.group(1)
        spans.append((length, length + len(word), match.group(2)))
        out.append(word)
        length += len(word)
        at = match.end()
    out.append(tagged[at:])
    return "".join(out), spans


def read_kmou(
    path: Path, mapping: dict[str, str | None] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, int]]:
    """(sentences, dropped sentences with their reason, entities left out per type) of a
    KMOU 2016-release file; see the module docstring."""
    mapping = KLUE_MAPPING if mapping is None else mapping
    try:  # gzipped or not; undecodable bytes name the line (issue 51)
        text = read_text(path).replace("\r\n", "\n")
    except TextFileError as exc:
        raise KmouError(str(exc)) from None
    kept, dropped, unmapped = [], [], {}
    for n, block in enumerate(b for b in text.split("\n\n") if b.strip()):
        lines = block.strip("\n").split("\n")
        sid = f"{path.name}-{n:05d}"
        raw = next((x[2:] if x.startswith("; ") else x[1:] for x in lines if x.startswith(";")),
                   None)  # fmt: skip
        inline = next((x[1:] for x in lines if x.startswith("$")), None)
        if inline is None:
            dropped.append(
                {"sentence_id": sid, "reason": "no_inline_line", "detail": lines[0][:80]}
            )
            continue
        plain, spans = parse_inline(inline)
        if raw is not None and plain.strip() != raw.strip():
            dropped.append({"sentence_id": sid, "reason": "text_mismatch",
                            "detail": f"raw {raw[:40]!r} vs inline {plain[:40]!r}"})  # fmt: skip
            continue
        entities = []
        for start, end, kind in spans:
            label = mapping.get(kind)
            if label is None:
                unmapped[kind] = unmapped.get(kind, 0) + 1
                continue
            entities.append({"start": start, "end": end, "label": label,
                             "text": plain[start:end]})  # fmt: skip
        kept.append({"sentence_id": sid, "text": plain, "entities": entities,
                     "source": "kmou-ner"})  # fmt: skip
    return (
        pd.DataFrame(kept, columns=["sentence_id", "text", "entities", "source"]),
        pd.DataFrame(dropped, columns=["sentence_id", "reason", "detail"]),
        dict(sorted(unmapped.items())),
    )


def check_kmou(path: Path, mapping: dict[str, str | None] | None, where: str) -> None:
    """Before any work: ``path`` reads as a KMOU file (:func:`read_kmou`) and has at
    least one usable sentence; a :class:`KmouError` names the setting ``where`` and the
    file otherwise (issue 51: a bad file failed after the other tagger's training)."""
    try:
        kept, dropped, _ = read_kmou(path, mapping)
    except KmouError as exc:
        raise KmouError(f"{where}: {exc}") from None
    if kept.empty:
        why = value_counts(dropped["reason"]) if len(dropped) else "no sentence blocks"
        raise KmouError(f"{where}: {path}: no usable sentence in the KMOU layout "
                        f"('; raw' and '$<inline:TYPE>' lines); dropped: {why}")  # fmt: skip


def training_pairs(frame: pd.DataFrame) -> list[tuple[str, list[tuple[int, int, str]]]]:
    """``(text, spans)`` per sentence of :func:`read_kmou`'s frame: what the character
    tagger (:mod:`pipelines.models.char_tagger`) trains on."""
    return [(t, [(int(e["start"]), int(e["end"]), str(e["label"])) for e in es])
            for t, es in zip(frame["text"], frame["entities"], strict=True)]  # fmt: skip


def train_on_kmou(
    train: Path,
    dev: Path,
    mapping: dict[str, str | None],
    limit: int | None,
    settings: TaggerSettings,
    folder: Path,
    sources: dict,
    types: Sequence[str],
) -> tuple[dict, dict]:
    """Train (or reuse, or resume) a character tagger in ``folder`` on KMOU-format
    ``train`` (its first ``limit`` sentences) and ``dev``, types mapped by ``mapping``:
    (its metrics, what the reading left out: entities per unmapped type, dropped
    sentences per reason and file)."""
    from pipelines.models.char_tagger import train_tagger

    train_frame, train_drop, unmapped = read_kmou(train, mapping)
    dev_frame, dev_drop, _ = read_kmou(dev, mapping)
    if limit:
        train_frame = train_frame.head(limit)
    metrics = train_tagger(training_pairs(train_frame), training_pairs(dev_frame), settings,
                           folder, sources, types)  # fmt: skip
    read = {"unmapped_entities": unmapped,
            "dropped_sentences": {"train": value_counts(train_drop["reason"]),
                                  "dev": value_counts(dev_drop["reason"])}}  # fmt: skip
    return metrics, read
