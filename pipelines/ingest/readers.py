"""Streaming readers for source corpora: JSON Lines, CSV, TSV and plain text, any gzipped.

Each reader yields one record per document with its line number, decoding line by line
so that an encoding error names the exact line. A UTF-8 byte order mark at the start of a
file (spreadsheet exports write one) is skipped. ``check_corpus_file`` runs before any
work starts: a missing, empty or undecodable file fails in seconds. Bad input raises
:class:`InputError` with ``file:line: problem``; nothing is written before the whole
corpus has been read, so earlier outputs stay intact.
"""

from __future__ import annotations

import codecs
import csv
import functools
import gzip
import json
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import sha256_file
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

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


class InputError(BenchforgeError, ValueError):
    """Unusable input; the message starts with ``file:line:``."""


def _open_binary(path: Path):  # noqa: ANN202 - a binary file object
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    return open(path, "rb")


def _decoded_lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    with _open_binary(path) as fh:
        lineno = 0
        try:
            for lineno, raw in enumerate(fh, start=1):  # noqa: B007 - used in except
                if lineno == 1 and raw.startswith(codecs.BOM_UTF8) and _is_utf8(encoding):
                    raw = raw[len(codecs.BOM_UTF8) :]  # spreadsheet exports write one
                try:
                    yield lineno, raw.decode(encoding)
                except UnicodeDecodeError as exc:
                    raise InputError(
                        f"{path}:{lineno}: cannot decode as {encoding} "
                        f"(byte {exc.start} of the line: {raw[exc.start : exc.start + 4]!r})"
                    ) from None
        except (OSError, EOFError) as exc:
            raise InputError(f"{path}:{lineno + 1}: cannot read: {exc}") from None


def _is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name in ("utf-8", "utf-8-sig")


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
        stamp = None  # _decoded_lines names the problem
    _check_file(path, corpus.model_dump_json(), stamp)


@functools.lru_cache(maxsize=256)
def _check_file(path: Path, spec: str, stamp: tuple | None) -> None:
    corpus = CorpusSpec.model_validate_json(spec)
    try:
        codecs.lookup(corpus.encoding)
    except LookupError:
        raise InputError(f"{path}: unknown encoding {corpus.encoding!r}") from None
    n = 0
    for n, _ in _decoded_lines(path, corpus.encoding):  # noqa: B007
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
        for lineno, line in _decoded_lines(path, corpus.encoding):
            yield lineno, {"text": line.rstrip("\r\n")}
        return
    yield from iter_rows(path, corpus.format, corpus.encoding, corpus.has_header, corpus.columns)


def iter_rows(
    path: Path,
    fmt: str,
    encoding: str = "utf-8",
    has_header: bool = True,
    columns: list[str] | None = None,
) -> Iterator[tuple[int, dict | None]]:
    """``(line, record)`` of a JSON Lines, CSV or TSV file (gzipped or not; TSV unquoted,
    as the KLUE, KorSTS and KorNLI releases write it): a record is a dict by the header
    (or ``columns``), a blank line ``None``. Undecodable bytes, malformed JSON and a row
    with the wrong number of fields are an :class:`InputError` naming ``file:line``."""
    if fmt == "jsonl":
        for lineno, line in _decoded_lines(path, encoding):
            if not line.strip():
                yield lineno, None
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{path}:{lineno}: malformed JSON: {exc.msg} (column {exc.colno})"
                ) from None
            if not isinstance(record, dict):
                raise InputError(
                    f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}"
                )
            yield lineno, record
        return
    delimiter = "\t" if fmt == "tsv" else ","
    quoting = csv.QUOTE_NONE if fmt == "tsv" else csv.QUOTE_MINIMAL
    lines = (line for _, line in _decoded_lines(path, encoding))
    reader = csv.reader(lines, delimiter=delimiter, quoting=quoting)
    header = columns
    try:
        if has_header:
            first = next(reader, None)
            if first is None:
                return
            header = columns or [h.strip().lstrip("\ufeff") for h in first]
        assert header is not None
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                yield reader.line_num, None
                continue
            if len(row) != len(header):
                raise InputError(
                    f"{path}:{reader.line_num}: expected {len(header)} columns "
                    f"({', '.join(header)}), found {len(row)}"
                )
            yield reader.line_num, dict(zip(header, row, strict=True))
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: malformed {fmt}: {exc}") from None


def delimited_format(path: Path) -> str:
    """``tsv`` for a ``.tsv``/``.txt`` file (gzipped or not), else ``csv``."""
    return "tsv" if {".tsv", ".txt"} & set(path.suffixes) else "csv"


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


# a text field of a structured source file (a release, seeds, an English dataset) longer
# than this is refused: no sentence, passage or answer is (ingest drops a document over
# filters.noise.max_document_chars, 100,000 by default, as too_long_document)
MAX_FIELD_CHARS = 100_000


def field_problem(value: object) -> str | None:
    """Why a text field of a structured source file cannot be carried into a release
    (issue 51: NUL bytes and 360,000-character fields were): a C0 control character
    other than tab and line breaks, or more than :data:`MAX_FIELD_CHARS` characters;
    None when it can (or it is not text)."""
    if not isinstance(value, str):
        return None
    bad = next((ch for ch in value if ord(ch) < 32 and ch not in "\t\n\r"), None)
    if bad is not None:
        return f"holds the control character U+{ord(bad):04X} at character {value.index(bad)}"
    if len(value) > MAX_FIELD_CHARS:
        return f"is {len(value):,} characters long (more than {MAX_FIELD_CHARS:,})"
    return None


def read_json_lines(path: Path, required: Iterable[str], error: type[Exception]) -> list[dict]:
    """The objects of a JSON Lines file, each with its 1-based ``line``; malformed JSON,
    a line that is not an object, one that lacks a ``required`` field, or a text field
    with a control character or over :data:`MAX_FIELD_CHARS` (:func:`field_problem`)
    raises ``error`` naming the file, the line and the field (blank lines are skipped;
    a file with no record is an error). JGLUE's releases, JCommonsenseQA and KoBEST's
    sources and seeds use it."""
    required = list(required)
    rows = []
    try:
        for line, record in iter_rows(Path(path), "jsonl"):
            if record is None:
                continue
            missing = [k for k in required if k not in record]
            if missing:
                raise error(f"{path}:{line}: no {missing} (fields: {sorted(record)})")
            for key, value in record.items():
                why = field_problem(value)
                if why:
                    raise error(f"{path}:{line}: field {key!r} {why}")
            rows.append({**record, "line": line})
    except InputError as exc:
        raise error(str(exc)) from None
    if not rows:
        raise error(f"{path}: no records")
    return rows
