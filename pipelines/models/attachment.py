"""Attachment scores between dependency trees, the one count behind every UAS and LAS
benchforge reports: the parser's held-out figures (``dep_parser``), the agreement
between annotators (the ``dependency_tree`` value type), a pilot's ``min_uas`` rule
and ``benchforge evaluate`` (KLUE 1.1's UAS and LAS; KLUE's baseline variant lives
beside it in the KLUE family).

A tree is a sequence of ``(head, label)`` per word (or two parallel sequences); UAS is
the share of words given the other tree's head, LAS the share given its head and its
label (the label counts only with the right head).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Tree = Sequence[Sequence]  # (head, label) per word


def attachment_counts(
    pairs: Iterable[tuple[Tree, Tree]], strict: bool = True
) -> tuple[int, int, int]:
    """``(words, same head, same head and label)`` over the word-aligned pairs of
    trees; ``strict``: trees of a pair must have as many words (else a
    ``ValueError``), otherwise the shorter one's words are compared."""
    words = heads = both = 0
    for a, b in pairs:
        for (h1, l1), (h2, l2) in zip(a, b, strict=strict):
            words += 1
            heads += h1 == h2
            both += h1 == h2 and l1 == l2
    return words, heads, both


def attachment(
    gold_heads: Sequence[Sequence[int]],
    gold_labels: Sequence[Sequence[str]],
    heads: Sequence[Sequence[int]],
    labels: Sequence[Sequence[str]],
    scale: float = 1.0,
    digits: int = 4,
) -> dict:
    """``words``, ``uas`` and ``las`` over every word (None when there is none), times
    ``scale`` (100 for percentages) and rounded to ``digits``."""
    pairs = (
        (list(zip(gh, gl, strict=True)), list(zip(ph, pl, strict=True)))
        for gh, gl, ph, pl in zip(gold_heads, gold_labels, heads, labels, strict=True)
    )
    words, same_head, same_both = attachment_counts(pairs)
    if not words:
        return {"words": 0, "uas": None, "las": None}
    return {"words": words, "uas": round(scale * same_head / words, digits),
            "las": round(scale * same_both / words, digits)}  # fmt: skip


def right_branching(lengths: Iterable[int]) -> list[list[int]]:
    """Every word attached to the next, the last the root (the head-final baseline)."""
    return [[i + 2 if i + 1 < n else 0 for i in range(n)] for n in lengths]
