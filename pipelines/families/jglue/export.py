"""JGLUE's ``split`` (grouped by image) and ``export`` (JGLUE's layout, train / valid /
test) and the card's facts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.facts import CardFacts
from pipelines.families.jglue.rounds import (
    SPLIT_NAMES,
    _rules,
    _spec,
    rounds,
    with_contradictions,
)
from pipelines.rebuild.export import export_dataset, export_outcome, family_export, json_inputs


def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule over the released pairs (those the final check removed
    left out, :mod:`.check`), grouped by image (a pair of two images joins both), with
    the artifact report -> OUT/split."""
    from pipelines.core.io import write_parquet
    from pipelines.families.jglue.check import final_items, removed_ids
    from pipelines.splits.base import recipe_split_settings
    from pipelines.splits.run import run_split

    items = final_items(ctx)
    removed = removed_ids(ctx)
    items = items[~items["item_id"].astype(str).isin(removed)].reset_index(drop=True)
    path = ctx.out / "final" / "items.parquet"
    write_parquet(items, path)
    settings = recipe_split_settings(ctx.recipe, ctx.seed)
    split = run_split(path, settings, ctx.out / "split", None, ctx.recipe.language)
    n = sum(split["splits"].values())
    return StepOutcome(
        f"{split['splits']}" + (f"; {len(removed)} removed by the final check" if removed else ""),
        {"splits": split["splits"], "written": split["written"], "checked_out": len(removed)},
        Rows("pair", n + len(removed), n, {"manual_check": len(removed)} if removed else {}),
    )


def records_of(items: pd.DataFrame) -> list[dict]:
    """JGLUE's layout: ``sentence_pair_id`` (from "0" per file), ``yjcaptions_id``,
    ``sentence1``, ``sentence2``, ``label``."""
    return [
        {
            "sentence_pair_id": str(n),
            "yjcaptions_id": r.item_id,
            "sentence1": r.sentence1,
            "sentence2": r.sentence2,
            "label": float(r.label) if isinstance(r.label, int | float) else r.label,
        }
        for n, r in enumerate(items.itertuples(index=False))
    ]


def _split_tables(ctx: RunContext) -> dict[str, pd.DataFrame]:
    """The released pairs per JGLUE split name, in id order; JNLI's JSTS-C pairs too
    (``jsts-c_<split>``: each in its contradiction's split)."""
    items = pd.read_parquet(ctx.out / "final" / "items.parquet")
    splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")[["item_id", "split"]]
    items = items.merge(splits, on="item_id", validate="one_to_one")
    out = {
        SPLIT_NAMES[s]: g.sort_values("item_id", ignore_index=True)
        for s, g in items.groupby("split")
    }
    if ctx.task.name == "jnli":
        c = pd.read_parquet(ctx.out / "sts" / "gold.parquet")
        side = dict(zip(items["item_id"], items["split"], strict=True))
        c = c.assign(split=c["item_id"].map(side))
        for s, g in c.dropna(subset=["split"]).groupby("split"):
            out[f"jsts-c_{SPLIT_NAMES[s]}"] = g.sort_values("item_id", ignore_index=True)
    return out


def export_inputs(ctx: RunContext) -> dict[str, Path]:
    """The files JGLUE's release and card are made from."""
    out = ctx.out
    inputs = {
        "items": out / "final" / "items.parquet",
        "splits": out / "split" / "splits.parquet",
        "captions": out / "captions" / "captions.json",
        "pairs": out / "pairs" / "pairs.json",
        "sts": out / "sts" / "sts.json",
        "artifacts": out / "split" / "artifacts.json",
    }
    if ctx.task.name == "jnli":
        inputs["nli"] = out / "nli" / "nli.json"
        inputs["sts-gold"] = out / "sts" / "gold.parquet"
    if ctx.recipe.jglue.final_check:  # the last filter (3.2.2)
        inputs["check"] = out / "check" / "check.json"
    if with_contradictions(ctx.recipe):  # JNLI-C, JSTS-C
        for name in ("written", "validation"):
            inputs[name] = out / name / f"{name}.json"
    return inputs


@family_export(export_inputs)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE's layout per split -> OUT/dataset: ``<split>.json`` (JSON Lines, the five
    release fields), ``<split>.parquet`` (with ``kind``, ``images`` and ``license``) and
    the data card."""
    from pipelines.export.records import jsonl

    out = ctx.out
    inputs = files_of(export_step).reads(ctx, arg)
    tables = _split_tables(ctx)
    licence = ctx.recipe.release_licence().release

    def build(facts: CardFacts) -> tuple[dict, dict, dict]:
        texts = {f"{s}.json": jsonl(records_of(t)) for s, t in tables.items()}
        frames = {
            f"{s}.parquet": t.drop(columns=["split"]).assign(license=licence)
            for s, t in tables.items()
        }
        return frames, texts, {}

    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        {f"{s}.json": len(t) for s, t in tables.items()},
        [f"{s}.{e}" for s in tables for e in ("json", "parquet")],
        list(_spec(ctx).releases),
        "flows/rebuild.py, pipelines/families/jglue/",
    )
    n = sum(len(t) for s, t in tables.items() if not s.startswith("jsts-c"))
    return export_outcome(facts, hit, out / "dataset", Rows("pair", n, n))


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """JGLUE's facts for the card: each step's JSON (``family``), the artifact report,
    the rules and the split."""
    from dataclasses import asdict

    family = json_inputs(inputs)
    from pipelines.export.card_facts import label_facts

    art = family.pop("artifacts")
    items = pd.read_parquet(inputs["items"]).assign(source=lambda f: "JSTS-" + f["kind"])
    splits = pd.read_parquet(inputs["splits"])
    from pipelines.families.jglue.construct import paper_table

    return {
        "family": family,
        "paper_table": paper_table(ctx.task.name, pd.read_parquet(inputs["items"]), splits),
        "rules": asdict(_rules(ctx)),
        "artifacts_md": (ctx.out / "split" / "artifacts.md").read_text(encoding="utf-8"),
        "labels": label_facts(items, items, splits),
        "split": {
            "rule": art["rule"],
            "settings": art["settings"],
            "splits": {k: int(v) for k, v in splits["split"].value_counts().items()},
            "cues": art.get("cues"),
        },
    }
