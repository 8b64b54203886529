"""Issue 33 item 3: a cached result's code key covers the modules it can run and no
others (pipelines.core.code), so that editing a family's module or card does not rerun
the ingest or another family's steps, while editing a stage or a language pack does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# in a copy of the tree: the ingest's and the pairs' code keys before and after each edit
# (the roots are read from flows/ without importing Prefect)
SCRIPT = """
import ast, json, sys
from pathlib import Path
from pipelines.core.code import code_key

def roots(module, name, known=None):
    for node in ast.parse(Path(module).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            src = ast.unparse(node.value).replace("*INGEST_CODE, ", "")
            value = ast.literal_eval(src)
            return (*(known or ()), *((value,) if isinstance(value, str) else value))

INGEST = roots("flows/ingest.py", "INGEST_CODE")
PAIR = roots("flows/pair.py", "PAIR_CODE", INGEST)

# a cached step's roots: its module (and, for an export, pipelines.export and the
# family's card module; pipelines.rebuild.export.export_code)
STS_ITEMS = ["pipelines.families.klue.sts"]
KOBEST_PROMPTS = ["pipelines.families.kobest.writing"]
KOBEST_EXPORT = ["pipelines.families.kobest.export", "pipelines.export",
                 "pipelines.families.kobest.card"]

def keys():
    return [code_key(r) for r in (INGEST, PAIR, STS_ITEMS, KOBEST_PROMPTS, KOBEST_EXPORT)]

out = {"base": keys(), "again": keys()}
for step, files in json.loads(sys.argv[1]):
    for f in files:
        p = Path(f)
        p.write_text(p.read_text(encoding="utf-8") + "\\n# edited\\n", encoding="utf-8")
    out[step] = keys()
print(json.dumps(out))
"""
EDITS = [
    ("kobest card", ["pipelines/families/kobest/card.md.j2"]),
    ("kobest duplicates", ["pipelines/families/kobest/duplicates.py"]),
    ("kobest prompts", ["pipelines/families/kobest/prompts.py"]),
    ("klue sts", ["pipelines/families/klue/sts.py"]),
    ("family", ["pipelines/families/kobest/card.md.j2", "pipelines/families/klue/sts.py",
                "pipelines/export/data_card.py", "pipelines/annotation/annotate.py"]),
    ("pairing", ["pipelines/pairing/gsm.py"]),
    ("language", ["pipelines/lang/ja.py"]),  # a language pack, found by discovery
    ("stage", ["pipelines/quality/pii.py"]),  # imported by the ingest's shards
]  # fmt: skip


def same(after: list[str], before: list[str]) -> list[int]:
    """Which keys an edit kept (1) and changed (0)."""
    return [int(a == b) for a, b in zip(after, before, strict=True)]


def test_editing_a_family_keeps_the_ingest_and_pair_keys_and_editing_a_stage_changes_them(
    tmp_path,
):
    for name in ("pipelines", "flows"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(EDITS)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    k = json.loads(proc.stdout.strip().splitlines()[-1])
    assert k["again"] == k["base"]  # the same source, the same keys
    # one family's card: its export reruns, its other steps and other families do not
    assert same(k["kobest card"], k["base"]) == [1, 1, 1, 1, 0]
    # a module only the export imports (through the revision step)
    assert same(k["kobest duplicates"], k["kobest card"]) == [1, 1, 1, 1, 0]
    # a module the prompts step imports (lazily, inside the step): it and the export
    # (which imports the prompts step's module) rerun, KLUE's steps do not
    assert same(k["kobest prompts"], k["kobest duplicates"]) == [1, 1, 1, 0, 0]
    assert same(k["klue sts"], k["kobest prompts"]) == [1, 1, 0, 1, 1]
    assert k["family"][:2] == k["base"][:2]  # a family, its card, the export, the annotation
    assert k["pairing"][0] == k["base"][0] and k["pairing"][1] != k["base"][1]
    assert k["language"][0] != k["pairing"][0]
    assert k["stage"][0] != k["language"][0]
