"""Readers for the four formats (gzipped or not) and the errors bad input must raise."""

import gzip
import json
from pathlib import Path

import pytest

from pipelines.core.line_files import InputError
from pipelines.core.recipe import CorpusSpec
from pipelines.ingest.readers import read_documents


def spec(**kw) -> CorpusSpec:
    base = {
        "name": "c",
        "path": "x",
        "license": "CC0-1.0",
        "domain": "review",
        "style": "colloquial",
    }
    return CorpusSpec(**{**base, **kw})


def write(path: Path, text: str, gz: bool = False) -> Path:
    data = text.encode("utf-8")
    if gz:
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def test_jsonl_gz_with_ids_dates_and_meta(tmp_path):
    lines = [
        {"review": "재밌어요", "date": "15.08.25", "rating": "10", "review_id": "7"},
        {"review": "  ", "date": "15.08.26", "rating": "1", "review_id": "8"},
    ]
    path = write(
        tmp_path / "r.jsonl.gz",
        "\n\n".join(json.dumps(x, ensure_ascii=False) for x in lines),
        gz=True,
    )
    c = spec(
        format="jsonl",
        text_field="review",
        id_field="review_id",
        date_field="date",
        date_format="%y.%m.%d",
        keep_fields=["rating"],
    )
    result = read_documents(c, path)
    assert result.kept["doc_id"].tolist() == ["c:7"]
    assert result.kept["date"].tolist() == ["2015-08-25"]
    assert json.loads(result.kept["meta"][0]) == {"rating": "10"}
    assert result.dropped["reason"].tolist() == ["blank_line", "empty_document"]
    assert result.dropped["line"].tolist() == [2, 3]


def test_tsv_without_header_and_csv_with_quotes(tmp_path):
    tsv = write(tmp_path / "p.txt", "0\t0\t메일을 다 비울까?\n0\t1\t안읽은 것만 지울까?\n")
    c = spec(format="tsv", has_header=False, columns=["a", "b", "text"], text_field="text")
    assert read_documents(c, tsv).kept["text"].tolist() == [
        "메일을 다 비울까?",
        "안읽은 것만 지울까?",
    ]
    csv_path = write(
        tmp_path / "t.csv", 'title\n"[공식입장] ""정준영 출연 중단"""\n"여러 줄\n제목"\n'
    )
    c = spec(format="csv", text_field="title")
    docs = read_documents(c, csv_path).kept
    assert docs["text"].tolist() == ['[공식입장] "정준영 출연 중단"', "여러 줄\n제목"]
    assert docs["line"].tolist() == [2, 4]


def test_txt_one_document_per_line(tmp_path):
    path = write(tmp_path / "u.txt.gz", "첫 댓글\n\n둘째 댓글\n", gz=True)
    result = read_documents(spec(format="txt"), path)
    assert result.kept["text"].tolist() == ["첫 댓글", "둘째 댓글"]
    assert result.kept["doc_id"].tolist() == ["c:1", "c:3"]
    assert result.dropped["reason"].tolist() == ["empty_document"]


@pytest.mark.parametrize(
    ("content", "kw", "message"),
    [
        ('{"review": "좋아요"}\n{"review": "나빠요"\n', {}, r"r\.jsonl:2: malformed JSON"),
        ('{"review": "좋아요"}\n{"text": "나빠요"}\n', {}, r"r\.jsonl:2: missing field 'review'"),
        ('["좋아요"]\n', {}, r"r\.jsonl:1: expected a JSON object"),
        ('{"review": {"a": 1}}\n', {}, r"r\.jsonl:1: field 'review' is dict, not text"),
        (
            '{"review": "a", "id": "1"}\n{"review": "b", "id": "1"}\n',
            {"id_field": "id"},
            r"r\.jsonl:2: id '1' repeats the id on line 1",
        ),
        (
            '{"review": "a", "d": "2015/08/25"}\n',
            {"date_field": "d", "date_format": "%y.%m.%d"},
            r"r\.jsonl:1: date '2015/08/25' does not match",
        ),
    ],
)
def test_bad_jsonl_names_file_and_line(tmp_path, content, kw, message):
    path = write(tmp_path / "r.jsonl", content)
    with pytest.raises(InputError, match=message):
        read_documents(spec(format="jsonl", text_field="review", **kw), path)


def test_bad_encoding_names_the_line(tmp_path):
    path = tmp_path / "e.txt"
    path.write_bytes("첫 줄\n둘째 줄\n".encode() + "셋째 줄\n".encode("euc-kr"))
    with pytest.raises(InputError, match=r"e\.txt:3: cannot decode as utf-8"):
        read_documents(spec(format="txt"), path)
    # the same file read with the right encoding for its last line fails on line 1 instead
    with pytest.raises(InputError, match=r"e\.txt:1: cannot decode as ascii"):
        read_documents(spec(format="txt", encoding="ascii"), path)


def test_wrong_column_count_and_missing_file(tmp_path):
    path = write(tmp_path / "k.tsv", "comments\thate\n좋아요\tnone\n싫어요\n")
    with pytest.raises(InputError, match=r"k\.tsv:3: expected 2 columns"):
        read_documents(spec(format="tsv", text_field="comments"), path)
    with pytest.raises(InputError, match=r"nope\.jsonl: file not found"):
        read_documents(spec(format="jsonl", text_field="x"), tmp_path / "nope.jsonl")


def test_truncated_gzip_is_an_input_error(tmp_path):
    full = gzip.compress(("좋은 영화\n" * 5000).encode())
    path = tmp_path / "cut.txt.gz"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(InputError, match=r"cut\.txt\.gz:\d+: cannot read"):
        read_documents(spec(format="txt"), path)


def test_limit(tmp_path):
    path = write(tmp_path / "u.txt", "".join(f"댓글 {i}\n" for i in range(10)))
    assert len(read_documents(spec(format="txt", limit=4), path).kept) == 4
