"""The KLUE-NER release layout (issue 36, item 6): a release-format file read and
written back is byte-identical, ``read(write(x)) == x``, the spans file round-trips
through the CLI, and a malformed line is an error naming the file and the line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.families.klue.ner_layout import (
    TYPES,
    NerLayoutError,
    NerRelease,
    NerSentence,
    from_spans,
    read_layout,
    to_spans,
    write_layout,
)

ROOT = Path(__file__).resolve().parents[4]


def _block(guid: str, tagged: str, pairs: list[tuple[str, str]]) -> str:
    return "\n".join([f"## {guid}\t{tagged}", *[f"{c}\t{t}" for c, t in pairs]])


def _chars(text: str, tags: dict[int, str]) -> list[tuple[str, str]]:
    return [(c, tags.get(i, "O")) for i, c in enumerate(text)]


# written by hand in the release layout (not by the writer under test)
S1 = "강릉 방향 5㎞ 구간"
B1 = _block("klue-ner-v1_dev_00000_news", "<강릉:LC> 방향 <5㎞:QT> 구간",
            _chars(S1, {0: "B-LC", 1: "I-LC", 6: "B-QT", 7: "I-QT"}))  # fmt: skip
S2 = "홍길동은 3시에 왔다."
B2 = _block("klue-ner-v1_dev_00001_nsmc", "<홍길동:PS>은 <3시:TI>에 왔다.",
            _chars(S2, {0: "B-PS", 1: "I-PS", 2: "I-PS", 5: "B-TI", 6: "I-TI"}))  # fmt: skip
RELEASE = "## KLUE-NER: a hand-made sample\n" + B1 + "\n\n" + B2 + "\n\n"


def test_a_release_file_read_and_written_back_is_byte_identical(tmp_path):
    release = read_layout(RELEASE, "sample.tsv")
    assert release.header == ["## KLUE-NER: a hand-made sample"]
    first, second = release.sentences
    assert first.text == S1 and first.entities == [(0, 2, "LC"), (6, 8, "QT")]
    assert second.entities == [(0, 3, "PS"), (5, 7, "TI")]
    assert write_layout(release) == RELEASE
    no_blank = RELEASE.rstrip("\n") + "\n"
    assert write_layout(read_layout(no_blank)) == no_blank
    # through the CLI: release -> spans -> release, byte for byte
    source = tmp_path / "sample.tsv"
    source.write_text(RELEASE, encoding="utf-8")
    for direction, src, out in (
        ("to-spans", source, tmp_path / "spans.jsonl"),
        ("from-spans", tmp_path / "spans.jsonl", tmp_path / "back.tsv"),
    ):
        done = subprocess.run([sys.executable, "-m", "flows.cli", "klue", "ner-layout",
                               direction, str(src), "--out", str(out)],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "back.tsv").read_bytes() == source.read_bytes()


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (RELEASE.replace("\tB-QT", "\tB-XX"), r"sample.tsv:9: tag 'B-XX' is not BIO"),
        (RELEASE.replace("5\tB-QT", "5\tI-QT"), r"sample.tsv:9: I-QT continues no entity"),
        (RELEASE.replace("<강릉:LC> 방향", "<강릉:LC> 빙향"), r"sample.tsv:2: the header's tagged"),
        (RELEASE.replace("## klue-ner-v1_dev_00001_nsmc\t", "klue\t"),
         r"sample.tsv:15: expected '## "),
        (RELEASE.replace("향\tO", "향\tO\textra"), r"sample.tsv:\d+: expected '<one character>"),
    ],
)  # fmt: skip
def test_a_malformed_release_line_is_named(broken, message):
    with pytest.raises(NerLayoutError, match=message):
        read_layout(broken, "sample.tsv")


def test_a_bad_span_in_a_spans_file_is_named():
    good = (
        '{"guid": "g1", "text": "강릉 방향", "entities": [{"start": 0, "end": 2, "label": "LC"}]}'
    )
    assert from_spans(good).sentences[0].entities == [(0, 2, "LC")]
    for bad, message in (
        (good.replace('"end": 2', '"end": 9'), "outside the text"),
        (good.replace('"LC"', '"PER"'), "unknown entity type 'PER'"),
        (good.replace('[{"start"', '[{"start": 1, "end": 3, "label": "LC"}, {"start"'),
         "overlaps"),
        (good.replace('"label": "LC"', '"label": "LC", "text": "방향"'), "is not the characters"),
        ("{not json", "not JSON"),
    ):  # fmt: skip
        with pytest.raises(NerLayoutError, match=rf"spans.jsonl:1: .*{message}"):
            from_spans(bad, "spans.jsonl")


text = st.text(alphabet=st.sampled_from(list("가나다라마 바사아123.,<>:")), min_size=1, max_size=30)


@st.composite
def sentences(draw: st.DrawFn) -> NerSentence:
    words = draw(text)
    cuts = sorted(draw(st.sets(st.integers(0, len(words)), max_size=6)))
    spans = [(a, b, draw(st.sampled_from(TYPES))) for a, b in zip(cuts[::2], cuts[1::2],
                                                               strict=False) if a < b]  # fmt: skip
    return NerSentence(f"g{draw(st.integers(0, 999))}", words, spans)


@settings(max_examples=200, deadline=None)
@given(st.lists(sentences(), min_size=1, max_size=4), st.booleans())
def test_read_of_write_is_the_identity(items, blank):
    release = NerRelease([], items, blank)
    again = read_layout(write_layout(release))
    assert [(s.guid, s.text, sorted(s.entities)) for s in again.sentences] == [
        (s.guid, s.text, sorted(s.entities)) for s in items]  # fmt: skip
    assert from_spans(to_spans(again)).sentences == again.sentences
