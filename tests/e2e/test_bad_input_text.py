"""Hostile text in the files and cards benchforge writes, and real files it must read
(issue 51, items 1, 2, 11 and 13's CRLF case): a KLUE-NER release sentence that a
spreadsheet would run as a formula is quoted; an entity's text with a backtick, markup or
a pipe reaches the data card, the Hub README and the HTML card as text; KLUE's own
v1.1 NER file (a tab in its header) and a CRLF file go through ``klue ner-layout`` byte
for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _block(guid: str, tagged: str, text: str, tags: dict[int, str]) -> list[str]:
    return [f"## {guid}\t{tagged}", *[f"{c}\t{tags.get(i, 'O')}" for i, c in enumerate(text)]]


# KLUE-NER v1.1's own layout (klue-ner-v1.1_dev.tsv): five "## " header lines, the last
# holding a tab, then the sentences, a blank line between them
REAL_HEADER = [
    "## 클루 개체명 인식 (KLUE Named Entity Recognition) v1.1 개발 데이터",
    "## 출처 : KLUE 벤치마크 (https://klue-benchmark.com)",
    "## 라이선스 : CC BY-SA 4.0",
    "## 문장 형식 : 개체 태그가 달린 문장, 이어서 한 줄에 한 글자와 그 태그",
    "## 칼럼명 : CHAR\tNE_TAG",
]
S1 = "특히 영동고속도로 강릉 방향"
S2 = "=cmd|' /C calc'!A0 홍길동"
REAL = "\n".join([
    *REAL_HEADER,
    *_block("klue-ner-v1_dev_00000_news", "특히 <영동고속도로:LC> <강릉:LC> 방향", S1,
            {3: "B-LC", **{i: "I-LC" for i in range(4, 9)}, 10: "B-LC", 11: "I-LC"}),
    "",
    *_block("klue-ner-v1_dev_00001_nsmc", "=cmd|' /C calc'!A0 <홍길동:PS>", S2,
            {19: "B-PS", 20: "I-PS", 21: "I-PS"}),
    "", "",
])  # fmt: skip


def _round_trip(source: Path, tmp_path: Path) -> tuple[Path, list[dict]]:
    spans, back = tmp_path / "spans.jsonl", tmp_path / f"back-{source.name}"
    done = cli("klue", "ner-layout", "to-spans", str(source), "--out", str(spans))
    assert done.returncode == 0, done.stdout + done.stderr
    done = cli("klue", "ner-layout", "from-spans", str(spans), "--out", str(back))
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in spans.read_text(encoding="utf-8").splitlines()]
    return back, rows


def test_a_real_klue_ner_v11_file_with_a_tab_in_its_header_is_read(tmp_path):
    """Item 11: the header's ``## 칼럼명 : CHAR<TAB>NE_TAG`` line was taken for a sentence
    and the file refused at line 6; it is header, and the file round-trips."""
    source = tmp_path / "klue-ner-v1.1_dev.tsv"
    source.write_bytes(REAL.encode("utf-8"))
    back, rows = _round_trip(source, tmp_path)
    assert rows[0]["klue_ner_layout"]["header"] == REAL_HEADER
    assert [r["guid"] for r in rows[1:]] == ["klue-ner-v1_dev_00000_news",
                                            "klue-ner-v1_dev_00001_nsmc"]  # fmt: skip
    assert rows[1]["text"] == S1 and [e["text"] for e in rows[1]["entities"]] == [
        "영동고속도로", "강릉"]  # fmt: skip
    assert rows[2]["text"] == S2  # the exact text, no spreadsheet quote in the spans
    assert back.read_bytes() == source.read_bytes()
    # a blank line between the header and the first sentence is kept too
    spaced = REAL.replace("NE_TAG\n", "NE_TAG\n\n", 1)
    source.write_bytes(spaced.encode("utf-8"))
    back, rows = _round_trip(source, tmp_path)
    assert len(rows) == 3 and back.read_bytes() == source.read_bytes()


def test_a_crlf_ner_file_round_trips_byte_for_byte(tmp_path):
    """Item 13: the help says a file read and written back is byte-identical; a CRLF
    file came back with LF line ends. A byte order mark stays too; a file that mixes
    CRLF and LF is refused (exit 2) naming the first LF-only line, nothing written."""
    plain = REAL.replace(REAL_HEADER[-1] + "\n", "")  # no tab in the header here
    source = tmp_path / "crlf.tsv"
    source.write_bytes(plain.replace("\n", "\r\n").encode("utf-8"))
    back, rows = _round_trip(source, tmp_path)
    assert rows[1]["text"] == S1  # no carriage return in the text
    assert back.read_bytes() == source.read_bytes()
    source.write_bytes(("\ufeff" + plain.replace("\n", "\r\n")).encode("utf-8"))
    back, _ = _round_trip(source, tmp_path)
    assert back.read_bytes() == source.read_bytes()

    lines = plain.split("\n")
    mixed = "\r\n".join(lines[:6]) + "\n" + "\r\n".join(lines[6:])
    source.write_bytes(mixed.encode("utf-8"))
    out = tmp_path / "mixed.jsonl"
    done = cli("klue", "ner-layout", "to-spans", str(source), "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{source}:6: the file mixes CRLF and LF line ends" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("safe", [True, False])
def test_formula_sentences_in_the_ner_release_tsv_are_quoted(tmp_path, safe):
    """Item 1: ``release/klue-ner-v1.1_*.tsv`` carried sentence cells starting ``=``,
    ``@``, ``+``, ``-`` unquoted with ``export.spreadsheet_safe`` on. The release step
    runs on the demo recipe and JSON Lines files holding such sentences: with the
    setting on each such cell gets a leading ``'`` (the JSON Lines keep the exact text),
    off they are written unchanged; the files read back to the same sentences."""
    import yaml

    from pipelines.core.plugins import TASK_KINDS
    from pipelines.core.recipe import load_recipe
    from pipelines.core.steps import RunContext
    from pipelines.families.klue.ner import release_step
    from pipelines.families.klue.ner_layout import read_file

    recipe = yaml.safe_load((ROOT / "recipes" / "klue-ner-demo.yaml").read_text("utf-8"))
    for corpus in recipe["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((ROOT / "recipes" / corpus[key]).resolve())
    ner = recipe["ner"]
    for key in ("train", "dev"):
        ner["tagger"][key] = str((ROOT / "recipes" / ner["tagger"][key]).resolve())
    ner["public_figures"] = str((ROOT / "recipes" / ner["public_figures"]).resolve())
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "ner.xml")
    recipe.setdefault("export", {})["spreadsheet_safe"] = safe
    path = tmp_path / "klue-ner.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    loaded = load_recipe(path)
    hostile = ["=cmd|' /C calc'!A0", '@HYPERLINK("javascript:alert(1)")', "+1+1 더하기",
               "-2+3 빼기", "-3", "보통 문장"]  # fmt: skip
    out = tmp_path / "out"
    (out / "dataset").mkdir(parents=True)
    for split in ("train", "dev", "test"):
        rows = []
        for k, text in enumerate(hostile):
            rows.append({"guid": f"klue-ner-v1.1_{split}_{k:05d}", "sentence": text,
                         "tokens": list(text), "ner_tags": ["O"] * len(text),
                         "entities": [], "source": "x"})  # fmt: skip
        rows[-1]["entities"] = [{"start": 0, "end": 2, "label": "DT", "text": "보통"}]
        (out / "dataset" / f"{split}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    ctx = RunContext(loaded, path, out, TASK_KINDS.get("klue-ner"), simulated=True)
    release_step(ctx)
    files = sorted((out / "release").glob("*.tsv"))
    assert len(files) == 3
    for file in files:
        text = file.read_text(encoding="utf-8")
        cells = [line.split("\t", 1)[1] for line in text.splitlines() if line.startswith("## k")]
        if safe:
            assert cells == ["'" + h for h in hostile[:4]] + ["-3", "<보통:DT> 문장"]
        else:  # a number and plain text stay as they are either way
            assert cells == [*hostile[:5], "<보통:DT> 문장"]
        assert [s.text for s in read_file(file).sentences] == hostile
