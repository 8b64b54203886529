"""Each PII detector (KLUE 2.3, KISA guideline) with positive and negative Korean examples."""

import pandas as pd
import pytest

from pipelines.quality.pii import filter_pii, find_pii, luhn_valid, pii_kinds
from pipelines.quality.settings import PiiSettings


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("문의는 hong.gildong@naver.com 으로 보내주세요", "email"),
        ("자세한 내용은 https://blog.naver.com/abc123 참고", "url"),
        ("www.daum.net 에서 봤어요", "url"),
        ("영상 youtu.be/4mwsKWUm3WY 보세요", "url"),
        ("@movie_lover 님 말이 맞아요", "mention"),
        ("@영화광 님 감사합니다", "mention"),
        ("제 번호는 010-1234-5678 입니다", "phone"),
        ("연락처 01012345678 로 문자주세요", "phone"),
        ("사무실 02-123-4567 로 전화", "phone"),
        ("고객센터 1588-1234", "phone"),
        ("+82 10-9876-5432 로 연락", "phone"),
        ("주민번호 900101-1234567 유출", "rrn"),
        ("카드 4111-1111-1111-1111 결제", "card"),
        ("카드번호 5555555555554444 입니다", "card"),
        ("아멕스 3782-822463-10005 로 결제", "card"),
        ("@김혜영 봤니 알겠냐", "mention"),
        ("SNS로 이룰 수 있는 것에 대한 스토리 @deok", "mention"),
        ("입금 계좌 110-123-456789 신한", "account"),
        ("국민은행 계좌 123456789012 로 보내", "account"),
    ],
)
def test_detects(text, kind):
    assert pii_kinds(text) == [kind]


@pytest.mark.parametrize(
    "text",
    [
        "문재인 대통령이 기자회견을 열었다",  # public figures' names are not PII
        "배우 송강호의 연기가 최고였다",
        "김흥국 1959-2018",  # a year range, not a phone number
        "2019-08-25 개봉작",
        "관객 1,234,567명 돌파",
        "평점 9.5 점 드립니다",
        "카드 4111-1111-1111-1112 결제",  # fails the Luhn check
        "991332-1234567 은 없는 날짜",  # month 13: not a resident number
        "이메일 주소를 적어주세요",
        "3.5점 영화.. 그냥 그래",
        "1+1 행사 중",
        # false positives seen in the full NSMC crawl
        "잼43242343424141341",  # Luhn-valid by chance, but no card network has 17 digits
        "킬링타임 굿00111000111000",
        "7점0707070707070",  # a digit run, not a resident registration number
        "1010101010101재밌네영",
        "1839-1842년경 중국 광주 등에서의 아편전쟁을 그린 영화",  # a year range
        "이세상 그어디에도 없는,@신비의법@이긴 하다만",  # @ as quotation marks
        "놀란의 불멸의 걸작 @다크 나이트@에도 평점 7 점",
    ],
)
def test_negatives(text):
    assert pii_kinds(text) == []


def test_email_is_not_counted_as_mention():
    assert find_pii("연락: kim@korea.kr 그리고 @kim_official") == [
        ("email", "kim@korea.kr"),
        ("mention", "@kim_official"),
    ]


def test_phone_not_counted_again_as_account():
    assert pii_kinds("010-1234-5678") == ["phone"]


def test_several_kinds_recorded():
    text = "메일 a@b.com 이나 http://x.kr 또는 010-1111-2222"
    assert pii_kinds(text) == ["email", "url", "phone"]


def test_luhn_against_known_numbers():
    assert luhn_valid("4111111111111111")
    assert luhn_valid("378282246310005")  # AmEx test number
    assert not luhn_valid("4111111111111112")


def test_stage_drops_with_kinds_and_respects_settings():
    df = pd.DataFrame(
        {
            "sent_id": ["a", "b", "c"],
            "corpus": "c",
            "text": ["좋은 영화네요", "메일 a@b.com 으로", "@철수 이거 봐 010-2222-3333"],
        }
    )
    result = filter_pii(df, PiiSettings())
    assert result.kept["sent_id"].tolist() == ["a"]
    assert result.dropped["reason"].tolist() == ["pii", "pii"]
    assert result.dropped["detail"].tolist() == ["email", "phone,mention"]
    only_email = filter_pii(df, PiiSettings(kinds=["email"]))
    assert only_email.kept["sent_id"].tolist() == ["a", "c"]
    off = filter_pii(df, PiiSettings(enabled=False))
    assert len(off.kept) == 3


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match="unknown PII kinds"):
        PiiSettings(kinds=["email", "passport"])


def test_two_mentions_on_one_line():
    assert find_pii("@kim 그리고 @lee 보세요") == [("mention", "@lee"), ("mention", "@kim")]
