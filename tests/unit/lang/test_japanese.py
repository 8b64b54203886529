"""The Japanese pack (issue 21, part 1): sentence splitting, MeCab + UniDic morphemes
and lemmas, script share and NFKC on real JSTS captions shipped in data/demo/jglue, GSM
on Japanese morphemes; and JCommonsenseQA's question filters on the shipped release."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.lang import language
from pipelines.quality import jcqa

ROOT = Path(__file__).resolve().parents[3]
JGLUE = ROOT / "data" / "demo" / "jglue"


@pytest.fixture(scope="module")
def captions() -> list[str]:
    lines = (JGLUE / "jsts-v1.3_valid-v1.3.json").read_text(encoding="utf-8").splitlines()
    pairs = [json.loads(line) for line in lines[:200]]
    return [p["sentence1"] for p in pairs] + [p["sentence2"] for p in pairs]


def test_sentences_split_on_end_marks_outside_quotes(captions):
    ja = language("ja")
    text = "彼は「もう帰る。明日来る！」と言った。雨ですか？はい！！\n次の段落"
    assert ja.split_sentences([text]) == [
        ["彼は「もう帰る。明日来る！」と言った。", "雨ですか？", "はい！！", "次の段落"]
    ]
    joined = "".join(captions[:5])  # five captions run together split back into five
    assert ja.split_sentences([joined])[0] == captions[:5]


def test_morphemes_lemmas_and_script_share(captions):
    from pipelines.lang.ja import lemmas

    ja = language("ja")
    assert ja.morphemes("乳母車を押した女性が歩いています。")[:4] == ["乳母車", "を", "押し", "た"]
    assert lemmas("レンガと煉瓦") == ["煉瓦", "と", "煉瓦"]  # spelling variants, one lemma
    tags = dict(ja.tagged("女性が歩く"))
    assert tags["女性"].startswith("名詞") and tags["歩く"].startswith("動詞")
    assert all("".join(ja.morphemes(c)) == c.replace(" ", "") for c in captions[:50])
    assert min(ja.script_share(c) for c in captions) > 0.7
    assert ja.script_share("This is English.") == 0 and ja.normalise("ＡＢＣ１ｶﾅ") == "ABC1カナ"


def test_gsm_runs_on_japanese_morphemes(captions):
    from pipelines.pairing.gsm import greedy_sentence_matching

    tokens = [language("ja").morphemes(c) for c in captions[:60]]
    result = greedy_sentence_matching(tokens, seed=0)
    assert len(result.first) == 30 and (result.first != result.second).all()
    assert set(result.first) | set(result.second) == set(range(60))  # each caption once
    from pipelines.pairing.gsm import rouge_f1

    i, j = int(result.first[0]), int(result.second[0])
    assert result.score[0] > 0 and rouge_f1(1, 1, 1) == 1.0
    assert set(tokens[i]) & set(tokens[j])  # the best match shares morphemes


def test_noise_rules_drop_text_in_the_wrong_language():
    from pipelines.core.recipe import NoiseSettings
    from pipelines.quality.noise import judge_sentence

    ja = language("ja")
    settings = NoiseSettings()
    assert (
        judge_sentence("レンガの建物の前を女性が歩いています。", settings, lang=ja).reason is None
    )
    english = judge_sentence("A woman is walking in front of a brick building.", settings, lang=ja)
    assert english.reason == "not_japanese" and "Japanese script share 0.00" in str(english.fired)
    korean = judge_sentence("벽돌 건물 앞을 여자가 걷고 있습니다 정말로요.", settings, lang=ja)
    assert korean.reason == "too_many_cjk"  # Hangul counted as the foreign script
    assert "Hangul characters" in str(korean.fired)


def test_jcommonsenseqa_filters_on_the_release():
    questions = jcqa.read_questions(JGLUE / "jcommonsenseqa-v1.3_valid-v1.3.json")
    checked = jcqa.run_filters(questions)
    info = jcqa.report(checked)
    assert info["questions"] == 1119
    assert info["pass_rate"] > 0.99  # a self-test: the release was filtered this way
    assert info["filters"]["spelling_variants"]["flagged"] == 3


@pytest.mark.parametrize(
    ("question", "choices", "failed"),
    [
        ("犬の鳴き声は何という？", ["猫", "犬", "鳥", "馬", "牛"], "contains_choice"),
        ("3文字の果物は何？", ["りんご", "みかん", "ぶどう", "もも", "なし"], "xx_characters"),
        ("朝に食べるものは何", ["パン", "ご飯", "卵", "納豆", "味噌汁"], "no_question_mark"),
        ("家を建てる材料は？", ["レンガ", "煉瓦", "木", "石", "紙"], "spelling_variants"),
        # issue 37: the same word twice is no set of five answers either
        ("家を建てる材料は？", ["木", "レンガ", "木", "石", "紙"], "spelling_variants"),
        ("朝に食べるものは何？", ["パン", "ご飯", "卵", "納豆", "味噌汁"], ""),
    ],
)
def test_each_jcqa_filter(question, choices, failed):
    q = pd.DataFrame([{"q_id": 1, "question": question,
                       **{f"choice{i}": c for i, c in enumerate(choices)}}])  # fmt: skip
    assert jcqa.run_filters(q).iloc[0]["failed"] == failed


def test_malformed_jcqa_line_names_the_file_and_line(tmp_path):
    bad = tmp_path / "q.json"
    bad.write_text('{"q_id": 1, "question": "何？", "choice0": "a", "choice1": "b", '
                   '"choice2": "c", "choice3": "d", "choice4": "e"}\n{"q_id": 2,\n',
                   encoding="utf-8")  # fmt: skip
    with pytest.raises(jcqa.JcqaError, match=r"q.json:2: malformed JSON"):
        jcqa.read_questions(bad)


def test_cli_jcqa_filter_reports_and_exits_2_on_bad_lines(tmp_path):
    import subprocess
    import sys

    src = JGLUE / "jcommonsenseqa-v1.3_valid-v1.3.json"
    run = subprocess.run([sys.executable, "-m", "flows.cli", "jglue", "jcqa-filter", str(src),
                          "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "1,116 of 1,119 questions pass every filter" in run.stdout
    kept = (tmp_path / "out" / "kept.jsonl").read_text(encoding="utf-8").splitlines()
    dropped = pd.read_parquet(tmp_path / "out" / "dropped.parquet")
    assert len(kept) == 1116 and len(dropped) == 3 and (dropped["failed"] != "").all()
    bad = tmp_path / "bad.json"
    bad.write_text(src.read_text(encoding="utf-8").splitlines()[0] + "\n{oops\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "flows.cli", "jglue", "jcqa-filter", str(bad),
                          "--out", str(tmp_path / "bad")], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    assert run.returncode == 2 and "bad.json:2: malformed JSON" in run.stderr
    assert not (tmp_path / "bad").exists()
