"""The KLUE-DP release layout and its errata checks (issue 57, items 5 and 7): a file
read and written back is byte-identical, ``read(write(x)) == x`` for any words
(formula-like cells included), structural faults are errors naming the file and the
line, and ``errata`` counts what a release can carry unnoticed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.core.spreadsheet import safe_cell
from pipelines.families.klue.dp_layout import (
    COLUMN_LINE,
    LABELS,
    DpLayoutError,
    DpRelease,
    DpSentence,
    DpWord,
    errata_counts,
    from_trees,
    non_projective,
    parse,
    read_layout,
    rebuilds,
    to_trees,
    tree_faults,
    write_layout,
)

GOOD = f"""{COLUMN_LINE}
## klue-dp-v1_dev_00001_wikitree\t그는 눈물을 흘렸다.
1\t그는\t그 는\tNP+JX\t3\tNP_SBJ
2\t눈물을\t눈물 을\tNNG+JKO\t3\tNP_OBJ
3\t흘렸다.\t흘리 었 다 .\tVV+EP+EF+SF\t0\tVP

## klue-dp-v1_dev_00002_airbnb\t위치가 좋아요
1\t위치가\t위치 가\tNNG+JKS\t2\tNP_SBJ
2\t좋아요\t좋 아요\tVA+EF\t0\tVP

"""


def test_a_klue_file_reads_and_writes_back_byte_for_byte() -> None:
    release = read_layout(GOOD, "dev.tsv")
    assert [s.guid for s in release.sentences] == ["klue-dp-v1_dev_00001_wikitree",
                                                    "klue-dp-v1_dev_00002_airbnb"]  # fmt: skip
    assert release.header == [COLUMN_LINE] and not release.spreadsheet_safe
    assert release.sentences[0].words[2] == DpWord(
        "흘렸다.", "흘리 었 다 .", "VV+EP+EF+SF", 0, "VP"
    )
    assert release.sentences[1].source() == "airbnb"
    assert write_layout(release) == GOOD
    crlf = "\ufeff" + GOOD.replace("\n", "\r\n")
    assert write_layout(read_layout(crlf)) == crlf


def test_trees_file_round_trip() -> None:
    release = read_layout(GOOD)
    assert from_trees(to_trees(release)) == release
    assert write_layout(from_trees(to_trees(release))) == GOOD


words = st.text(alphabet=st.sampled_from(list("가나다=+-@'#%1 .\"")), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(words.filter(lambda w: " " not in w), min_size=1, max_size=5),
                min_size=1, max_size=4), st.booleans())  # fmt: skip
def test_any_words_round_trip(sentences: list[list[str]], safe: bool) -> None:
    """Formula-like cells (``=x``, ``'=x``, ``''-1``) come back byte for byte."""
    release = DpRelease(["## a header"], [
        DpSentence(f"g_{i}", " ".join(forms),
                   [DpWord(f, f, "NNG", j + 2 if j + 1 < len(forms) else 0, "NP")
                    for j, f in enumerate(forms)])
        for i, forms in enumerate(sentences)], spreadsheet_safe=safe)  # fmt: skip
    text = write_layout(release)
    assert read_layout(text) == release
    assert write_layout(read_layout(text)) == text
    if safe:  # no cell a spreadsheet would run
        for line in text.splitlines():
            for cell in line.split("\t"):
                assert safe_cell(cell) == cell, cell


@pytest.mark.parametrize(
    ("line", "replacement", "message"),
    [
        ("1\t그는\t그 는\tNP+JX\t3\tNP_SBJ", "1\t그는\t그 는\tNP+JX\t3", "dev.tsv:3: .*5 tab"),
        (
            "1\t그는\t그 는\tNP+JX\t3\tNP_SBJ",
            "1\t그는\t그 는\tNP+JX\t9\tNP_SBJ",
            "dev.tsv:2: .*HEAD",
        ),
        (
            "1\t그는\t그 는\tNP+JX\t3\tNP_SBJ",
            "1\t그는\t그 는\tNP+JX\t3\tNP_SUBJ",
            "dev.tsv:3: .*NP_SUBJ",
        ),
        (
            "1\t그는\t그 는\tNP+JX\t3\tNP_SBJ",
            "1\t그가\t그 가\tNP+JKS\t3\tNP_SBJ",
            "dev.tsv:3: .*'그가'",
        ),
        (
            "3\t흘렸다.\t흘리 었 다 .\tVV+EP+EF+SF\t0\tVP",
            "3\t흘렸다.\t흘리 었 다 .\tVV+EP+EF+SF\t1\tVP",
            "dev.tsv:2: .*(no word has HEAD 0|circle)",
        ),
        (
            "2\t눈물을\t눈물 을\tNNG+JKO\t3\tNP_OBJ",
            "2\t눈물을\t눈물 을\tNNG+JKO\t0\tNP_OBJ",
            "dev.tsv:2: .*words \\[2, 3\\] have HEAD 0",
        ),
    ],
)
def test_structural_faults_name_the_file_and_line(
    line: str, replacement: str, message: str
) -> None:
    assert line in GOOD
    with pytest.raises(DpLayoutError, match=message):
        read_layout(GOOD.replace(line, replacement, 1), "dev.tsv")


def test_a_cycle_is_an_error() -> None:
    bad = GOOD.replace("1\t그는\t그 는\tNP+JX\t3\tNP_SBJ", "1\t그는\t그 는\tNP+JX\t2\tNP_SBJ")
    bad = bad.replace(
        "2\t눈물을\t눈물 을\tNNG+JKO\t3\tNP_OBJ", "2\t눈물을\t눈물 을\tNNG+JKO\t1\tNP_OBJ"
    )
    with pytest.raises(DpLayoutError, match="dev.tsv:2: .*circle"):
        read_layout(bad, "dev.tsv")


def test_errata_are_counted_not_fatal() -> None:
    damaged = GOOD.replace("2\t눈물을\t눈물 을\tNNG+JKO\t3\tNP_OBJ",
                           "2\t눈물을\t#NAME?\tNNG+JKO\t3\tNP_OBJ")  # fmt: skip
    damaged = damaged.replace("VA+EF", "VA+XF").replace("좋 아요", "나쁘 아요")
    _, problems = parse(damaged, "dev.tsv")
    counts = errata_counts(problems)
    assert counts == {"spreadsheet_damage": 1, "pos": 1, "lemma": 1}, counts
    assert not any(p.fatal for p in problems)
    assert {p.line for p in problems} == {4, 9}
    read_layout(damaged)  # not fatal


def test_percent_damage_is_told_apart_from_a_wrong_word() -> None:
    text = (f"{COLUMN_LINE}\n## g_1\t0.5배 늘었다\n1\t50%\t50 %\tSN+SW\t2\tNP\n"
            "2\t늘었다\t늘 었 다\tVV+EP+EF\t0\tVP\n\n")  # fmt: skip
    _, problems = parse(text)
    assert [p.kind for p in problems] == ["spreadsheet_damage"]


def test_tree_checks() -> None:
    assert tree_faults([2, 3, 0]) == []
    assert tree_faults([2, 1, 0]) == ["cycle"]
    assert tree_faults([0, 0]) == ["two_roots"]
    assert tree_faults([2, 1]) == ["no_root", "cycle"]
    assert tree_faults([5, 0]) == ["head"]
    assert non_projective([3, 4, 0, 3]) == [1, 2, 3]  # 1->3, 2->4 and the root's 0->3 cross
    assert non_projective([2, 3, 0]) == []


def test_rebuilds() -> None:
    for form, lemma in [("흘렸다.", "흘리 었 다 ."), ("해", "하 여"), ("들어와", "듣 어 오 아"),
                        ("흘러가", "흐르 어 가"), ("1,000원", "1 , 000 원"),
                        ("좋습니다", "좋 ㅂ니다")]:  # fmt: skip
        assert rebuilds(form, lemma), (form, lemma)
    for form, lemma in [("흘렸다.", "눈물 을"), ("1,000원", "1 000 원"), ("가나다라", "가 나")]:
        assert not rebuilds(form, lemma), (form, lemma)


def test_labels_are_klue_s_grammar() -> None:
    assert {"NP", "NP_SBJ", "VP_MOD", "VNP_CMP", "L", "R"} <= set(LABELS)
    assert "NP_SVJ" not in LABELS and len(LABELS) == 63
