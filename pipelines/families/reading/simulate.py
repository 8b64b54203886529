"""What the simulated writers of a reading-comprehension demo write (demos and tests
only; the columns never reach the released data).

A writing task's truth is a question and its answer (``sim_question``, ``sim_answer``)
and the answers other people would mark for it (``sim_validation``, the validation
round's truth), chosen per task (seeded):

- ``reference``: a question people wrote on this paragraph: the source file's own
  (JSQuAD's release: the writer's answer first, the two validators' after it, so the
  simulated validators give the answers JSQuAD's validators gave) or one of the
  recipe's hand-written questions (``reading.simulation.reference``, JSON Lines of
  ``title``, ``question``, ``answer``, ``type`` and an optional ``anchor``; matched to a
  context of that title that holds the answer and the anchor);
- ``copy`` (``copy_rate``): the answer sentence with the answer replaced by a question
  word, the copying that the lexical overlap check is there for;
- ``statement`` (``statement_rate``): the answer sentence as it stands, no question;
- ``template``: with no reference left, a cloze question on a number or the first
  topic phrase of a sentence, as ``copy`` writes it.

For an unanswerable task (KLUE-MRC type 3) the question comes from the similar
paragraph the writer is shown (a reference on it whose answer the target paragraph
does not hold, else a template on it) and no answer is marked.

The simulated annotators then slip as :mod:`pipelines.annotation.values.spans` says:
answers cut short by a character or two, careless ones marking a random span.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pipelines.core.errors import BenchforgeError

if TYPE_CHECKING:
    from pipelines.families.reading.section import ReadingSimulation
    from pipelines.lang import Language


class ReferenceFileError(BenchforgeError, ValueError):
    """A reference-question file that cannot be read."""


QUESTION_WORD = {"ja": "何", "ko": "무엇"}
_NUMBER = re.compile(
    r"(?<![제\d.,])\d[\d,.]*(?:년|월|일|세|명|개|인|年|月|日|人|%|km/h|km)?(?![\d조항호])"
)
_LEAD = re.compile(r"^(?:제\s*\d+\s*조(?:의\s*\d+)?\s*)?[①-⑳]?\s*")
# a noun before a topic or subject particle (mecab-ko-dic's and UniDic's tags)
_NOUN = {"ko": ("NNG", "NNP"), "ja": ("名詞",)}
_PARTICLE = {"ko": ("JX", "JKS"), "ja": ("助詞",)}
_PARTICLE_WORDS = {"ja": ("は", "が")}
# Korean statement endings turned into question endings (the copying writer's rewrite)
_KO_ENDINGS = (
    ("한다", "하는가"),
    ("된다", "되는가"),
    ("진다", "지는가"),
    ("있다", "있는가"),
    ("없다", "없는가"),
    ("이다", "인가"),
    ("는다", "는가"),
    ("다", "는가"),
)
_KO_PARTICLE = {"은": "은", "는": "은", "이": "이", "가": "이", "을": "을", "를": "을"}


def read_references(path: Path) -> list[dict]:
    """The hand-written questions (``title``, ``question``, ``answer``, ``type``)."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            out.append(
                {
                    "anchor": str(row.get("anchor") or row["answer"]),
                    "title": str(row["title"]),
                    "question": str(row["question"]),
                    "answer": str(row["answer"]),
                    "type": str(row.get("type", "paraphrase")),
                }
            )
        except (json.JSONDecodeError, KeyError, TypeError):
            raise ReferenceFileError(
                f"{path}: line {n}: expected JSON with title, question and answer"
            ) from None
    return out


def body_start(sentence: str) -> int:
    """Where a sentence's own words start: after JSQuAD's ``<title> [SEP] `` and a law's
    ``제N조 ①`` marks."""
    sep = sentence.rfind("[SEP] ")
    at = sep + len("[SEP] ") if sep >= 0 else 0
    return at + len(_LEAD.match(sentence[at:]).group(0))


def _sentence_at(context: str, start: int, lang: Language) -> str:
    from pipelines.families.reading.checks import sentence_spans

    sentences = lang.split_sentences([context])[0] or [context]
    for s, (a, b) in zip(sentences, sentence_spans(context, sentences), strict=True):
        if a <= start < b:
            return s
    return sentences[0]


def cloze(sentence: str, answer: str, language: str) -> str:
    """``sentence`` rewritten as a question on ``answer``, copying its words: the
    answer replaced by a question word (a Korean particle after it made to fit), the
    statement's ending turned into a question's (Korean ``한다`` -> ``하는가?``,
    Japanese ``。`` -> ``か。``)."""
    word = QUESTION_WORD.get(language, "?")
    at = sentence.find(answer)
    head, tail = sentence[: max(at, 0)], sentence[max(at, 0) + len(answer) :]
    if language == "ko" and tail[:1] in _KO_PARTICLE:
        tail = _KO_PARTICLE[tail[0]] + tail[1:]
    core = (head + word + tail if at >= 0 else sentence).rstrip(" 。．.!！")
    if language == "ja":
        return core + "か。"
    if language == "ko":
        for end, question in _KO_ENDINGS:
            if core.endswith(end):
                return core[: -len(end)] + question + "?"
    return core + "?"


def topic(sentence: str, lang: Language) -> str | None:
    """The first noun of ``sentence`` before a topic or subject particle, or None."""
    nouns, particles = _NOUN.get(lang.code), _PARTICLE.get(lang.code)
    if not nouns:
        return None
    tagged = lang.tagged(sentence)
    run: list[str] = []  # the nouns of a compound (의무 + 교육)
    for (word, pos), (nxt, npos) in zip(tagged, tagged[1:], strict=False):
        run = [*run, word] if pos.startswith(nouns) else []
        if run and npos.startswith(particles) and nxt in _PARTICLE_WORDS.get(lang.code, (nxt,)):
            joined = "".join(run)
            word = joined if joined in sentence else word
            if len(word) > 1:
                return word
    return None


def template(context: str, lang: Language, rng: np.random.Generator) -> tuple[str, dict] | None:
    """A question copying one of the context's sentences (:func:`cloze`) on a number
    or its topic noun, and that answer's span; None when no sentence has one."""
    from pipelines.families.reading.checks import sentence_spans

    sentences = lang.split_sentences([context])[0] or [context]
    spans = sentence_spans(context, sentences)
    for i in rng.permutation(len(sentences)):
        s, (a, _) = sentences[i], spans[i]
        lead = body_start(s)
        body = s[lead:]
        m = _NUMBER.search(body)
        text = m.group(0) if m else topic(body, lang)
        if not text:
            continue
        start = a + lead + body.find(text)
        if context[start : start + len(text)] != text:
            continue
        return cloze(body, text, lang.code), {"start": start, "end": start + len(text)}
    return None


def _span(context: str, text: str, start: int | None = None) -> dict | None:
    if start is not None and context[start : start + len(text)] == text:
        return {"start": start, "end": start + len(text)}
    found = context.find(text)
    return {"start": found, "end": found + len(text)} if found >= 0 and text else None


def writer_truth(
    task: dict,
    refs: list[dict],
    used: set,
    lang: Language,
    spec: ReadingSimulation,
    rng: np.random.Generator,
) -> dict:
    """``sim_question``, ``sim_answer``, ``sim_validation`` (JSON) and ``sim_source``
    of one writing task (see the module docstring). ``refs``: the reference questions
    of the paragraph the question is written from (the similar one for an
    unanswerable task), each with ``answers`` into ``task['source_context']``;
    ``used``: reference ids already given to another task."""
    unanswerable = task["question_type"] == "unanswerable"
    context, source = task["context"], task["source_context"]
    fresh = [
        r
        for r in refs
        if r["id"] not in used
        and (not unanswerable or not any(a["text"] in context for a in r["answers"]))
    ]
    if not unanswerable:  # a question of the task's type first (KLUE-MRC's hand-written)
        fresh.sort(key=lambda r: r["type"] != task["question_type"])
    draw = rng.random()
    kind = "reference"
    if not unanswerable and draw < spec.copy_rate + spec.statement_rate:
        kind = "copy" if draw < spec.copy_rate else "statement"
    question, answers, span = None, [], None
    if fresh:  # a reference question, or its answer for a copy or a statement
        ref = fresh[0]
        used.add(ref["id"])
        question = ref["question"]
        answers = [
            None if a is None else _span(context, a["text"], a.get("answer_start"))
            for a in ref["answers"]
        ]
        if not answers or answers[0] is None:
            answers, question = [], None
        elif kind != "reference":
            span = _span(source, ref["answers"][0]["text"], ref["answers"][0].get("answer_start"))
    if question is None or (kind != "reference" and span is None):
        made = template(source, lang, rng)
        if made is None:
            return {
                "sim_question": "",
                "sim_answer": "null",
                "sim_validation": "[]",
                "sim_source": "none",
            }
        question, span = made
        kind = "template" if kind == "reference" else kind
        answers = (
            [None]
            if unanswerable
            else [_span(context, source[span["start"] : span["end"]], span["start"])]
        )
    if kind in ("copy", "statement"):
        text = source[span["start"] : span["end"]]
        sentence = _sentence_at(source, span["start"], lang)
        sentence = sentence[body_start(sentence) :]
        question = cloze(sentence, text, lang.code) if kind == "copy" else sentence
        answers = answers[:1]
    if unanswerable:
        return {
            "sim_question": question,
            "sim_answer": "null",
            "sim_validation": "[]",
            "sim_source": kind,
        }
    writer = answers[0]
    others = answers[1:] or [writer]
    return {
        "sim_question": question,
        "sim_answer": json.dumps(writer),
        "sim_validation": json.dumps(others),
        "sim_source": kind,
    }


def paragraph_references(row: dict, hand: list[dict], context: str, offset: int) -> list[dict]:
    """The reference questions of one paragraph: its source's own (answers moved by
    ``offset``, the context format's prefix) and the hand-written ones of its title
    whose answer the context holds (ids ``h<n>``)."""
    refs = []
    for q in json.loads(row["questions"] or "[]"):
        answers = [
            {"text": a["text"], "answer_start": a["answer_start"] + offset} for a in q["answers"]
        ]
        refs.append(
            {"id": q["id"], "question": q["question"], "answers": answers, "type": "answerable"}
        )
    for n, h in enumerate(hand):
        if h["title"] == row["title"] and h["answer"] in context and h["anchor"] in context:
            refs.append(
                {
                    "id": f"h{n}",
                    "question": h["question"],
                    "type": h["type"],
                    "answers": [{"text": h["answer"], "answer_start": None}],
                }
            )
    return refs
