"""The KLUE-DP release layout (KLUE-DP v1.1, ``klue-dp-v1.1_*.tsv``), read and written,
and the errata checks of ``benchforge klue dp-check`` (issue 57).

A release file is a run of sentence blocks separated by a blank line. A block is

- one line ``## <guid>\\t<sentence>`` (``## klue-dp-v1_dev_00001_wikitree\\t...``);
- one line per word (eojeol: the sentence split at its spaces),
  ``INDEX\\tWORD_FORM\\tLEMMA\\tPOS\\tHEAD\\tDEPREL``: ``INDEX`` counts from 1,
  ``WORD_FORM`` is the word byte for byte, ``LEMMA`` its morphemes separated by spaces
  (``흘리 었 다 .``), ``POS`` their Sejong tags joined by ``+`` (``VV+EP+EF+SF``),
  ``HEAD`` the index of the word it depends on (0 for the root), ``DEPREL`` a KLUE
  label: a syntactic tag (:data:`SYNTACTIC`) optionally joined by ``_`` with a
  function tag (:data:`FUNCTIONS`): ``NP_SBJ``, ``VP_MOD``, ``VNP_CMP``.

Lines before the first block that begin with ``#`` are the file's own header (KLUE's
files end theirs with ``## 칼럼명 : INDEX<TAB>WORD_FORM...``); a ``## ...\\t...`` line
starts a block only when a word line (``1\\t...``) follows it. Line ends and a byte
order mark are kept as the file has them.

Spreadsheets (issue 51): a cell a spreadsheet would run as a formula (``=``, ``+``,
``-``, ``@``) gets a leading ``'`` when the release is written ``spreadsheet_safe``,
which the file says in its first line (:data:`SAFE_MARK`); so does a cell that already
begins with ``'`` before such a character, so that the reader takes exactly one quote
off and gets every word back byte for byte. A file without the mark (KLUE's own) is
read as it stands.

Contract: :func:`read_layout` gives a :class:`DpRelease` (header, sentences, trailing
blank line, line ends, byte order mark) with ``read(write(x)) == x``, a file read and
written again byte-identical. A structural fault (a wrong column count, an index out
of order, a head that is not a word of the sentence, a label outside the tagset, words
that do not spell the sentence, no root, two roots, a cycle) is a
:class:`DpLayoutError` naming the file and the line. :func:`errata` lists, without
stopping, what ``dp-check`` reports on any KLUE-DP file: those faults and the ones a
release can carry unnoticed (morphemes that do not rebuild their word, spreadsheet
damage, POS tags outside the Sejong tagset, a head before its word against KLUE's
head-final convention, non-projective arcs); :data:`FATAL` says which of them stop a
release.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError

# the syntactic and the function tags of KLUE-DP's labels (its guideline; the v1.1
# release uses 38 of the 63 combinations)
SYNTACTIC = ("NP", "VP", "AP", "VNP", "DP", "IP", "X", "L", "R")
FUNCTIONS = ("SBJ", "OBJ", "MOD", "AJT", "CMP", "CNJ")
LABELS = tuple(SYNTACTIC) + tuple(f"{s}_{f}" for s in SYNTACTIC for f in FUNCTIONS)
# the 21st Century Sejong project's morpheme tags (KLUE-DP's POS column)
SEJONG_POS = frozenset(
    [
        "NNG",
        "NNP",
        "NNB",
        "NP",
        "NR",
        "VV",
        "VA",
        "VX",
        "VCP",
        "VCN",
        "MM",
        "MAG",
        "MAJ",
        "IC",
        "JKS",
        "JKC",
        "JKG",
        "JKO",
        "JKB",
        "JKV",
        "JKQ",
        "JX",
        "JC",
        "EP",
        "EF",
        "EC",
        "ETN",
        "ETM",
        "XPN",
        "XSN",
        "XSV",
        "XSA",
        "XR",
        "SF",
        "SP",
        "SS",
        "SE",
        "SO",
        "SW",
        "SH",
        "SL",
        "SN",
        "NF",
        "NV",
        "NA",
    ]
)
COLUMNS = ("INDEX", "WORD_FORM", "LEMMA", "POS", "HEAD", "DEPREL")
COLUMN_LINE = "## 칼럼명 : INDEX\tWORD_FORM\tLEMMA\tPOS\tHEAD\tDEPREL"  # KLUE's own
SAFE_MARK = "## spreadsheet-safe: a cell a spreadsheet would run as a formula begins with '"
HEADER = re.compile(r"^## (?P<guid>[^\t]+)\t(?P<sentence>.*)$")
WORD_LINE = re.compile(r"^\d+\t")
# what a spreadsheet leaves in a cell it ran or converted
SHEET_ERRORS = frozenset({"#NAME?", "#VALUE!", "#REF!", "#N/A", "#DIV/0!", "#NUM!", "#NULL!"})
PERCENT = re.compile(r"^\d+(\.\d+)?%$")

# what stops a release (and ``to-trees``); the rest dp-check reports as it finds them
FATAL = frozenset({
    "columns", "index", "head", "label", "form_mismatch", "no_root", "two_roots", "cycle",
    "empty",
})  # fmt: skip
KINDS = {
    "columns": "a word line without six tab-separated columns",
    "index": "an INDEX that is not the word's position",
    "head": "a HEAD that is not 0 or a word of the sentence",
    "label": "a DEPREL outside KLUE's tagset",
    "form_mismatch": "words that do not spell the sentence",
    "spreadsheet_damage": "a cell a spreadsheet changed (#NAME?, a number made a percentage)",
    "empty": "a sentence without words",
    "no_root": "no word with HEAD 0",
    "two_roots": "more than one word with HEAD 0",
    "cycle": "heads that run in a circle",
    "pos": "a POS tag outside the Sejong tagset",
    "pos_count": "a different number of morphemes and POS tags",
    "lemma": "morphemes that do not rebuild their word",
    "head_before_word": "a head before its word (KLUE-DP is head-final)",
    "non_projective": "an arc that crosses another (reported, not fatal)",
}


class DpLayoutError(BenchforgeError, ValueError):
    """A KLUE-DP release file (or trees file) that cannot be read; names the line."""


@dataclass
class DpWord:
    """One word (eojeol) of a sentence."""

    form: str
    lemma: str  # morphemes separated by spaces
    pos: str  # their Sejong tags joined by "+"
    head: int  # 0: the root
    deprel: str

    def morphemes(self) -> list[tuple[str, str]]:
        """(morpheme, tag) pairs; the shorter list decides when the counts differ."""
        return list(zip(self.lemma.split(" "), self.pos.split("+"), strict=False))


@dataclass
class DpSentence:
    """One sentence: its guid, text and words (``text.split(" ")`` their forms)."""

    guid: str
    text: str
    words: list[DpWord] = field(default_factory=list)

    def heads(self) -> list[int]:
        return [w.head for w in self.words]

    def source(self) -> str:
        """The guid's last part (``klue-dp-v1_dev_00001_wikitree`` -> ``wikitree``)."""
        return self.guid.rsplit("_", 1)[-1]


@dataclass
class DpRelease:
    """A release file: its header lines, sentences, whether it ends with a blank line,
    its line ends and byte order mark, and whether its cells are spreadsheet-safe."""

    header: list[str]
    sentences: list[DpSentence]
    trailing_blank: bool = True
    newline: str = "\n"
    bom: bool = False
    spreadsheet_safe: bool = True


@dataclass(frozen=True)
class Problem:
    """One erratum: its kind (:data:`KINDS`), the line, the sentence's guid, a detail."""

    kind: str
    line: int
    guid: str
    detail: str

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL


# ------------------------------------------------------------------------ cells


def _formula_like(cell: str) -> bool:
    from pipelines.core.spreadsheet import safe_cell

    return safe_cell(cell) != cell


def needs_quote(cell: str) -> bool:
    """Whether a spreadsheet-safe writer puts a ``'`` before ``cell``: a formula, or a
    cell that would read back as one once its own leading quote is taken off."""
    return _formula_like(cell) or (cell.startswith("'") and needs_quote(cell[1:]))


def quote(cell: str) -> str:
    return "'" + cell if needs_quote(cell) else cell


def unquote(cell: str) -> str:
    return cell[1:] if cell.startswith("'") and needs_quote(cell[1:]) else cell


# ------------------------------------------------------------------------ checks


def _jamo(text: str) -> str:
    """Hangul as conjoining jamo (syllables decomposed, compatibility jamo such as the
    ``ㅂ`` of ``ㅂ니다`` made conjoining), everything else dropped."""
    out = []
    for ch in unicodedata.normalize("NFD", text):
        if "\u1100" <= ch <= "\u11ff":
            out.append(ch)
        elif "\u3131" <= ch <= "\u318e":
            out.append(unicodedata.normalize("NFKD", ch))
    return "".join(out)


def _hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3131" <= ch <= "\u318e"


def rebuilds(form: str, lemma: str) -> bool:
    """Whether the morphemes of ``lemma`` can be the word ``form`` (KLUE writes base
    forms: ``흘리 었 다 .`` for ``흘렸다.``, so equality is too strict). True when they
    spell it; else the characters that are not Hangul must be the same, in order, the
    word's first Hangul consonant must be the morphemes' (contraction and irregular
    verbs keep it: 해 / 하 여, 들어 / 듣 어; a copula 이 the word does not begin with
    is left out: 라니 / 이 라니), and the word may not hold more syllables than the
    morphemes (a lone jamo counts as one). A heuristic: it catches morphemes of another
    word and damaged rows, not every mistagged contraction."""
    joined = lemma.replace(" ", "")
    if joined == form:
        return True
    if lemma.startswith("이 ") and not form.startswith("이"):
        joined = joined[1:]  # the copula 이 a word after a vowel drops (라니: 이 라니)
    if [c for c in form if not _hangul(c)] != [c for c in joined if not _hangul(c)]:
        return False
    a, b = _jamo(form), _jamo(joined)
    if a and b and unicodedata.normalize("NFKD", a[0]) != unicodedata.normalize("NFKD", b[0]):
        return False
    syllables = sum("\uac00" <= c <= "\ud7a3" for c in form)
    room = sum(
        "\uac00" <= c <= "\ud7a3" or "\u3131" <= c <= "\u318e" or "\u1100" <= c <= "\u11ff"
        for c in joined
    )
    return syllables <= room


def tree_faults(heads: list[int]) -> list[str]:
    """``no_root``, ``two_roots``, ``head`` (out of range), ``cycle`` of a head list."""
    n = len(heads)
    faults = []
    roots = sum(h == 0 for h in heads)
    if roots == 0:
        faults.append("no_root")
    elif roots > 1:
        faults.append("two_roots")
    if any(not 0 <= h <= n for h in heads):
        return [*faults, "head"]
    state = [0] * (n + 1)  # 0 unseen, 1 on the current path, 2 reaches a root
    for start in range(1, n + 1):
        path, word = [], start
        while word != 0 and state[word] == 0:
            state[word] = 1
            path.append(word)
            word = heads[word - 1]
        if word != 0 and state[word] == 1:
            return [*faults, "cycle"]
        for w in path:
            state[w] = 2
    return faults


def non_projective(heads: list[int]) -> list[int]:
    """The words (1-based) whose arc crosses another arc (the root's arc counted from
    position 0)."""
    arcs = [(min(d, h), max(d, h), d) for d, h in enumerate(heads, start=1)]
    crossing = set()
    for a_lo, a_hi, a in arcs:
        for b_lo, b_hi, b in arcs:
            if a_lo < b_lo < a_hi < b_hi:
                crossing.update((a, b))
    return sorted(crossing)


def sentence_errata(s: DpSentence, line: int) -> list[Problem]:
    """What :func:`errata` reports on one parsed sentence (``line``: its ``##`` line)."""
    out: list[Problem] = []

    def add(kind: str, at: int, detail: str) -> None:
        out.append(Problem(kind, at, s.guid, detail))

    if not s.words:
        add("empty", line, "no word lines")
        return out
    spelled = s.text.split(" ")
    if spelled != [w.form for w in s.words]:
        first = next((i for i, (a, b) in enumerate(zip(spelled, [w.form for w in s.words],
                                                        strict=False)) if a != b),
                     min(len(spelled), len(s.words)))  # fmt: skip
        form = s.words[first].form if first < len(s.words) else ""
        damaged = form in SHEET_ERRORS or (PERCENT.match(form) and first < len(spelled)
                                           and not spelled[first].endswith("%"))  # fmt: skip
        add("spreadsheet_damage" if damaged else "form_mismatch", line + 1 + first,
            f"word {first + 1} is {form!r}, the sentence has "
            f"{spelled[first] if first < len(spelled) else '(nothing)'!r} "
            f"({len(s.words)} words, the sentence {len(spelled)})")  # fmt: skip
    for i, w in enumerate(s.words, start=1):
        at = line + i
        if w.deprel not in LABELS:
            add("label", at, f"DEPREL {w.deprel!r} is not KLUE's (syntactic tag {SYNTACTIC} "
                             f"with an optional _function tag {FUNCTIONS})")  # fmt: skip
        damaged = [
            c
            for c in (w.form, w.lemma)
            if c in SHEET_ERRORS or any(m in SHEET_ERRORS for m in c.split(" "))
        ]
        if damaged:
            add("spreadsheet_damage", at, f"{damaged[0]!r}: a spreadsheet's error value")
        if w.head and w.head < i:
            add("head_before_word", at, f"word {i} depends on word {w.head}, before it")
        if damaged:
            continue  # one erratum for the cell, not its morphology as well
        tags = w.pos.split("+")
        bad = sorted({t for t in tags if t not in SEJONG_POS})
        if bad:
            add("pos", at, f"POS {'+'.join(bad)} outside the Sejong tagset")
        if len(tags) != len(w.lemma.split(" ")):
            add("pos_count", at, f"{len(w.lemma.split(' '))} morphemes ({w.lemma!r}) but "
                                 f"{len(tags)} POS tags ({w.pos!r})")  # fmt: skip
        elif not rebuilds(w.form, w.lemma):
            add("lemma", at, f"morphemes {w.lemma!r} do not rebuild {w.form!r}")
    heads = s.heads()
    for fault in tree_faults(heads):
        add(fault, line, {"no_root": "no word has HEAD 0",
                          "two_roots": f"words {[i for i, h in enumerate(heads, 1) if h == 0]} "
                                       "have HEAD 0",
                          "head": f"a HEAD outside 0..{len(heads)}",
                          "cycle": "the heads run in a circle"}[fault])  # fmt: skip
    if not tree_faults(heads):
        crossing = non_projective(heads)
        if crossing:
            add("non_projective", line, f"words {crossing} have crossing arcs")
    return out


# ------------------------------------------------------------------------ reading


def _newline(text: str, where: str) -> str:
    from pipelines.families.klue.line_ends import line_ends

    return line_ends(text, where, DpLayoutError)


def _starts_block(lines: list[str], n: int) -> bool:
    return (
        bool(HEADER.match(lines[n])) and n + 1 < len(lines) and bool(WORD_LINE.match(lines[n + 1]))
    )


def parse(text: str, where: str = "<text>") -> tuple[DpRelease, list[Problem]]:
    """The release in ``text`` and every erratum in it (nothing raised but a line that
    is neither a header, a sentence nor a word line, or mixed line ends). A word line
    without six columns is reported and left out of its sentence."""
    bom = text.startswith("\ufeff")
    text = text.removeprefix("\ufeff")
    newline = _newline(text, where)
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    trailing_blank = text.endswith("\n\n")
    n = 0
    while n < len(lines) and lines[n].startswith("#") and not _starts_block(lines, n):
        n += 1
    end = n
    while end < len(lines) and lines[end] == "":
        end += 1
    if n and end < len(lines) and _starts_block(lines, end):
        n = end  # the blank lines between the header and the first sentence
    header_end = n
    header = lines[:header_end]
    safe = header[:1] == [SAFE_MARK]
    header = header[1:] if safe else header
    cell = unquote if safe else (lambda c: c)
    n = header_end
    sentences: list[DpSentence] = []
    problems: list[Problem] = []
    while n < len(lines):
        if lines[n] == "":
            n += 1
            continue
        head = HEADER.match(lines[n])
        if not head:
            raise DpLayoutError(f"{where}:{n + 1}: expected '## <guid>\\t<sentence>', got "
                                f"{lines[n][:60]!r}")  # fmt: skip
        start = n + 1
        s = DpSentence(head["guid"], cell(head["sentence"]))
        n += 1
        while n < len(lines) and lines[n] != "":
            cols = lines[n].split("\t")
            if len(cols) != len(COLUMNS):
                problems.append(Problem("columns", n + 1, s.guid,
                                        f"{len(cols)} tab-separated columns, not 6 "
                                        f"({' '.join(COLUMNS)})"))  # fmt: skip
                n += 1
                continue
            index, form, lemma, pos, head_cell, deprel = cols
            if index != str(len(s.words) + 1):
                problems.append(Problem("index", n + 1, s.guid, f"INDEX {index!r}, expected "
                                        f"{len(s.words) + 1}"))  # fmt: skip
            try:
                h = int(head_cell)
            except ValueError:
                h = -1
            s.words.append(DpWord(cell(form), cell(lemma), pos, h, deprel))
            n += 1
        problems += sentence_errata(s, start)
        sentences.append(s)
    return DpRelease(header, sentences, trailing_blank, newline, bom, safe), problems


def read_layout(text: str, where: str = "<text>") -> DpRelease:
    """The release in ``text``; its first fatal erratum (:data:`FATAL`) raised as a
    :class:`DpLayoutError` naming ``where`` and the line."""
    release, problems = parse(text, where)
    for p in problems:
        if p.fatal:
            raise DpLayoutError(f"{where}:{p.line}: {p.guid}: {p.detail}")
    return release


def read_file(path: Path) -> DpRelease:
    """The release file at ``path`` (bytes that are not UTF-8: an error naming the line)."""
    from pipelines.core.io import read_text

    return read_layout(read_text(path), str(path))


def errata(path: Path) -> tuple[DpRelease, list[Problem]]:
    """Every erratum of the KLUE-DP file at ``path`` (:func:`parse`)."""
    from pipelines.core.io import read_text

    return parse(read_text(path), str(path))


def errata_counts(problems: list[Problem]) -> dict[str, int]:
    """Problems per kind, in :data:`KINDS`'s order, kinds found only."""
    counts = Counter(p.kind for p in problems)
    return {k: counts[k] for k in KINDS if counts[k]}


# ------------------------------------------------------------------------ writing


def write_layout(release: DpRelease) -> str:
    """The release file's text; every sentence is checked first (a fatal erratum is a
    :class:`DpLayoutError`). With ``release.spreadsheet_safe`` the header carries
    :data:`SAFE_MARK` and formula-like cells are quoted (module docstring)."""
    cell = quote if release.spreadsheet_safe else (lambda c: c)
    header = ([SAFE_MARK] if release.spreadsheet_safe else []) + release.header
    blocks = []
    for s in release.sentences:
        if any(c in s.text + s.guid for c in "\t\n\r"):
            raise DpLayoutError(f"{s.guid}: a guid or sentence holds a tab or a line break")
        for p in sentence_errata(s, 0):
            if p.fatal:
                raise DpLayoutError(f"{s.guid}: {p.detail}")
        lines = [f"## {s.guid}\t{cell(s.text)}"]
        lines += [f"{i}\t{cell(w.form)}\t{cell(w.lemma)}\t{w.pos}\t{w.head}\t{w.deprel}"
                  for i, w in enumerate(s.words, start=1)]  # fmt: skip
        blocks.append("\n".join(lines))
    head = "".join(f"{h}\n" for h in header)
    text = head + "\n\n".join(blocks) + ("\n\n" if release.trailing_blank else "\n")
    return ("\ufeff" if release.bom else "") + text.replace("\n", release.newline)


# ------------------------------------------------------------------------ trees file


def to_trees(release: DpRelease) -> str:
    """The release as JSON Lines: a first line with the file's layout (header, line
    ends, ...), then one object per sentence: ``guid``, ``text`` and ``words`` (form,
    lemma, pos, head, deprel)."""
    import json

    meta = {"klue_dp_layout": {"header": release.header,
                               "trailing_blank": release.trailing_blank,
                               "newline": release.newline, "bom": release.bom,
                               "spreadsheet_safe": release.spreadsheet_safe}}  # fmt: skip
    rows = [meta] + [{"guid": s.guid, "text": s.text,
                      "words": [{"form": w.form, "lemma": w.lemma, "pos": w.pos,
                                 "head": w.head, "deprel": w.deprel} for w in s.words]}
                     for s in release.sentences]  # fmt: skip
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def from_trees(text: str, where: str = "<trees>") -> DpRelease:
    """The release of a trees file (:func:`to_trees`'s layout; the first line is
    optional); each sentence checked as the writer does, errors naming the line."""
    import json

    layout: dict = {}
    sentences = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DpLayoutError(f"{where}:{n}: not JSON ({exc.msg})") from None
        if isinstance(row, dict) and "klue_dp_layout" in row:
            layout = row["klue_dp_layout"] if isinstance(row["klue_dp_layout"], dict) else {}
            header = layout.get("header", [])
            if (
                layout.get("newline", "\n") not in ("\n", "\r\n")
                or not isinstance(header, list)
                or any(not isinstance(h, str) or "\n" in h or "\r" in h for h in header)
            ):
                raise DpLayoutError(
                    f"{where}:{n}: the layout's newline must be LF or CRLF "
                    "and its header a list of lines without line breaks"
                )
            continue
        try:
            s = DpSentence(
                str(row["guid"]),
                str(row["text"]),
                [
                    DpWord(
                        str(w["form"]),
                        str(w["lemma"]),
                        str(w["pos"]),
                        int(w["head"]),
                        str(w["deprel"]),
                    )
                    for w in row["words"]
                ],
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise DpLayoutError(f"{where}:{n}: expected guid, text and words with form, "
                                f"lemma, pos, head and deprel ({exc!r})") from None  # fmt: skip
        for p in sentence_errata(s, n):
            if p.fatal:
                raise DpLayoutError(f"{where}:{n}: {s.guid}: {p.detail}")
        sentences.append(s)
    return DpRelease(list(layout.get("header", [])), sentences,
                     bool(layout.get("trailing_blank", True)), layout.get("newline", "\n"),
                     bool(layout.get("bom", False)),
                     bool(layout.get("spreadsheet_safe", True)))  # fmt: skip
