"""The release manifest (issue 51): the SHA-256 and size of every file a rebuild released,
so ``benchforge card check`` vouches only for what the files show.

``OUT/dataset/release_manifest.json``::

    {"files": {"dataset/train.jsonl": {"sha256": "...", "bytes": 1234},
               "release/klue-ner-v1.1_dev.tsv": {...}, ...}}

The paths are relative to the run folder OUT (``dataset/`` naming the dataset folder
whatever its name), so a copied run keeps its manifest. The release is every file under
``OUT/dataset`` (the records, Parquet, the release layout's own files, the card:
DATA_CARD.md, DATA_CARD.html, README.md, card.json, figures, the lm-eval task) and
``OUT/release`` (KLUE-NER's layout), except the steps' cache records
(``manifest.json``), this manifest, and hidden files (locks, temporaries).

- :func:`write_release_manifest` runs when a rebuild's last step has finished (the
  flow's ``run_steps``), written atomically: a first run interrupted before the end
  leaves none, and ``card check`` refuses to vouch for a release without one (or for a
  file a later, unfinished run changed);
- :func:`refresh_release_manifest` records new hashes of files a command rewrites on
  purpose (``benchforge baseline`` writes card.json; ``card render`` the card's files);
- :func:`verify_release` names every file missing, changed (hash or size) or added.
"""

from __future__ import annotations

import json
from pathlib import Path

RELEASE_MANIFEST = "release_manifest.json"
RELEASE_FOLDERS = ("dataset", "release")
STEP_RECORD = "manifest.json"  # a step's cache record (pipelines.core.io.write_outputs)


def _folders(dataset: Path) -> dict[str, Path]:
    """The release's folders by the name the manifest gives them."""
    return {"dataset": Path(dataset), "release": Path(dataset).parent / "release"}


def _path(dataset: Path, rel: str) -> Path:
    """The file a manifest entry names."""
    top, _, rest = rel.partition("/")
    return _folders(dataset).get(top, Path(dataset).parent / top) / rest


def release_files(dataset: Path) -> list[str]:
    """Every released file of the run whose dataset folder is ``dataset``, as the
    manifest names it, sorted (see the module docstring for what is left out)."""
    out = []
    for name, folder in _folders(dataset).items():
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if not path.is_file() or any(p.startswith(".") for p in rel.parts):
                continue
            if path.name in (STEP_RECORD, RELEASE_MANIFEST):
                continue
            out.append(f"{name}/{rel.as_posix()}")
    return out


def _entry(path: Path) -> dict:
    from pipelines.core.io import sha256_file

    return {"sha256": sha256_file(path), "bytes": path.stat().st_size}


def write_release_manifest(dataset: Path) -> Path:
    """Record every released file of the run whose dataset folder is ``dataset``
    (SHA-256 and size) -> ``dataset/release_manifest.json``, written atomically; returns
    its path. A rerun that changed no file leaves it untouched (its bytes and its
    modification time), as every other output of a rerun."""
    from pipelines.core.io import write_json

    files = {rel: _entry(_path(dataset, rel)) for rel in release_files(dataset)}
    path = Path(dataset) / RELEASE_MANIFEST
    if path.is_file():
        try:
            if json.loads(path.read_text(encoding="utf-8")) == {"files": files}:
                return path
        except (OSError, ValueError):
            pass  # unreadable: written anew
    write_json({"files": files}, path)
    return path


def refresh_release_manifest(dataset: Path, names: list[str]) -> None:
    """Record the new SHA-256 and size of ``names`` (relative to the ``dataset`` folder),
    files a command rewrote on purpose; nothing when the run has no release manifest (a
    rebuild that has not finished)."""
    from pipelines.core.io import write_json

    path = Path(dataset) / RELEASE_MANIFEST
    if not path.is_file():
        return
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for name in names:
        file = Path(dataset) / name
        if file.is_file():
            manifest["files"][f"dataset/{Path(name).as_posix()}"] = _entry(file)
    write_json(manifest, path)


def verify_release(dataset: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Compare the release files of the run whose dataset folder is ``dataset`` with its
    manifest: (the files verified, the problems as (file, what the manifest says, what
    the files show)). A missing or unreadable manifest is one problem."""
    path = Path(dataset) / RELEASE_MANIFEST
    shown = f"dataset/{RELEASE_MANIFEST}"
    if not path.is_file():
        return [], [(shown, "every release file with its SHA-256 (written when a rebuild "
                     "finishes)", "no such file: an unfinished or altered release")]  # fmt: skip
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
        if not isinstance(files, dict):
            raise TypeError("files is not a mapping")
    except (ValueError, KeyError, TypeError) as exc:
        return [], [(shown, "a JSON object with a files mapping", f"unreadable ({exc})")]
    verified, problems = [], []
    for rel, want in sorted(files.items()):
        file = _path(dataset, rel)
        if not file.is_file():
            problems.append((rel, "present", "missing (deleted)"))
            continue
        got = _entry(file)
        if got["bytes"] != want.get("bytes"):
            problems.append((rel, f"{want.get('bytes')} bytes", f"{got['bytes']} bytes (changed)"))
        elif got["sha256"] != want.get("sha256"):
            problems.append((rel, f"sha256 {str(want.get('sha256'))[:12]}",
                             f"sha256 {got['sha256'][:12]} (changed)"))  # fmt: skip
        else:
            verified.append(rel)
    for rel in release_files(dataset):
        if rel not in files:
            problems.append((rel, "not part of the release", "present (added)"))
    return verified, problems
