"""``run_split``: read the gold items, apply the registered split rule, write the
splits and the artifact report (``pipelines.splits.annotation_artifacts``) atomically.

A split is cached on benchforge's one cache key (``pipelines.core.code.cache_key``): the
inputs' SHA-256, the rule's settings and language, and the code of :func:`split_code`. A
rerun with all three unchanged recomputes nothing; editing the rule's module, the report
or the language pack reruns it."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.lang import DEFAULT_LANGUAGE, language
from pipelines.splits.base import REPORT_THRESHOLD, SPLIT_RULES, SplitError, SplitSettingsBase


def _report_threshold(frame: pd.DataFrame) -> float | None:
    """The artifact report's high/low cut for a rule without a threshold of its own:
    ``REPORT_THRESHOLD`` for scores, None for class indices (every label a whole number:
    JCommonsenseQA's 0-4 are five answers, not a scale; issue 54 found its report's
    train table in high/low while its dev+test table, three classes, was not cut)."""
    values = pd.to_numeric(frame["label"], errors="coerce") if "label" in frame else None
    if values is None or values.isna().any() or (values % 1 == 0).all():
        return None
    return REPORT_THRESHOLD


def split_with_figures(
    items: pd.DataFrame, settings: SplitSettingsBase, lang: str = DEFAULT_LANGUAGE
) -> tuple[pd.DataFrame, dict]:
    """The split of every item (``SPLIT_COLUMNS`` first, then rule-specific columns) and
    the rule's own figures for the report."""
    return SPLIT_RULES.get(settings.rule).split(items, settings, language(lang))


def split_code(settings: SplitSettingsBase, lang: str = DEFAULT_LANGUAGE) -> list[str]:
    """The modules that compute a split, the code roots of its cache key
    (``pipelines.core.code.cache_key``): the rule's module (registered by name, so on no
    import path of this one), this module with the artifact report, and the language
    pack whose morphemes the rule and the report compare. Editing one of them (or what
    it imports) reruns a cached split; editing another rule's module does not."""
    return [SPLIT_RULES.get(settings.rule).split.__module__, __name__,
            "pipelines.splits.annotation_artifacts", language(lang).tagged.__module__]  # fmt: skip


def split_items(items: pd.DataFrame, settings: SplitSettingsBase) -> pd.DataFrame:
    """The split of every item (see :func:`split_with_figures`)."""
    return split_with_figures(items, settings)[0]


def read_table(path: Path) -> pd.DataFrame:
    """A Parquet, CSV or JSON Lines table with a unique item_id per row and at least one
    row; errors name the file (and the row of a repeated id)."""
    from pipelines.core.io import read_table as read_any

    frame = read_any(path, SplitError, {"item_id": str})
    if "item_id" not in frame.columns:
        raise SplitError(f"{path}: no item_id column (columns: {list(frame.columns)})")
    if frame.empty:
        raise SplitError(f"{path}: no rows: nothing to split")
    frame["item_id"] = frame["item_id"].astype(str)
    repeated = frame["item_id"].duplicated()
    if repeated.any():
        row = int(np.flatnonzero(repeated.to_numpy())[0])
        first = int(np.flatnonzero((frame["item_id"] == frame["item_id"].iloc[row]).to_numpy())[0])
        raise SplitError(
            f"{path}: row {row + 1}: item_id {frame['item_id'].iloc[row]!r} repeats row {first + 1}"
        )
    return frame


def run_split(
    gold_path: Path,
    settings: SplitSettingsBase,
    out: Path,
    items_path: Path | None = None,
    lang: str = DEFAULT_LANGUAGE,
    require: tuple[str, ...] = (),
) -> dict:
    """Split the gold items (joined with ``items_path`` for their texts), write
    splits.parquet, artifacts.json and artifacts.md atomically (nothing, ``written``
    False, when the outputs of the same key are there); return a summary.
    ``require``: columns the user named (``--source-column``) that must exist, where the
    default ones may be absent."""
    from pipelines.core.io import output_lock

    with output_lock(out):  # one run at a time writes into OUT
        return _run_split(gold_path, settings, out, items_path, lang, require)


def check_columns(
    frame: pd.DataFrame, settings: SplitSettingsBase, where: Path, require: tuple[str, ...] = ()
) -> None:
    """The text, group and named columns the rule reads exist (issue 32: a KeyError);
    the error names the file, the missing columns and the ones there are."""
    needed = [*settings.text_columns, *settings.group_columns, *require]
    missing = [c for c in dict.fromkeys(needed) if c not in frame.columns]
    if not missing:
        return
    texts = [c for c in missing if c in settings.text_columns]
    hint = (
        f"; the {settings.rule} rule compares the text columns "
        f"{' and '.join(settings.text_columns)}: name yours with --text-columns (and join "
        "the texts with --items)"
        if texts
        else ""
    )
    raise SplitError(f"{where}: no column {missing} (columns: {list(frame.columns)}){hint}")


def split_warnings(splits: pd.DataFrame, settings: SplitSettingsBase) -> list[str]:
    """What a user must hear though the split succeeds (issue 32): an evaluation split
    left empty because there are too few items or units."""
    counts = splits["split"].value_counts()
    empty = [s for s in ("dev", "test") if not counts.get(s, 0)]
    if not empty:
        return []
    return [
        f"{' and '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty: {len(splits)} "
        f"item(s) are too few for eval_fraction {settings.eval_fraction}"
    ]


def _run_split(
    gold_path: Path,
    settings: SplitSettingsBase,
    out: Path,
    items_path: Path | None,
    lang: str,
    require: tuple[str, ...] = (),
) -> dict:
    from pipelines.core.code import cache_key
    from pipelines.core.io import outputs_current, write_outputs
    from pipelines.splits.annotation_artifacts import artifact_report, report_markdown

    gold = read_table(gold_path)
    frame = gold
    if items_path is not None:
        items = read_table(items_path)
        extra = [c for c in items.columns if c not in gold.columns or c == "item_id"]
        frame = gold.merge(items[extra], on="item_id", how="left", validate="one_to_one")
    check_columns(frame, settings, items_path or gold_path, require)
    if items_path is not None:
        lost = frame[settings.text_columns].isna().any(axis=1)
        if lost.any():
            raise SplitError(
                f"{items_path}: no texts for gold item {frame['item_id'][lost].iloc[0]!r}"
            )
    sources = [str(gold_path)] + ([str(items_path)] if items_path else [])
    inputs = {"gold": gold_path, **({"items": items_path} if items_path else {})}
    key = cache_key(inputs, {"settings": asdict(settings), "lang": lang},
                    split_code(settings, lang))  # fmt: skip
    names = ["splits.parquet", "artifacts.json", "artifacts.md"]
    if outputs_current(out, key, names):  # a rerun: nothing to recompute (nli trains models)
        figures = json.loads((out / "artifacts.json").read_text(encoding="utf-8"))
        return {**figures, "written": False}
    splits, rule_figures = split_with_figures(frame, settings, lang)
    threshold = getattr(settings, "binary_threshold", _report_threshold(frame))
    report = artifact_report(frame, splits, settings.text_columns, threshold,
                             seed=settings.seed, lang=language(lang))  # fmt: skip
    report["rule_figures"] = rule_figures
    report["warnings"] = split_warnings(splits, settings)
    figures = {
        **report,
        "rule": settings.rule,
        "settings": asdict(settings),  # the split's; the report's are in report_settings
        "report_settings": report["settings"],
        "inputs": sources,
    }
    written = write_outputs(
        out,
        key,
        {"splits.parquet": splits},
        {"artifacts.json": figures},
        {"artifacts.md": report_markdown(report, settings.rule)},
    )
    return {**figures, "written": written}
