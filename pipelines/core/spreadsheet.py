"""Cells that a spreadsheet opens as text, never as a formula (issue 32).

A TSV or CSV file a data steward opens in Excel, LibreOffice or Google Sheets runs a cell
that begins with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a carriage return)
as a formula: ``=cmd|' /C calc'!A0`` is the classic injection (OWASP, "CSV Injection").
:func:`safe_cell` puts a single quote before such a cell, which spreadsheets read as "this
is text" and do not show; a plain number (``-3``, ``+0.5``) is left alone, since a
spreadsheet reads it as a number and runs nothing. The release files in JSON Lines and
Parquet always keep the exact text; the recipe's ``export.spreadsheet_safe: false`` (or
``kobbq expand --raw-cells``) writes TSV cells unchanged."""

from __future__ import annotations

import re

FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def safe_cell(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula."""
    if text.startswith(FORMULA_LEADS) and not _NUMBER.match(text):
        return "'" + text
    return text
