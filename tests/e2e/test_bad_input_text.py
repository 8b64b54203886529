"""Hostile text in the files and cards benchforge writes, and real files it must read
(issue 51, items 1, 2, 11 and 13's CRLF case): a KLUE-NER release sentence that a
spreadsheet would run as a formula is quoted; an entity's text with a backtick, markup or
a pipe reaches the data card, the Hub README and the HTML card as text; KLUE's own
v1.1 NER file (a tab in its header) and a CRLF file go through ``klue ner-layout`` byte
for byte."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def _elements(html: str) -> list[tuple[str, dict]]:
    """Every start tag of ``html`` with its attributes."""
    found: list[tuple[str, dict]] = []
    parser = HTMLParser()
    parser.handle_starttag = lambda tag, attrs: found.append((tag, dict(attrs)))
    parser.feed(html)
    return found


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


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        ("5\n", "expected a JSON object, got '5'"),
        ('{"klue_ner_layout": {"newline": "\\r"}}\n', "newline must be LF or CRLF"),
        ('{"klue_ner_layout": {"header": ["a\\nb"]}}\n', "none with a line break"),
        ('{"klue_ner_layout": {"header": 5}}\n', "its header a list of lines"),
    ],
)
def test_a_spans_file_with_a_bad_layout_line_is_refused(tmp_path, spans, message):
    """The spans file's layout line (line ends, header) is checked: a bad one exits 2
    naming the file and the line, with no traceback and nothing written."""
    source, out = tmp_path / "spans.jsonl", tmp_path / "back.tsv"
    source.write_text(spans, encoding="utf-8")
    done = cli("klue", "ner-layout", "from-spans", str(source), "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{source}:1: " in done.stderr and message in done.stderr, done.stderr
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


# the probe's entity texts (issue 51, item 2), and a pipe inside an entity's JSON
HOSTILE_ENTITIES = ["a`<img src=x onerror=alert(1)>", "d`<a href=javascript:alert(4)>x</a>",
                    "e|f", "``<script>alert(2)</script>``"]  # fmt: skip


def test_a_hostile_entity_reaches_the_cards_as_text(tmp_path):
    """Item 2: entity text with a backquote reached DATA_CARD.md and the Hub README as
    live HTML (through the artifact report's code spans and the card's warnings), the
    HTML card kept a real ``<img>``, and a ``|`` in an entity's JSON split a table row.

    Gold sentences whose entities are the probe's strings go through the real ``split``
    command (KLUE-NER's rule, which writes the artifact report), the card's label facts
    and warnings, the Hub README's field table and example, and the card's last pass and
    HTML page, as ``render_card`` puts them together (a full NER rebuild with Label
    Studio is tests/e2e/test_klue_ner.py's; these are the functions its card is made
    of). Rendered by CommonMark with raw HTML on and by Python-Markdown: no element or
    attribute from the data, every table row with its header's columns."""
    import markdown as python_markdown
    import pandas as pd
    from markdown_it import MarkdownIt

    from pipelines.core.markdown import neutralize
    from pipelines.export.card_facts import label_facts
    from pipelines.export.card_html import TAGS, to_html
    from pipelines.export.data_card import _artifacts, _label_tables
    from pipelines.export.hf_card import readme, release_layout
    from pipelines.export.warnings import card_warnings
    from pipelines.families.klue.ner import spans_json

    rows = []
    for n in range(40):
        entity = HOSTILE_ENTITIES[n % 4] + ("" if n < 4 else f" {n}")
        text = f"{entity} 씨가 {n}일 서울에 왔다."
        rows.append(
            {
                "item_id": f"i{n:03d}",
                "text": text,
                "source": "news",
                "label": spans_json([(0, len(entity), "PS" if n % 3 else "OG")], text),
            }
        )
    gold = pd.DataFrame(rows)
    gold.to_json(tmp_path / "gold.jsonl", orient="records", lines=True, force_ascii=False)
    done = cli("split", str(tmp_path / "gold.jsonl"), "--rule", "ner", "--out",
               str(tmp_path / "split"), "--text-columns", "text", "--entity-column", "label",
               "--source-column", "source")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    splits = pd.read_parquet(tmp_path / "split" / "splits.parquet")
    labels = label_facts(gold, gold, splits, numeric=False)
    labels["per_split"]["dev"] = {}  # every label absent from dev: the warning names them
    facts = {
        "labels": labels,
        "_figures": set(),
        "annotation": {"simulated": False},
        "artifacts_md": (tmp_path / "split" / "artifacts.md").read_text("utf-8"),
    }
    from pipelines.export.settings import CardSpec

    warnings = card_warnings(facts, {**CardSpec().model_dump(), "max_split_label_share": 0.0})
    assert any("absent from an evaluation split" in w for w in warnings)
    card = neutralize("\n\n".join([
        "# Data card: hostile", "## Warnings", *[f"- {w}" for w in warnings],
        "## Composition", _label_tables(facts), "## Artifacts", _artifacts(facts),
    ]))  # fmt: skip
    records = pd.DataFrame([{"guid": r["item_id"], "sentence": r["text"],
                             "entities": json.loads(r["label"])} for r in rows])  # fmt: skip
    release = release_layout({"train.jsonl": records}, {"train.jsonl": len(records)})
    hub = readme({"release": release, "recipe": {"name": "hostile", "language": "ko"},
                  "export": {"licence": {"release": "CC-BY-SA-4.0"}}, "task": "hostile"},
                 card)  # fmt: skip
    page = to_html(card, {}, "hostile")

    commonmark = MarkdownIt("commonmark", {"html": True}).enable("table")
    code_writes = {
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "p",
        "code",
        "ul",
        "li",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "strong",
        "em",
        "pre",
        "details",
        "summary",
    }  # fmt: skip (the collapsed report's, issue 54)
    for name, text in (("DATA_CARD.md", card), ("README.md", hub.split("\n---\n", 1)[1])):
        for html in (commonmark.render(text), python_markdown.markdown(text, extensions=[
                "tables", "fenced_code"])):  # fmt: skip
            found = _elements(html)
            assert {t for t, _ in found} <= code_writes, (name, {t for t, _ in found} - code_writes)
            assert all(set(a) <= {"class"} for _, a in found), (name, found)
            for table in html.split("<table>")[1:]:
                counts = {len(re.findall(r"<t[hd][ >]", r)) for r in table.split("<tr>")[1:]}
                assert len(counts) == 1, (name, counts)  # every row: the header's columns
    body = page.split("<body>", 1)[1]
    found = _elements(body)
    assert {t for t, _ in found} <= TAGS and "img" not in {t for t, _ in found}
    assert not any(a.startswith("on") for _, attrs in found for a in attrs)
    # the artifact report no longer prints span sets as labels (issue 54): it says why,
    # and the entity text reaches no element of either page
    assert "The gold labels are span sets" in body
    hub_body = to_html(hub.split("\n---\n", 1)[1], {}, "hostile").split("<body>", 1)[1]
    assert {t for t, _ in _elements(hub_body)} <= TAGS
