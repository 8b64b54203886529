"""Rebuild every demo recipe and print the SHA-256 of each released file, to compare two
trees (issue 33: a refactor keeps every demo's dataset files byte-identical).

    .venv/bin/python scripts/demo_hashes.py --out /tmp/hashes-new [--json hashes.json]

Each recipe in ``recipes/*-demo.yaml`` with a ``task`` is rebuilt into OUT/<recipe>
with ``benchforge rebuild`` (a Label Studio server is started if none answers, and
stopped at the end). The card's own files (DATA_CARD.md/.html, card.json, figures) are
listed apart from the data files, since a card names the code's files and may change
where the data does not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CARD_FILES = {
    "DATA_CARD.md",
    "DATA_CARD.html",
    "README.md",
    "card.json",
    "manifest.json",
    "release_manifest.json",
}  # the last holds the card files' hashes too


def digests(dataset: Path) -> dict[str, dict[str, str]]:
    """SHA-256 of every file under ``dataset``: data files and card files apart."""
    out: dict[str, dict[str, str]] = {"data": {}, "card": {}}
    for path in sorted(p for p in dataset.rglob("*") if p.is_file()):
        rel = path.relative_to(dataset).as_posix()
        kind = "card" if rel in CARD_FILES or rel.startswith("figures/") else "data"
        out[kind][rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the runs")
    parser.add_argument("--json", type=Path, help="write the hashes here as JSON")
    parser.add_argument("--only", nargs="*", help="recipe names (default: every demo)")
    args = parser.parse_args()
    recipes = []
    for path in sorted((ROOT / "recipes").glob("*-demo.yaml")):
        if yaml.safe_load(path.read_text(encoding="utf-8")).get("task") is None:
            continue
        if args.only and path.stem not in args.only:
            continue
        recipes.append(path)
    from pipelines.annotation import ls_server

    started_here = not ls_server.status()["running"]  # stopped at the end if we start it
    result: dict[str, dict] = {}
    try:
        for i, path in enumerate(recipes):
            out = args.out / path.stem
            cmd = [sys.executable, "-m", "flows.cli", "rebuild", str(path), "--out", str(out)]
            print(f"[{i + 1}/{len(recipes)}] {path.stem}", flush=True)
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if proc.returncode != 0:
                print(proc.stderr[-3000:], file=sys.stderr)
                return proc.returncode
            result[path.stem] = digests(out / "dataset")
    finally:  # a failed rebuild leaves no server behind either
        if started_here:
            ls_server.down()
    text = json.dumps(result, indent=1, sort_keys=True)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
