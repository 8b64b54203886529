"""Rows of a public evaluation set in a release (issue 54).

A rebuild may draw on a corpus that is itself a published evaluation split (JGLUE's
``valid`` files, KorSTS's and KorNLI's ``dev`` and ``test``, KLUE's ``dev``): its rows
then sit in the release's train split, where a model trained on the release sees the
evaluation data the paper publishes, or in its dev and test, where a model tuned on the
public set has seen them. The card must say so, with the ids.

- A corpus is a public evaluation split when its file's name says so
  (:data:`EVAL_NAME`: ``valid``, ``validation``, ``dev`` or ``test`` as a word of the
  name, as every one of those releases names its files) or when its SHA-256 is one of
  :data:`KNOWN` (the full files, where a recipe points at them);
- a release record comes from such a corpus when the text fields of what it asks (its
  ``card_facts._content`` fields of at least :data:`MIN_CHARS` characters, JSON aside)
  occur in one and the same record of the corpus file (a JSON value with the records
  around it, a JSON Lines object or a TSV/CSV row), its finest-grained field among them
  (the one with the most distinct values: JSQuAD's question, a pair's second sentence):
  the same pair or question, not one common sentence. A field the corpus does not have
  may be missing only when it is categorical (fewer distinct values than half the
  records: JSQuAD's ``question_type``).

:func:`overlap` gives, per release file and corpus, the records found and their ids;
the ``public-eval-rows`` warning shows them.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from pathlib import Path

import pandas as pd

EVAL_NAME = re.compile(r"(?i)(?:^|[^a-z])(valid|validation|dev|test)(?:[^a-z]|$)")
MIN_CHARS = 5
SHOWN_IDS = 20
# the SHA-256 of published evaluation files, where a recipe reads them whole
KNOWN: dict[str, str] = {}


def is_public_eval(path: Path) -> str | None:
    """Why the corpus file ``path`` is a public evaluation split (None if it is not)."""
    from pipelines.core.io import sha256_file

    if path.is_file() and (name := KNOWN.get(sha256_file(path))):
        return f"{name} (its SHA-256)"
    m = EVAL_NAME.search(path.name)
    return f"a {m.group(1)} split by its file name" if m else None


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value.strip()]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _records(path: Path) -> list[list[str]]:
    """The corpus file's records, each as its string values."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace")
    stem = path.name.removesuffix(".gz")
    if stem.endswith((".tsv", ".csv")):
        dialect = "excel-tab" if stem.endswith(".tsv") else "excel"
        return [[c.strip() for c in row] for row in csv.reader(io.StringIO(text), dialect)]
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # JSON Lines
        out = []
        for line in text.splitlines():
            try:
                out.append(_strings(json.loads(line)))
            except json.JSONDecodeError:
                continue
        return out
    # a JSON release: its innermost records, each with the strings of the records
    # around it (SQuAD: a question with its paragraph's context and its article's title)
    out: list[list[str]] = []

    def records(v: object) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)

    def walk(node: object, around: list[str]) -> None:
        if records(node):
            for x in node:
                inner = [v for v in x.values() if records(v)]
                own = [s for v in x.values() if not records(v) for s in _strings(v)]
                if not inner:
                    out.append(around + own)
                for v in inner:
                    walk(v, around + own)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v, around)
        elif isinstance(node, list):
            for v in node:
                walk(v, around)

    walk(data, [])
    return out


def _index(path: Path) -> dict[str, set[int]]:
    index: dict[str, set[int]] = {}
    for n, strings in enumerate(_records(path)):
        for s in strings:
            if len(s) >= MIN_CHARS:
                index.setdefault(s, set()).add(n)
    return index


def _text_columns(table: pd.DataFrame) -> list[str]:
    from pipelines.export.card_facts import _content

    out = []
    for c in _content(table).columns:
        values = table[c].dropna()
        if len(values) and all(isinstance(v, str) and not v.lstrip().startswith(("{", "["))
                               for v in values):  # fmt: skip
            out.append(c)
    return out


def _found(table: pd.DataFrame, index: dict[str, set[int]]) -> list[str]:
    """The ids of the records of ``table`` found in the corpus ``index`` (see the module
    docstring)."""
    from pipelines.export.card_facts import _is_id

    columns = _text_columns(table)
    if not columns:
        return []
    distinct = {c: table[c].nunique() for c in columns}
    finest = {c for c in columns if distinct[c] == max(distinct.values())}
    categorical = {c for c in columns if len(table) >= 4 and distinct[c] < len(table) / 2}
    ids = next((c for c in table.columns if _is_id(c)), None)
    out = []
    for row_no, row in enumerate(table[columns].itertuples(index=False)):
        texts = {c: v.strip() for c, v in zip(columns, row, strict=True)
                 if isinstance(v, str) and len(v.strip()) >= MIN_CHARS}  # fmt: skip
        here = {c: t for c, t in texts.items() if t in index}
        if set(texts) - set(here) - categorical or not finest & set(here):
            continue
        if set.intersection(*(index[t] for t in here.values())):
            out.append(str(table[ids].iloc[row_no]) if ids else f"row {row_no + 1}")
    return out


def overlap(tables: dict[str, pd.DataFrame], files: dict[str, int],
            corpora: list[tuple[str, Path]]) -> dict[str, dict]:  # fmt: skip
    """Per release file stem (``train``, ``valid``, ...), per public-evaluation corpus:
    the records found in it (``items``), the first :data:`SHOWN_IDS` of their ids, the
    file's records and why the corpus is a public evaluation split."""
    from pipelines.export.records import release_tables

    public = [(name, path, why) for name, path in corpora
              if path.is_file() and (why := is_public_eval(path))]  # fmt: skip
    if not public:
        return {}
    releases = release_tables(tables, files)
    out: dict[str, dict] = {}
    for name, path, why in public:
        index = _index(path)
        for stem, table in releases.items():
            if not len(table):
                continue
            found = _found(table, index)
            if found:
                out.setdefault(stem, {})[name] = {
                    "items": len(found), "records": len(table), "ids": found[:SHOWN_IDS],
                    "file": path.name, "why": why,
                }  # fmt: skip
    return out
