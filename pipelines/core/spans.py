"""A gold value that is a span set (KLUE-NER's entities: a JSON list of objects with a
``label``), told apart from one class or score per item: the card counts its spans'
labels, and the artifact report has no item label to find shortcuts to."""

from __future__ import annotations

import json


def span_labels(value: object) -> list[str] | None:
    """The labels of the span set ``value`` (a JSON list of objects each with a
    ``label``) or of the dependency tree ``value`` (a JSON list of ``[head, label]``, one
    per word: its arcs' labels), or None when it is neither."""
    if not isinstance(value, str) or not value.startswith("["):
        return None
    try:
        rows = json.loads(value)
    except json.JSONDecodeError:
        return None
    if (
        isinstance(rows, list)
        and rows
        and all(
            isinstance(r, list) and len(r) == 2 and isinstance(r[0], int) and isinstance(r[1], str)
            for r in rows
        )
    ):
        return [r[1] for r in rows]  # a tree: one label a word
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "label" in r for r in rows):
        return None
    return [str(r["label"]) for r in rows]
