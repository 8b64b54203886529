"""Articles, their quality score and their paragraphs: the reading-comprehension
family's first step (JGLUE 3.3: JSQuAD's paragraphs come from "high-quality articles"
of Japanese Wikipedia, random articles from the top of a ranking; KLUE 3.7: KLUE-MRC's
from Wikipedia, news and policy text).

Two registries, one member a registration:

- :data:`READERS`: ``reader(path) -> list[Article]``: a file of a recipe corpus read
  as articles (a title and its paragraph units, in order, with the source file's own
  questions where it has them). ``squad``: a SQuAD-layout file (JSQuAD's
  ``"<title> [SEP] "`` prefix taken off each context); ``law``: a Korean statute as
  konlpy's kolaw ships it, one article per chapter (제N장), one unit per article of law
  (제N조); ``kobill``: bills as konlpy's kobill ships them (gathered in one JSON Lines
  file), each bill's title and the paragraphs of its reasons for the proposal (제안이유).
- :data:`SCORERS`: ``scorer(articles, spec, recipe) -> list[float]``, one score per
  article, higher is better. ``length`` (its characters), ``paragraphs`` (its units)
  and ``list`` (a TSV of ``title<TAB>score`` the recipe names: a link or page-view
  ranking a user exported; an article not on it scores 0).

:func:`select_paragraphs` ranks the articles by score, draws ``articles`` of them at
random (seeded) from the top ``top_share`` (JSQuAD's "random articles from the top"),
packs each drawn article's units into contexts when ``pack`` is set (consecutive units
up to ``max_chars``; law articles are a sentence or two), drops contexts under
``min_chars`` (``too_short``), over ``max_chars`` (``too_long``) or holding a control
character such as NUL (``control_characters``) and draws
``paragraphs_per_article`` of the rest. Every paragraph not kept has a row with its
reason (``article_below_top``, ``article_not_drawn``, ``too_short``, ``too_long``,
``control_characters``, ``paragraph_not_drawn``): paragraphs in = kept + dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, read_text
from pipelines.core.registry import Registry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class SourceError(BenchforgeError, ValueError):
    """A source file that cannot be read as articles; the message names the file."""


@dataclass
class Article:
    """One article: its title and its paragraph units in order; ``questions``: per
    unit, the source file's own questions on it (``question``, ``answers`` with
    ``answer_start`` into the unit), for the simulated writers of a demo."""

    title: str
    units: list[str]
    questions: list[list[dict]] = field(default_factory=list)


Reader = Callable[[Path], list[Article]]
Scorer = Callable[[list[Article], object, "Recipe"], list[float]]

READERS: Registry[Reader] = Registry("article reader", None, "reading-comprehension sources")
SCORERS: Registry[Scorer] = Registry("article scorer", None, "article-quality scores")

SEP = " [SEP] "


@READERS.register("squad")
def read_squad_articles(path: Path) -> list[Article]:
    """A SQuAD-layout file (JSQuAD's release): its articles and paragraphs; a context
    that starts with ``"<title> [SEP] "`` loses that prefix (JSQuAD's), and its
    questions' answers are moved with it (an answer inside the title is kept with a
    negative start: the title is part of JSQuAD's context)."""
    from pipelines.families.reading.squad import read_file

    release = read_file(path)
    articles: dict[int, Article] = {}
    units: dict[tuple, int] = {}
    for r in release.records:
        art = articles.setdefault(r["article"], Article(str(r.get("title") or ""), [], []))
        if r.get("paragraph") is None:
            continue
        key = (r["article"], r["paragraph"])
        context = str(r["context"])
        prefix = f"{art.title}{SEP}"
        shift = len(prefix) if context.startswith(prefix) else 0
        if key not in units:
            units[key] = len(art.units)
            art.units.append(context[shift:])
            art.questions.append([])
        if r.get("no_questions"):
            continue
        answers = [
            {"text": a["text"], "answer_start": int(a["answer_start"]) - shift}
            for a in r.get("answers") or []
        ]
        art.questions[units[key]].append(
            {"question": str(r["question"]), "answers": answers, "id": str(r["id"])}
        )
    return [a for _, a in sorted(articles.items()) if a.units]


def _lines(path: Path) -> list[str]:
    try:
        text = read_text(path)
    except TextFileError as exc:  # names the line of a byte that is not UTF-8
        raise SourceError(str(exc)) from None
    return [line.rstrip("\r\n") for line in text.splitlines()]


_CHAPTER = re.compile(r"^\s*제\s*(\d+)\s*장\s*(.*)$")
_SECTION = re.compile(r"^\s*제\s*\d+\s*[절관]\s")
_ARTICLE = re.compile(r"^\s*제\s*\d+\s*조(?:의\s*\d+)?(?:\s|\(|$)")
_APPENDIX = re.compile(r"부칙")


@READERS.register("law")
def read_law(path: Path) -> list[Article]:
    """A Korean statute (konlpy's ``kolaw/constitution.txt``): the first line is the
    law's name; the preamble is one article; each chapter (``제N장 <name>``) is an
    article titled ``<law> 제N장 <name>`` whose units are its articles of law
    (``제N조 ...`` with their numbered clauses joined by a space); the supplementary
    provisions (부칙) end the text and are left out."""
    lines = _lines(path)
    body = [(n, line) for n, line in enumerate(lines, 1) if line.strip()]
    if not body:
        raise SourceError(f"{path}: empty file")
    law = body[0][1].strip()
    articles = [Article(f"{law} 전문", [])]
    for _n, line in body[1:]:
        text = line.strip()
        if _APPENDIX.search(text) and not _ARTICLE.match(line):
            break
        chapter = _CHAPTER.match(line)
        if chapter:
            articles.append(Article(f"{law} 제{chapter.group(1)}장 {chapter.group(2).strip()}", []))
        elif _SECTION.match(line):
            continue
        elif _ARTICLE.match(line) or not articles[-1].units:
            articles[-1].units.append(text)
        else:  # a clause (②...) continues its article of law
            articles[-1].units[-1] += " " + text
    out = [a for a in articles if a.units]
    for a in out:
        a.questions = [[] for _ in a.units]
    if len(out) < 2:
        raise SourceError(f"{path}: no chapters (제N장) found: not a statute as kolaw has it")
    return out


_PAGE = re.compile(r"^\s*-\s*\d+\s*-\s*$")
_HEADINGS = {"주요내용", "참고사항", "제안이유", "제안이유 및 주요내용"}


@READERS.register("kobill")
def read_kobill(path: Path) -> list[Article]:
    """Bills as konlpy's kobill ships them, gathered in one JSON Lines file (``id``,
    ``text``: a bill file's text each): one article per bill (:func:`bill_article`)."""
    out = []
    for n, line in enumerate(_lines(path), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = str(record["text"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise SourceError(f"{path}: line {n}: expected a JSON object with text") from None
        out.append(bill_article(text, f"{path}: line {n}"))
    return out


def bill_article(text: str, where: str) -> Article:
    """A bill's title (its text up to the first blank line) and, as units, the
    paragraphs of its reasons for the proposal (from the ``제안이유`` heading to the first
    page mark ``- 1 -``). The text is hard-wrapped with a blank line after every line; a
    line that starts with a space starts a paragraph, the others continue it as they
    were cut (a word cut in two is joined again)."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    title_lines = []
    for line in lines:
        if not line.strip():
            if title_lines:
                break
            continue
        title_lines.append(line.strip())
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("제안이유")), None)
    if not title_lines or start is None:
        raise SourceError(f"{where}: no title or no 제안이유 section: not a bill as kobill has it")
    units: list[str] = []
    for line in lines[start + 1 :]:
        if _PAGE.match(line):
            break
        if not line.strip():
            continue
        if line.strip() in _HEADINGS:  # 주요내용, 참고사항: a heading ends a paragraph
            units.append("")
        elif line.startswith(" ") or not units or not units[-1]:
            units.append(line.lstrip())
        else:  # the trailing space of a cut line says whether a word was cut
            units[-1] += line
    units = [" ".join(u.split()) for u in units if u.strip()]
    return Article(" ".join(" ".join(title_lines).split()), units, [[] for _ in units])


@SCORERS.register("length")
def score_length(articles: list[Article], spec: object, recipe: Recipe) -> list[float]:
    """Characters of the article's units: the longer article first."""
    return [float(sum(len(u) for u in a.units)) for a in articles]


@SCORERS.register("paragraphs")
def score_paragraphs(articles: list[Article], spec: object, recipe: Recipe) -> list[float]:
    """Units of the article."""
    return [float(len(a.units)) for a in articles]


@SCORERS.register("list")
def score_list(articles: list[Article], spec: object, recipe: Recipe) -> list[float]:
    """The recipe's ranking (``reading.scores``: ``title<TAB>score`` a line, ``#``
    comments): JSQuAD ranked Wikipedia by its links; a user exports such a ranking."""
    path = recipe.resolve(spec.scores)
    scores: dict[str, float] = {}
    for n, line in enumerate(_lines(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split("\t")
        try:
            scores[parts[0].strip()] = float(parts[1])
        except (IndexError, ValueError):
            raise SourceError(f"{path}: line {n}: expected title<TAB>score, got {line!r}") from None
    return [scores.get(a.title, 0.0) for a in articles]


def pack_units(units: list[str], max_chars: int) -> list[tuple[list[int], str]]:
    """Consecutive units joined by a space while the context stays within
    ``max_chars``: (unit numbers, text) per context; a unit over ``max_chars`` is a
    context of its own (then dropped as too long)."""
    out: list[tuple[list[int], str]] = []
    for n, unit in enumerate(units):
        if out and len(out[-1][1]) + 1 + len(unit) <= max_chars:
            out[-1][0].append(n)
            out[-1] = (out[-1][0], out[-1][1] + " " + unit)
        else:
            out.append(([n], unit))
    return out


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")  # C0 controls but tab and breaks


def _short(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:12]


def select_paragraphs(
    articles: list[tuple[str, Article]], scores: list[float], spec: object
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(paragraphs, dropped, articles table) from ``articles`` ((corpus, article)
    pairs) and their scores (see the module docstring)."""
    rng = np.random.default_rng(spec.seed)
    order = sorted(range(len(articles)), key=lambda i: (-scores[i], i))
    top = order[: max(1, int(np.ceil(len(order) * spec.top_share)))]
    drawn = set(rng.choice(top, size=min(spec.articles, len(top)), replace=False).tolist())
    rank = {i: r for r, i in enumerate(order, 1)}
    table, kept, dropped = [], [], []
    for i, (corpus, art) in enumerate(articles):
        article_id = "a-" + _short(corpus, art.title, i)
        status = "drawn" if i in drawn else ("not_drawn" if i in top else "below_top")
        table.append(
            {
                "article_id": article_id,
                "title": art.title,
                "source": corpus,
                "score": scores[i],
                "rank": rank[i],
                "units": len(art.units),
                "status": status,
            }
        )
        contexts = (
            pack_units(art.units, spec.max_chars)
            if spec.pack
            else [([n], u) for n, u in enumerate(art.units)]
        )
        candidates = []
        for k, (unit_ids, text) in enumerate(contexts):
            pid = f"{article_id}-p{k}"
            reason = None
            if status != "drawn":
                reason = f"article_{status}"
            elif len(text) < spec.min_chars:
                reason = "too_short"
            elif len(text) > spec.max_chars:
                reason = "too_long"
            elif _CONTROL.search(text):  # a NUL byte was carried into releases (issue 51)
                reason = "control_characters"
            if reason:
                dropped.append(
                    {
                        "kind": "paragraph",
                        "id": pid,
                        "reason": reason,
                        "detail": f"{art.title}: {len(text)} characters",
                    }
                )
                continue
            questions = [q for u in unit_ids for q in _moved(art, u, unit_ids, text)]
            candidates.append(
                {
                    "paragraph_id": pid,
                    "article_id": article_id,
                    "title": art.title,
                    "paragraph": text,
                    "source": corpus,
                    "position": k,
                    "score": scores[i],
                    "questions": json.dumps(questions, ensure_ascii=False),
                }
            )
        if len(candidates) > spec.paragraphs_per_article:
            pick = set(
                rng.choice(
                    len(candidates), size=spec.paragraphs_per_article, replace=False
                ).tolist()
            )
            for n, c in enumerate(candidates):
                if n not in pick:
                    dropped.append(
                        {
                            "kind": "paragraph",
                            "id": c["paragraph_id"],
                            "reason": "paragraph_not_drawn",
                            "detail": art.title,
                        }
                    )
            candidates = [c for n, c in enumerate(candidates) if n in pick]
        kept.extend(candidates)
    columns = [
        "paragraph_id",
        "article_id",
        "title",
        "paragraph",
        "source",
        "position",
        "score",
        "questions",
    ]
    return (
        pd.DataFrame(kept, columns=columns),
        pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"]),
        pd.DataFrame(table),
    )


def _moved(art: Article, unit: int, unit_ids: list[int], text: str) -> list[dict]:
    """The source's questions on ``unit`` with their answers moved into the packed
    context ``text`` (the units before it in the context shift them)."""
    if unit >= len(art.questions):
        return []
    shift = sum(len(art.units[u]) + 1 for u in unit_ids if u < unit)
    return [
        {**q, "answers": [{**a, "answer_start": a["answer_start"] + shift} for a in q["answers"]]}
        for q in art.questions[unit]
    ]


def read_sources(recipe: Recipe, spec: object) -> list[tuple[str, Article]]:
    """Every ``reading.sources`` corpus read by its reader, in recipe order."""
    by_name = {c.name: c for c in recipe.corpora}
    out = []
    for source in spec.sources:
        path = recipe.corpus_path(by_name[source.corpus])
        found = READERS.get(source.reader)(path)
        out.extend((source.corpus, a) for a in found[: source.limit])
    return out
