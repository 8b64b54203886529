"""KLUE-DP's LEMMA and POS columns from MeCab with mecab-ko-dic (issue 57, item 2).

A sentence's words are its space-separated eojeols, kept byte for byte (the caller
squeezes runs of spaces first). MeCab analyses the whole sentence; each morpheme goes
to the word its first character falls in. A morpheme mecab-ko-dic keeps inflected
(``흘렸 VV+EP``, its expression ``흘리/VV/*+었/EP/*``) or pre-analysed is written as
the morphemes of its expression (``흘리 었``), as KLUE-DP writes base forms, a lone
jamo as the compatibility jamo (``ㄴ``, not mecab-ko-dic's U+11AB); a compound noun
stays one morpheme (``눈물 NNG``), as in the Sejong corpus.

mecab-ko-dic's tags are the Sejong tags except a few, mapped here
(:data:`TAG_MAP`): ``SSO``/``SSC`` (brackets and quotes) -> ``SS``, ``SC`` (comma,
colon, slash) -> ``SP``, ``NNBC`` (unit nouns) -> ``NNB``, and ``SY`` (other symbols)
-> ``SS`` for quotes and brackets, ``SO`` for a hyphen, tilde or dash, ``SW``
otherwise; a tag outside the Sejong set (:data:`~.dp_layout.SEJONG_POS`) is ``NA``.
"""

from __future__ import annotations

import contextlib
import unicodedata
from dataclasses import dataclass

from pipelines.families.klue.dp_layout import SEJONG_POS

TAG_MAP = {"SSO": "SS", "SSC": "SS", "SC": "SP", "NNBC": "NNB"}
QUOTES = set("\"'“”‘’«»「」『』()[]{}<>〈〉《》【】")
DASHES = set("-~‐‑‒–—―〜")


@dataclass(frozen=True)
class Word:
    """One word's morphemes and their Sejong tags."""

    form: str
    morphemes: tuple[str, ...]
    tags: tuple[str, ...]

    @property
    def lemma(self) -> str:
        return " ".join(self.morphemes)

    @property
    def pos(self) -> str:
        return "+".join(self.tags)


def compatibility_jamo(text: str) -> str:
    """A lone conjoining jamo (mecab-ko-dic writes the ending ``ㄴ`` of ``호화스러운`` as
    U+11AB) as the compatibility jamo people type and KLUE's files hold (U+3134)."""
    out = []
    for ch in text:
        if "\u1100" <= ch <= "\u11ff":
            name = unicodedata.name(ch, "")
            for part in ("CHOSEONG ", "JUNGSEONG ", "JONGSEONG "):
                name = name.replace(part, "LETTER ")
            with contextlib.suppress(KeyError):  # no compatibility form: kept
                ch = unicodedata.lookup(name)
        out.append(ch)
    return "".join(out)


def sejong(tag: str, surface: str) -> str:
    """The Sejong tag of a mecab-ko-dic tag (module docstring)."""
    if tag == "SY":
        if surface and all(c in QUOTES for c in surface):
            return "SS"
        if surface and all(c in DASHES for c in surface):
            return "SO"
        return "SW"
    tag = TAG_MAP.get(tag, tag)
    return tag if tag in SEJONG_POS else "NA"


def _pieces(surface: str, feature: str) -> list[tuple[str, str]]:
    fields = feature.split(",")
    tag = fields[0]
    kind = fields[4] if len(fields) > 4 else "*"
    expression = fields[7] if len(fields) > 7 else "*"
    if kind in ("Inflect", "Preanalysis") and expression not in ("*", ""):
        out = []
        for part in expression.split("+"):
            bits = part.split("/")
            if len(bits) >= 2 and bits[0]:
                out.append((compatibility_jamo(bits[0]), sejong(bits[1], bits[0])))
        if out:
            return out
    return [(surface, sejong(tag.split("+")[0], surface))]


def analyse(sentence: str) -> list[Word]:
    """The words of ``sentence`` (split at single spaces) with their morphemes."""
    from pipelines.lang import language

    analyser = language("ko").analysed
    if analyser is None:
        raise RuntimeError("the Korean language pack has no morpheme analyser")
    forms = sentence.split(" ")
    starts, at = [], 0
    for form in forms:
        starts.append(at)
        at += len(form) + 1
    per_word: list[list[tuple[str, str]]] = [[] for _ in forms]
    cursor, word = 0, 0
    for surface, feature in analyser(sentence):
        found = sentence.find(surface, cursor)
        if found < 0:  # MeCab normalised something: take the next characters
            found = cursor
            while found < len(sentence) and sentence[found] == " ":
                found += 1
        cursor = found + len(surface)
        while word + 1 < len(forms) and found >= starts[word + 1]:
            word += 1
        per_word[word] += _pieces(surface, feature)
    words = []
    for form, pieces in zip(forms, per_word, strict=True):
        if not pieces:
            pieces = [(form, "NA")]
        words.append(Word(form, tuple(p for p, _ in pieces), tuple(t for _, t in pieces)))
    return words
