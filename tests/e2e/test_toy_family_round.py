"""Issue 53: a dataset family with a Label Studio round of its own and a recipe section
of its own rebuilds through the generic orchestrator and a real Label Studio server
without a file outside its package changing. The toy family (``tests/toyfam``) puts one
``LabelStudioRound("keywords")`` in its plan when its section says ``round: true``; the
shared push, simulate, wait and pull steps run it with the family's interface
(``tests/toyfam/keyword.xml``) and its value type, and a rerun creates no task twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "tests" / "toyfam" / "run.py"
STATUS = ["git", "status", "--porcelain", "--untracked-files=no"]


@pytest.fixture(scope="module")
def server(family_server):
    """The session's Label Studio server (tests/conftest.py); this file's project is
    named after its recipe, toy-round-demo."""
    return family_server


def _run(recipe: Path, out: Path, port: int) -> tuple[str, dict]:
    proc = subprocess.run(
        [sys.executable, str(RUN), str(recipe), str(out), str(port)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env=os.environ.copy(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return proc.stdout, json.loads(line[len("RESULT ") :])


def test_a_toy_family_with_a_round_of_its_own_rebuilds_through_label_studio(server, tmp_path):
    before = subprocess.run(STATUS, cwd=ROOT, capture_output=True, text=True).stdout
    (tmp_path / "corpus.txt").write_text(
        "a b | c | d e f\nhello world | x\nthe last word\n", encoding="utf-8"
    )
    (tmp_path / "recipe.yaml").write_text(
        "name: toy-round-demo\ntask: toy\ncorpora:\n  - name: toy\n    path: corpus.txt\n"
        "    format: txt\n    license: CC0-1.0\n    domain: test\n    style: formal\n"
        "    language: xx\ntoy:\n  min_words: 2\n  round: true\n",
        encoding="utf-8",
    )
    out, steps = _run(tmp_path / "recipe.yaml", tmp_path / "out", server["port"])
    # the family's one plan entry, written out into the shared round steps
    assert list(steps) == ["sentences", "push-keywords", "simulate-keywords", "wait-keywords",
                           "pull-keywords", "keywords", "export"]  # fmt: skip
    assert "4 tasks created, 0 already there" in steps["push-keywords"]["summary"]
    assert steps["wait-keywords"]["summary"] == "4/4 tasks finished"
    # three simulated people answered in Label Studio, read through the family's value type
    assert steps["keywords"]["annotators"] == 3
    assert steps["keywords"]["value_type"] == "toy_keyword"
    assert steps["keywords"]["unanimous_share"] == 1.0
    lines = (tmp_path / "out" / "dataset" / "train.jsonl").read_text(encoding="utf-8")
    assert [json.loads(x) for x in lines.splitlines()] == [
        {"text": "a b", "keyword": "b"}, {"text": "d e f", "keyword": "f"},
        {"text": "hello world", "keyword": "world"},
        {"text": "the last word", "keyword": "word"},
    ]  # fmt: skip
    _, again = _run(tmp_path / "recipe.yaml", tmp_path / "out", server["port"])
    assert "0 tasks created, 4 already there" in again["push-keywords"]["summary"]
    assert again["sentences"]["cached"] is True
    assert subprocess.run(STATUS, cwd=ROOT, capture_output=True, text=True).stdout == before
