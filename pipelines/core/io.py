"""Atomic output: a file is written under a temporary name in its folder and renamed into
place, so a crash never leaves a half-written file that looks complete."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from pipelines.core.errors import BenchforgeError

_UMASK = os.umask(0)
os.umask(_UMASK)
log = logging.getLogger(__name__)
LOCK_NAME = ".benchforge.lock"


class FolderLocked(BenchforgeError, RuntimeError):
    """Another run writes into the same output folder; the message names it."""


_HELD: set[Path] = set()  # folders whose lock this process holds (the lock is re-entrant)


@contextlib.contextmanager
def output_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock while a run writes into it: a second run into the same
    folder fails at once with a message naming the owner (pid, host, start time) instead
    of mixing its outputs with the first one's. The lock is an ``flock`` on
    ``FOLDER/.benchforge.lock``, which the kernel releases when its process dies; the
    file keeps the owner's details, so a lock left by a killed run is taken over with a
    message. Temporary files of interrupted atomic writes are removed on taking it.

    The command line takes it first, before any server starts (issue 32): a second run
    into the same folder stops at once. Inside, the flows take it again, which is a no-op
    in the process that holds it. However the run ends - finished, failed, interrupted -
    the file is emptied, so only a killed run leaves its pid behind."""
    key = folder.resolve()
    if key in _HELD:
        yield
        return
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held until the run ends
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            owner = fh.read().strip() or "owner unknown"
            raise FolderLocked(
                f"{folder}: another benchforge run is writing here ({owner}); wait for it "
                "to finish or choose another output folder"
            ) from None
        fh.seek(0)
        previous = fh.read().strip()
        if previous:
            log.warning("%s: taking over the lock of a run that ended without releasing it "
                        "(%s)", folder, previous)  # fmt: skip
        fh.seek(0)
        fh.truncate()
        fh.write(
            f"pid {os.getpid()} on {socket.gethostname()}, started "
            f"{time.strftime('%Y-%m-%d %H:%M:%S %z')}\n"
        )
        fh.flush()
        _HELD.add(key)
        try:
            removed = remove_temporaries(folder)
            if removed:
                log.info("%s: removed %d temporary files of interrupted writes", folder, removed)
            yield
        finally:
            _HELD.discard(key)
            with contextlib.suppress(OSError):
                fh.seek(0)
                fh.truncate()  # an empty lock file: released cleanly
            # a folder this run made and wrote nothing into (bad input) is not left behind
            if created and [p.name for p in folder.iterdir()] == [LOCK_NAME]:
                with contextlib.suppress(OSError):
                    path.unlink()
                    folder.rmdir()
    finally:
        fh.close()  # closing releases the flock


def remove_temporaries(folder: Path) -> int:
    """Remove the temporary files (``.NAME.*.tmp``) that interrupted atomic writes left
    under ``folder``; folders with a lock of their own are left to their own runs, and
    ``.cache`` (Prefect's task results, thousands of files, never written by ``_atomic``)
    is not walked."""
    removed = 0
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        dirs[:] = [d for d in dirs if d != ".cache" and not (here / d / LOCK_NAME).exists()]
        for name in files:
            if name.startswith(".") and name.endswith(".tmp"):
                (here / name).unlink(missing_ok=True)
                removed += 1
    return removed


def _atomic(path: Path, write) -> None:  # noqa: ANN001 - a callable taking the temp path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_table(
    path: Path, error: type[Exception] = ValueError, dtype: dict | None = None
) -> pd.DataFrame:
    """A Parquet, CSV or JSON Lines table; a missing, truncated or malformed file raises
    ``error`` naming the file and the problem (never a raw pyarrow or parser traceback)."""
    import pyarrow

    if not path.is_file():
        raise error(f"{path}: file not found")
    name = path.name
    try:
        if name.endswith(".parquet"):
            return pd.read_parquet(path)
        if name.endswith(".csv"):
            return pd.read_csv(path, dtype=dtype)
        if ".jsonl" in name:
            return pd.read_json(path, lines=True, dtype=dtype)
    except (pyarrow.ArrowException, OSError, ValueError, UnicodeDecodeError) as exc:
        kind = "Parquet" if name.endswith(".parquet") else "CSV" if ".csv" in name else "JSONL"
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise error(f"{path}: not a readable {kind} file ({detail})") from None
    raise error(f"{path}: expected .parquet, .csv or .jsonl")


def write_parquet(df: pd.DataFrame, path: str | Path) -> None:
    """Write ``df`` to ``path`` as Parquet, atomically."""
    _atomic(Path(path), lambda tmp: df.to_parquet(tmp, index=False))


def write_text(text: str, path: str | Path) -> None:
    """Write ``text`` (UTF-8) atomically."""
    _atomic(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_bytes(data: bytes, path: str | Path) -> None:
    """Write ``data`` atomically (a figure, a binary file)."""
    _atomic(Path(path), lambda tmp: tmp.write_bytes(data))


def write_json(obj: object, path: str | Path) -> None:
    """Write ``obj`` to ``path`` as indented UTF-8 JSON, atomically."""
    text = json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=False) + "\n"
    _atomic(Path(path), lambda tmp: tmp.write_text(text, encoding="utf-8"))


class TextFileError(BenchforgeError, ValueError):
    """An input text file that cannot be read; the message names the file (and the line)."""


def read_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The text of the input file ``path``, gzipped or not, decoded with ``encoding``
    (newlines kept as they are). A missing file, a folder, an unreadable or truncated
    gzip, or bytes that do not decode are a :class:`TextFileError` whose message is
    ``file:line: problem`` (issue 51: an undecodable JSQuAD JSON, NER TSV or KB file
    gave a ``UnicodeDecodeError`` traceback). Every reader of a file a recipe names
    uses it (or ``pipelines.core.line_files`` for JSON Lines, CSV and TSV files, the
    corpora's included)."""
    import gzip

    path = Path(path)
    if not path.exists():
        raise TextFileError(f"{path}: file not found")
    if not path.is_file():
        raise TextFileError(f"{path}: not a file")
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise TextFileError(f"{path}: cannot read: {exc}") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        line = data.count(b"\n", 0, exc.start) + 1
        raise TextFileError(
            f"{path}:{line}: cannot decode as {encoding} (byte {exc.start - start} of "
            f"the line: {data[exc.start : exc.start + 4]!r})"
        ) from None


def control_character_line(text: str) -> tuple[int, str] | None:
    """``(line, character)`` of the first NUL or other C0 control character (tab, line
    and carriage-return breaks aside) in ``text``, or None: a structured input file
    (a gold, relation or triples file) that holds one is refused, since no viewer or
    release shows it as text."""
    for n, line in enumerate(text.split("\n"), start=1):
        bad = next((ch for ch in line if ord(ch) < 32 and ch not in "\t\r"), None)
        if bad is not None:
            return n, bad
    return None


def sha256_file(path: str | Path) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_outputs(
    out: Path,
    key: str,
    tables: dict[str, pd.DataFrame],
    documents: dict[str, object],
    texts: dict[str, str] | None = None,
    blobs: dict[str, bytes] | None = None,
) -> bool:
    """Write a run's outputs atomically, then ``manifest.json`` last.

    ``tables`` are written as Parquet, ``documents`` as JSON, ``texts`` (Markdown
    reports) as UTF-8 text and ``blobs`` (figures) as bytes, under their names (which may
    name a subfolder: ``figures/labels.png``). The
    manifest is removed before any output changes, so a run interrupted between two files
    leaves no manifest behind. When the manifest already records ``key`` and every file
    still has the recorded SHA-256, nothing is rewritten (a rerun changes nothing) and
    False is returned.
    """
    texts, blobs = texts or {}, blobs or {}
    names = [*tables, *documents, *texts, *blobs]
    manifest_path = out / "manifest.json"
    if outputs_current(out, key, names):
        return False
    out.mkdir(parents=True, exist_ok=True)
    manifest_path.unlink(missing_ok=True)
    for name, df in tables.items():
        write_parquet(df, out / name)
    for name, obj in documents.items():
        write_json(obj, out / name)
    for name, text in texts.items():
        _atomic(out / name, lambda tmp, t=text: tmp.write_text(t, encoding="utf-8"))
    for name, blob in blobs.items():
        write_bytes(blob, out / name)
    write_json(
        {"key": key, "files": {name: sha256_file(out / name) for name in names}}, manifest_path
    )
    return True


def outputs_current(out: Path, key: str, names: list[str]) -> bool:
    """True when ``out``'s manifest records ``key`` and every named file still has its
    recorded SHA-256: the outputs of that exact run are there, whole (a caller may then
    skip the work)."""
    manifest_path = out / "manifest.json"
    if not manifest_path.exists():
        return False
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return False
    files = manifest.get("files", {})
    return manifest.get("key") == key and all(
        (out / name).exists() and sha256_file(out / name) == files.get(name) for name in names
    )


def read_manifest(folder: Path) -> dict:
    """The manifest of a finished run in ``folder``; ValueError when there is none."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise ValueError(
            f"{folder}: no manifest.json: not the output of a finished run (an interrupted "
            "run leaves none)"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def folder_stamp(folder: Path) -> list[tuple[str, int, int]]:
    """Name, size and mtime of each file of a folder (a model checkpoint) for cache keys."""
    files = sorted(p for p in folder.glob("*") if p.is_file()) if folder.is_dir() else []
    return [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
