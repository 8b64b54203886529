"""Korean particles (josa) that agree with the word they follow.

A particle has two forms, one after a final consonant (batchim) and one after a vowel:
은/는, 이/가, 을/를, 과/와, 아/야, 이다/다, 으로/로 (로 also after ㄹ). ``attach`` picks the
form for a word, given either form; particles with one form (의, 에, 도, 인 ...) are
attached as they are. A word that does not end in a Hangul syllable is read by its last
digit (일, 이, 삼 ...) or, for Latin letters, by the usual Korean reading of the letter's
name (L, M, N, R end in a consonant).
"""

from __future__ import annotations

PAIRS = {
    "은": ("은", "는"),
    "는": ("은", "는"),
    "이": ("이", "가"),
    "가": ("이", "가"),
    "을": ("을", "를"),
    "를": ("을", "를"),
    "과": ("과", "와"),
    "와": ("과", "와"),
    "아": ("아", "야"),
    "야": ("아", "야"),
    "이다": ("이다", "다"),
    "으로": ("으로", "로"),
    "로": ("으로", "로"),
}
# the reading of a final digit: does it end in a consonant? (영 일 이 삼 사 오 육 칠 팔 구)
DIGIT_BATCHIM = dict(zip("0123456789", [True, True, False, True, False, False, True, True,
                                         True, False], strict=True))  # fmt: skip
LATIN_BATCHIM = set("lmnrLMNR")
RIEUL = 8  # the index of ㄹ among the final consonants


def final_consonant(word: str) -> int | None:
    """The index (1-27) of the last syllable's final consonant, 0 for none, None when the
    word does not end in a Hangul syllable, a digit or a Latin letter."""
    text = word.rstrip(" )]'\"")
    if not text:
        return None
    ch = text[-1]
    if "가" <= ch <= "힣":
        return (ord(ch) - 0xAC00) % 28
    if ch in DIGIT_BATCHIM:
        return (RIEUL if ch in "178" else 1) if DIGIT_BATCHIM[ch] else 0
    if ch.isascii() and ch.isalpha():
        return (RIEUL if ch in "lL" else 1) if ch in LATIN_BATCHIM else 0
    return None


def attach(word: str, particle: str) -> str:
    """``word`` followed by ``particle`` in the form that agrees with it (KoBBQ's
    ``*_post`` columns give one form; the other is chosen here)."""
    if not particle:
        return word
    forms = PAIRS.get(particle)
    final = final_consonant(word)
    if forms is None or final is None:
        return word + particle
    consonant, vowel = forms
    if consonant == "으로":
        return word + ("로" if final in (0, RIEUL) else "으로")
    return word + (consonant if final else vowel)
