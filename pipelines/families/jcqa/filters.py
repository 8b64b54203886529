"""JCommonsenseQA's question filters (JGLUE, Kurihara et al. 2022, 3.4.2).

Each filter is one registration (``JCQA_FILTERS``) that names why a question goes:

- ``contains_choice``: the question contains one of its choice words (it gives the
  answer, or a distractor, away);
- ``xx_characters``: the question has an "XX文字" expression ("3文字の..."): it asks
  about the spelling, not about common sense;
- ``no_question_mark``: the question does not end with a question mark (？ or ?);
- ``spelling_variants``: two of the choices are spelling variants of one word (the same
  UniDic lemma, e.g. レンガ and 煉瓦): the question set does not separate its concepts.

:func:`run_filters` applies all of them (a question may fail several) and
:func:`report` counts, per filter, how many questions pass: over the released questions
this is a self-test, the release having been filtered the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.registry import Registry

CHOICES = [f"choice{i}" for i in range(5)]
XX_CHARACTERS = re.compile(r"([0-9０-９一二三四五六七八九十何]+|[XxＸｘ]+)文字")
QUESTION_MARKS = ("？", "?")

Filter = Callable[[dict], str | None]  # a question -> why it fails (None: it passes)
JCQA_FILTERS: Registry[Filter] = Registry("JCommonsenseQA filter", None,
                                          "JGLUE 3.4.2 question filters")  # fmt: skip


class JcqaError(BenchforgeError, ValueError):
    """A question file that cannot be read; the message names the file and the line."""


@JCQA_FILTERS.register("contains_choice")
def contains_choice(q: dict) -> str | None:
    """The question contains one of its choice words."""
    hit = [q[c] for c in CHOICES if q[c] and q[c] in q["question"]]
    return f"contains {hit[0]!r}" if hit else None


@JCQA_FILTERS.register("xx_characters")
def xx_characters(q: dict) -> str | None:
    """The question has an "XX文字" expression."""
    m = XX_CHARACTERS.search(q["question"])
    return f"has {m.group(0)!r}" if m else None


@JCQA_FILTERS.register("no_question_mark")
def no_question_mark(q: dict) -> str | None:
    """The question does not end with a question mark."""
    text = q["question"].rstrip()
    return None if text.endswith(QUESTION_MARKS) else f"ends with {text[-1:]!r}"


@JCQA_FILTERS.register("spelling_variants")
def spelling_variants(q: dict) -> str | None:
    """Two choices are spelling variants of one word (the same UniDic lemmas), or the
    same word twice (five choices must be five different answers); empty choices are
    left out (a question set has three)."""
    from pipelines.lang.ja import lemmas

    seen: dict[str, str] = {}
    for c in CHOICES:
        if not q.get(c):  # a choice not written yet (a question set's three targets)
            continue
        key = "".join(lemmas(q[c]))
        if key in seen:
            if q[c] == seen[key]:
                return f"{q[c]!r} is two of the choices"
            return f"{seen[key]!r} and {q[c]!r} share the lemma {key!r}"
        seen[key] = q[c]
    return None


def read_questions(path: Path) -> pd.DataFrame:
    """The questions of a JCommonsenseQA release file (JSON Lines: q_id, question,
    choice0..4, label); a malformed line, a missing field, a question or choice that is
    not text (``null``, a number), a label that is not 0-4 or a repeated ``q_id`` names
    the file and line (issue 32)."""
    from pipelines.core.line_files import read_json_lines

    rows = read_json_lines(path, ["q_id", "question", *CHOICES], JcqaError)
    seen: dict[object, int] = {}
    for row in rows:
        where = f"{path}:{row['line']}"
        for name in ("question", *CHOICES):
            if not isinstance(row[name], str):
                raise JcqaError(f"{where}: {name} is {row[name]!r}, not text")
        label = row.get("label")
        if label is not None and (isinstance(label, bool) or label not in range(len(CHOICES))):
            raise JcqaError(f"{where}: label {label!r} is not one of 0-{len(CHOICES) - 1}")
        key = row["q_id"]
        if key in seen:
            raise JcqaError(f"{where}: q_id {key!r} repeats line {seen[key]}")
        seen[key] = row["line"]
    return pd.DataFrame(rows)


def run_filters(questions: pd.DataFrame, names: list[str] | None = None) -> pd.DataFrame:
    """The questions with one column per filter (why it fails, or None), ``failed``
    (the filters it fails, ``|``-joined) and ``kept``."""
    names = names or JCQA_FILTERS.names()
    out = questions.copy()
    records = out.to_dict(orient="records")
    for name in names:
        check = JCQA_FILTERS.get(name)
        out[name] = [check(q) for q in records]
    out["failed"] = ["|".join(n for n in names if isinstance(r[n], str))
                     for r in out[names].to_dict(orient="records")]  # fmt: skip
    out["kept"] = out["failed"] == ""
    return out


def report(checked: pd.DataFrame, names: list[str] | None = None) -> dict:
    """Per filter: questions it flags and the share that pass; overall: kept."""
    names = names or JCQA_FILTERS.names()
    n = len(checked)
    per = {}
    for name in names:
        flagged = int(checked[name].notna().sum())
        per[name] = {"flagged": flagged, "pass_rate": round(1 - flagged / n, 4) if n else None,
                     "examples": checked.loc[checked[name].notna(), ["q_id", "question", name]]
                     .head(5).astype(str).to_dict(orient="records")}  # fmt: skip
    kept = int(checked["kept"].sum())
    return {"questions": n, "kept": kept, "pass_rate": round(kept / n, 4) if n else None,
            "filters": per}  # fmt: skip
