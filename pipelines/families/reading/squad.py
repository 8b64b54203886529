"""The SQuAD v1.1 JSON layout that JSQuAD (JGLUE 3.3) is released in, read into one
record per question and written back (issue 37, item 1: the reading-comprehension
family's export and reader).

A release file is ``{"data": [{"title", "paragraphs": [{"qas": [{"question", "id",
"answers": [{"text", "answer_start"}], "is_impossible"}], "context"}]}]}`` (SQuAD 2.0 and
KLUE-MRC's SQuAD-style files add ``is_impossible`` and may put ``"version"`` first).

Contract: :func:`read_squad` gives a :class:`SquadRelease`: the records (``title``,
``context``, then the question object's own keys in their order; ``article`` and
``paragraph`` number them; keys an article or paragraph has beyond the layout's are kept
under ``article_extra`` / ``paragraph_extra``) and the file's **style** (top-level keys,
key order of articles and paragraphs, the JSON formatting). :func:`write_squad` writes
the records back in that style, so that a release file read and written again is
byte-identical when its formatting is one ``json.dumps`` can produce (JSQuAD's is:
``ensure_ascii=False``, no indent, a final line break), and equal as JSON otherwise.
Every answer is checked: ``context[answer_start:answer_start + len(text)] == text``; an
answer outside its paragraph or not matching its text, a question without an id (or
KLUE-MRC's ``guid``), with an id an earlier question has, or without a question text,
or a malformed file is a
:class:`SquadLayoutError` naming the file and the question.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, read_text

LAYOUT_ARTICLE = ("title", "paragraphs")
LAYOUT_PARAGRAPH = ("qas", "context")


class SquadLayoutError(BenchforgeError, ValueError):
    """A SQuAD-layout file that cannot be read; the message names the file and where."""


@dataclass
class SquadStyle:
    """How a file is laid out, beyond its records."""

    top: dict = field(default_factory=dict)  # top-level keys other than "data", in order
    top_order: list[str] = field(default_factory=lambda: ["data"])
    article_order: list[str] = field(default_factory=lambda: list(LAYOUT_ARTICLE))
    paragraph_order: list[str] = field(default_factory=lambda: list(LAYOUT_PARAGRAPH))
    ensure_ascii: bool = False
    indent: int | None = None
    final_newline: bool = True


@dataclass
class SquadRelease:
    records: list[dict]
    style: SquadStyle = field(default_factory=SquadStyle)


def _where(path: str, article: int, paragraph: int, qa: int | str) -> str:
    return f"{path}: data[{article}].paragraphs[{paragraph}].qas[{qa}]"


def check_answers(qa: dict, context: str, where: str) -> None:
    """Every answer is a span of ``context`` that spells its text."""
    qid = qa.get("id", qa.get("guid"))
    for n, answer in enumerate(qa.get("answers") or []):
        try:
            start, text = int(answer["answer_start"]), str(answer["text"])
        except (KeyError, TypeError, ValueError):
            raise SquadLayoutError(f"{where} (id {qid!r}): answers[{n}] needs "
                                   "text and answer_start") from None  # fmt: skip
        if not 0 <= start <= len(context) - len(text) or not text:
            raise SquadLayoutError(f"{where} (id {qid!r}): answers[{n}] "
                                   f"{text!r} at {start} is outside its paragraph "
                                   f"({len(context)} characters)")  # fmt: skip
        if context[start : start + len(text)] != text:
            raise SquadLayoutError(f"{where} (id {qid!r}): answers[{n}] {text!r} "
                                   f"is not the paragraph's text at {start} "
                                   f"({context[start : start + len(text)]!r})")  # fmt: skip


def _style_of(text: str, data: dict) -> SquadStyle:
    style = SquadStyle(top={k: v for k, v in data.items() if k != "data"},
                       top_order=list(data))  # fmt: skip
    articles = data["data"]
    if articles:
        style.article_order = list(articles[0])
        if articles[0].get("paragraphs"):
            style.paragraph_order = list(articles[0]["paragraphs"][0])
    for ensure_ascii in (False, True):
        for indent in (None, 2, 4, 1):
            dumped = json.dumps(data, ensure_ascii=ensure_ascii, indent=indent)
            if text in (dumped, dumped + "\n"):
                style.ensure_ascii, style.indent = ensure_ascii, indent
                style.final_newline = text.endswith("\n")
                return style
    style.final_newline = text.endswith("\n")
    return style


def read_squad(text: str, where: str = "<squad>") -> SquadRelease:
    """The records and style of a SQuAD-layout file (see the module docstring)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SquadLayoutError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise SquadLayoutError(f"{where}: expected an object with a 'data' list of articles")
    records = []
    ids: dict[str, str] = {}  # question id -> where it was first
    for a, article in enumerate(data["data"]):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise SquadLayoutError(f"{where}: data[{a}]: expected title and a paragraphs list")
        a_extra = {k: v for k, v in article.items() if k not in LAYOUT_ARTICLE}
        for p, paragraph in enumerate(article["paragraphs"]):
            context = paragraph.get("context") if isinstance(paragraph, dict) else None
            if not isinstance(context, str) or not isinstance(paragraph.get("qas"), list):
                raise SquadLayoutError(f"{where}: data[{a}].paragraphs[{p}]: expected context "
                                       "and a qas list")  # fmt: skip
            p_extra = {k: v for k, v in paragraph.items() if k not in LAYOUT_PARAGRAPH}
            for q, qa in enumerate(paragraph["qas"]):
                here = _where(where, a, p, q)
                if not isinstance(qa, dict):
                    raise SquadLayoutError(f"{here}: expected an object")
                qid = qa.get("id", qa.get("guid"))  # KLUE-MRC's files call it guid
                if not str(qid or "").strip():
                    raise SquadLayoutError(f"{here}: no id (or guid)")
                if not str(qa.get("question") or "").strip():
                    raise SquadLayoutError(f"{here} (id {qid!r}): empty question")
                if str(qid) in ids:  # issue 51: a repeated id was accepted
                    raise SquadLayoutError(f"{here}: id {qid!r} repeats {ids[str(qid)]}")
                ids[str(qid)] = here.split(": ", 1)[-1]
                check_answers(qa, context, here)
                record = {"article": a, "paragraph": p, "title": article.get("title"),
                          "context": context, **qa}  # fmt: skip
                if a_extra:
                    record["article_extra"] = a_extra
                if p_extra:
                    record["paragraph_extra"] = p_extra
                records.append(record)
            if not paragraph["qas"]:  # a paragraph without questions is kept too
                records.append({"article": a, "paragraph": p, "title": article.get("title"),
                                "context": context, "no_questions": True,
                                **({"article_extra": a_extra} if a_extra else {}),
                                **({"paragraph_extra": p_extra} if p_extra else {})})  # fmt: skip
        if not article["paragraphs"]:
            records.append({"article": a, "paragraph": None, "title": article.get("title"),
                            **({"article_extra": a_extra} if a_extra else {})})  # fmt: skip
    return SquadRelease(records, _style_of(text, data))


RECORD_KEYS = ("article", "paragraph", "title", "context", "article_extra", "paragraph_extra",
               "no_questions")  # fmt: skip


def to_json_value(release: SquadRelease) -> dict:
    """The release as the JSON value of its file (articles and paragraphs regrouped by
    their numbers, in record order)."""
    style = release.style
    articles: list[dict] = []
    current: dict[tuple, dict] = {}
    for r in release.records:
        key = r.get("article")
        art = current.get(("a", key))
        if art is None:
            fields = {"title": r.get("title"), "paragraphs": []}
            order = [*style.article_order, *(k for k in LAYOUT_ARTICLE
                                             if k not in style.article_order)]  # fmt: skip
            art = {k: fields[k] for k in order if k in fields}
            art.update(r.get("article_extra") or {})
            articles.append(art)
            current[("a", key)] = art
        if r.get("paragraph") is None:
            continue
        para = current.get(("p", key, r["paragraph"]))
        if para is None:
            fields = {"qas": [], "context": r["context"]}
            order = [*style.paragraph_order, *(k for k in LAYOUT_PARAGRAPH
                                               if k not in style.paragraph_order)]  # fmt: skip
            para = {k: fields[k] for k in order if k in fields}
            para.update(r.get("paragraph_extra") or {})
            art["paragraphs"].append(para)
            current[("p", key, r["paragraph"])] = para
        if not r.get("no_questions"):
            para["qas"].append({k: v for k, v in r.items() if k not in RECORD_KEYS})
    top = {**style.top, "data": articles}
    return {k: top[k] for k in [*style.top_order, *(k for k in top if k not in style.top_order)]}


def write_squad(release: SquadRelease) -> str:
    """The release file's text in its style (see the module docstring)."""
    style = release.style
    for r in release.records:
        if r.get("paragraph") is not None and not r.get("no_questions"):
            check_answers(r, r["context"], f"record {r.get('id')!r}")
    text = json.dumps(to_json_value(release), ensure_ascii=style.ensure_ascii,
                      indent=style.indent)  # fmt: skip
    return text + ("\n" if style.final_newline else "")


def read_file(path: Path) -> SquadRelease:
    """The release in ``path``; a missing file or bytes that are not UTF-8 are a
    :class:`SquadLayoutError` naming the file and the line (issue 51)."""
    try:
        text = read_text(path)
    except TextFileError as exc:
        raise SquadLayoutError(str(exc)) from None
    return read_squad(text, str(path))
