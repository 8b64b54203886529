"""Cells that a spreadsheet opens as text, never as a formula (issue 32).

A TSV or CSV file a data steward opens in Excel, LibreOffice or Google Sheets runs a cell
that begins with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a carriage return)
as a formula: ``=cmd|' /C calc'!A0`` is the classic injection (OWASP, "CSV Injection").
:func:`safe_cell` puts a single quote before such a cell, which spreadsheets read as "this
is text" and do not show; a plain number (``-3``, ``+0.5``) is left alone, since a
spreadsheet reads it as a number and runs nothing. The release files in JSON Lines and
Parquet always keep the exact text; the recipe's ``export.spreadsheet_safe: false`` (or
``kobbq expand --raw-cells``) writes TSV cells unchanged.

Every TSV or CSV file the project writes is written by :func:`delimited` (the KorSTS,
KorNLI and KoBBQ releases, the KoBBQ baseline's predictions), except the KLUE-NER and
KLUE-DP release layouts, which are not tables of cells: the NER writer
(``pipelines.families.klue.ner_layout``) neutralises the one cell of free text, the
tagged sentence, with :func:`safe_cell`; the DP writer (``...klue.dp_layout``) quotes
every formula-like cell reversibly and says so in the file's first line.
``tests/unit/core/test_hostile_text.py`` checks that no other module writes one."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def safe_cell(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula."""
    if text.startswith(FORMULA_LEADS) and not _NUMBER.match(text):
        return "'" + text
    return text


def one_line(text: str) -> str:
    """``text`` with each tab, carriage return and line feed made a space: a TSV cell
    without quoting holds neither (the releases' layouts quote nothing)."""
    return text.replace("\t", " ").replace("\r", " ").replace("\n", " ")


def delimited(
    rows: Iterable[Sequence[object]],
    header: Sequence[str] | None = None,
    *,
    sep: str = "\t",
    spreadsheet_safe: bool = True,
) -> str:
    """The one writer of every TSV or CSV file benchforge writes (issue 51): ``header``
    (when given) then one line per row, each value as ``str(value)``.

    TSV (``sep="\\t"``, the releases' layout): nothing is quoted, a tab or line break
    inside a cell becomes a space (:func:`one_line`). CSV (``sep=","``): quoted as the
    ``csv`` module does (minimal quoting, ``\\n`` line ends). With ``spreadsheet_safe``
    every cell a spreadsheet would run as a formula gets a leading ``'``
    (:func:`safe_cell`; header names too); without, cells are written unchanged. A file
    with no row and no header is empty."""
    import csv
    import io

    if sep not in ("\t", ","):
        raise ValueError(f"sep must be a tab or a comma, not {sep!r}")

    def fix(value: object) -> str:
        text = str(value)
        text = one_line(text) if sep == "\t" else text
        return safe_cell(text) if spreadsheet_safe else text

    lines = ([list(header)] if header is not None else []) + [list(r) for r in rows]
    if sep == "\t":
        return "".join("\t".join(fix(v) for v in row) + "\n" for row in lines)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerows([[fix(v) for v in row] for row in lines])
    return buf.getvalue()
