"""Each KLUE 2.3 noise rule on real Korean text, with positive and negative examples."""

import pandas as pd
import pytest

from pipelines.quality.noise import (
    ConsecutiveBlanks,
    EmptyParentheses,
    Hashtags,
    HtmlTags,
    InvisibleCharacters,
    NewsBoilerplate,
    apply_cleaners,
    clean_documents,
    cleaners_for,
    filter_noise,
    judge_sentence,
)
from pipelines.quality.settings import NoiseSettings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("오늘\u200b 날씨가\ufeff 좋네요", "오늘 날씨가 좋네요"),
        ("영화\u00a0정말\u3000재밌다", "영화 정말 재밌다"),
        ("소\u00adfrac\u200e트", "소frac트"),
        ("첫 줄\u2028둘째 줄", "첫 줄\n둘째 줄"),
        ("깨진\ufffd 글자\u3164", "깨진 글자"),
    ],
)
def test_invisible_characters_removed(text, expected):
    assert InvisibleCharacters().clean(text) == expected


def test_invisible_characters_leave_plain_korean_alone():
    text = "배우들의 연기가 훌륭했다.\n다음 편도 기대된다!"
    assert InvisibleCharacters().clean(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("재밌어요<br>또 볼래요", "재밌어요\n또 볼래요"),
        ("<b>강추</b> 합니다", " 강추  합니다"),
        ('<a href="x">링크</a>입니다', " 링크 입니다"),
        ("톰&amp;제리 최고&nbsp;!", "톰&제리 최고 !"),
        ("<!-- 주석 -->본문", " 본문"),
    ],
)
def test_html_tags_removed(text, expected):
    assert HtmlTags().clean(text) == expected


@pytest.mark.parametrize(
    "text", ["점수는 3 < 5 이고 7 > 2 이다", "A&B 회사", "<<반지의 제왕>> 최고"]
)
def test_html_rule_keeps_comparisons_and_titles(text):
    assert HtmlTags().clean(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("강남역 맛집 #JMT #맛스타그램", "강남역 맛집    "),
        ("#일상 오늘도 출근", "  오늘도 출근"),
    ],
)
def test_hashtags_removed(text, expected):
    assert Hashtags().clean(text) == expected


@pytest.mark.parametrize("text", ["C# 언어를 배운다", "#1 인기 영화", "문의 a#b"])
def test_hashtag_rule_keeps_non_tags(text):
    assert Hashtags().clean(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("배우 () 인터뷰", "배우  인터뷰"),
        ("사진 [ ] 설명 ( [] )", "사진  설명 "),
        ("「」제목", "제목"),
    ],
)
def test_empty_parentheses_removed(text, expected):
    assert EmptyParentheses().clean(text) == expected


def test_empty_parentheses_keep_content():
    text = "홍길동(42) 씨는 [단독] 보도를 부인했다"
    assert EmptyParentheses().clean(text) == text


def test_consecutive_blanks():
    assert (
        ConsecutiveBlanks().clean("  정말   좋은 \t 영화 \n\n\n 추천  ") == "정말 좋은 영화\n추천"
    )
    assert ConsecutiveBlanks().clean("한 칸 띄움") == "한 칸 띄움"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "(서울=연합뉴스) 홍길동 기자 = 정부는 19일 대책을 발표했다.",
            "정부는 19일 대책을 발표했다.",
        ),
        ("[서울=뉴시스]김철수 기자 = 국회는 본회의를 열었다.", "국회는 본회의를 열었다."),
        ("정부는 대책을 발표했다. 홍길동 기자 hong@yna.co.kr", "정부는 대책을 발표했다."),
        ("ⓒ 연합뉴스, 무단 전재-재배포 금지", ""),
        ("<저작권자 ⓒ 뉴스1코리아, 무단전재 및 재배포 금지>", ""),
        ("▲ 19일 서울 광화문에서 시민들이 행진하고 있다.", ""),
        ("경찰이 현장을 조사하고 있다.(사진=연합뉴스)", "경찰이 현장을 조사하고 있다."),
        ("[단독] 잔나비, 라디오 출연 취소", "잔나비, 라디오 출연 취소"),
        (
            "밤새 조문 행렬…동료들이 그리워하는 배우 [종합]",
            "밤새 조문 행렬…동료들이 그리워하는 배우",
        ),
        ("[Oh!쎈 초점] 정우성 공개 저격", "정우성 공개 저격"),
    ],
)
def test_news_boilerplate_removed(text, expected):
    chain = [NewsBoilerplate(), ConsecutiveBlanks()]
    assert apply_cleaners(text, chain)[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "기자들은 현장에서 밤을 새웠다.",
        "대통령은 기자 회견에서 입장을 밝혔다.",
        "[2019 국감] 여야 공방",
        "사진을 찍는 것이 취미다.",
    ],
)
def test_news_boilerplate_keeps_content(text):
    assert NewsBoilerplate().clean(text).strip() == text


def test_news_rules_only_for_news_domains():
    settings = NoiseSettings()
    names = [c.name for c in cleaners_for(settings, "news")]
    assert "news_boilerplate" in names
    assert "news_boilerplate" not in [c.name for c in cleaners_for(settings, "review")]


def test_cjk_limit_is_klue_ten():
    s = NoiseSettings()
    ten = "漢字漢字漢字漢字漢字 한국어로 쓴 아주 긴 문장입니다 정말로"
    eleven = "漢字漢字漢字漢字漢字漢 한국어로 쓴 아주 긴 문장입니다 정말로"
    assert judge_sentence(ten, s).reason is None
    assert judge_sentence(eleven, s).reason == "too_many_cjk"
    assert judge_sentence("ひらがなカタカナです日本語の文章 한국어", s).reason == "too_many_cjk"


def test_not_korean_and_length_bounds():
    s = NoiseSettings()
    assert judge_sentence("This movie was great", s).reason == "not_korean"
    assert judge_sentence("....!!!", s).reason == "not_korean"
    assert judge_sentence("X-MEN 의 시작", s).reason == "not_korean"
    assert judge_sentence("넷플릭스에서 봤어요", s).reason is None
    assert judge_sentence("최고", s).reason == "too_short"
    assert judge_sentence("가" * 1001, s).reason == "too_long"
    assert judge_sentence("   ", s).reason == "empty_after_cleaning"
    loose = NoiseSettings(min_chars=1, min_hangul_share=0.3)
    assert judge_sentence("최고", loose).reason is None
    assert judge_sentence("X-MEN 의 시작", loose).reason is None


def _docs(texts, domain="review"):
    n = len(texts)
    return pd.DataFrame(
        {
            "doc_id": [f"c:{i}" for i in range(n)],
            "corpus": ["c"] * n,
            "text": texts,
            "domain": [domain] * n,
        }
    )


def test_clean_stage_drops_documents_empty_after_cleaning_with_original_text():
    docs = _docs(["#해시태그만 #있음", "<br><br>", "좋은 영화였어요 #추천"])
    result = clean_documents(docs, NoiseSettings())
    assert result.rows_in == 3 == len(result.kept) + len(result.dropped)
    assert result.dropped["reason"].tolist() == ["empty_after_cleaning"] * 2
    assert result.dropped["text"].tolist() == ["#해시태그만 #있음", "<br><br>"]
    assert result.kept["text"].tolist() == ["좋은 영화였어요"]
    assert result.kept["edits"].tolist() == ["hashtags,consecutive_blanks"]
    assert result.kept["raw_text"].tolist() == ["좋은 영화였어요 #추천"]


def test_noise_stage_reasons_and_details():
    sents = pd.DataFrame(
        {
            "sent_id": ["a", "b", "c"],
            "corpus": "c",
            "text": ["정말 감동적인 영화", "ok", "日本語日本語日本語日本語 한국"],
        }
    )
    result = filter_noise(sents, NoiseSettings())
    assert result.kept["sent_id"].tolist() == ["a"]
    assert dict(zip(result.dropped["sent_id"], result.dropped["reason"], strict=True)) == {
        "b": "not_korean",
        "c": "too_many_cjk",
    }
    c = result.dropped.set_index("sent_id").loc["c"]
    # every rule that fired is recorded: the first is the reason
    assert c["detail"] == "12 Chinese/Japanese characters; also not_korean (Hangul share 0.14)"
    assert c["flags"] == "too_many_cjk,not_korean"


EMAIL = "자세한 문의는 hong.gildong@example.com 으로 메일 주세요."
URL = "후기는 https://blog.example.co.kr/review/123 에 올렸어요."


def test_addresses_do_not_make_a_korean_sentence_not_korean():
    """Issue 15: the Hangul share is measured with e-mail addresses, URLs and mentions
    masked, so these reach the PII stage and are counted as PII."""
    from pipelines.ingest.shards import filter_sentences
    from pipelines.quality.settings import PiiSettings

    for text in (EMAIL, URL, "@gildong_hong 님 답장 기다릴게요 감사합니다"):
        assert judge_sentence(text, NoiseSettings()).reason is None, text
    sents = pd.DataFrame({"sent_id": ["e", "u", "k"], "corpus": "c",
                          "text": [EMAIL, URL, "정말 감동적인 영화"]})  # fmt: skip
    out = filter_sentences(sents, NoiseSettings(), PiiSettings())
    assert out.kept["sent_id"].tolist() == ["k"]
    got = out.rejects.set_index("sent_id")
    assert got.loc["e", "stage"] == got.loc["u", "stage"] == "pii"
    assert (got.loc["e", "detail"], got.loc["u", "detail"]) == ("email", "url")
    stages = out.stats.to_dict()["stages"]
    assert [s["dropped"] for s in stages] == [{}, {"pii": 2}]
    # with PII removal off, both sentences are kept (before, noise dropped them)
    off = filter_sentences(sents, NoiseSettings(), PiiSettings(enabled=False))
    assert off.kept["sent_id"].tolist() == ["e", "u", "k"]


def test_pii_is_counted_when_another_rule_drops_the_sentence():
    from flows.ingest import pii_kind_counts
    from pipelines.ingest.shards import filter_sentences
    from pipelines.quality.settings import PiiSettings

    sents = pd.DataFrame({"sent_id": ["a", "b"], "corpus": "c",
                          "text": ["日本語日本語日本語日本語 메일 a@b.kr",
                                   "010-1234-5678 로 전화주세요 연락처"]})  # fmt: skip
    out = filter_sentences(sents, NoiseSettings(), PiiSettings())
    got = out.rejects.set_index("sent_id")
    assert got.loc["a", "reason"] == "too_many_cjk"
    assert got.loc["a", "flags"] == "too_many_cjk,not_korean,pii:email"
    assert got.loc["a", "detail"] == (
        "12 Chinese/Japanese characters; also not_korean (Hangul share 0.14), pii (email)"
    )
    assert got.loc["b", "reason"] == "pii" and got.loc["b", "flags"] == "pii:phone"
    noise = out.stats.to_dict()["stages"][0]
    assert noise["dropped"] == {"too_many_cjk": 1}
    assert noise["flags"] == {"not_korean": 1, "pii:email": 1, "too_many_cjk": 1}
    assert pii_kind_counts(out.rejects) == {"email": 1, "phone": 1}
    # PII removal off: nothing is flagged as PII
    off = filter_sentences(sents, NoiseSettings(), PiiSettings(enabled=False))
    assert off.rejects.set_index("sent_id").loc["a", "flags"] == "too_many_cjk,not_korean"
