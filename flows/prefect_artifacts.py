"""Prefect artifacts of a rebuild (issue 39): the flow run tells its story in the Prefect
UI without opening a file.

- every step that keeps or drops rows: a table artifact of its rows in, kept and dropped
  per reason (``<recipe>-<step>-rows``);
- the agreement step: a Markdown artifact of its figures (Krippendorff's alpha per level,
  Fleiss' kappa, items kept and dropped; ``<recipe>-agreement``);
- the export: a link artifact to the data card (``<recipe>-data-card``);
- the end of the run: a table of every step (seconds, summary; ``<recipe>-steps``).

Artifacts are published only inside a Prefect flow run; a failure to publish one is
logged and never fails the rebuild (they describe the run, the files are the record).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)


def key_of(*parts: str) -> str:
    """A Prefect artifact key: lower-case letters, digits and dashes."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", "-".join(parts).lower())).strip("-")


def rows_table(step: str, rows: dict) -> list[dict]:
    """A step's row accounting as table rows: the totals, then one row per drop reason."""
    dropped = rows.get("dropped") or {}
    table = [
        {
            "step": step,
            "unit": rows.get("unit", ""),
            "in": rows.get("in"),
            "kept": rows.get("kept"),
            "dropped": sum(dropped.values()),
            "reason": "(all)",
        }
    ]
    table += [{"step": step, "unit": rows.get("unit", ""), "in": None, "kept": None,
               "dropped": n, "reason": reason} for reason, n in dropped.items()]  # fmt: skip
    return table


def agreement_markdown(path: Path) -> str | None:
    """The agreement step's figures as Markdown (None when the file is not there)."""
    if not path.is_file():
        return None
    a = json.loads(path.read_text(encoding="utf-8"))
    lines = [f"### Agreement ({a.get('rule', '')} rule)", ""]
    for key in ("items", "annotators", "ratings", "gold_items", "value_type", "simulated"):
        if key in a:
            lines.append(f"- {key.replace('_', ' ')}: {a[key]}")
    alpha = a.get("krippendorff_alpha") or {}
    if alpha:
        lines += ["", "| Krippendorff's alpha | value |", "|---|---|"]
        lines += [f"| {level} | {value} |" for level, value in alpha.items()]
    kappa = a.get("fleiss_kappa") or {}
    if kappa.get("kappa") is not None:
        lines += ["", f"Fleiss' kappa {kappa['kappa']} over {kappa.get('items')} items"]
    for key in ("dropped_items", "dropped_annotators"):
        if a.get(key):
            lines += ["", f"{key.replace('_', ' ')}: " + ", ".join(
                f"{k} {v}" for k, v in a[key].items())]  # fmt: skip
    return "\n".join(lines)


def _in_flow_run() -> bool:
    from prefect.context import FlowRunContext

    return FlowRunContext.get() is not None


def publish_step(recipe: str, step: str, entry: dict, out: Path) -> list[str]:
    """The artifacts of one finished step; returns their keys."""
    if not _in_flow_run():
        return []
    from prefect.artifacts import (
        create_link_artifact,
        create_markdown_artifact,
        create_table_artifact,
    )

    keys: list[str] = []
    try:
        if entry.get("rows"):
            key = key_of(recipe, step, "rows")
            create_table_artifact(
                rows_table(step, entry["rows"]),
                key=key,
                description=f"{step}: rows in, kept and dropped per reason",
            )
            keys.append(key)
        if step == "agree" or step.startswith("agree-"):
            text = agreement_markdown(out / "agree" / "agreement.json")
            if text:
                key = key_of(recipe, "agreement")
                create_markdown_artifact(text, key=key, description="agreement summary")
                keys.append(key)
        card = out / "dataset" / "DATA_CARD.html"
        if step == "export" and card.is_file():
            key = key_of(recipe, "data-card")
            create_link_artifact(
                card.resolve().as_uri(),
                link_text=f"data card of {recipe}",
                key=key,
                description="the released dataset's data card",
            )
            keys.append(key)
    except Exception as exc:  # noqa: BLE001 - artifacts never fail the rebuild
        log.warning("could not publish the artifacts of step %s: %s", step, exc)
    return keys


def publish_run(recipe: str, steps: dict) -> str | None:
    """A table of every step of the run (seconds and summary)."""
    if not _in_flow_run():
        return None
    from prefect.artifacts import create_table_artifact

    key = key_of(recipe, "steps")
    try:
        create_table_artifact(
            [{"step": name, "seconds": e.get("seconds"), "summary": e.get("summary", "")}
             for name, e in steps.items()],
            key=key, description=f"the steps of the rebuild of {recipe}",
        )  # fmt: skip
    except Exception as exc:  # noqa: BLE001
        log.warning("could not publish the run's step table: %s", exc)
        return None
    return key
