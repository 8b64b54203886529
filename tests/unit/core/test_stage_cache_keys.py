"""Issue 53 item 4: the split and agreement stages are keyed like every cached step
(``pipelines.core.code.cache_key``: inputs, settings and the code that computes them).

Editing a split rule's module reruns a cached split (its key held no code before) and
nothing upstream of it: the agreement stays cached, and no module outside
``pipelines.splits`` reaches the rule, so no other step's code key moves. An edit that
leaves the split's files byte-identical leaves the export's inputs, hence its key,
unchanged (it stays cached); one that changes what the rule computes changes them (it
reruns). Each edit is made in a copy of the tree, run in a fresh interpreter."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# one run of both stages in a fresh interpreter (a module edited after its import would
# still run its old code): whether each wrote its outputs, the split's key and files,
# and the code keys of every other stage and the families
SCRIPT = r"""
import hashlib, json, sys
from pathlib import Path
from pipelines.agreement.rules import AgreementSettings, run_agree
from pipelines.core.code import code_key
from pipelines.splits.base import SplitSettings
from pipelines.splits.run import run_split

work = Path(sys.argv[1])
OTHERS = ["pipelines.families", "pipelines.export", "pipelines.agreement",
          "pipelines.ingest", "pipelines.annotation", "pipelines.quality"]
split = run_split(work / "gold.parquet", SplitSettings(rule="sts"), work / "split",
                  work / "items.parquet")
agreed = run_agree(work / "votes.parquet", AgreementSettings(), work / "agree")
folder = work / "split"
print(json.dumps({
    "split_written": split["written"], "agree_written": agreed["written"],
    "split_key": json.loads((folder / "manifest.json").read_text())["key"],
    "split_files": {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in sorted(folder.glob("*")) if p.name != "manifest.json"},
    "others": [code_key([m]) for m in OTHERS],
}))
"""
TEXTS = [
    "배우들의 연기가 정말 좋았어요.",
    "다시 보고 싶은 영화입니다.",
    "음악이 아름다웠다.",
    "줄거리가 조금 지루했다.",
    "결말이 인상 깊었습니다.",
    "감독의 연출이 돋보였다.",
]


def _inputs(work: Path) -> None:
    """An STS gold table, its items, and three annotators' ratings of them."""
    import pandas as pd

    ids = [f"i{i}" for i in range(24)]
    pd.DataFrame({"item_id": ids, "label": [float(i % 6) for i in range(24)]}).to_parquet(
        work / "gold.parquet"
    )
    pd.DataFrame({
        "item_id": ids,
        "sentence1": [f"{TEXTS[i % 6]} {i}" for i in range(24)],
        "sentence2": [f"{TEXTS[(i + 1) % 6]} ({i})" for i in range(24)],
        "source": ["nsmc" if i % 2 else "parakqc" for i in range(24)],
    }).to_parquet(work / "items.parquet")  # fmt: skip
    votes = [{"item_id": ids[i], "annotator_id": f"a{a}@x",
              "value": float(min(5, i % 6 + (a == 2) * 0.5))}
             for i in range(24) for a in range(3)]  # fmt: skip
    pd.DataFrame(votes).to_parquet(work / "votes.parquet")


def _edit(path: Path, old: str | None = None, new: str = "") -> None:
    text = path.read_text(encoding="utf-8")
    if old is None:
        text += "\n# edited\n"
    else:
        assert text.count(old) == 1, (path, old)
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")


def test_editing_a_split_rule_reruns_the_split_and_only_what_is_downstream(tmp_path):
    tree, work = tmp_path / "tree", tmp_path / "work"
    shutil.copytree(ROOT / "pipelines", tree / "pipelines",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    work.mkdir()
    _inputs(work)

    def run() -> dict:
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(work)], cwd=tree,
                              capture_output=True, text=True, timeout=300,
                              env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin",
                                   "HOME": str(tmp_path)})  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    first, again = run(), run()
    assert first["split_written"] and first["agree_written"]
    # the same inputs, settings and code: nothing recomputed, nothing rewritten
    assert not again["split_written"] and not again["agree_written"]
    assert again["split_key"] == first["split_key"]

    # the rule's module: the split reruns; the agreement (upstream) stays cached, and no
    # other stage's or family's code key moves
    _edit(tree / "pipelines" / "splits" / "sts.py")
    comment = run()
    assert comment["split_written"] and comment["split_key"] != again["split_key"]
    assert not comment["agree_written"]
    assert comment["others"] == again["others"]
    # its files are byte-identical: the export's inputs and key are unchanged, it stays
    # cached
    assert comment["split_files"] == again["split_files"]

    # another rule's module: nothing reruns
    _edit(tree / "pipelines" / "splits" / "nli.py")
    other = run()
    assert not other["split_written"] and not other["agree_written"]
    assert other["split_key"] == comment["split_key"]

    # the artifact report's module: the split reruns, not the agreement
    _edit(tree / "pipelines" / "splits" / "annotation_artifacts.py")
    report = run()
    assert report["split_written"] and not report["agree_written"]
    assert report["split_key"] != other["split_key"]

    # the agreement's value type: the agreement is rewritten, the split is not
    _edit(tree / "pipelines" / "annotation" / "values" / "rating.py")
    value = run()
    assert value["agree_written"] and not value["split_written"]
    assert value["split_key"] == report["split_key"]

    # an edit of what the rule computes (the morpheme overlap it records and prefers
    # by): the split reruns and its table changes, so the export's declared inputs (their
    # SHA-256, in its key) change and it reruns
    _edit(tree / "pipelines" / "splits" / "sts.py", "return len(sa & sb) / len(sa | sb)",
          "return 0.5 * len(sa & sb) / len(sa | sb)")  # fmt: skip
    change = run()
    assert change["split_written"] and not change["agree_written"]
    assert change["split_files"]["splits.parquet"] != value["split_files"]["splits.parquet"]
    assert change["others"] == value["others"]
