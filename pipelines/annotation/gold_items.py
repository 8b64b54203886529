"""Items whose answers are known, for a qualification (pilot) round or as control items
inside a main round (issue 35): read from a JSON Lines file and checked against the
round's interface before any work.

Contract: each line is an object with ``item_id`` (unique), every data field the
labeling config reads, and ``value``, the known answer of the answer control. A value
must be one the interface allows: one of a choice control's options or, when those
options are all numbers (a rating scale such as KLUE-STS's 0-5), a number within the
scale (a pilot's gold may be a mean such as 3.8). Errors are
:class:`GoldItemsError`, naming the file and the line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.annotation.label_config import Control, LabelConfig
from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, control_character_line, read_text


class GoldItemsError(BenchforgeError, ValueError):
    """A file of known-answer items that cannot be used; the message names the line."""


def _numbers(options: tuple[str, ...]) -> list[float] | None:
    try:
        return [float(o) for o in options]
    except ValueError:
        return None


def _tree_problem(value: object, control: Control) -> str | None:
    """Why ``value`` is not a dependency tree of the interface's labels, or None."""
    import json

    from pipelines.annotation.values.tree import is_tree

    try:
        arcs = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return f"value {str(value)[:40]!r} is not a JSON tree ([[head, label], ...])"
    if (
        not isinstance(arcs, list)
        or not arcs
        or not all(isinstance(a, list) and len(a) == 2 and isinstance(a[0], int) for a in arcs)
    ):
        return "a tree is a JSON list of [head, label], one per word"
    if not is_tree([a[0] for a in arcs]):
        return "the heads do not make one tree (one root, no cycle)"
    bad = sorted({str(a[1]) for a in arcs if a[0] and str(a[1]) not in control.options})
    return f"labels {bad} are not the interface's" if bad else None


def check_value(value: object, control: Control, data: dict | None = None) -> str | None:
    """Why ``value`` is not an answer ``control`` allows (None when it is); a control
    with dynamic options (``<Choices value="$options">``) is checked against the
    options the item ``data`` lists (issue 51: a pilot answer outside them passed)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "no value"
    if control.tag == "Relations":  # a dependency tree: [[head, label], ...] per word
        return _tree_problem(value, control)
    if control.dynamic and data is not None:
        options = control.options_for(data)
        if not options:
            return f"no options in its field {control.dynamic!r}"
        if str(value) not in options:
            return (
                f"value {value!r} is not one of its options in {control.dynamic!r} {list(options)}"
            )
        return None
    if not control.options or control.dynamic:
        return None  # free answers: any value
    scale = _numbers(control.options)
    if scale is not None and not isinstance(value, bool):
        try:
            number = float(value)
        except (TypeError, ValueError):
            return f"value {value!r} is not a number on the scale {min(scale):g}-{max(scale):g}"
        if not min(scale) <= number <= max(scale):
            return f"value {value!r} is outside the scale {min(scale):g}-{max(scale):g}"
        return None
    if str(value) not in control.options:
        return f"value {value!r} is not one of the interface's answers {list(control.options)}"
    return None


def read_gold_items(path: Path, config: LabelConfig, field: str | None = None) -> pd.DataFrame:
    """The items of ``path`` (``item_id``, the data fields, ``value`` as text), checked
    against ``config``'s answer control ``field`` (its only one when None)."""
    control = config.answer_control(field)
    if control is None:
        raise GoldItemsError(
            f"{path}: the interface has no single answer control"
            + (f" named {field!r}" if field else " (name one with agreement.answer_field)")
        )
    try:
        text = read_text(path)
    except TextFileError as exc:  # missing, or a byte that is not UTF-8: file and line
        raise GoldItemsError(str(exc)) from None
    rows, seen = [], {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldItemsError(f"{path}: line {n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise GoldItemsError(f"{path}: line {n}: expected an object")
        item = str(row.get("item_id") or "").strip()
        if not item:
            raise GoldItemsError(f"{path}: line {n}: no item_id")
        if item in seen:
            raise GoldItemsError(f"{path}: line {n}: item_id {item!r} is on line {seen[item]} too")
        seen[item] = n
        missing = [f for f in config.data_fields if f not in row]
        if missing:
            raise GoldItemsError(f"{path}: line {n}: no {missing} (the interface reads them)")
        if any(control_character_line(v) for v in row.values() if isinstance(v, str)):
            raise GoldItemsError(f"{path}: line {n}: a control character (such as NUL) in a field")
        why = check_value(row.get("value"), control, row)
        if why:
            raise GoldItemsError(f"{path}: line {n}: {why}")
        rows.append({**row, "item_id": item, "value": str(row["value"])})
    if not rows:
        raise GoldItemsError(f"{path}: no items")
    return pd.DataFrame(rows)
