"""Markdown for reports a person reads (data cards, artifact reports): tables, and
settings written as readable tables instead of JSON or Python reprs.

Text from corpora and recipes is data, never markup (issue 32): :func:`escape` turns it
into Markdown that renders as the same characters and cannot open a tag, a link, an image
or a code span, nor shift a table's columns; :func:`cell` and :func:`table` escape every
value that is not marked as :class:`Markdown` (text the code itself wrote). A last pass,
:func:`neutralize`, runs over a whole report before it is written: any raw HTML tag but the
``<details>``/``<summary>`` the code writes, and any link whose scheme is not http, https
or mailto, is defused there too, whatever its origin."""

from __future__ import annotations

import html
import re

# the characters that make Markdown out of text: backslash escapes (CommonMark and
# Python-Markdown both honour them for these) and HTML entities for <, > and &
_BACKSLASHED = re.compile(r"([\\`\[\]|])")
_TAG = re.compile(r"<(?!(?:/?(?:details|summary))>)(?=[A-Za-z/!?])")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)")
_CODE = re.compile(r"(?<!\\)(`+)(?:.|\n)*?(?<!\\)\1")
SAFE_SCHEMES = ("http", "https", "mailto")


class Markdown(str):
    """Markdown the code wrote (a code span, a bold word): :func:`cell` and :func:`table`
    pass it through as it is. Everything else they are given is escaped as data."""


def escape(text: object, lines: bool = False) -> str:
    """``text`` (corpus or recipe text) as Markdown that shows exactly these characters:
    ``<``, ``>`` and ``&`` as entities, backslash, backquote, brackets and pipes
    backslash-escaped; line breaks become spaces unless ``lines`` (a paragraph of the
    recipe's, such as its description)."""
    out = html.escape(str(text), quote=False)
    out = _BACKSLASHED.sub(r"\\\1", out)
    if lines:
        return out.replace("\r\n", "\n").replace("\r", "\n")
    return out.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def code_block(text: str, info: str = "") -> list[str]:
    """``text`` as the lines of a fenced code block whose fence is longer than any run of
    backquotes in it, so that corpus text cannot close the block early."""
    runs = (len(r) for r in re.findall(r"`+", text))
    fence = "`" * max(3, 1 + max(runs, default=0))
    return [f"{fence}{info}", text, fence]


def neutralize(markdown: str) -> str:
    """Defuse what no report the code writes holds, wherever it came from: a raw HTML tag
    (``<script>``, ``<svg onload=...>``; ``<details>`` and ``<summary>`` without
    attributes stay) and a link or image whose destination has a scheme other than http,
    https or mailto (``javascript:``, ``data:``, ``vbscript:``, also written with
    entities). Code spans are left alone: nothing renders inside them."""
    parts, last = [], 0
    for match in _CODE.finditer(markdown):
        parts.append(_defuse(markdown[last : match.start()]))
        parts.append(match.group(0))
        last = match.end()
    parts.append(_defuse(markdown[last:]))
    return "".join(parts)


def _defuse(text: str) -> str:
    text = _TAG.sub("&lt;", text)

    def link(match: re.Match) -> str:
        dest = "".join(html.unescape(match.group(1)).split()).lower()
        scheme = re.match(r"([a-z][a-z0-9+.-]*):", dest)
        if scheme and scheme.group(1) not in SAFE_SCHEMES:
            return "]\\(" + match.group(0)[2:]  # "[x]\(javascript:..." is no link
        return match.group(0)

    return _LINK.sub(link, text)


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
