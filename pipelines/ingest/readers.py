"""Streaming readers for source corpora: JSON Lines, CSV, TSV and plain text, any gzipped.

Each reader yields one record per document with its line number, decoding line by line
so that an encoding error names the exact line. A UTF-8 byte order mark at the start of a
file (spreadsheet exports write one) is skipped. ``check_corpus_file`` runs before any
work starts: a missing, empty or undecodable file fails in seconds. Bad input raises
:class:`InputError` with ``file:line: problem``; nothing is written before the whole
corpus has been read, so earlier outputs stay intact. The line-by-line reading of
JSON Lines, CSV and TSV files is ``pipelines.core.line_files``'.
"""

from __future__ import annotations

import codecs
import functools
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from pipelines.core.io import sha256_file
from pipelines.core.line_files import InputError, decoded_lines, iter_rows
from pipelines.core.recipe import CorpusSpec
from pipelines.core.stage import StageResult, split_by_reason

DOCUMENT_COLUMNS = [
    "doc_id",
    "corpus",
    "source_id",
    "line",
    "text",
    "license",
    "domain",
    "style",
    "date",
    "unit",
    "meta",
]

PROGRESS_BYTES = 8 << 20  # show a progress bar when reading files larger than this


def check_corpus_file(corpus: CorpusSpec, path: Path) -> None:
    """Before any work (and before a server or cluster starts): the file exists, is not
    empty, decodes with the corpus's encoding from the first line to the last, and every
    record parses into a document (JSON, fields, text, ids, dates: issue 32 found these
    only after the Prefect server and Dask had started); an :class:`InputError` names the
    file and the line otherwise. A file already found good in this process (same corpus
    settings, size and modification time) is not read again, so callers at several
    depths (the CLI, then the ingest it starts) may all check."""
    try:
        stat = path.stat()
        stamp = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        stamp = None  # decoded_lines names the problem
    _check_file(path, corpus.model_dump_json(), stamp)


@functools.lru_cache(maxsize=256)
def _check_file(path: Path, spec: str, stamp: tuple | None) -> None:
    corpus = CorpusSpec.model_validate_json(spec)
    try:
        codecs.lookup(corpus.encoding)
    except LookupError:
        raise InputError(f"{path}: unknown encoding {corpus.encoding!r}") from None
    n = 0
    for n, _ in decoded_lines(path, corpus.encoding):  # noqa: B007
        pass
    if n == 0 and not corpus.allow_empty:
        raise InputError(
            f"{path}: empty file: corpus {corpus.name!r} has no documents (set allow_empty: "
            "true on the corpus if that is expected)"
        )
    for _ in document_rows(corpus, path, iter_records(corpus, path)):
        pass


def iter_records(corpus: CorpusSpec, path: Path) -> Iterator[tuple[int, dict | None]]:
    """Yield ``(line, record)`` for every document of the corpus file; a blank line of
    a JSON Lines, CSV or TSV file yields ``(line, None)`` so that it is counted too."""
    if corpus.format == "txt":
        for lineno, line in decoded_lines(path, corpus.encoding):
            yield lineno, {"text": line.rstrip("\r\n")}
        return
    yield from iter_rows(path, corpus.format, corpus.encoding, corpus.has_header, corpus.columns)


def _field(record: dict, name: str, path: Path, lineno: int) -> object:
    if name not in record:
        raise InputError(
            f"{path}:{lineno}: missing field {name!r} (fields: {', '.join(map(str, record))})"
        )
    return record[name]


def _as_text(value: object, name: str, path: Path, lineno: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InputError(f"{path}:{lineno}: field {name!r} is {type(value).__name__}, not text")


def _row(
    corpus: CorpusSpec, source_id: str, lineno: int, text: str, date: str | None, meta: dict
) -> tuple:
    """One ``documents`` row, in the order of ``DOCUMENT_COLUMNS``."""
    return (
        f"{corpus.name}:{source_id}",
        corpus.name,
        source_id,
        lineno,
        text,
        corpus.license,
        corpus.domain,
        corpus.style,
        date,
        corpus.unit,
        json.dumps(meta, ensure_ascii=False) if meta else None,
    )


def read_documents(corpus: CorpusSpec, path: Path) -> StageResult:
    """Read a whole corpus into the ``documents`` table (stage ``read``).

    Documents whose text is empty or blank are dropped with reason ``empty_document``;
    blank lines of JSON Lines, CSV and TSV files with reason ``blank_line``; documents
    holding a NUL character (a binary or broken record: issue 51 found them carried
    into releases) with reason ``control_characters``. A corpus with
    no document that has text is an error unless the recipe sets ``allow_empty``.
    A missing field, a malformed line, an unparsable date or a repeated id is an
    :class:`InputError` naming the file and line.
    """
    rows: list[tuple] = []
    blank_rows: list[int] = []
    records = iter_records(corpus, path)
    if path.is_file() and path.stat().st_size > PROGRESS_BYTES:
        records = tqdm(records, desc=f"read {corpus.name}", unit=" docs", mininterval=5)
    for row, blank in document_rows(corpus, path, records):
        if blank:
            blank_rows.append(len(rows))
        rows.append(row)
    if not corpus.allow_empty and not any(str(r[4]).strip() for r in rows):
        raise InputError(
            f"{path}: no documents with text in {len(rows)} lines: corpus {corpus.name!r} is "
            "empty (set allow_empty: true on the corpus if that is expected)"
        )
    docs = pd.DataFrame.from_records(rows, columns=DOCUMENT_COLUMNS)
    docs["line"] = docs["line"].astype("int64")
    reasons = docs["text"].str.strip().eq("").map({True: "empty_document", False: None})
    at = docs["text"].str.find("\x00")
    reasons[at.ge(0) & reasons.isna()] = "control_characters"
    details = at.map(lambda i: f"NUL at character {i}" if i >= 0 else None)
    reasons.iloc[blank_rows] = "blank_line"
    details[reasons != "control_characters"] = None
    return split_by_reason("read", "document", docs, reasons, details)


def document_rows(
    corpus: CorpusSpec, path: Path, records: Iterable[tuple[int, dict | None]]
) -> Iterator[tuple[tuple, bool]]:
    """The ``documents`` rows of ``records`` with whether each is a blank line (a row
    with the id ``blank-line-N`` and no text), up to the corpus's ``limit``; a missing
    field, a value that is not text, an empty or repeated id or an unparsable date is an
    :class:`InputError` naming the file and line. :func:`read_documents` keeps the rows;
    :func:`check_corpus_file` runs it before any work to find those errors in seconds."""
    seen: dict[str, int] = {}
    text_field = corpus.text_field or "text"
    count = 0
    for lineno, record in records:
        if record is None:
            yield _row(corpus, f"blank-line-{lineno}", lineno, "", None, {}), True
            count += 1
            if corpus.limit and count >= corpus.limit:
                return
            continue
        text = _as_text(_field(record, text_field, path, lineno), text_field, path, lineno)
        if corpus.id_field:
            source_id = _as_text(
                _field(record, corpus.id_field, path, lineno), corpus.id_field, path, lineno
            )
            if not source_id:
                raise InputError(f"{path}:{lineno}: empty id in field {corpus.id_field!r}")
        else:
            source_id = str(lineno)
        if source_id in seen:
            raise InputError(
                f"{path}:{lineno}: id {source_id!r} repeats the id on line {seen[source_id]}"
            )
        seen[source_id] = lineno
        date = None
        if corpus.date_field:
            raw = _as_text(
                _field(record, corpus.date_field, path, lineno), corpus.date_field, path, lineno
            ).strip()
            if raw:
                try:
                    date = datetime.strptime(raw, corpus.date_format or "").date().isoformat()
                except ValueError:
                    raise InputError(
                        f"{path}:{lineno}: date {raw!r} does not match {corpus.date_format!r}"
                    ) from None
        meta = {k: record.get(k) for k in corpus.keep_fields}
        yield _row(corpus, source_id, lineno, text, date, meta), False
        count += 1
        if corpus.limit and count >= corpus.limit:
            return


def file_fingerprint(path: Path) -> str:
    """SHA-256 of the file's bytes: the cache key of everything read from it."""
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    return sha256_file(path)
