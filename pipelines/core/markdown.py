"""Markdown for reports a person reads (data cards, artifact reports): tables, and
settings written as readable tables instead of JSON or Python reprs."""

from __future__ import annotations


def cell(value: object) -> str:
    """One value as a person reads it: numbers to four significant digits, lists joined,
    yes/no for booleans, a dash for nothing; pipes escaped for tables."""
    if value is None or value == [] or value == {}:
        text = "—"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, list | tuple):
        text = ", ".join(cell(v) for v in value)
    elif isinstance(value, dict):
        text = "; ".join(f"{k} {cell(v)}" for k, v in value.items())
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list[object]]) -> str:
    """A Markdown table; cells that are not strings are formatted with :func:`cell`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(v if isinstance(v, str) else cell(v) for v in row) + " |" for row in rows
    ]
    return "\n".join(lines)


def flatten(settings: dict, prefix: str = "") -> list[tuple[str, object]]:
    """Nested settings as (dotted name, value); a list of dicts keyed by their
    ``corpus`` or ``name`` field is flattened under that key."""
    out: list[tuple[str, object]] = []
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out += flatten(value, f"{name}.")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for k, v in enumerate(value):
                label = v.get("corpus") or v.get("name") or str(k)
                rest = {x: y for x, y in v.items() if x not in ("corpus", "name")}
                out += flatten(rest, f"{name}.{label}.")
        else:
            out.append((name, value))
    return out


def settings_table(settings: dict, skip_empty: bool = True) -> str:
    """``settings`` as a two-column table (setting, value); unset values are left out
    when ``skip_empty``."""
    rows = [[k, v] for k, v in flatten(settings) if not (skip_empty and v in (None, [], {}))]
    return table(["setting", "value"], rows)


def inline(settings: dict) -> str:
    """Flat settings in one line: ``sample 300, stratify method, seed 0``."""
    return ", ".join(f"{k} {cell(v)}" for k, v in flatten(settings) if v not in (None, [], {}))
