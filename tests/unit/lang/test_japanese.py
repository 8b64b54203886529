"""The Japanese pack (issue 21, part 1): sentence splitting, MeCab + UniDic morphemes
and lemmas, script share and NFKC on real JSTS captions shipped in data/demo/jglue, GSM
on Japanese morphemes (JCommonsenseQA's question filters, which use the lemmas, are
tested with their family: ``tests/unit/families/jcqa/test_jcqa_filters.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipelines.lang import language

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
    from pipelines.quality.noise import judge_sentence
    from pipelines.quality.settings import NoiseSettings

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
