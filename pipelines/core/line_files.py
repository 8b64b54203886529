"""Line files: JSON Lines, CSV and TSV, gzipped or not, read line by line so that a
problem names ``file:line`` (:class:`InputError`). A UTF-8 byte order mark at the start
of a file (spreadsheet exports write one) is skipped.

Below every stage: the corpus readers (``pipelines.ingest.readers``), the MT trainer's
parallel data (``pipelines.models.train_mt``) and the families' release, source and seed
files read through these, whatever layer they sit in.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipelines.core.errors import BenchforgeError

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


def decoded_lines(path: Path, encoding: str) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every line of ``path`` (gzipped or not), decoded with
    ``encoding`` (a leading UTF-8 byte order mark dropped); a missing file, a folder,
    bytes that do not decode or a truncated file are an :class:`InputError` naming the
    file and the line."""
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
        for lineno, line in decoded_lines(path, encoding):
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
    lines = (line for _, line in decoded_lines(path, encoding))
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
