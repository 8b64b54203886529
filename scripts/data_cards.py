"""Regenerate every committed data card in ``data_cards/`` at one commit (issue 54).

    .venv/bin/python scripts/data_cards.py [--runs DIR] [--only NAME ...] [--allow-dirty]

Each demo recipe with a task (``recipes/*-demo.yaml``) is rebuilt into RUNS/<recipe>
(``benchforge rebuild``; finished steps are cached, but the export runs again, so that
every card names this commit) and its baseline fine-tuned where
the task kind has one (``benchforge baseline``); the run's release, its ``dataset/``
folder (the card and the files it describes) and ``release/`` where the layout has one
(KLUE-NER), and the split's artifact report the card renders (``split/artifacts.md``),
is then copied into ``data_cards/<recipe>/`` in the run's own shape, so that
``benchforge card check data_cards/<recipe>`` checks the committed card against the
committed files. A release file larger than ``--max-mb`` (KoBBQ's 51 MB
``all_samples.jsonl``) is left out of the copy and named,
with the SHA-256 and size the release manifest recorded, in ``CARD_COPY.json``; the
check lists it as not shipped, never as checked. Every copy records the commit it was
built at; the script refuses a tree with uncommitted changes (a card would then name
code no commit holds) unless ``--allow-dirty`` is given, for a trial.

``tests/unit/export/test_committed_cards.py`` fails when a committed card is older than
the code that renders it (re-rendered from its own ``card.json``, it is not the same
Markdown) or when the committed cards come from more than one commit.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's pipelines, whatever the venv installed
CARDS = ROOT / "data_cards"
COPY_NOTE = "CARD_COPY.json"
RELEASE_MANIFEST = "release_manifest.json"
# what `benchforge baseline` says of a release it has no baseline for
NO_BASELINE = ("no baseline for target", "no train split to fine-tune on")


def demos(only: list[str] | None) -> list[Path]:
    """The demo recipes that rebuild a dataset (those with a ``task``)."""
    out = []
    for path in sorted((ROOT / "recipes").glob("*-demo.yaml")):
        if yaml.safe_load(path.read_text(encoding="utf-8")).get("task") is None:
            continue
        if not only or path.stem in only:
            out.append(path)
    return out


def commit() -> tuple[str, bool]:
    """HEAD's commit and whether the tree has uncommitted changes (``data_cards/`` and
    ``runs/`` aside: this script writes the one, the rebuilds the other)."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    # as the card's provenance counts them (card_facts.git_commit): untracked files aside
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                             ".", ":!data_cards", ":!runs"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    return head, bool(status.strip())


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


def copy_release(run: Path, folder: Path, head: str, max_bytes: int) -> dict:
    """Copy the release of the run folder ``run`` (``dataset/``, and ``release/`` where
    the layout has one) into ``folder`` (replacing it whole, through a temporary folder
    beside it), leaving out files over ``max_bytes``; returns the copy note."""
    manifest = json.loads((run / "dataset" / RELEASE_MANIFEST).read_text(encoding="utf-8"))
    recorded = manifest.get("files", {})
    tmp = folder.with_name(f".{folder.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    omitted = []
    for top in ("dataset", "release"):
        for path in sorted(p for p in (run / top).rglob("*") if p.is_file()):
            rel = path.relative_to(run).as_posix()
            if path.name == "manifest.json" or any(x.startswith(".") for x in Path(rel).parts):
                continue  # the steps' cache records and temporaries are not the release
            if path.stat().st_size > max_bytes:
                entry = recorded.get(rel, {})
                omitted.append({"path": rel, "bytes": path.stat().st_size,
                                "sha256": entry.get("sha256")})  # fmt: skip
                continue
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, tmp / rel)
    report = run / "split" / "artifacts.md"  # the card renders it again from this copy
    if report.is_file():
        (tmp / "split").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report, tmp / "split" / "artifacts.md")
    note = {"commit": head, "omitted": omitted,
            "why": f"files over {max_bytes / 2**20:g} MB are left out of this copy"}  # fmt: skip
    (tmp / COPY_NOTE).write_text(json.dumps(note, indent=1) + "\n", encoding="utf-8")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return note


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=ROOT / "runs", help="folder for the runs")
    parser.add_argument("--only", nargs="*", help="recipe names (default: every demo)")
    parser.add_argument("--max-mb", type=float, default=5.0, help="largest file copied")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="build from a tree with uncommitted changes (a trial)")  # fmt: skip
    args = parser.parse_args()
    head, dirty = commit()
    if dirty and not args.allow_dirty:
        print("the tree has uncommitted changes: commit them first (or --allow-dirty for a "
              "trial; its cards then say '+ uncommitted changes')", file=sys.stderr)  # fmt: skip
        return 2
    from pipelines.annotation import ls_server
    from pipelines.export.card_check import check_card

    started_here = not ls_server.status()["running"]
    recipes = demos(args.only)
    try:  # every run first: a copy in data_cards/ would make the next card's tree dirty
        for i, path in enumerate(recipes):
            out = args.runs / path.stem
            print(f"[{i + 1}/{len(recipes)}] {path.stem}: rebuild", flush=True)
            for top in ("dataset", "release"):  # exported again: the card names this commit
                shutil.rmtree(out / top, ignore_errors=True)
            proc = run([sys.executable, "-m", "flows.cli", "rebuild", str(path), "--out", str(out)])
            if proc.returncode != 0:
                print(proc.stderr[-3000:], file=sys.stderr)
                return proc.returncode
            proc = run([sys.executable, "-m", "flows.cli", "baseline", str(out)])
            said = proc.stderr + proc.stdout
            if proc.returncode != 0 and not any(n in said for n in NO_BASELINE):
                print(proc.stderr[-3000:], file=sys.stderr)
                return proc.returncode
            print("  " + (proc.stdout.strip().replace("\n", "\n  ") or "no baseline"), flush=True)
    finally:
        if started_here:
            ls_server.down()
    failed = []
    for path in recipes:
        folder = CARDS / path.stem
        note = copy_release(args.runs / path.stem, folder, head, int(args.max_mb * 2**20))
        for entry in note["omitted"]:
            print(f"{path.stem}: left out {entry['path']} ({entry['bytes'] / 2**20:.1f} MB)")
        result = check_card(folder)
        if not result.ok:
            failed.append(path.stem)
            for m in result.mismatches:
                print(f"{path.stem}: card check: {m}", file=sys.stderr)
    if failed:
        print(f"card check failed on {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"{len(recipes)} cards in {CARDS} at {head[:12]}" + (" (dirty tree)" if dirty else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
