"""The KMOU NER corpus as character spans over KLUE's types (issue 36, item 2), on the
shipped 60-sentence subset of its 2016 dev file (CRLF line ends, as released)."""

from __future__ import annotations

from pathlib import Path

from pipelines.families.klue.kmou import KLUE_MAPPING, parse_inline, read_kmou
from pipelines.families.klue.ner_layout import NerRelease, NerSentence, read_layout, write_layout

ROOT = Path(__file__).resolve().parents[4]
SUBSET = ROOT / "data" / "demo" / "kmou-ner" / "ner.dev.head60"


def test_the_shipped_subset_reads_as_spans_whose_text_they_cover():
    kept, dropped, unmapped = read_kmou(SUBSET)
    assert len(kept) == 60 and dropped.empty and unmapped == {}
    assert kept.iloc[0]["text"].startswith("한석규가 운영하는 사진관")
    assert kept.iloc[0]["entities"][0] == {"start": 0, "end": 3, "label": "PS", "text": "한석규"}
    assert sum(len(e) for e in kept["entities"]) == 108
    for text, entities in zip(kept["text"], kept["entities"], strict=True):
        for e in entities:
            assert text[e["start"] : e["end"]] == e["text"] and e["label"] in KLUE_MAPPING


def test_a_block_whose_tags_do_not_spell_its_raw_line_is_dropped_with_its_reason(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("; 홍길동이 왔다.\r\n$<홍길동:PS>이 갔다.\r\n1\t홍길동\tNNP\tB_PS\r\n\r\n"
                    "; 부산에 갔다.\r\n$<부산:LC>에 갔다.\r\n\r\n"
                    "; 그는 서울에.\r\n$<그:POH>는 <서울:LC>에.\r\n", encoding="utf-8")  # fmt: skip
    kept, dropped, unmapped = read_kmou(path)
    assert dropped["reason"].tolist() == ["text_mismatch"]
    assert len(kept) + len(dropped) == 3  # nothing lost
    assert unmapped == {"POH": 1}  # no KLUE type: left out and counted
    assert kept.iloc[1]["entities"] == [{"start": 3, "end": 5, "label": "LC", "text": "서울"}]


def test_inline_tags_parse_to_the_klue_layouts_spans():
    text, spans = parse_inline("<강릉:LC> 방향 <5㎞:QT> 구간")
    assert text == "강릉 방향 5㎞ 구간" and spans == [(0, 2, "LC"), (6, 8, "QT")]
    kept, _, _ = read_kmou(SUBSET)
    first = kept.iloc[0]
    spans = [(e["start"], e["end"], e["label"]) for e in first["entities"]]
    sentence = NerSentence("kmou-0", first["text"], spans)
    release = read_layout(write_layout(NerRelease([], [sentence])))
    assert release.sentences[0].entities == sentence.entities
