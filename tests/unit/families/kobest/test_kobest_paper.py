"""KoBEST (Kim et al. 2022) rule by rule (issue 52): COPA's guidelines 1 and 3 (2.3: the
alternatives of one area, no proper noun or slang), WiC's dictionary, homonym and
example-sentence guidelines (2.4), SentiNeg's conversion by a person (2.6), the sizes of
Table 1 and the prompts of Table 7."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipelines.families.kobest.checks import CHECKS, CheckContext, checks_of, run_checks
from pipelines.families.kobest.rules import KobestRules
from pipelines.families.kobest.tasks import kobest_task
from pipelines.lang import language

KO = language("ko")
CTX = CheckContext(KO, KobestRules())
# KoBEST Table 2's COPA example: 전쟁이 시작되었다 / 결과
PAPER_COPA = {
    "premise": "전쟁이 시작되었다.",
    "alternative_1": "병사들이 집으로 돌아왔다.",
    "alternative_2": "병사들이 전투에 파견되었다.",
}


def results(task: str, item: dict, ctx: CheckContext = CTX) -> dict[str, tuple[str, str]]:
    checks = checks_of(task, kobest_task(task).checks)
    return {name: (action, detail) for name, action, detail in run_checks(item, checks, ctx)}


def test_copa_runs_the_2_3_guideline_checks_and_the_paper_example_passes_them():
    # guideline 2: the alternatives share a keyword (병사) related to the premise's (전쟁)
    assert {"copa_slang", "copa_proper_noun", "copa_same_kind"} <= set(kobest_task("copa").checks)
    assert results("copa", PAPER_COPA) == {}


@pytest.mark.parametrize(
    "alternative, found",
    [("병사들이 존나 빨리 돌아왔다.", "존나"), ("병사들이 집으로 돌아왔다 ㅋㅋ.", "ㅋㅋ")],
)
def test_copa_slang_drops_an_alternative_with_slang(alternative, found):
    got = results("copa", {**PAPER_COPA, "alternative_1": alternative})
    assert got["copa_slang"][0] == "drop" and found in got["copa_slang"][1]


def test_copa_slang_matches_a_one_letter_form_only_as_a_morpheme():
    # 헐 is slang, 헐거워졌다 (came loose) is not
    item = {**PAPER_COPA, "alternative_1": "병사들의 군화 끈이 헐거워졌다."}
    assert "copa_slang" not in results("copa", item)


def test_copa_proper_noun_flags_a_place_name_and_a_recipe_can_drop_it():
    item = {**PAPER_COPA, "alternative_1": "병사들이 서울로 돌아왔다."}
    assert results("copa", item)["copa_proper_noun"] == (
        "flag",
        "proper nouns (MeCab NNP): alternative_1: 서울",
    )
    strict = CheckContext(KO, KobestRules(actions={"copa_proper_noun": "drop"}))
    assert results("copa", item, strict)["copa_proper_noun"][0] == "drop"


def test_copa_same_kind_flags_a_state_beside_an_action():
    # 2.3 guideline 1: "The alternatives should belong to a similar area, e.g., states
    # and actions"
    item = {**PAPER_COPA, "alternative_1": "병사들이 무척 슬펐다."}
    action, detail = results("copa", item)["copa_same_kind"]
    assert action == "flag" and "alternative_1 state, alternative_2 action" in detail


def _dictionary(tmp_path: Path) -> str:
    # KoBEST Table 2's WiC word 수리 (repair) and a homonym 수리 (eagle), and 줄, a
    # polysemous word: one entry of two senses
    path = tmp_path / "dictionary.tsv"
    path.write_text(
        "수리\t1\t명사\t고침\t망가진 엔진은 수리가 불가능하다.\n"
        "수리\t1\t명사\t고침\t이 배는 수리에 들어간 지 일주일이 됐다.\n"
        "수리\t2\t명사\t맹금\t수리가 하늘 높이 날았다.\n"
        "줄\t1\t명사\t노끈, 행렬\t사람들이 긴 줄을 섰다.\n"
        "줄\t1\t명사\t노끈, 행렬\t아이들이 줄을 넘으며 놀았다.\n"
        "먹다\t1\t동사\t음식을 삼킴\t밥을 먹었다.\n",
        encoding="utf-8",
    )
    return str(path)


def test_wic_runs_the_2_4_dictionary_checks():
    assert {"wic_dictionary", "wic_examples", "wic_homonym"} <= set(kobest_task("wic").checks)


def test_wic_paper_example_passes_with_the_dictionary_and_a_homonym_false_item(tmp_path):
    ctx = CheckContext(KO, KobestRules(dictionary=_dictionary(tmp_path)))
    same = {"word": "수리", "context_1": "망가진 엔진은 수리가 불가능하다.",
            "context_2": "이 배는 수리에 들어간  지 일주일이 됐다.", "label": 1}  # fmt: skip
    assert results("wic", same, ctx) == {}
    other = {**same, "context_2": "수리가 하늘 높이 날았다.", "label": 0}
    assert results("wic", other, ctx) == {}


def test_wic_false_item_on_a_polysemous_word_is_dropped(tmp_path):
    ctx = CheckContext(KO, KobestRules(dictionary=_dictionary(tmp_path)))
    item = {"word": "줄", "context_1": "사람들이 긴 줄을 섰다.",
            "context_2": "아이들이 줄을 넘으며 놀았다.", "label": 0}  # fmt: skip
    action, detail = results("wic", item, ctx)["wic_homonym"]
    assert action == "drop" and "polysemy" in detail
    assert "wic_homonym" not in results("wic", {**item, "label": 1}, ctx)


def test_wic_word_outside_the_dictionary_or_not_a_noun_and_a_written_context_are_dropped(
    tmp_path,
):
    ctx = CheckContext(KO, KobestRules(dictionary=_dictionary(tmp_path)))
    unknown = {"word": "엔진", "context_1": "망가진 엔진은 수리가 불가능하다.",
               "context_2": "엔진이 멈췄다.", "label": 1}  # fmt: skip
    got = results("wic", unknown, ctx)
    assert got["wic_dictionary"] == ("drop", "'엔진' is not listed in the dictionary")
    assert got["wic_examples"][0] == "drop"
    verb = {"word": "먹다", "context_1": "밥을 먹었다.", "context_2": "밥을 먹었다.", "label": 1}
    assert "not a noun" in results("wic", verb, ctx)["wic_dictionary"][1]
    written = {"word": "수리", "context_1": "망가진 엔진은 수리가 불가능하다.",
               "context_2": "차를 수리에 맡겼다.", "label": 1}  # fmt: skip
    assert results("wic", written, ctx)["wic_examples"][1].endswith("context_2")


def test_every_shipped_wic_demo_seed_context_is_a_dictionary_example_unless_planted():
    import json

    root = Path(__file__).resolve().parents[4]
    seeds = root / "data" / "demo" / "kobest" / "wic_seeds.jsonl"
    from pipelines.families.kobest.checks import dictionary

    d = dictionary()
    for line in seeds.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        if s.get("plant") in ("guideline", "dictionary"):
            continue
        for f in ("a", "b", "c"):
            assert d.entries_of(s["word"], s[f]), (s["id"], f)


# ------------------------------------------------------------ SentiNeg's conversion (2.6)


def test_sentineg_plans_a_conversion_round_by_a_person_by_default():
    from pipelines.core.recipe import load_recipe
    from pipelines.families.kobest.rounds import plan

    assert KobestRules().human_conversion is True
    root = Path(__file__).resolve().parents[4]
    recipe = load_recipe(root / "recipes" / "kobest-sentineg-demo.yaml")
    steps = plan(recipe)
    assert steps[-3:] == ["candidates", "negated", "export"]
    assert recipe.kobest.conversion_round is not None


def test_a_persons_conversion_is_what_test_gets_and_a_failed_one_stays_in_train():
    from pipelines.families.kobest.negated_set import SELECTED, apply

    items = pd.DataFrame({
        "item_id": ["a", "b", "c"], "original": ["영화가 재밌다.", "배우가 좋다.", "음악이 좋다."],
        "sentence": ["영화가 재미없다.", "배우가 싫다.", "음악이 싫다."], "label": [0, 0, 0],
        "version": [1, 1, 1], "draft_method": ["add"] * 3, "draft_detail": [""] * 3,
    })  # fmt: skip
    splits = pd.DataFrame({"item_id": ["a", "b", "c"], "split": ["train", "train", "train"]})
    candidates = pd.DataFrame({
        "item_id": ["a", "b", "c"], "sentence": items["sentence"], "label": [0, 0, 0],
        "negated": ["영화가 재미없지 않다.", "배우가 싫지 않다.", "음악이 싫지 않다."],
        "method": ["add"] * 3, "predicted": [0] * 3, "predicted_negated": [1] * 3,
        "outcome": [SELECTED] * 3, "detail": [""] * 3, "converted": [""] * 3,
        "converter": [""] * 3,
    })  # fmt: skip
    checks = checks_of("sentineg", kobest_task("sentineg").checks)
    conversions = {"a": ("영화가 재밌다.", "7"), "b": ("배우가 싫다고 CGV에서 말했다.", "8")}
    out, out_splits, cands, report = apply(items, splits, candidates, {}, conversions, checks, CTX)
    got = dict(zip(cands["item_id"], cands["outcome"], strict=True))
    assert got == {"a": "converted", "b": "conversion_failed", "c": "not_converted"}
    test = out[out["item_id"] == "a-neg"].iloc[0]
    assert test["sentence"] == "영화가 재밌다." and test["label"] == 1  # the person's, relabelled
    assert test["converter"] == "7"  # who converted it
    assert set(out_splits.loc[out_splits["split"] == "train", "item_id"]) == {"b", "c"}
    assert report["converted"] == 1


# ------------------------------------------------------------ Table 1 and Table 7


def test_table_1_sizes_are_the_papers():
    from pipelines.families.kobest.tasks import PAPER_SIZES

    assert PAPER_SIZES == {
        "boolq": (3665, 700, 1404),
        "copa": (3076, 1000, 1000),
        "wic": (3318, 1260, 1260),
        "hellaswag": (2029, 500, 500),
        "sentineg": (3649, 400, 397),
    }


def test_harness_prompts_follow_table_7():
    from pipelines.families.kobest import EVALUATIONS

    assert EVALUATIONS["copa"].prompt == (
        "{{premise}} {% if question == '원인' %}왜냐하면{% else %}그래서{% endif %}"
    )
    # the harness's own kobest_boolq prompt, its trailing space included (issue 54)
    assert EVALUATIONS["boolq"].prompt == "{{paragraph}} 질문: {{question}} 답변: "
    assert EVALUATIONS["wic"].prompt == (
        "문장1: {{context_1}} 문장2: {{context_2}} 두 문장에서 {{word}}가 같은 뜻으로 쓰였나?"
    )
    assert EVALUATIONS["hellaswag"].prompt == "문장: {{context}}"
    assert EVALUATIONS["sentineg"].prompt == "문장: {{sentence}} 긍부정:"
    assert "KoBEST (Kim et al. 2022) 2.7" in EVALUATIONS["boolq"].source


def test_the_new_checks_are_registered_with_their_paper_sections():
    for name, section in (("copa_slang", "2.3"), ("copa_proper_noun", "2.3"),
                          ("copa_same_kind", "2.3"), ("wic_dictionary", "2.4"),
                          ("wic_examples", "2.4"), ("wic_homonym", "2.4")):  # fmt: skip
        assert f"KoBEST {section}" in CHECKS.doc(name)


def test_review_and_check_defaults_are_the_papers():
    rules = KobestRules()
    assert rules.iterations == 3  # 3.4: "We repeated the whole process up to three times"
    assert rules.skew_share == 0.7  # 3.4: "More than 70% of questions ... had False"
    assert rules.min_context_sentences == 3  # 2.5: "At least three sentences"
    assert rules.human_conversion is True  # 2.6: "we converted each candidate"


def test_the_card_puts_the_rebuild_sizes_beside_table_1():
    from pipelines.families.kobest.card import sizes_table

    text = sizes_table("boolq", {"train": 19, "dev": 2, "test": 4})
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert lines[2].split("|")[2:5] == [" 3,665 ", " 700 ", " 1,404 "]
    assert lines[3].split("|")[2:5] == [" 19 ", " 2 ", " 4 "]


def test_sentineg_accepts_an_idiom_swapped_for_its_opposite_and_the_helper_drafts_it():
    # 2.6, the third method: "we replace it with its corresponding opposite meaning idiom"
    from pipelines.families.kobest.negation import negation_edit, suggest

    original, opposite = "사장님 손이 커서 양이 많아요", "사장님 손이 작아서 양이 많아요"
    assert negation_edit(original, opposite, KO).method == "idiom"
    item = {"original": original, "sentence": opposite}
    assert "sentineg_negated" not in results("sentineg", item)
    assert suggest(original, KO).draft == opposite and suggest(original, KO).method == "idiom"


def test_boolq_paragraphs_are_taken_evenly_over_the_topics():
    # 2.2 guideline 1: "Paragraphs should be evenly extracted from various domains and
    # topics to minimise bias"
    from pipelines.families.kobest.prompts import even_topics

    rows = pd.DataFrame({
        "paragraph": [f"p{i}" for i in range(17)],
        "topic": ["과학"] * 10 + ["예술"] * 2 + ["역사"] * 5,
    })  # fmt: skip
    picked = even_topics(rows, 9, 0)
    assert picked["topic"].value_counts().to_dict() == {"과학": 4, "역사": 3, "예술": 2}
    assert even_topics(rows, 6, 0)["topic"].value_counts().to_dict() == {
        "과학": 2, "역사": 2, "예술": 2}  # fmt: skip
    assert picked["paragraph"].is_unique
