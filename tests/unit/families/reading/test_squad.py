"""JSQuAD's SQuAD layout (pipelines/families/reading/squad.py): a release file read into
records and written back byte for byte, ``read(write(x)) == x`` on generated files, and
every malformed file or wrong answer named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.families.reading.squad import SquadLayoutError, read_file, read_squad, write_squad

ROOT = Path(__file__).resolve().parents[4]
HEAD = ROOT / "data" / "demo" / "jglue" / "jsquad-v1.3_valid-v1.3.head3.json"


def test_a_jsquad_release_file_comes_back_byte_identical(tmp_path):
    release = read_file(HEAD)
    questions = [r for r in release.records if "id" in r]
    assert len(questions) == 462 and len({r["article"] for r in release.records}) == 3
    first = questions[0]
    assert list(first)[:4] == ["article", "paragraph", "title", "context"]
    assert first["context"][first["answers"][0]["answer_start"]:].startswith(
        first["answers"][0]["text"])  # fmt: skip
    assert write_squad(release) == HEAD.read_text(encoding="utf-8")
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "jglue", "squad-roundtrip", str(HEAD), "--out",
         str(out), "--records", str(tmp_path / "r.jsonl")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "462 questions in 3 articles" in proc.stdout and "byte-identical" in proc.stdout
    assert out.read_bytes() == HEAD.read_bytes()
    assert len((tmp_path / "r.jsonl").read_text(encoding="utf-8").splitlines()) == 462


def _file(draw_articles: list) -> dict:
    return {"version": "v2.0", "data": draw_articles}


TEXT = st.text(alphabet="梅雨日本あいうabc ?。", min_size=1, max_size=12)


@st.composite
def squad_files(draw) -> dict:
    articles = []
    for a in range(draw(st.integers(0, 3))):
        paragraphs = []
        for p in range(draw(st.integers(0, 3))):
            context = draw(st.text(alphabet="梅雨日本あいうabc ", min_size=1, max_size=30))
            qas = []
            for q in range(draw(st.integers(0, 3))):
                answers = []
                for _ in range(draw(st.integers(0, 2))):
                    start = draw(st.integers(0, len(context) - 1))
                    end = draw(st.integers(start + 1, len(context)))
                    answers.append({"text": context[start:end], "answer_start": start})
                qa = {"question": draw(TEXT).strip() or "何?", "id": f"a{a}p{p}q{q}",
                      "answers": answers}  # fmt: skip
                if draw(st.booleans()):
                    qa["is_impossible"] = not answers
                qas.append(qa)
            paragraphs.append({"qas": qas, "context": context} if draw(st.booleans())
                              else {"context": context, "qas": qas})  # fmt: skip
        articles.append({"title": draw(TEXT), "paragraphs": paragraphs})
    return _file(articles)


@settings(max_examples=80, deadline=None)
@given(squad_files(), st.sampled_from([None, 2]), st.booleans())
def test_read_write_read_is_the_identity(data, indent, ascii_only):
    """Any layout read and written back gives the same JSON value and, for a file that
    json.dumps wrote, the same bytes."""
    text = json.dumps(data, ensure_ascii=ascii_only, indent=indent) + "\n"
    release = read_squad(text)
    again = write_squad(release)
    assert json.loads(again) == data
    if all(a["paragraphs"] for a in data["data"]) or not data["data"]:
        order_kept = all(list(p) == list(a["paragraphs"][0]) for a in data["data"]
                         for p in a["paragraphs"])  # fmt: skip
        if order_kept and len({tuple(a["paragraphs"][0]) for a in data["data"]}) <= 1:
            assert again == text
    assert read_squad(again).records == release.records


def _one(answer: dict, question: str = "梅雨とは?") -> str:
    qa = {"question": question, "id": "q1", "answers": [answer]}
    return json.dumps({"data": [{"title": "t", "paragraphs": [
        {"qas": [qa], "context": "梅雨は雨季の一種"}]}]}, ensure_ascii=False)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            _one({"text": "雨季", "answer_start": 2}),
            r"data\[0\].paragraphs\[0\].qas\[0\] "
            r"\(id 'q1'\): answers\[0\] '雨季' is not the paragraph's text at 2",
        ),
        (_one({"text": "雨季", "answer_start": 40}), "is outside its paragraph"),
        (_one({"text": "雨季"}), "needs text and answer_start"),
        (_one({"text": "雨季", "answer_start": 3}, question=" "), "empty question"),
        ('{"data": [', "not JSON"),
        ('{"rows": []}', "expected an object with a 'data' list"),
    ],
)
def test_a_wrong_answer_or_malformed_file_is_named(text, message):
    with pytest.raises(SquadLayoutError, match=message):
        read_squad(text, "f.json")


def test_the_command_exits_2_on_a_wrong_answer_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(_one({"text": "雨季", "answer_start": 0}), encoding="utf-8")
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "jglue", "squad-roundtrip", str(bad), "--out",
         str(out)], cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2 and "bad.json" in proc.stderr and "'q1'" in proc.stderr
    assert not out.exists()
