"""JCommonsenseQA's question filters (JGLUE 3.4.2, ``pipelines.families.jcqa.filters``):
each filter on a question made to fail it, the filters over the shipped release (a
self-test: the release was filtered this way), a malformed line named by file and line,
and the ``jglue jcqa-filter`` command."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipelines.families.jcqa import filters as jcqa

ROOT = Path(__file__).resolve().parents[4]
JGLUE = ROOT / "data" / "demo" / "jglue"


def test_jcommonsenseqa_filters_on_the_release():
    questions = jcqa.read_questions(JGLUE / "jcommonsenseqa-v1.3_valid-v1.3.json")
    checked = jcqa.run_filters(questions)
    info = jcqa.report(checked)
    assert info["questions"] == 1119
    assert info["pass_rate"] > 0.99  # a self-test: the release was filtered this way
    assert info["filters"]["spelling_variants"]["flagged"] == 3


@pytest.mark.parametrize(
    ("question", "choices", "failed"),
    [
        ("犬の鳴き声は何という？", ["猫", "犬", "鳥", "馬", "牛"], "contains_choice"),
        ("3文字の果物は何？", ["りんご", "みかん", "ぶどう", "もも", "なし"], "xx_characters"),
        ("朝に食べるものは何", ["パン", "ご飯", "卵", "納豆", "味噌汁"], "no_question_mark"),
        ("家を建てる材料は？", ["レンガ", "煉瓦", "木", "石", "紙"], "spelling_variants"),
        # issue 37: the same word twice is no set of five answers either
        ("家を建てる材料は？", ["木", "レンガ", "木", "石", "紙"], "spelling_variants"),
        ("朝に食べるものは何？", ["パン", "ご飯", "卵", "納豆", "味噌汁"], ""),
    ],
)
def test_each_jcqa_filter(question, choices, failed):
    q = pd.DataFrame([{"q_id": 1, "question": question,
                       **{f"choice{i}": c for i, c in enumerate(choices)}}])  # fmt: skip
    assert jcqa.run_filters(q).iloc[0]["failed"] == failed


def test_malformed_jcqa_line_names_the_file_and_line(tmp_path):
    bad = tmp_path / "q.json"
    bad.write_text('{"q_id": 1, "question": "何？", "choice0": "a", "choice1": "b", '
                   '"choice2": "c", "choice3": "d", "choice4": "e"}\n{"q_id": 2,\n',
                   encoding="utf-8")  # fmt: skip
    with pytest.raises(jcqa.JcqaError, match=r"q.json:2: malformed JSON"):
        jcqa.read_questions(bad)


def test_cli_jcqa_filter_reports_and_exits_2_on_bad_lines(tmp_path):
    import subprocess
    import sys

    src = JGLUE / "jcommonsenseqa-v1.3_valid-v1.3.json"
    run = subprocess.run([sys.executable, "-m", "flows.cli", "jglue", "jcqa-filter", str(src),
                          "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "1,116 of 1,119 questions pass every filter" in run.stdout
    kept = (tmp_path / "out" / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    dropped = pd.read_parquet(tmp_path / "out" / "dropped.parquet")
    assert len(kept) == 1116 and len(dropped) == 3 and (dropped["failed"] != "").all()
    bad = tmp_path / "bad.json"
    bad.write_text(src.read_text(encoding="utf-8").splitlines()[0] + "\n{oops\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "flows.cli", "jglue", "jcqa-filter", str(bad),
                          "--out", str(tmp_path / "bad")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert run.returncode == 2 and "bad.json:2: malformed JSON" in run.stderr
    assert not (tmp_path / "bad").exists()
