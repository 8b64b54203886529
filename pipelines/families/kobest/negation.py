"""SentiNeg's negation (KoBEST 2.6): a review sentence and its negated counterpart of
opposite sentiment, made by adding or removing a negation form (안, 못, -지 않다 /
-지 못하다), by swapping a word for its antonym, or an idiom for its opposite.

``suggest`` proposes a negated draft for the writer to fix in Label Studio (the helper
of issue 23); ``negation_edit`` tells whether an edit really negates, and how. Both
work on MeCab morphemes (``Language.tagged``) and a surface-form antonym list
(``lexicons/antonyms.tsv``, both directions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipelines.lang import Language, language

LEXICONS = Path(__file__).resolve().parent / "lexicons"
NEGATION_ADVERBS = ("안", "못")
NEGATION_AUX = ("않", "못하")  # after the connective -지


@lru_cache(maxsize=8)
def idioms(path: str | None = None) -> tuple[tuple[str, str], ...]:
    """Idioms and their opposites (KoBEST 2.6, the third method), both directions,
    longest first (``lexicons/idioms.tsv`` unless ``path``; the layout of
    ``antonyms``)."""
    return antonyms(str(path) if path else str(LEXICONS / "idioms.tsv"))


@lru_cache(maxsize=8)
def antonyms(path: str | None = None) -> tuple[tuple[str, str], ...]:
    """Antonym pairs, both directions, longest form first (``form<TAB>opposite``); a
    malformed line is an error naming the file and line."""
    p = Path(path) if path else LEXICONS / "antonyms.tsv"
    pairs = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not all(x.strip() for x in parts):
            raise ValueError(f"{p}:{n}: expected 'form<TAB>opposite', got {line!r}")
        a, b = parts[0].strip(), parts[1].strip()
        pairs += [(a, b), (b, a)]
    return tuple(sorted(set(pairs), key=lambda ab: (-len(ab[0]), ab)))


def negation_count(tagged: list[tuple[str, str]]) -> int:
    """Negation forms in a tagged sentence: the adverbs 안 / 못 (MAG) and -지 followed by
    the auxiliary 않 / 못하 (VX)."""
    n = 0
    for i, (surface, tag) in enumerate(tagged):
        first = tag.split("+")[0]
        if (
            first == "MAG"
            and surface in NEGATION_ADVERBS
            or first == "VX"
            and surface.startswith(NEGATION_AUX)  # 않, 못하 and fused forms (않았)
            and i
            and tagged[i - 1][0] == "지"
        ):
            n += 1
    return n


def _swapped(a: str, b: str, pairs: tuple[tuple[str, str], ...]) -> tuple[str, str] | None:
    for form, opposite in pairs:
        if form in a and opposite in b and a.count(form) > b.count(form):
            return form, opposite
    return None


@dataclass(frozen=True)
class NegationEdit:
    """How ``edited`` negates ``original``: ``method`` is ``add``, ``remove`` or
    ``antonym`` (None: it does not)."""

    method: str | None
    detail: str


def negation_edit(
    original: str,
    edited: str,
    lang: Language | None = None,
    lexicon: str | None = None,
    idiom_lexicon: str | None = None,
) -> NegationEdit:
    """Whether ``edited`` is a negation of ``original`` (KoBEST 2.6): it adds or removes
    a negation form, swaps an idiom for its opposite (the idiom list), or swaps a word of
    the antonym list."""
    lang = lang or language("ko")
    if original.strip() == edited.strip():
        return NegationEdit(None, "the sentence is unchanged")
    before, after = negation_count(lang.tagged(original)), negation_count(lang.tagged(edited))
    if after > before:
        return NegationEdit("add", f"negation forms {before} -> {after}")
    if after < before:
        return NegationEdit("remove", f"negation forms {before} -> {after}")
    swap = _swapped(original, edited, idioms(idiom_lexicon))
    if swap:
        return NegationEdit("idiom", f"{swap[0]} -> {swap[1]}")
    swap = _swapped(original, edited, antonyms(lexicon))
    if swap:
        return NegationEdit("antonym", f"{swap[0]} -> {swap[1]}")
    return NegationEdit(
        None,
        f"no negation form added or removed ({before} in both), no antonym and no idiom swapped",
    )


@dataclass(frozen=True)
class Suggestion:
    draft: str
    method: str
    detail: str


def _eojeol_spans(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def suggest(
    text: str,
    lang: Language | None = None,
    lexicon: str | None = None,
    idiom_lexicon: str | None = None,
) -> Suggestion:
    """A negated draft of ``text``: the opposite idiom when the idiom list has one of its
    idioms (KoBEST 2.6's third method), an antonym swap when the list has one of its words,
    else the removal of a negation adverb (안 / 못) or of -지 않-, else 안 inserted
    before the last predicate (a noun + 하다 predicate is split: 합격했다 -> 합격 안 했다).
    The draft is a suggestion; the writer fixes it."""
    lang = lang or language("ko")
    for form, opposite in idioms(idiom_lexicon):
        if form in text:
            i = text.rfind(form)
            return Suggestion(
                text[:i] + opposite + text[i + len(form) :], "idiom", f"{form} -> {opposite}"
            )
    for form, opposite in antonyms(lexicon):
        if form in text:
            i = text.rfind(form)
            return Suggestion(
                text[:i] + opposite + text[i + len(form) :], "antonym", f"{form} -> {opposite}"
            )
    removed = re.sub(r"(^|\s)(안|못)\s+", r"\1", text, count=1)
    if removed != text:
        return Suggestion(removed, "remove", "negation adverb removed")
    m = re.search(r"지\s*않", text)
    if m:
        # 먹지 않았다 -> 먹었다 needs the ending's vowel harmony: leave the stem joined to
        # the rest and let the writer fix it
        draft = text[: m.start()] + text[m.end() :]
        return Suggestion(draft, "remove", "-지 않- removed (check the ending)")
    tagged = lang.tagged(text)
    spans = _eojeol_spans(text)
    # the last eojeol holding a verb or adjective (or a 하다 suffix)
    pos, target = 0, None
    for surface, tag in tagged:
        start = text.find(surface, pos)
        if start < 0:
            continue
        pos = start + len(surface)
        if any(t in ("VV", "VA", "XSV", "XSA") for t in tag.split("+")):
            target = (start, tag)
    if target is None:
        return Suggestion(text, "none", "no predicate found")
    start, tag = target
    word = next((s for s in spans if s[0] <= start < s[1]), None)
    if word is None:
        return Suggestion(text, "none", "no predicate found")
    if tag.split("+")[0] in ("XSV", "XSA") and start > word[0]:
        return Suggestion(text[:start] + " 안 " + text[start:], "add", "안 before 하다")
    return Suggestion(text[: word[0]] + "안 " + text[word[0] :], "add", "안 before the predicate")
