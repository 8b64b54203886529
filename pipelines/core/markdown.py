"""Markdown for reports a person reads (data cards, artifact reports): tables, and
settings written as readable tables instead of JSON or Python reprs.

Text from corpora and recipes is data, never markup (issues 32 and 51): this module is
the one renderer of data into Markdown. :func:`escape` turns text into Markdown that
renders as the same characters and cannot open a tag, a link, an image, emphasis, a
strikethrough or a code span, nor shift a table's columns; :func:`code` shows text in a
code span whatever backquotes or pipes it holds (a backslash does not escape inside a
code span, so escaped text there could close the span: issue 51's
``a`<img src=x onerror=...>`` entity); :func:`cell` and :func:`table` escape every value
that is not marked as :class:`Markdown` (text the code itself wrote). A last pass,
:func:`neutralize`, runs over a whole report before it is written: any raw HTML tag but the
``<details>``/``<summary>`` the code writes, and any link whose scheme is not http, https
or mailto, is defused there too, whatever its origin; it finds code spans as CommonMark
does (runs of equal length, no escapes inside, none across a block), and defuses even
inside them what would be a live tag were the span read otherwise.
``tests/unit/core/test_hostile_text.py`` renders hostile strings through CommonMark
(markdown-it, raw HTML on, as the Hub does) and Python-Markdown and checks that no
element, attribute or column comes from the data."""

from __future__ import annotations

import html
import re

# the characters that make Markdown out of text: backslash escapes (CommonMark and
# Python-Markdown both honour them for these) and HTML entities for <, > and &
_BACKSLASHED = re.compile(r"([\\`\[\]*])")
# "_" opens emphasis only at a word's edge ("min_chars" stays as it is); "|" and "~" as
# character references: a table splits on neither, and Python-Markdown, which renders
# the HTML card, honours no backslash before them outside a table
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
_REFERENCES = {"|": "&#124;", "~": "&#126;"}
# a line of text must not start a block: a heading, a quote, a list, a rule, a fence
_LINE_START = re.compile(r"^(?:[#>+=-]|\d+[.)])")
_TAG = re.compile(r"<(?!(?:/?(?:details|summary))>)(?=[A-Za-z/!?])")
# inside a code span: what would run were the span not one (a tag with attributes, a
# known active element, a comment or processing instruction)
_LIVE_TAG = re.compile(
    r"<(?=/?(?:script|style|iframe|frame|object|embed|svg|math|img|image|video|audio|"
    r"source|link|meta|base|form|input|button|textarea|select|a|details|template)\b"
    r"|[A-Za-z][\w-]*[\s/]|[!?])",
    re.I,
)
_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)")
_REF_DEFINITION = re.compile(r"^( {0,3})\[([^\]\n]*)\]:", re.M)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BLOCK_START = re.compile(r"^ {0,3}(?:\||#|>|[-+*] |\d+[.)] |<details|<summary|</details)")
SAFE_SCHEMES = ("http", "https", "mailto")
ZWSP = "\u200b"  # a zero-width space: "<" + it is no tag in code or text, and shows as "<"


class Markdown(str):
    """Markdown the code wrote (a code span, a bold word): :func:`cell` and :func:`table`
    pass it through as it is. Everything else they are given is escaped as data."""


def _placeholders_out(text: str) -> str:
    """``text`` with STX and ETX (U+0002, U+0003) shown as U+FFFD: Python-Markdown marks
    its own placeholders with them, so data holding one could end a code span early and
    let ``*`` make emphasis (hypothesis drew "`\x03`*`*"); they print as nothing."""
    return text.replace("\x02", "\ufffd").replace("\x03", "\ufffd")


def escape(text: object, lines: bool = False) -> str:
    """``text`` (corpus or recipe text) as Markdown that shows exactly these characters:
    ``<``, ``>`` and ``&`` as entities, backslash, backquote, brackets, ``*`` and an
    ``_`` at a word's edge backslash-escaped, ``|`` and ``~`` as character references;
    line breaks become spaces unless ``lines`` (a paragraph of the recipe's, such as its
    description), where each line's leading blanks are dropped and a line that would
    start a block (``#``, ``>``, ``-``, ``+``, ``=``, ``1.``) has that character escaped."""
    out = html.escape(_placeholders_out(str(text)), quote=False)
    out = _BACKSLASHED.sub(r"\\\1", out)
    out = _UNDERSCORE.sub(r"\\_", out)
    out = "".join(_REFERENCES.get(ch, ch) for ch in out)
    if not lines:
        return out.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    rows = out.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_LINE_START.sub(_unblock, row.lstrip()) for row in rows)


def _unblock(match: re.Match) -> str:
    """The start of a line that would open a block, as text: ``\\#``, ``1&#46;``."""
    lead = match.group(0)
    if lead[-1] in "=.)":  # Python-Markdown honours no backslash before these
        return f"{lead[:-1]}&#{ord(lead[-1])};"
    return "\\" + lead


def code(text: object, table: bool = False) -> Markdown:
    """``text`` in a code span that shows exactly its characters (line breaks as spaces):
    the span's backquotes outnumber any run of backquotes in it, and a space pads a text
    that starts or ends with a backquote or a space (empty text gives an empty string,
    no span). Nothing is escaped inside a code
    span, save, with ``table`` (a code span in a table cell), ``|`` as ``\\|``, which a
    GFM table reads as a pipe inside its cell."""
    body = " ".join(_placeholders_out(str(text)).replace("\r\n", "\n").replace("\r", "\n")
                    .split("\n"))  # fmt: skip
    if table:
        body = body.replace("|", "\\|")
    if not body:
        return Markdown("")
    runs = (len(r) for r in re.findall(r"`+", body))
    fence = "`" * (1 + max(runs, default=0))
    if body.strip(" ") and (body[0] in "` " or body[-1] in "` "):
        body = f" {body} "  # CommonMark takes one space off each end (not of all-space text)
    return Markdown(f"{fence}{body}{fence}")


def docstring(text: str, table: bool = False) -> Markdown:
    """A docstring's sentence (a rule's description on a card) as Markdown: its
    reStructuredText literals (````name````) as code spans, the rest escaped (issue 54:
    the KoBEST card showed the double backquotes)."""
    parts = re.split(r"``(.+?)``", str(text))
    return Markdown("".join(code(p, table) if k % 2 else escape(p) for k, p in enumerate(parts)))


def code_block(text: str, info: str = "") -> list[str]:
    """``text`` as the lines of a fenced code block whose fence is longer than any run of
    backquotes in it, so that corpus text cannot close the block early."""
    runs = (len(r) for r in re.findall(r"`+", text))
    fence = "`" * max(3, 1 + max(runs, default=0))
    return [f"{fence}{info}", text, fence]


def neutralize(markdown: str) -> str:
    """Defuse what no report the code writes holds, wherever it came from: a raw HTML tag
    (``<script>``, ``<svg onload=...>``; ``<details>`` and ``<summary>`` without
    attributes stay), a link or image whose destination has a scheme other than http,
    https or mailto (``javascript:``, ``data:``, ``vbscript:``, also written with
    entities) and a link reference definition of such a scheme. In a code span (found
    as CommonMark finds them, :func:`code_spans`) and a fenced code block only what
    would be a live tag or link, were it no code, gets a zero-width space after its
    ``<`` (or ``]``): a path such as ``baseline/<split>.jsonl`` stays as it is. A fenced
    block is defused too, since a renderer without fenced code blocks (Python-Markdown
    without its ``fenced_code`` extension) reads a line opening with three backquotes
    as text, its tags live."""
    out: list[str] = []
    for block, fenced in _blocks(markdown):
        if fenced:
            out.append(_defuse_code(block))
            continue
        last = 0
        for start, end in code_spans(block):
            out.append(_defuse(block[last:start]))
            out.append(_defuse_code(block[start:end]))
            last = end
        out.append(_defuse(block[last:]))
    return "".join(out)


_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _blocks(markdown: str) -> list[tuple[str, bool]]:
    """``markdown`` cut into the stretches inline parsing sees one at a time: a fenced
    code block (True), or lines no blank line, table row, heading, quote, list item or
    fence divides (False). Joined, they are ``markdown``. Where this cut differs from a
    renderer's, :func:`neutralize` stays safe: inside what it takes for a code span it
    still defuses what would be live outside one."""
    out: list[tuple[str, bool]] = []
    fence = ""
    # Markdown's line endings only: str.splitlines also cuts at a form feed, a vertical
    # tab, U+0085, U+2028 ..., which would split a code span holding one in two
    for line in _LINES.findall(markdown):
        mark = _FENCE.match(line)
        if fence:
            out[-1] = (out[-1][0] + line, True)
            run = mark.group(1) if mark else ""
            if run[:1] == fence[0] and len(run) >= len(fence) and not line.strip(f" \n{run[0]}"):
                fence = ""
            continue
        if mark and not (mark.group(1)[0] == "`" and "`" in line.strip()[len(mark.group(1)) :]):
            fence = mark.group(1)
            out.append((line, True))
            continue
        last = out[-1][0].rstrip("\n").rsplit("\n", 1)[-1] if out else ""
        joins = (
            out
            and not out[-1][1]
            and line.strip()
            and last.strip()
            and not _BLOCK_START.match(line)
            and not last.lstrip().startswith(("|", "#"))
        )
        if joins:
            out[-1] = (out[-1][0] + line, False)
        else:
            out.append((line, False))
    return out


def code_spans(text: str) -> list[tuple[int, int]]:
    """The code spans of ``text`` (one stretch of inline text) as ``(start, end)``
    offsets, backquotes included, found as CommonMark finds them: outside a span a
    backslash escapes the next character; a run of n backquotes opens a span that the
    next run of exactly n backquotes closes (no escape inside); a run never closed is
    text."""
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch != "`":
            i += 1
            continue
        j = i
        while j < n and text[j] == "`":
            j += 1
        run = j - i
        k = j
        close = -1
        while k < n:
            if text[k] != "`":
                k += 1
                continue
            m = k
            while m < n and text[m] == "`":
                m += 1
            if m - k == run:
                close = m
                break
            k = m
        if close < 0:
            i = j  # no closing run: the backquotes are text
            continue
        spans.append((i, close))
        i = close
    return spans


def _defuse(text: str) -> str:
    text = _TAG.sub("&lt;", text)
    text = _REF_DEFINITION.sub(_reference, text)

    def link(match: re.Match) -> str:
        if _unsafe(match.group(1)):
            return "]\\(" + match.group(0)[2:]  # "[x]\(javascript:..." is no link
        return match.group(0)

    return _LINK.sub(link, text)


def _defuse_code(span: str) -> str:
    """A code span with a zero-width space after the ``<`` of what would be a live tag
    and between the ``]`` and ``(`` of a link of an unsafe scheme, were it no code span;
    it shows the same."""
    span = _LIVE_TAG.sub("<" + ZWSP, span)

    def link(match: re.Match) -> str:
        if _unsafe(match.group(1)):
            return "]" + ZWSP + match.group(0)[1:]
        return match.group(0)

    return _LINK.sub(link, span)


def _unsafe(destination: str) -> bool:
    """Whether a link destination (entities, blanks and case as written) has a scheme
    other than http, https or mailto."""
    dest = "".join(html.unescape(destination).split()).lower().lstrip("<")
    scheme = re.match(r"([a-z][a-z0-9+.-]*):", dest)
    return bool(scheme and scheme.group(1) not in SAFE_SCHEMES)


def _reference(match: re.Match) -> str:
    """A link reference definition (``[x]: javascript:...``) is no definition once its
    bracket is escaped; only one whose destination is unsafe is touched."""
    if _unsafe(match.string[match.end() :].split("\n", 1)[0]):
        return f"{match.group(1)}\\[{match.group(2)}]:"
    return match.group(0)


def cell(value: object) -> str:
    """One value as a person reads it: numbers to four significant digits, lists joined,
    yes/no for booleans, a dash for nothing; text escaped as data (:func:`escape`: no
    markup, no link, pipes escaped for tables) unless it is :class:`Markdown`."""
    if value is None or (isinstance(value, list | tuple | dict) and not value):
        return "—"
    if isinstance(value, Markdown):
        return value.replace("\n", " ")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{escape(k)} {cell(v)}" for k, v in value.items())
    return escape(value)


def table(header: list[str], rows: list[list[object]]) -> str:
    """A Markdown table; every cell is formatted with :func:`cell` (text escaped as data,
    :class:`Markdown` kept)."""
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def flatten(settings: dict, prefix: str = "") -> list[tuple[str, object]]:
    """Nested settings as (dotted name, value); a list of dicts keyed by their
    ``corpus`` or ``name`` field is flattened under that key."""
    out: list[tuple[str, object]] = []
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out += flatten(value, f"{name}.")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for k, v in enumerate(value):
                label = v.get("corpus") or v.get("name") or str(k)
                rest = {x: y for x, y in v.items() if x not in ("corpus", "name")}
                out += flatten(rest, f"{name}.{label}.")
        else:
            out.append((name, value))
    return out


def settings_table(settings: dict, skip_empty: bool = True) -> str:
    """``settings`` as a two-column table (setting, value); unset values are left out
    when ``skip_empty``."""
    rows = [[k, v] for k, v in flatten(settings) if not (skip_empty and v in (None, [], {}))]
    return table(["setting", "value"], rows)


def inline(settings: dict) -> str:
    """Flat settings in one line: ``sample 300, stratify method, seed 0``."""
    return ", ".join(f"{k} {cell(v)}" for k, v in flatten(settings) if v not in (None, [], {}))
