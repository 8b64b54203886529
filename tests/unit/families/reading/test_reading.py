"""The reading-comprehension family's rules (issue 37): article readers and scorers,
paragraph drawing with every row accounted, the question checks at their thresholds,
the validator rule, the SQuAD-layout export and the simulated writers."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.families.reading.checks import (
    is_question,
    lexical_overlap,
    normalised,
    run_checks,
)
from pipelines.families.reading.export import hub_record, squad_records, squad_text
from pipelines.families.reading.section import ReadingSpec
from pipelines.families.reading.simulate import cloze, writer_truth
from pipelines.families.reading.sources import (
    Article,
    SourceError,
    bill_article,
    pack_units,
    read_kobill,
    read_law,
    read_squad_articles,
    score_list,
    select_paragraphs,
)
from pipelines.families.reading.squad import read_squad
from pipelines.families.reading.steps import draw_types, similar_paragraphs, validated
from pipelines.lang import language

ROOT = Path(__file__).resolve().parents[4]
DEMO = ROOT / "data" / "demo"


def spec(**over: object) -> ReadingSpec:
    base = {"sources": [{"corpus": "c", "reader": "squad"}]}
    return ReadingSpec.model_validate({**base, **over})


# ------------------------------------------------------------------------- readers


def test_the_constitution_reads_as_chapters_of_articles_of_law():
    arts = read_law(DEMO / "konlpy" / "constitution.txt")
    assert [a.title for a in arts][:3] == ["대한민국헌법 전문", "대한민국헌법 제1장 총강",
                                           "대한민국헌법 제2장 국민의 권리와 의무"]  # fmt: skip
    assert len(arts) == 11  # the preamble and ten chapters; the supplementary provisions left out
    first = arts[1].units[0]
    assert first.startswith("제1조 ① 대한민국은 민주공화국이다. ②대한민국의 주권은")
    units = [u for a in arts for u in a.units]
    assert not any(u.startswith("제4관") or "부칙" in u for u in units)
    assert sum(u.startswith("제") and "조" in u[:6] for u in units) == len(units) - 1


def test_a_text_without_chapters_is_not_a_statute(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("제목\n\n그냥 글입니다.\n", encoding="utf-8")
    with pytest.raises(SourceError, match="x.txt: no chapters"):
        read_law(path)


def test_a_bill_reads_as_its_title_and_the_paragraphs_of_its_reasons():
    bills = read_kobill(DEMO / "konlpy" / "kobill.jsonl")
    assert len(bills) == 10
    assert bills[0].title == "지방공무원법 일부개정법률안"
    # hard-wrapped lines joined as they were cut: "할 \n\n수" keeps its space, "필요\n\n한" none
    assert "육아휴직을 할 수 있는" in bills[0].units[0] and "필요한 나이" in bills[0].units[0]
    assert bills[0].units[1].startswith("따라서 육아휴직이 가능한 자녀의 연령을 만 8세")
    assert not any("주요내용" in u for b in bills for u in b.units)  # headings end paragraphs


def test_a_bill_without_its_reasons_and_a_bad_line_name_the_file(tmp_path):
    with pytest.raises(SourceError, match="no title or no 제안이유"):
        bill_article("법률안\n\n본문뿐\n", "bills.jsonl: line 3")
    path = tmp_path / "bills.jsonl"
    path.write_text('{"text": "x"}\nnot json\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"bills.jsonl: line 1"):
        read_kobill(path)
    path.write_text('\n["no", "object"]\n', encoding="utf-8")
    with pytest.raises(SourceError, match=r"bills.jsonl: line 2: expected a JSON object"):
        read_kobill(path)


def test_jsquads_title_prefix_comes_off_and_its_answers_move_with_it():
    arts = read_squad_articles(DEMO / "jglue" / "jsquad-v1.3_valid-v1.3.head3.json")
    assert [a.title for a in arts] == ["梅雨", "グスタフ・マーラー", "生命の起源"]
    rainy = arts[0]
    assert not rainy.units[0].startswith("梅雨 [SEP]")
    for unit, questions in zip(rainy.units, rainy.questions, strict=True):
        for q in questions:
            for a in q["answers"]:
                if a["answer_start"] >= 0:  # an answer inside the title stays before it
                    assert unit[a["answer_start"] : a["answer_start"] + len(a["text"])] == a["text"]


def test_the_list_scorer_reads_a_ranking_and_names_a_bad_line(tmp_path):
    path = tmp_path / "ranking.tsv"
    path.write_text("# title\tscore\nB\t3\nA\t1.5\n", encoding="utf-8")
    recipe = SimpleNamespace(resolve=lambda p: Path(p))
    arts = [Article("A", ["x"]), Article("B", ["y"]), Article("C", ["z"])]
    assert score_list(arts, SimpleNamespace(scores=str(path)), recipe) == [1.5, 3.0, 0.0]
    path.write_text("A\tmany\n", encoding="utf-8")
    with pytest.raises(SourceError, match="ranking.tsv: line 1: expected title<TAB>score"):
        score_list(arts, SimpleNamespace(scores=str(path)), recipe)


# ---------------------------------------------------------------------- paragraphs


def test_packing_stops_at_max_chars_exactly():
    assert pack_units(["aaaa", "bbbb", "cc"], 9) == [([0, 1], "aaaa bbbb"), ([2], "cc")]
    assert pack_units(["aaaa", "bbbb"], 8) == [([0], "aaaa"), ([1], "bbbb")]
    assert pack_units(["x" * 12, "y"], 5) == [([0], "x" * 12), ([1], "y")]


def test_paragraphs_drawn_from_the_top_with_every_one_accounted():
    arts = [("c", Article(f"t{i}", ["x" * (100 + i)] * 3 + ["y" * 99, "z" * 1001]))
            for i in range(10)]  # fmt: skip
    scores = [float(i) for i in range(10)]
    s = spec(articles=3, top_share=0.5, paragraphs_per_article=2, min_chars=100, max_chars=1000)
    kept, dropped, table = select_paragraphs(arts, scores, s)
    assert len(kept) + len(dropped) == 50
    drawn = set(table.loc[table["status"] == "drawn", "title"])
    assert len(drawn) == 3 and drawn <= {"t5", "t6", "t7", "t8", "t9"}  # the top half
    assert set(kept["title"]) == drawn and len(kept) == 6
    reasons = dropped["reason"].value_counts().to_dict()
    assert reasons == {"article_below_top": 25, "article_not_drawn": 10, "too_short": 3,
                       "too_long": 3, "paragraph_not_drawn": 3}  # fmt: skip
    # exactly min_chars stays (t0's 100 characters), one under is too short
    s = spec(articles=10, top_share=1.0, paragraphs_per_article=5, min_chars=100)
    kept, dropped, _ = select_paragraphs(arts, scores, s)
    assert (kept["paragraph"].str.len() >= 100).all() and "x" * 100 in set(kept["paragraph"])
    assert set(dropped.loc[dropped["reason"] == "too_short", "detail"].str[-13:]) == {
        "99 characters"}  # fmt: skip


def test_question_types_drawn_in_their_shares_and_similar_paragraphs_of_another_article():
    rng = np.random.default_rng(0)
    types = draw_types(10, {"paraphrase": 0.4, "multi_sentence": 0.3, "unanswerable": 0.3}, rng)
    assert sorted(pd.Series(types).value_counts().to_dict().items()) == [
        ("multi_sentence", 3), ("paraphrase", 4), ("unanswerable", 3)]  # fmt: skip
    texts = ["대법원장의 임기는 6년", "대법관의 임기는 6년", "국회의원의 임기는 4년", "날씨"]
    assert similar_paragraphs(texts, ["a", "a", "b", "c"]) == [2, 2, 1, 0]
    assert similar_paragraphs(["하나"], ["a"]) == [-1]


# -------------------------------------------------------------------------- checks


@pytest.mark.parametrize(
    ("text", "lang", "ok"),
    [("日本で梅雨がないのは北海道とどこか。", "ja", True), ("梅雨とは何季の一種か?", "ja", True),
     ("日本の首都は。", "ja", True), ("主な産業を挙げよ。", "ja", True),
     ("これを何という", "ja", True), ("梅雨は雨季の一種である。", "ja", False),
     ("대통령의 임기는 몇 년인가?", "ko", True), ("임기는 얼마일까", "ko", True),
     ("대통령의 임기는 5년이다.", "ko", False), ("Is it?", "en", True), ("It is.", "en", False)],
)  # fmt: skip
def test_a_question_ends_as_one_or_holds_a_question_word(text, lang, ok):
    assert is_question(text, lang) is ok


def _q(**over: object) -> dict:
    context = "대통령의 임기는 5년으로 하며, 중임할 수 없다."
    q = {"question": "대통령이 한 번 재임하는 기간은 몇 년인가?", "context": context,
         "answer": {"start": 9, "end": 11, "text": "5년"}, "question_type": "paraphrase",
         "paragraph_id": "p", "language": "ko", "overlap": 0.4}  # fmt: skip
    return {**q, **over}


def test_each_check_drops_with_its_reason():
    s = spec(overlap_max=0.8, drop_overlap=True)
    assert run_checks(_q(), {}, s) is None
    assert run_checks(_q(question="  "), {}, s) == "empty_question"
    assert run_checks(_q(question="임기는 5년이다."), {}, s) == "not_a_question"
    assert run_checks(_q(answer=None), {}, s) == "no_answer_marked"
    assert run_checks(_q(answer={"start": 40, "end": 44, "text": "없다."}), {}, s) == (
        "answer_outside_paragraph")  # fmt: skip
    assert run_checks(_q(answer={"start": 9, "end": 11, "text": "6년"}), {}, s) == (
        "answer_text_mismatch")  # fmt: skip
    assert run_checks(_q(question_type="unanswerable"), {}, s) == "answer_on_unanswerable"
    assert run_checks(_q(question_type="unanswerable", answer=None), {}, s) is None
    seen: dict = {}
    assert run_checks(_q(), seen, s) is None
    assert run_checks(_q(question="대통령이 한 번 재임하는 기간은 몇 년인가 ?"), seen, s) == (
        "duplicate_question")  # fmt: skip
    assert run_checks(_q(paragraph_id="other"), seen, s) is None  # another paragraph


def test_overlap_dropped_at_its_threshold_only_when_asked():
    s = spec(overlap_max=0.8, drop_overlap=True)
    assert run_checks(_q(overlap=0.8), {}, s) == "copies_context"  # at the threshold
    assert run_checks(_q(overlap=0.7999), {}, s) is None
    assert run_checks(_q(overlap=1.0), {}, spec(overlap_max=0.8)) is None  # flagged, kept


def test_lexical_overlap_of_a_copy_and_of_a_paraphrase():
    ko = language("ko")
    context = "제70조 대통령의 임기는 5년으로 하며, 중임할 수 없다. 제71조 국무총리가 대행한다."
    copy = cloze("대통령의 임기는 5년으로 하며, 중임할 수 없다.", "5년", "ko")
    assert copy == "대통령의 임기는 무엇으로 하며, 중임할 수 없는가?"
    assert lexical_overlap(copy, context, 14, ko) == 1.0
    assert lexical_overlap("한 번 재임하는 기간은?", context, 14, ko) < 0.5
    ja = language("ja")
    assert lexical_overlap("梅雨とは何の一種であるか。", "梅雨は雨季の一種である。", 3, ja) == 1.0
    assert normalised("몇 년인가 ?") == normalised("몇년인가?")


# ----------------------------------------------------------------------- validation


def _final(rows: list[tuple]) -> tuple[pd.DataFrame, pd.DataFrame]:
    qs = pd.DataFrame([{"item_id": i, "is_impossible": imp, "answer_text": None if imp else "5년",
                        "answer_start": None if imp else 9, "split": None}
                       for i, imp, _ in rows])  # fmt: skip
    splits = pd.DataFrame({"item_id": [r[0] for r in rows], "split": [r[2] for r in rows]})
    return qs.drop(columns="split"), splits


def _votes(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame([{"item_id": i, "field": "answer", "value": v, "cancelled": False,
                          "created_at": n, "annotation_id": n, "annotator_id": f"v{n}"}
                         for n, (i, v) in enumerate(rows)])  # fmt: skip


FIVE = json.dumps({"start": 9, "end": 11, "text": "5년"}, ensure_ascii=False)
FIVE_SHORT = json.dumps({"start": 9, "end": 10, "text": "5"}, ensure_ascii=False)


def test_the_validator_rule_at_its_threshold_and_em_f1_against_the_writer():
    rows = [("a", False, "dev"), ("b", False, "test"), ("c", True, "dev"), ("d", True, "test"),
            ("e", False, "train"), ("f", False, "dev")]  # fmt: skip
    qs, splits = _final(rows)
    votes = _votes([("a", FIVE), ("a", "no_answer"), ("b", "no_answer"), ("b", "no_answer"),
                    ("c", "no_answer"), ("c", "no_answer"), ("d", FIVE), ("d", "no_answer"),
                    ("f", FIVE_SHORT), ("f", FIVE)])  # fmt: skip
    final, dropped, fig = validated(qs, splits, votes, min_answers=1)
    assert set(final["item_id"]) == {"a", "c", "e", "f"}
    assert dict(zip(dropped["id"], dropped["reason"], strict=True)) == {
        "b": "no_validator_answer", "d": "answered_by_validator"}  # fmt: skip
    a = final.set_index("item_id")
    assert [x["text"] for x in a.loc["a", "answers"]] == ["5년", "5년"]  # writer's first
    assert [x["text"] for x in a.loc["f", "answers"]] == ["5년", "5", "5년"]
    assert a.loc["e", "answers"] == [{"text": "5년", "answer_start": 9}]  # train: not validated
    # 10 validator answers: a 1+0, b 0+0, c 1+1, d 0+1, f "5" (F1 2/3) + 1
    assert fig["validator_answers"] == 10
    assert fig["exact_match"] == 0.5
    assert fig["character_f1"] == round((1 + 1 + 1 + 1 + 2 / 3 + 1) / 10, 4)
    final, dropped, _ = validated(qs, splits, votes, min_answers=2)  # two needed: a goes too
    assert "a" not in set(final["item_id"]) and "f" in set(final["item_id"])


# --------------------------------------------------------------------------- export


def _questions() -> pd.DataFrame:
    rows = []
    shape = [("a-1", "a-1-p0", False), ("a-1", "a-1-p0", False), ("a-1", "a-1-p1", True),
             ("a-2", "a-2-p0", False)]  # fmt: skip
    for n, (art, para, imp) in enumerate(shape):
        context = f"文脈{para}、答えはここ。"
        answers = [] if imp else [{"text": "ここ", "answer_start": context.index("ここ")}]
        rows.append({"item_id": f"{para}-q{n}", "article_id": art, "paragraph_id": para,
                     "title": art, "context": context, "question": f"質問{n}は何か。",
                     "answers": json.dumps(answers, ensure_ascii=False),
                     "question_type": "unanswerable" if imp else "paraphrase",
                     "is_impossible": imp, "source": "src"})  # fmt: skip
    return pd.DataFrame(rows)


@pytest.mark.parametrize("kind", ["jsquad", "klue-mrc"])
def test_the_squad_layout_reads_back_as_written(kind):
    records = squad_records(_questions(), kind, "demo", "dev")
    text = squad_text(records, kind)
    data = json.loads(text)
    assert [len(a["paragraphs"]) for a in data["data"]] == [2, 1]
    assert [len(p["qas"]) for a in data["data"] for p in a["paragraphs"]] == [2, 1, 1]
    again = read_squad(text)
    assert len(again.records) == 4
    hub = [hub_record(r, kind) for r in records]
    if kind == "klue-mrc":
        assert list(data) == ["version", "data"] and data["data"][0]["source"] == "src"
        qa = data["data"][0]["paragraphs"][1]["qas"][0]
        assert qa["question_type"] == 3 and qa["is_impossible"] and qa["answers"] == []
        assert qa["guid"] == "demo_dev_00002"
        assert hub[2]["answers"] == {"answer_start": [], "text": []}
    else:
        assert data["data"][0]["paragraphs"][0]["qas"][0]["id"] == "demo_dev_00000"
        assert hub[0]["answers"] == {"text": ["ここ"], "answer_start": [12]}


# ------------------------------------------------------------------------ simulate


def test_simulated_writers_write_the_reference_copy_it_or_fall_back_to_a_template():
    ja = language("ja")
    context = "梅雨 [SEP] 梅雨は雨季の一種である。5月から7月にかけて雨が多い。"
    ref = {"id": "q1", "question": "梅雨とは何季の一種か?", "type": "answerable",
           "answers": [{"text": "雨季", "answer_start": 12},
                       {"text": "雨季の一種", "answer_start": 12}]}  # fmt: skip
    task = {"question_type": "answerable", "context": context, "source_context": context}
    never = SimpleNamespace(copy_rate=0.0, statement_rate=0.0)
    out = writer_truth(task, [ref], set(), ja, never, np.random.default_rng(0))
    assert out["sim_source"] == "reference" and out["sim_question"] == ref["question"]
    assert json.loads(out["sim_answer"]) == {"start": 12, "end": 14}
    assert [a["end"] for a in json.loads(out["sim_validation"])] == [17]
    always = SimpleNamespace(copy_rate=1.0, statement_rate=0.0)
    out = writer_truth(task, [ref], set(), ja, always, np.random.default_rng(0))
    assert out["sim_source"] == "copy" and out["sim_question"] == "梅雨は何の一種であるか。"
    out = writer_truth(task, [ref], {"q1"}, ja, never, np.random.default_rng(0))
    assert out["sim_source"] == "template" and out["sim_question"].endswith("か。")
    una = {**task, "question_type": "unanswerable", "source_context": "別の文。東京は首都である。"}
    out = writer_truth(una, [], set(), ja, never, np.random.default_rng(0))
    assert out["sim_answer"] == "null" and out["sim_validation"] == "[]"


# -------------------------------------------------------------------------- recipes


def test_the_section_refuses_what_the_task_kind_cannot_hold(tmp_path):
    with pytest.raises(ValueError, match="must hold {paragraph}"):
        spec(context_format="{title}")
    with pytest.raises(ValueError, match="unknown \\['yes_no'\\]"):
        spec(question_types={"yes_no": 1.0})
    with pytest.raises(ValueError, match="min_chars is over"):
        spec(min_chars=500, max_chars=100)
    text = (ROOT / "recipes" / "jsquad-demo.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("  questions_per_paragraph: 2", "  questions_per_paragraph: 2\n"
                                "  question_types: {unanswerable: 1.0}").replace(
                                    "../data", str(ROOT / "data")), encoding="utf-8")  # fmt: skip
    with pytest.raises(RecipeError, match="answerable questions only"):
        load_recipe(bad)
    for name in ("jsquad-demo", "klue-mrc-demo"):
        assert load_recipe(ROOT / "recipes" / f"{name}.yaml").reading.sources


def test_a_klue_mrc_recipe_refuses_wikitree_article_contents(tmp_path):
    """KLUE 2.2.1: "We also do not use the article contents from WIKITREE for MRC". A
    KLUE-MRC recipe whose reading source is a corpus published by WIKITREE (the corpus's
    ``publisher``, any case) is refused at load; JSQuAD's recipes are not concerned."""
    text = (ROOT / "recipes" / "klue-mrc-demo.yaml").read_text(encoding="utf-8")
    text = text.replace("../data", str(ROOT / "data"))
    policy = "    domain: policy\n"
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(policy, policy + "    publisher: Wikitree\n"), encoding="utf-8")
    with pytest.raises(RecipeError, match=r"KLUE 2\.2\.1.*WIKITREE.*bills"):
        load_recipe(bad)
    ok = tmp_path / "ok.yaml"
    ok.write_text(text.replace(policy, policy + "    publisher: ACROFAN\n"), encoding="utf-8")
    assert load_recipe(ok).corpora[1].publisher == "ACROFAN"
