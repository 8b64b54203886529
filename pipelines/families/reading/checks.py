"""The checks every written question goes through (issue 37; JGLUE 3.3, KLUE 3.7),
one registration each in :data:`CHECKS`, run in the recipe's order
(``reading.checks``); the first that fails drops the question with its reason.

A check is ``check(q, seen, spec) -> reason | None``; ``q`` is one written question
(``question``, ``answer``: ``{start, end, text}`` or None, ``context``,
``question_type``, ``paragraph_id``, ``overlap``, ``language``), ``seen`` the questions
kept so far (normalised text per paragraph), ``spec`` the recipe's ``reading``
section.

- ``empty_question``: nothing written (``empty_question``).
- ``is_question``: the text ends with a question mark or a question ending of its
  language (Japanese ``か``, ``の``, ``は`` (``首都は。``), ``よ`` (``挙げよ。``)
  before an optional 。; Korean ``까``, ``가``, ``나``, ``니``, ``냐``, ``지``, ``요``
  before an optional full stop) or holds a question word (何, 誰, いつ, ...; 무엇,
  누구, 언제, ...): ``not_a_question``. JSQuAD's own questions end with ``か。``,
  ``は。`` or a bare question word as often as with ``？``; the share of the
  reference questions that pass is in the card.
- ``answer_span``: an answerable question has an answer (``no_answer_marked``) that is
  a span of its context (``answer_outside_paragraph``) spelling its text
  (``answer_text_mismatch``); SQuAD's and KLUE-MRC's answers are spans.
- ``unanswerable_answer``: a question written as unanswerable (KLUE-MRC type 3) has no
  answer marked (``answer_on_unanswerable``).
- ``duplicate``: the same question (NFKC, spaces and final punctuation ignored) already
  kept on the same paragraph (``duplicate_question``).
- ``lexical_overlap``: the share of the question's morphemes found in its answer
  sentence (:func:`lexical_overlap`) at or over ``overlap_max`` is flagged; dropped as
  ``copies_context`` only with ``drop_overlap`` (KLUE-MRC's writers were told not to
  copy; JGLUE's guideline asks for paraphrase and the paper reports the overlap).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

from pipelines.core.registry import Registry

if TYPE_CHECKING:
    from pipelines.lang import Language

Check = Callable[[dict, dict, object], str | None]
CHECKS: Registry[Check] = Registry("reading check", None, "checks of written questions")

QUESTION_ENDINGS = {
    "ja": re.compile(r"(?:[?？]|(?:か|の|は|よ)[。．.]?)$"),
    "ko": re.compile(r"(?:[?？]|(?:까|가|나|니|냐|지|요)[.。]?)$"),
}
# a question word anywhere makes a question too ("...を何という。", "...は何年。")
QUESTION_WORDS = {
    "ja": re.compile(
        r"何|なに|なん|誰|だれ|いつ|どこ|どれ|どの|どちら|どんな|なぜ|どう|いくつ|いくら"
    ),
    "ko": re.compile(r"무엇|무슨|누구|누가|언제|어디|어느|어떤|어떻게|왜|몇|얼마"),
}
# the parts of speech whose morphemes count in the lexical overlap (content words:
# UniDic's and mecab-ko-dic's nouns, verbs, adjectives, adverbs, roots, foreign words
# and numbers); a language without an entry counts every morpheme with a letter
CONTENT_POS = {
    "ja": ("名詞", "動詞", "形容詞", "副詞", "形状詞", "接頭辞"),
    "ko": ("NN", "NR", "VV", "VA", "MAG", "XR", "SL", "SN", "SH"),
}
ANY_QUESTION = re.compile(r"[?？]$")
_PUNCT = re.compile(r"[\s?？。．.!！、,，「」『』()（）]+")


def normalised(question: str) -> str:
    """The question for comparison: NFKC, spaces and punctuation removed."""
    return _PUNCT.sub("", unicodedata.normalize("NFKC", question))


def is_question(text: str, language: str) -> bool:
    """Whether ``text`` ends as a question in ``language`` or holds a question word."""
    text = text.strip()
    if QUESTION_ENDINGS.get(language, ANY_QUESTION).search(text):
        return True
    words = QUESTION_WORDS.get(language)
    return bool(words and words.search(text))


@CHECKS.register("empty_question")
def check_empty(q: dict, seen: dict, spec: object) -> str | None:
    """Nothing written."""
    return None if str(q.get("question") or "").strip() else "empty_question"


@CHECKS.register("is_question")
def check_is_question(q: dict, seen: dict, spec: object) -> str | None:
    """Ends with a question mark or a question ending of its language."""
    return None if is_question(str(q.get("question") or ""), q["language"]) else "not_a_question"


@CHECKS.register("answer_span")
def check_answer_span(q: dict, seen: dict, spec: object) -> str | None:
    """An answerable question's answer is a span of its context spelling its text."""
    if q["question_type"] == "unanswerable":
        return None
    answer = q.get("answer")
    if not answer:
        return "no_answer_marked"
    start, end, context = int(answer["start"]), int(answer["end"]), str(q["context"])
    if not 0 <= start < end <= len(context):
        return "answer_outside_paragraph"
    if context[start:end] != str(answer.get("text", "")):
        return "answer_text_mismatch"
    return None


@CHECKS.register("unanswerable_answer")
def check_unanswerable(q: dict, seen: dict, spec: object) -> str | None:
    """A question written as unanswerable has no answer marked."""
    if q["question_type"] == "unanswerable" and q.get("answer"):
        return "answer_on_unanswerable"
    return None


@CHECKS.register("duplicate")
def check_duplicate(q: dict, seen: dict, spec: object) -> str | None:
    """The same question already kept on the same paragraph."""
    key = normalised(str(q.get("question") or ""))
    return "duplicate_question" if key in seen.get(q["paragraph_id"], set()) else None


@CHECKS.register("lexical_overlap")
def check_overlap(q: dict, seen: dict, spec: object) -> str | None:
    """The question copies its answer sentence (overlap at or over ``overlap_max``),
    dropped only with ``drop_overlap``."""
    overlap = q.get("overlap")
    if spec.drop_overlap and overlap is not None and overlap >= spec.overlap_max:
        return "copies_context"
    return None


def run_checks(q: dict, seen: dict, spec: object) -> str | None:
    """The first failing check's reason (``reading.checks`` in order), or None; a kept
    question is added to ``seen``."""
    for name in spec.checks:
        reason = CHECKS.get(name)(q, seen, spec)
        if reason:
            return reason
    seen.setdefault(q["paragraph_id"], set()).add(normalised(str(q.get("question") or "")))
    return None


def content_words(text: str, lang: Language) -> set[str]:
    """The content morphemes of ``text`` (:data:`CONTENT_POS` of its language)."""
    keep = CONTENT_POS.get(lang.code)
    return {
        w
        for w, pos in lang.tagged(text)
        if any(ch.isalnum() for ch in w) and (keep is None or pos.startswith(keep))
    }


def sentence_spans(context: str, sentences: list[str]) -> list[tuple[int, int]]:
    """Where each of ``sentences`` (split from ``context``, in order) lies in it."""
    spans, at = [], 0
    for s in sentences:
        found = context.find(s, at)
        if found < 0:
            found = at
        spans.append((found, found + len(s)))
        at = found + len(s)
    return spans


def lexical_overlap(
    question: str, context: str, answer_start: int | None, lang: Language
) -> float | None:
    """The share of the question's content morphemes (:func:`content_words`) that occur
    among its answer sentence's (the context's sentence holding ``answer_start``; with
    no answer, the most overlapping sentence): 1.0 when the question copies it."""
    words = content_words(question, lang)
    if not words:
        return None
    sentences = lang.split_sentences([context])[0] or [context]
    spans = sentence_spans(context, sentences)
    if answer_start is not None:
        chosen = [s for s, (a, b) in zip(sentences, spans, strict=True) if a <= answer_start < b]
        sentences = chosen or sentences
    best = 0.0
    for s in sentences:
        found = content_words(s, lang)
        best = max(best, len(words & found) / len(words))
    return round(best, 4)
