"""Input files a recipe names, read with bad content (issue 51, items 8-10): each is a
clear error naming the file, the line (or entry) and the problem, never a
``KeyError``, ``ValueError`` or ``UnicodeDecodeError`` traceback, and a file that
yields nothing is refused where it is read, not deep in a later step."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from pipelines.annotation.gold_items import GoldItemsError, read_gold_items
from pipelines.annotation.label_config import parse_label_config
from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, control_character_line, read_text
from pipelines.families.jcqa.concepts import (
    TriplesError,
    check_triples,
    read_triples,
    read_writers,
)
from pipelines.families.klue.kmou import KmouError, check_kmou, read_kmou
from pipelines.families.klue.relations import RELATIONS, ReInputError, read_kb, read_relations
from pipelines.families.kobest.simulate import read_seeds
from pipelines.families.reading.squad import SquadLayoutError, read_file

ROOT = Path(__file__).resolve().parents[3]
LABELS = {r["label"] for r in json.loads(RELATIONS.read_text(encoding="utf-8"))["relations"]}
KMOU = "; 김철수는 서울에 산다.\n$<김철수:PER>는 <서울:LOC>에 산다.\n김철수\tNNP\n\n"


# --------------------------------------------------------------- the shared reader


def test_a_byte_that_is_not_utf8_names_the_file_and_the_line(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"one\ntwo\nab\xff\xfecd\n")
    with pytest.raises(TextFileError, match=rf"^{path}:3: cannot decode as utf-8 \(byte 2 "):
        read_text(path)
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(b"one\n\xff\n"))
    with pytest.raises(TextFileError, match=rf"^{gz}:2: cannot decode"):
        read_text(gz)
    with pytest.raises(TextFileError, match="file not found"):
        read_text(tmp_path / "none.txt")
    assert issubclass(TextFileError, BenchforgeError)


def test_control_characters_are_found_with_their_line():
    assert control_character_line("a\tb\r\nc") is None
    assert control_character_line("a\nb\x00c") == (2, "\x00")


# ------------------------------------------------------------------ KLUE-RE's files


def _relations(tmp_path: Path, change) -> Path:
    data = json.loads(RELATIONS.read_text(encoding="utf-8"))
    change(data["relations"])
    path = tmp_path / "relations.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda rs: rs[3].pop("subject"), r"relations\[3\]: no subject"),
        (lambda rs: rs[5].pop("label"), r"relations\[5\]: no label"),
        (lambda rs: rs.append(dict(rs[2])), r"relations\[30\]: label 'org:founded' repeats "
                                            r"relations\[2\]"),
        (lambda rs: rs[4].update(object=["PLACE"]), r"relations\[4\] .*unknown types \['PLACE'\]"),
        (lambda rs: rs[4].update(label=""), r"relations\[4\]: label '' is not a relation name"),
        (lambda rs: rs.__setitem__(slice(1, None), []), "no relation besides no_relation"),
    ],
)  # fmt: skip
def test_a_bad_relation_list_is_an_error_naming_the_entry(tmp_path, change, message):
    path = _relations(tmp_path, change)
    with pytest.raises(ReInputError, match=message):
        read_relations(path)


def test_an_undecodable_or_malformed_relation_list_names_the_line(tmp_path):
    path = tmp_path / "relations.json"
    path.write_bytes(b'{"relations": [\n  {"label": "a\xff"}]}\n')
    with pytest.raises(ReInputError, match=rf"^{path}:2: cannot decode"):
        read_relations(path)
    path.write_text('{"relations": [\n  {"label": "a",}]}\n', encoding="utf-8")
    with pytest.raises(ReInputError, match=rf"^{path}:2: not JSON"):
        read_relations(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("# a comment\n김무성\tper:employee_of\n", r":2: expected subject<TAB>relation<TAB>"
                                                   r"object, got 2 field"),
        ("김무성\tper:boss_of\t새누리당\n", r":1: unknown relation 'per:boss_of'"),
        ("김무성\tper:employee_of\t새누리당\n김무성\tper:employee_of\t새누리당\n",
         r":2: '김무성' per:employee_of '새누리당' repeats the triple on line 1"),
        ("김무성\tper:employee_of\t새누리당\n김무성\tper:origin\t새누리당\n",
         r":2: .* gives the pair a second relation \('per:employee_of'\) on line 1"),
        ("# only comments\n\n", r": no triples"),
        ("김무성\tper:employee_of\t새누리\x00당\n", r":1: a control character"),
        ("\tper:employee_of\t새누리당\n", r":1: an empty subject or object"),
    ],
)  # fmt: skip
def test_a_bad_knowledge_base_names_the_line(tmp_path, content, message):
    path = tmp_path / "kb.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ReInputError, match=message):
        read_kb(path, LABELS)


def test_the_shipped_relation_list_and_knowledge_base_read():
    schema = read_relations(RELATIONS)["relations"]
    assert len(schema) == 30
    assert len(read_kb(ROOT / "data/demo/klue-re/kb.tsv", LABELS)) > 10


def test_a_kmou_file_that_does_not_decode_or_holds_no_sentence_is_an_error(tmp_path):
    bad = tmp_path / "ner.train.gz"
    bad.write_bytes(gzip.compress(KMOU.encode() + b"; \xff\n"))
    with pytest.raises(KmouError, match=rf"^{bad}:5: cannot decode as utf-8"):
        read_kmou(bad)
    with pytest.raises(KmouError, match=rf"^re.taggers\[a\].train: {bad}:5: cannot decode"):
        check_kmou(bad, None, "re.taggers[a].train")
    empty = tmp_path / "ner.dev"
    empty.write_text("나는 그냥 글이다\n\n", encoding="utf-8")
    with pytest.raises(KmouError, match="no usable sentence .*no_inline_line"):
        check_kmou(empty, None, "ner.tagger.dev")
    good = tmp_path / "ner.ok"
    good.write_text(KMOU, encoding="utf-8")
    check_kmou(good, None, "ner.tagger.dev")


# ------------------------------------------------------------- JSQuAD, JCommonsenseQA


def test_an_undecodable_squad_file_names_the_line(tmp_path):
    path = tmp_path / "jsquad.json"
    path.write_bytes(b'{"data": [\n{"title": "\xe3\x81"}]}\n')
    with pytest.raises(SquadLayoutError, match=rf"^{path}:2: cannot decode as utf-8"):
        read_file(path)


def test_a_triples_file_that_yields_no_question_set_is_refused(tmp_path):
    path = tmp_path / "triples.tsv"
    path.write_text("台所\tAtLocation\t冷蔵庫\n台所\tAtLocation\t包丁\n台所\tRelatedTo\t鍋\n"
                    "台所\tRelatedTo\tまな板\n台所\tRelatedTo\t皿\n", encoding="utf-8")  # fmt: skip
    triples = read_triples(path)
    with pytest.raises(TriplesError, match="no question set can be drawn: 5 triple"):
        check_triples(triples, ["AtLocation"], path)
    check_triples(triples, ["RelatedTo"], path)  # three targets: one set


def test_a_repeated_triple_or_a_bad_writers_file_names_the_line(tmp_path):
    path = tmp_path / "triples.tsv"
    path.write_text("台所\tAtLocation\t冷蔵庫\n\n台所\tAtLocation\t冷蔵庫\n", encoding="utf-8")
    with pytest.raises(
        TriplesError, match="line 3: the triple 台所 AtLocation 冷蔵庫 repeats line 1"
    ):
        read_triples(path)
    with pytest.raises(TriplesError, match="file not found"):
        read_writers(tmp_path / "writers.jsonl")
    writers = tmp_path / "writers.jsonl"
    row = {"source": "台所", "relation": "AtLocation", "target": "包丁", "question": "?"}
    writers.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(TriplesError, match="line 2: 台所 AtLocation 包丁 is given twice"):
        read_writers(writers)


def test_a_missing_or_repeating_seeds_file_is_a_one_line_error(tmp_path):
    with pytest.raises(BenchforgeError, match="file not found"):
        read_seeds(tmp_path / "seeds.jsonl", "copa")
    seeds = ROOT / "data/demo/kobest/copa_seeds.jsonl"
    lines = seeds.read_text(encoding="utf-8").splitlines()
    twice = tmp_path / "seeds.jsonl"
    twice.write_text("\n".join([lines[0], lines[1], lines[0]]) + "\n", encoding="utf-8")
    with pytest.raises(BenchforgeError, match=r"seeds.jsonl:3: id .* repeats line 1"):
        read_seeds(twice, "copa")


# ------------------------------------------------------------------ a pilot's gold


def test_a_gold_answer_outside_its_items_options_is_refused(tmp_path):
    config = parse_label_config(ROOT / "annotation_configs" / "re.xml")
    rows = [json.loads(x) for x in (ROOT / "data/demo/klue-re/pilot.jsonl").read_text(
        encoding="utf-8").splitlines()]  # fmt: skip
    path = tmp_path / "pilot.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    assert len(read_gold_items(path, config, "relation")) == len(rows)
    rows[1]["value"] = "org:dissolved"  # a PER-LOC pair: not among its options
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with pytest.raises(GoldItemsError, match="line 2: value 'org:dissolved' is not one of its "
                                             "options in 'relation_options'"):  # fmt: skip
        read_gold_items(path, config, "relation")
    rows[1]["value"] = "per:origin"
    rows[1]["sentence"] += "\x00"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with pytest.raises(GoldItemsError, match="line 2: a control character"):
        read_gold_items(path, config, "relation")


# ------------------------------------------------- NUL bytes and over-long fields


def test_a_corpus_document_with_a_nul_is_dropped_with_its_reason(tmp_path):
    """Item 10: NUL bytes were carried into releases; nothing is lost: the document is
    a dropped row with reason ``control_characters``."""
    from pipelines.core.recipe import CorpusSpec
    from pipelines.ingest.readers import read_documents

    path = tmp_path / "c.jsonl"
    texts = ["좋은 영화였어요", "나쁜\x00영화", "그저 그래요"]
    path.write_text("".join(json.dumps({"review": t}) + "\n" for t in texts), encoding="utf-8")
    corpus = CorpusSpec(name="c", path="x", license="CC0-1.0", domain="review",
                        style="colloquial", format="jsonl", text_field="review")  # fmt: skip
    result = read_documents(corpus, path)
    assert result.kept["text"].tolist() == [texts[0], texts[2]]
    assert result.dropped[["text", "reason", "detail", "line"]].to_dict("records") == [
        {"text": texts[1], "reason": "control_characters", "detail": "NUL at character 2",
         "line": 2}]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("한라산은\x00 높다", r"seeds.jsonl:2: field 'paragraph' holds the control character "
                             r"U\+0000 at character 4"),
        ("가" * 360_000, r"seeds.jsonl:2: field 'paragraph' is 360,000 characters long "
                        r"\(more than 100,000\)"),
    ],
)  # fmt: skip
def test_a_structured_source_field_with_a_nul_or_360000_characters_is_refused(
    tmp_path, value, message
):
    from pipelines.core.line_files import InputError, read_json_lines

    path = tmp_path / "seeds.jsonl"
    rows = [{"id": "a", "paragraph": "짧은 글"}, {"id": "b", "paragraph": value}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with pytest.raises(InputError, match=message):
        read_json_lines(path, ["id", "paragraph"], InputError)


def test_a_kornli_sentence_with_a_nul_is_refused(tmp_path):
    from types import SimpleNamespace

    from pipelines.families.kornlu.sources import SourceError, read_pairs

    path = tmp_path / "en.jsonl"
    rows = [
        {"sentence1": "A man.", "sentence2": "A person.", "gold_label": "entailment"},
        {"sentence1": "A dog\u0000.", "sentence2": "A cat.", "gold_label": "neutral"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    corpus = SimpleNamespace(format="jsonl", encoding="utf-8", has_header=True, columns=None,
                             limit=None)  # fmt: skip
    with pytest.raises(SourceError, match="line 2: sentence1 holds the control character"):
        read_pairs(path, corpus, "gold_label", ("entailment", "neutral", "contradiction"))


def test_a_reading_paragraph_with_a_nul_is_dropped_with_its_reason():
    from types import SimpleNamespace

    from pipelines.families.reading.sources import Article, select_paragraphs

    art = Article("제목", ["첫 문단은 충분히 긴 문장이다.", "둘째 문단\x00도 충분히 긴 문장이다."])
    spec = SimpleNamespace(seed=0, top_share=1.0, articles=1, pack=False, min_chars=5,
                           max_chars=100, paragraphs_per_article=5)  # fmt: skip
    kept, dropped, _ = select_paragraphs([("c", art)], [1.0], spec)
    assert kept["paragraph"].tolist() == [art.units[0]]
    assert dropped["reason"].tolist() == ["control_characters"]


def test_a_repeated_question_id_in_a_squad_file_is_refused(tmp_path):
    """Item 10: duplicate ids in an input file were accepted."""
    qa = {"question": "どこ？", "id": "q1", "answers": [{"text": "東京", "answer_start": 0}],
          "is_impossible": False}  # fmt: skip
    data = {
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {"qas": [qa], "context": "東京は首都。"},
                    {"qas": [qa], "context": "東京は都市。"},
                ],
            }
        ]
    }
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(
        SquadLayoutError,
        match=r"paragraphs\[1\]\.qas\[0\]: id 'q1' repeats "
        r"data\[0\]\.paragraphs\[0\]\.qas\[0\]",
    ):
        read_file(path)
