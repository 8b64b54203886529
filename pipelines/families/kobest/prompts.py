"""Prompts: the writing round's items (one per item to write), each with the task's
given fields and the label the item must take, assigned in turn over a seeded order so
that the labels come out balanced (KoBEST balanced its labels).

- COPA: the question (원인 / 결과, alternating) and the position of the answer;
- SentiNeg: an NSMC review sentence (ratings 1-4 negative, 9-10 positive, as NSMC
  labels them), the negation helper's draft (``negation.suggest``) and the flipped label;
- BoolQ, WiC, HellaSwag: the given field (``paragraph``, ``word``, ``topic``) from the
  recipe's source corpus, and the label.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines.families.kobest.tasks import KobestTask

QUESTIONS = ("원인", "결과")


def balanced_labels(task: KobestTask, n: int, seed: int) -> list[int]:
    labels = sorted(task.labels)
    cycle = [labels[i % len(labels)] for i in range(n)]
    return np.random.default_rng(seed).permutation(cycle).tolist() if n else []


def instruction(task: KobestTask, row: dict) -> str:
    """The line the writer reads above the fields: the label the item must take."""
    target = task.labels.get(int(row["label"]), f"label {row['label']} (not one of the task's)")
    if task.name == "copa":
        return f"질문: {row['question']} / 정답 자리: {target}"
    if task.name == "sentineg":
        return f"원문의 감성을 뒤집어 '{target}' 문장으로 쓰세요."
    return f"정답: {target}"


def prompts(task: KobestTask, given: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One prompt per row of ``given`` (its task fields; COPA: ``question`` may be
    absent and is then assigned in turn): ``item_id``, the given fields, ``label`` (when
    ``given`` has none, balanced) and ``instruction``."""
    frame = given.reset_index(drop=True).copy()
    if task.name == "copa" and "question" not in frame:
        frame["question"] = [QUESTIONS[i % 2] for i in range(len(frame))]
    if "label" not in frame:
        frame["label"] = balanced_labels(task, len(frame), seed)
    frame["label"] = frame["label"].astype(int)
    if "item_id" not in frame:
        # content-addressed: a prompt whose text or label changes is a new Label Studio task
        frame["item_id"] = [
            f"{task.name}-{i + 1:05d}-{_digest(r)}" for i, r in enumerate(frame.to_dict("records"))
        ]
    frame["instruction"] = [instruction(task, r) for r in frame.to_dict("records")]
    frame["guideline"] = task.guideline
    return frame


def _digest(row: dict) -> str:
    import hashlib
    import json

    text = json.dumps({k: str(v) for k, v in sorted(row.items())}, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def nsmc_sentences(
    reviews: pd.DataFrame, n: int, seed: int, min_chars: int = 8, max_chars: int = 60
) -> pd.DataFrame:
    """``n`` one-line NSMC reviews, half negative (rating 1-4) and half positive (9-10):
    ``original``, ``original_label`` and the review's id."""
    frame = reviews.assign(rating=pd.to_numeric(reviews["rating"], errors="coerce"))
    text = frame["review"].astype(str).str.strip()
    ok = text.str.len().between(min_chars, max_chars) & ~text.str.contains("\n")
    frame = frame[ok].assign(review=text[ok])
    neg = frame[frame["rating"] <= 4]
    pos = frame[frame["rating"] >= 9]
    half = n // 2
    rng = np.random.default_rng(seed)
    picked = pd.concat(
        [
            neg.iloc[rng.permutation(len(neg))[:half]].assign(original_label=0),
            pos.iloc[rng.permutation(len(pos))[: n - half]].assign(original_label=1),
        ]
    )
    picked = picked.iloc[rng.permutation(len(picked))]
    return pd.DataFrame(
        {
            "original": picked["review"].tolist(),
            "original_label": picked["original_label"].astype(int).tolist(),
            "source_id": picked["review_id"].astype(str).tolist()
            if "review_id" in picked
            else [""] * len(picked),
        }
    )


def sentineg_given(
    sentences: pd.DataFrame, lexicon: str | None = None, idiom_lexicon: str | None = None
) -> pd.DataFrame:
    """SentiNeg prompts' given fields: the original, the helper's draft (and how it was
    made), and the flipped label."""
    from pipelines.families.kobest.negation import suggest

    drafts = [suggest(t, None, lexicon, idiom_lexicon) for t in sentences["original"]]
    return sentences.assign(
        draft=[d.draft for d in drafts],
        draft_method=[d.method for d in drafts],
        draft_detail=[d.detail for d in drafts],
        label=1 - sentences["original_label"].astype(int),
    )


def even_topics(rows: pd.DataFrame, n: int, seed: int, column: str = "topic") -> pd.DataFrame:
    """``n`` rows taken evenly over the values of ``column`` (KoBEST 2.2, BoolQ guideline
    1: "Paragraphs should be evenly extracted from various domains and topics"): each
    topic's rows in a seeded order, then one row of each topic in turn (a topic that runs
    out leaves its turn to the others)."""
    rng = np.random.default_rng(seed)
    queues = [
        group.iloc[rng.permutation(len(group))].index.tolist()
        for _, group in rows.groupby(column, sort=True)
    ]
    picked: list = []
    while len(picked) < n and any(queues):
        for q in queues:
            if q and len(picked) < n:
                picked.append(q.pop(0))
    return rows.loc[picked].reset_index(drop=True)
