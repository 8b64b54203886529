"""The KLUE-NER release layout (KLUE 3.4; ``klue-ner-v1.1_*.tsv``), read and written
(issue 36, item 6).

A release file is a run of sentence blocks separated by a blank line. A block is

- one header line ``## <guid>\\t<inline-tagged sentence>``, where an entity is written
  ``<text:TYPE>`` in the sentence (``특히 <영동고속도로:LC> 방향``);
- one line per character of the sentence, ``<char>\\t<tag>``, with BIO tags over KLUE's
  six types (``B-PS``, ``I-PS``, ..., ``O``); a space is a character too (a line
  beginning with a space).

Lines before the first block that begin with ``#`` (a file's own comments) are kept as
the header, with any blank lines between them and the first block. A header line may
hold a tab: KLUE's own v1.1 files end their header with ``## 칼럼명 : CHAR<TAB>NE_TAG``; a
``## <guid>\\t<sentence>`` line starts a block only when a ``<char>\\t<tag>`` line
follows it (or it is an empty sentence). Line ends are kept: a file with CRLF line ends
(or a byte order mark) is written back with them; a file that mixes CRLF and LF line ends
is refused, naming the first line that differs.

Spreadsheets: the tagged sentence is the one cell of free text, and a sentence that
begins with ``=``, ``+``, ``-`` or ``@`` would run as a formula when the file is opened in
a spreadsheet; with ``spreadsheet_safe`` (the recipe's ``export.spreadsheet_safe``, on
by default) the writer puts a ``'`` before it (``pipelines.core.spreadsheet.safe_cell``),
and the reader takes it off again (the character lines say what the sentence is), so a
file keeps its quotes or their absence when read and written back. The character cells
(one character each) run nothing and are left alone.

Contract: :func:`read_layout` gives the header, one :class:`NerSentence` per block
(guid, plain text, entities as ``(start, end, label)`` character offsets, ``end``
exclusive) and whether the file ends with a blank line; :func:`write_layout`
gives the text back, so that ``read(write(x)) == x`` and a file read and written again
is byte-identical. A malformed block (a tag that is not BIO over the six types, an
``I-`` that continues nothing, characters that do not spell the header's sentence, a
header whose inline tags disagree with the character tags) is a
:class:`NerLayoutError` naming the file and the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.families.klue.line_ends import line_ends
from pipelines.models.char_tagger import TYPES, bio_tags

HEADER = re.compile(r"^## (?P<guid>[^\t]+)\t(?P<tagged>.*)$")
CHAR_LINE = re.compile(r"^.\t[^\t]*$")


class NerLayoutError(BenchforgeError, ValueError):
    """A KLUE-NER release file (or spans file) that cannot be read; names the line."""


@dataclass
class NerSentence:
    """One sentence: its guid, plain text and entities ``(start, end, label)``."""

    guid: str
    text: str
    entities: list[tuple[int, int, str]] = field(default_factory=list)

    def check(self, where: str) -> None:
        """Spans inside the text, of a known type, not overlapping (KLUE-NER is flat)."""
        last = 0
        for start, end, label in sorted(self.entities):
            if label not in TYPES:
                raise NerLayoutError(f"{where}: unknown entity type {label!r} (KLUE: {TYPES})")
            if not 0 <= start < end <= len(self.text):
                raise NerLayoutError(f"{where}: span {start}-{end} is outside the text "
                                     f"({len(self.text)} characters)")  # fmt: skip
            if start < last:
                raise NerLayoutError(f"{where}: span {start}-{end} overlaps another")
            last = end

    def tagged(self) -> str:
        """The sentence with its entities inline: ``<text:TYPE>``."""
        out, at = [], 0
        for start, end, label in sorted(self.entities):
            out += [self.text[at:start], f"<{self.text[start:end]}:{label}>"]
            at = end
        return "".join([*out, self.text[at:]])

    def tags(self) -> list[str]:
        """One BIO tag per character."""
        return bio_tags(len(self.text), self.entities)

    def to_json(self) -> dict:
        return {"guid": self.guid, "text": self.text,
                "entities": [{"start": s, "end": e, "label": lab, "text": self.text[s:e]}
                             for s, e, lab in sorted(self.entities)]}  # fmt: skip


@dataclass
class NerRelease:
    """A release file: its own header lines, the sentences, and whether it ends with a
    blank line."""

    header: list[str]
    sentences: list[NerSentence]
    trailing_blank: bool = True
    # "\r\n" for a file with CRLF line ends; whether it begins with a byte order mark
    newline: str = "\n"
    bom: bool = False
    # a tagged sentence that a spreadsheet would run as a formula is written with a
    # leading "'" (the reader says whether the file's were); not part of the content
    spreadsheet_safe: bool = field(default=True, compare=False)


def _entities(tags: list[str], where: str, first_line: int) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    open_at, open_label = None, None
    for i, tag in enumerate([*tags, "O"]):
        inside = tag.startswith("I-")
        if open_label is not None and not (inside and tag[2:] == open_label):
            spans.append((open_at, i, open_label))
            open_at = open_label = None
        if tag == "O":
            continue
        kind, _, label = tag.partition("-")
        if kind not in ("B", "I") or label not in TYPES:
            raise NerLayoutError(f"{where}:{first_line + i}: tag {tag!r} is not BIO over {TYPES}")
        if kind == "I" and open_label is None:
            raise NerLayoutError(f"{where}:{first_line + i}: {tag} continues no entity")
        if kind == "B":
            open_at, open_label = i, label
    return spans


def _newline(text: str, where: str) -> str:
    return line_ends(text, where, NerLayoutError)


def _starts_block(lines: list[str], n: int) -> bool:
    """Whether line ``n`` is a sentence's ``## <guid>\t<sentence>`` line: a character
    line follows it, or it is an empty sentence followed by a blank line."""
    head = HEADER.match(lines[n])
    if not head:
        return False
    after = lines[n + 1] if n + 1 < len(lines) else ""
    return bool(CHAR_LINE.match(after)) or (after == "" and head["tagged"] == "")


def _header(lines: list[str]) -> list[str]:
    """The file's own lines before its first sentence (module docstring)."""
    n = 0
    while n < len(lines) and lines[n].startswith("#") and not _starts_block(lines, n):
        n += 1
    blank = n
    while n and blank < len(lines) and lines[blank] == "":
        blank += 1
    if n and blank < len(lines) and _starts_block(lines, blank):
        n = blank  # the blank lines between the header and the first sentence
    return lines[:n]


def read_layout(text: str, where: str = "<text>") -> NerRelease:
    """The release in ``text`` (``where`` names it in errors); see the module docstring."""
    from pipelines.core.spreadsheet import safe_cell

    bom = text.startswith("\ufeff")
    text = text.removeprefix("\ufeff")
    newline = _newline(text, where)
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    trailing_blank = text.endswith("\n\n")
    header = _header(lines)
    n = len(header)
    quoted: dict[bool, int] = {}  # whether a formula-like sentence was quoted -> its line
    sentences: list[NerSentence] = []
    while n < len(lines):
        if lines[n] == "":
            n += 1
            continue
        head = HEADER.match(lines[n])
        if not head:
            raise NerLayoutError(f"{where}:{n + 1}: expected '## <guid>\\t<sentence>', got "
                                 f"{lines[n][:60]!r}")  # fmt: skip
        first = n + 2
        n += 1
        chars, tags = [], []
        while n < len(lines) and lines[n] != "":
            char, tab, tag = lines[n].rpartition("\t")
            if not tab or len(char) != 1:
                raise NerLayoutError(f"{where}:{n + 1}: expected '<one character>\\t<tag>', got "
                                     f"{lines[n][:60]!r}")  # fmt: skip
            chars.append(char)
            tags.append(tag)
            n += 1
        sentence = NerSentence(head["guid"], "".join(chars), _entities(tags, where, first))
        tagged = sentence.tagged()
        if safe_cell(tagged) != tagged and head["tagged"] in (tagged, safe_cell(tagged)):
            quoted.setdefault(head["tagged"] != tagged, first - 1)
        elif tagged != head["tagged"]:
            raise NerLayoutError(
                f"{where}:{first - 1}: the header's tagged sentence does not match its "
                f"character tags (header {head['tagged'][:60]!r}, tags give "
                f"{sentence.tagged()[:60]!r})"
            )
        sentences.append(sentence)
    if len(quoted) == 2:
        later = max(quoted, key=quoted.__getitem__)  # whether the later one is quoted
        raise NerLayoutError(
            f"{where}:{quoted[later]}: this sentence is {'' if later else 'not '}quoted "
            f"against spreadsheet formulas (a leading ') but line {quoted[not later]}'s is"
            f"{'' if not later else ' not'}; a file quotes all such sentences or none"
        )
    safe = quoted.get(False) is None  # no unquoted formula-like sentence
    return NerRelease(header, sentences, trailing_blank, newline, bom, safe)


def write_layout(release: NerRelease) -> str:
    """The release file's text (see the module docstring): the tagged sentence through
    :func:`~pipelines.core.spreadsheet.safe_cell` when ``release.spreadsheet_safe``,
    the release's line ends and byte order mark."""
    from pipelines.core.spreadsheet import safe_cell

    blocks = []
    for s in release.sentences:
        s.check(s.guid)
        tagged = safe_cell(s.tagged()) if release.spreadsheet_safe else s.tagged()
        lines = [f"## {s.guid}\t{tagged}"]
        lines += [f"{c}\t{t}" for c, t in zip(s.text, s.tags(), strict=True)]
        blocks.append("\n".join(lines))
    body = "\n\n".join(blocks)
    head = "".join(f"{h}\n" for h in release.header)
    text = head + body + ("\n\n" if release.trailing_blank else "\n")
    return ("\ufeff" if release.bom else "") + text.replace("\n", release.newline)


def to_spans(release: NerRelease) -> str:
    """The release as JSON Lines: a first line with the file's header, then one object
    per sentence (``guid``, ``text``, ``entities`` with start, end, label, text)."""
    meta = {"klue_ner_layout": {"header": release.header,
                                "trailing_blank": release.trailing_blank,
                                "newline": release.newline, "bom": release.bom,
                                "spreadsheet_safe": release.spreadsheet_safe}}  # fmt: skip
    rows = [meta, *[s.to_json() for s in release.sentences]]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def from_spans(text: str, where: str = "<spans>") -> NerRelease:
    """The release of a spans file (:func:`to_spans`'s layout; the first line's header is
    optional). Each entity is checked (inside its text, a KLUE type, no overlap, its
    ``text`` the characters it covers)."""
    header, trailing, sentences, layout = [], True, [], {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise NerLayoutError(f"{where}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise NerLayoutError(f"{where}:{n}: expected a JSON object, got {line[:60]!r}")
        if "klue_ner_layout" in row:
            layout = row["klue_ner_layout"]
            layout = layout if isinstance(layout, dict) else {"newline": None}
            header = layout.get("header", [])
            trailing = bool(layout.get("trailing_blank", True))
            if (
                layout.get("newline", "\n") not in ("\n", "\r\n")
                or not isinstance(header, list)
                or any(not isinstance(h, str) or "\n" in h or "\r" in h for h in header)
            ):
                raise NerLayoutError(f"{where}:{n}: the layout's newline must be LF or CRLF "
                                     "and its header a list of lines, none with a line "
                                     "break")  # fmt: skip
            continue
        try:
            sentence = NerSentence(str(row["guid"]), str(row["text"]),
                                   [(int(e["start"]), int(e["end"]), str(e["label"]))
                                    for e in row.get("entities", [])])  # fmt: skip
        except (KeyError, TypeError, ValueError) as exc:
            raise NerLayoutError(f"{where}:{n}: expected guid, text and entities ({exc})") from None
        sentence.check(f"{where}:{n}")
        for e in row.get("entities", []):
            covered = sentence.text[int(e["start"]) : int(e["end"])]
            if "text" in e and e["text"] != covered:
                raise NerLayoutError(f"{where}:{n}: entity text {e['text']!r} is not the "
                                     f"characters it covers ({covered!r})")  # fmt: skip
        if any(c in sentence.text + sentence.guid for c in "\t\n\r"):
            raise NerLayoutError(f"{where}:{n}: a guid or sentence holds a tab or a line break")
        sentences.append(sentence)
    return NerRelease(header, sentences, trailing, layout.get("newline", "\n"),
                      bool(layout.get("bom", False)),
                      bool(layout.get("spreadsheet_safe", True)))  # fmt: skip


def read_file(path: Path) -> NerRelease:
    """The release file at ``path``, its bytes as they are (line ends, byte order mark);
    bytes that are not UTF-8 are an error naming the line."""
    from pipelines.core.io import read_text

    return read_layout(read_text(path), str(path))
