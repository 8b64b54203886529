"""UD Korean trees in KLUE-DP's conventions (issue 57, item 3): CoNLL-U read with errors
naming the line, tokens merged into eojeols, heads made head-final, labels derived from
MeCab's morphology, and the LEMMA/POS columns in KLUE's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.families.klue.dp_convert import convert, head_final, klue_label, merge_eojeols
from pipelines.families.klue.dp_layout import LABELS, tree_faults
from pipelines.families.klue.dp_morph import Word, analyse, sejong
from pipelines.families.klue.ud import UdError, read_conllu

ROOT = Path(__file__).resolve().parents[4]
UD = ROOT / "data" / "demo" / "ud-korean"

GSD = """# sent_id = dev-s2
# text = 경기관광공사와 협의회(e-gima.com)가 주최하며 병원이 참여한다.
1\t경기관광공사와\t경기+관광공사+와\tNOUN\tNNG+NNG+JC\t_\t2\tnsubj\t_\t_
2\t협의회\t협의회\tNOUN\tNNG\t_\t8\tnsubj\t_\tSpaceAfter=No
3\t(\t(\tPUNCT\tSS\t_\t4\tpunct\t_\tSpaceAfter=No
4\te-gima.com\te-gima.com\tNOUN\tSL\t_\t2\tappos\t_\tSpaceAfter=No
5\t)\t)\tPUNCT\tSS\t_\t4\tpunct\t_\tSpaceAfter=No
6\t가\t가\tADP\tJKS\t_\t2\tcase\t_\t_
7\t주최하며\t주최+하+며\tVERB\tNNG+XSV+EC\t_\t8\tadvcl\t_\t_
8\t병원이\t병원+이\tNOUN\tNNG+JKS\t_\t9\tnsubj\t_\t_
9\t참여한다\t참여+하+ㄴ다\tVERB\tNNG+XSV+EF\t_\t0\troot\t_\tSpaceAfter=No
10\t.\t.\tPUNCT\tSF\t_\t9\tpunct\t_\t_

"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.conllu"
    path.write_text(text, encoding="utf-8")
    return path


def test_tokens_merge_into_eojeols(tmp_path: Path) -> None:
    [s] = read_conllu(_write(tmp_path, GSD))
    forms, heads, relations = merge_eojeols(s)
    assert forms == ["경기관광공사와", "협의회(e-gima.com)가", "주최하며", "병원이", "참여한다."]
    # the eojeol 협의회(...)가's main token is 협의회 (its head, token 8, lies outside)
    assert heads == [2, 4, 4, 5, 0] and relations[1] == "nsubj"


def test_heads_are_made_final() -> None:
    # UD: B (2) and C (3) conj on A (1), A the object of the verb (4)
    heads, relations, forced = head_final([4, 1, 1, 0], ["obj", "conj", "conj", "root"])
    assert heads == [2, 3, 4, 0] and relations[2] == "obj" and forced == 0
    assert not tree_faults(heads)
    # a sentence-initial root (inverted order): the root moves to the end
    heads, relations, _ = head_final([0, 1], ["root", "nsubj"])
    assert heads == [2, 0] and relations == ["nsubj", "root"]


def test_labels_from_morphology() -> None:
    def w(morphs: str, tags: str) -> Word:
        return Word(morphs.replace(" ", ""), tuple(morphs.split()), tuple(tags.split("+")))

    assert klue_label(w("병원 이", "NNG+JKS"), "nsubj") == "NP_SBJ"
    assert klue_label(w("고향 은", "NNG+JX"), "dislocated") == "NP_SBJ"
    assert klue_label(w("밥 은", "NNG+JX"), "obj") == "NP_OBJ"
    assert klue_label(w("서울 이 ㅂ니다", "NNP+VCP+EF"), "root") == "VNP"
    assert klue_label(w("주최 하 며", "NNG+XSV+EC"), "advcl") == "VP_AJT"
    assert klue_label(w("듣 고", "VV+EC"), "conj") == "VP_CNJ"
    assert klue_label(w("이르 ㄴ", "VA+ETM"), "amod") == "VP_MOD"
    assert klue_label(w("몹시", "MAG"), "advmod") == "AP"
    assert klue_label(w("그", "MM"), "det") == "DP"
    assert klue_label(w("(", "SS"), "punct") == "L"
    assert klue_label(w("아침 과", "NNG+JC"), "conj") == "NP_CNJ"


def test_mecab_morphology_in_klue_form() -> None:
    words = analyse('그는 눈물을 흘렸다. "좋아"라고 1,000원')
    assert [w.form for w in words] == ["그는", "눈물을", "흘렸다.", '"좋아"라고', "1,000원"]
    assert words[2].lemma == "흘리 었 다 ." and words[2].pos == "VV+EP+EF+SF"
    assert words[3].pos == "SS+VA+EC+SS+JKQ"
    assert words[4].pos == "SN+SP+SN+NNB"
    assert sejong("SY", "-") == "SO" and sejong("SY", "#") == "SW" and sejong("XX", "a") == "NA"


def test_shipped_treebanks_convert_to_klue_trees() -> None:
    """Every shipped UD sentence becomes a head-final KLUE tree with KLUE labels whose
    words spell the sentence."""
    n = 0
    for path in sorted(UD.glob("*.conllu.gz")):
        for s in read_conllu(path)[:200]:
            t = convert(s)
            n += 1
            assert not tree_faults(t.heads)
            assert all(h == 0 or h > i for i, h in enumerate(t.heads, start=1))
            assert set(t.labels) <= set(LABELS)
            assert [w.form for w in t.words] == t.text.split(" ")
            assert t.text == " ".join(s.text.split())
    assert n == 800


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("\t_\t2\tnsubj\t_\t_", "\t2\tnsubj\t_\t_", 1), "t.conllu:3: 9 tab"),
        (lambda t: t.replace("1\t경기", "2\t경기", 1), "t.conllu:3: token ID 2, expected 1"),
        (lambda t: t.replace("\t_\t8\tnsubj\t_\tSpaceAfter", "\t_\t12\tnsubj\t_\tSpaceAfter"),
         "t.conllu:1: token 2's head 12"),
        (lambda t: t.replace("\t_\t0\troot", "\t_\t8\troot"), "t.conllu:1: .*not one tree"),
        (lambda t: t.replace("\t_\t8\tnsubj\t_\tSpaceAfter", "\t_\tx\tnsubj\t_\tSpaceAfter"),
         "t.conllu:4: ID '2' and HEAD 'x'"),
    ],
)  # fmt: skip
def test_malformed_conllu_names_the_line(tmp_path: Path, edit, message: str) -> None:  # noqa: ANN001
    with pytest.raises(UdError, match=message):
        read_conllu(_write(tmp_path, edit(GSD)))
