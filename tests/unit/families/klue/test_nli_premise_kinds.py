"""KLUE 3.3.1: "premise is a proposition, a declarative sentence to which we can assign
a truth value, excluding mathematical formulae and lists". A formula or a list item
that is otherwise a declarative sentence of 20-90 characters is not a premise."""

from __future__ import annotations

import pytest

from pipelines.families.klue.items_section import PremiseRules
from pipelines.families.klue.nli_premises import premise_reason

RULES = PremiseRules()


@pytest.mark.parametrize(
    "text",
    [
        "2 + 3 = 5이므로 이 식은 어떤 경우에도 항상 참이 된다.",
        "x^2 + y^2 = 1을 만족하는 점들은 모두 단위원 위에 놓인다.",
        "반지름이 r일 때 원의 넓이 S는 S = πr²로 계산한다.",
        "1. 정부는 오늘 오전 새로운 경제 대책을 공식 발표했다.",
        "- 정부는 오늘 오전 새로운 경제 대책을 공식 발표했다.",
        "① 정부는 오늘 오전 새로운 경제 대책을 공식 발표했다.",
        "▲ 정부는 오늘 오전 새로운 경제 대책을 공식 발표했다.",
        "(2) 정부는 오늘 오전 새로운 경제 대책을 공식 발표했다.",
    ],
)
def test_formulae_and_lists_are_not_premises(text):
    assert premise_reason(text, RULES) == "formula_or_list"
    # the same sentence without the formula or the list mark is a premise
    plain = "정부는 오늘 오전 새로운 경제 대책을 공식 발표했다."
    assert premise_reason(plain, RULES) is None


@pytest.mark.parametrize(
    "text",
    [
        "정부는 올해 경제 성장률 목표를 3.5%로 정했다고 발표했다.",
        "한·미 정상은 오늘 서울에서 두 시간 동안 회담을 가졌다.",
        "시청률은 10.5%로 지난주보다 1.2%p 올라 동시간대 1위를 지켰다.",
        "2019-2020 시즌에 그는 모두 38경기에 나서 12골을 넣었다.",
        "이 영화는 1편보다 2편이 훨씬 재미있고 배우들의 연기도 좋다.",
    ],
)
def test_numbers_dates_and_middle_dots_are_no_formula_or_list(text):
    assert premise_reason(text, RULES) is None
