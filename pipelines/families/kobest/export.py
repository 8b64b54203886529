"""KoBEST's release (``export``: the task's layout per split) and the card's facts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipelines.core.markdown import Markdown, code, escape
from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.facts import CardFacts
from pipelines.families.kobest.revision import (
    current_items,
)
from pipelines.families.kobest.rounds import (
    _rules,
    _task,
    rounds,
)
from pipelines.families.kobest.tasks import KobestTask
from pipelines.rebuild.export import (
    export_dataset,
    export_outcome,
    family_export,
    inline_counts,
    json_inputs,
)


def negated(ctx: RunContext) -> bool:
    """Whether the release is built on SentiNeg's negated test set (2.6)."""
    return _task(ctx).name == "sentineg"


def final_path(ctx: RunContext) -> Path:
    if negated(ctx):
        return ctx.out / "negated" / "items.parquet"
    return current_items(ctx, _rules(ctx).iterations + 1)


def records_of(items: pd.DataFrame, task: KobestTask) -> list[dict]:
    """KoBEST's layout: the task's fields in order and ``label`` (an int)."""
    return [
        {**{f: str(r[f]) for f in task.layout}, "label": int(r["label"])}
        for r in items.to_dict("records")
    ]


def release_tables(items: pd.DataFrame, splits: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The items per split (train, dev, test), in item order."""
    frame = items.merge(splits[["item_id", "split"]], on="item_id", validate="one_to_one")
    return {s: g.sort_values("item_id", ignore_index=True) for s, g in frame.groupby("split")}


def export_inputs(ctx: RunContext) -> dict[str, Path]:
    """The files KoBEST's release and card are made from."""
    out, n = ctx.out, _rules(ctx).iterations + 1
    return {
        "prompts": out / "prompts" / "prompts.json",
        "written": out / "written" / "written.json",
        "reviewed": out / "reviewed" / "reviewed.json",
        "duplicates": out / "duplicates" / "duplicates.json",
        "items": final_path(ctx),
        # the released split; the drawn one (before the revisions and SentiNeg's test set)
        "splits": out / ("negated" if negated(ctx) else "split") / "splits.parquet",
        "drawn_splits": out / "split" / "splits.parquet",
        **(
            {
                "negated": out / "negated" / "negated.json",
                "candidates": out / "negated" / "candidates.parquet",
            }
            if negated(ctx)
            else {}
        ),
        "pairs": out / "duplicates" / "pairs.parquet",
        **{f"artifacts-{k}": out / f"artifacts-{k}" / "artifacts.json" for k in range(1, n + 1)},
        **{f"revision-{k}": out / f"revision-{k}" / "revision.json" for k in range(1, n)},
    }


@family_export(export_inputs)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """KoBEST's layout per split -> OUT/dataset: ``<split>.jsonl`` (the task's fields and
    ``label``), ``<split>.parquet`` (with ``item_id``, ``version`` and ``license``),
    ``versions.parquet`` (every version of every released item), ``duplicates.parquet``
    (the near-duplicate review table) and the data card."""
    from pipelines.export.records import jsonl

    out, task, rules = ctx.out, _task(ctx), _rules(ctx)
    n = rules.iterations + 1
    inputs = files_of(export_step).reads(ctx, arg)
    items = pd.read_parquet(inputs["items"])
    tables = release_tables(items, pd.read_parquet(inputs["splits"]))
    versions = pd.concat(
        [
            pd.read_parquet(p)
            for p in [
                out / "written" / "versions.parquet",
                out / "reviewed" / "versions.parquet",
                *(out / f"revision-{k}" / "versions.parquet" for k in range(1, n)),
            ]
            if p.is_file()
        ],
        ignore_index=True,
    )
    versions = versions[versions["item_id"].isin(items["item_id"])] if len(versions) else versions
    licence = ctx.recipe.release_licence().release
    keep = ["item_id", *task.layout, "label", "version"]
    if negated(ctx):  # 2.6: the test items converted from train, and every candidate
        keep.append("converted_from")
        converted = items[items["converted_from"].astype(str) != ""]
        if len(converted):
            versions = pd.concat([versions, pd.DataFrame({
                "item_id": converted["item_id"], "version": 1, "round": "negated",
                "annotator": converted["converter"].astype(str).replace(
                    {"negation helper": "negation helper (KoBEST 2.6)"}),
                "note": "converted from " + converted["converted_from"].astype(str),
                **{f: converted[f] for f in task.written}})], ignore_index=True)  # fmt: skip

    def build(facts: CardFacts) -> tuple[dict, dict, dict]:
        texts = {f"{s}.jsonl": jsonl(records_of(t, task)) for s, t in tables.items()}
        frames = {f"{s}.parquet": t[keep].assign(license=licence) for s, t in tables.items()}
        frames["versions.parquet"] = versions
        frames["duplicates.parquet"] = pd.read_parquet(inputs["pairs"])
        if negated(ctx):
            frames["negated_candidates.parquet"] = pd.read_parquet(inputs["candidates"])
        return frames, texts, {}

    sources = [c.name for c in ctx.recipe.corpora]
    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        {f"{s}.jsonl": len(t) for s, t in tables.items()},
        [
            *(f"{s}.{e}" for s in tables for e in ("jsonl", "parquet")),
            "versions.parquet",
            "duplicates.parquet",
            *(["negated_candidates.parquet"] if negated(ctx) else []),
        ],
        sources,
        "flows/rebuild.py, pipelines/families/kobest/",
    )
    total = sum(len(t) for t in tables.values())
    return export_outcome(facts, hit, out / "dataset", Rows("item", total, total))


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """KoBEST's facts for the card: each step's JSON, the rules, the split, a sample of
    the duplicate pairs and every review's report."""
    from dataclasses import asdict

    from pipelines.export.card_facts import label_facts

    family = json_inputs(inputs)
    items = pd.read_parquet(inputs["items"]).assign(source=_task(ctx).name)
    items = items.assign(label=items["label"].astype(str))
    splits = pd.read_parquet(inputs["splits"])
    drawn = pd.read_parquet(inputs["drawn_splits"])
    pairs = pd.read_parquet(inputs["pairs"])
    reports = {}
    for k in range(1, _rules(ctx).iterations + 2):
        p = ctx.out / f"artifacts-{k}" / "report.parquet"
        reports[str(k)] = pd.read_parquet(p)["markdown"].iloc[0] if p.is_file() else ""
    return {
        "family": family,
        "rules": asdict(_rules(ctx)),
        "kobest_task": _task(ctx).name,
        # KoBEST's labels are classes (0/1: which alternative, which polarity), not scores
        "labels": label_facts(items, items, splits, numeric=False),
        "pairs": pairs.head(20).to_dict("records"),
        "reports_md": reports,
        "artifacts_md": (ctx.out / "split" / "artifacts.md").read_text(encoding="utf-8"),
        # the split is drawn before the revision rounds, which may drop items: the card
        # states the released items per split, and how many the rounds dropped from each
        "split": {
            "rule": ctx.recipe.split.rule,
            "settings": {},
            "splits": _per_split(splits[splits["item_id"].isin(set(items["item_id"]))]),
            "before_revisions": _per_split(drawn),
        },
    }


def _per_split(splits: pd.DataFrame) -> dict[str, int]:
    counts = splits["split"].value_counts()
    return {s: int(counts[s]) for s in ("train", "dev", "test") if s in counts}


# ------------------------------------------------------------------------------- card


def iteration_rows(family: dict, n: int) -> list[list]:
    rows = []
    for k in range(1, n + 1):
        a = family.get(f"artifacts-{k}")
        if not a:
            continue
        rev = family.get(f"revision-{k}") or {}
        acc = a["partial_input"]
        # a cue is data: a code span that shows its characters (issue 54: the card showed
        # the backquotes of an escaped string)
        cues = Markdown(
            ", ".join(
                f"{code(c['morpheme'], table=True)} → {escape(str(c['label']))} "
                f"({c['share']:.0%} of {c['count']})"
                for c in a["cues"][:6]
            )
            or "none"
        )
        planted = f"{a['cue_items_flagged']} of {a['cue_items']}" if "cue_items" in a else ""
        rows.append(
            [
                k,
                a["items"],
                acc["accuracy"],
                majority_cell(acc),
                cues,
                a["carriers"],
                planted,
                "skipped" if rev.get("skipped", True) else inline_counts(rev.get("decisions", {})),
            ]
        )
    return rows


def majority_cell(acc: dict) -> str:
    """Train's majority baseline, and the evaluation items' own majority where it is
    higher (the figure a partial-input model is measured against; issue 54)."""
    train, own = acc.get("majority_baseline"), acc.get("eval_majority_baseline")
    if own is not None and train is not None and own > train:
        return f"{train} (evaluation items' own majority: {own})"
    return str(train)
