"""MARC-ja's release and the card's facts.

Per split (JGLUE's names: ``train``, ``valid``, ``test``) in OUT/dataset:
``<split>.json`` (JSON Lines in JGLUE's MARC-ja layout: ``review_id``, ``sentence``,
``label``), ``<split>.parquet`` (with the rating, the rating's label, the crowd's label,
the source and the licence) and, as JGLUE's conversion script reads them,
``filter_review_id_list/<split>.txt`` (the dev/test reviews the 7-of-10 rule dropped)
and ``label_conv_review_id_list/<split>.txt`` (those whose crowd label is not the
rating's).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.facts import CardFacts
from pipelines.families.marc.steps import rounds, spec_of
from pipelines.rebuild.export import export_dataset, export_outcome, family_export, json_inputs

SPLIT_NAMES = {"train": "train", "dev": "valid", "test": "test"}  # JGLUE calls dev "valid"
# the JGLUE v1.3 README's table (data/demo/jglue/README.jglue-upstream.md)
PAPER_SIZES = {"source": "JGLUE v1.3 README", "train": 187528, "dev": 5654, "test": 5639}
# JGLUE Table 2: reviews per label, train / dev / test
PAPER_TABLE_2 = {"positive": (165477, 4832, 4895), "negative": (22051, 822, 744)}


def table_2(final: pd.DataFrame) -> list[list]:
    """Table 2 with the run's counts beside the paper's: per label (the paper's first,
    then any other the recipe names) and overall, train / dev / test / total as
    "run (paper)"; a label the paper has not is "run (—)"."""
    names = ("train", "dev", "test")
    counts = final.groupby(["label", "split"]).size()
    labels = [*PAPER_TABLE_2, *sorted(set(final["label"].astype(str)) - set(PAPER_TABLE_2))]
    rows, run_total, paper_total = [], [0, 0, 0], [0, 0, 0]
    for label in labels:
        run = [int(counts.get((label, s), 0)) for s in names]
        paper = PAPER_TABLE_2.get(label)
        run_total = [a + b for a, b in zip(run_total, run, strict=True)]
        if paper:
            paper_total = [a + b for a, b in zip(paper_total, paper, strict=True)]
        cells = [f"{r} ({p:,})" if paper else f"{r} (—)"
                 for r, p in zip(run, paper or (0, 0, 0), strict=True)]  # fmt: skip
        rows.append([label, *cells, f"{sum(run)} ({sum(paper):,})" if paper else f"{sum(run)} (—)"])
    rows.append(["overall", *(f"{r} ({p:,})" for r, p in zip(run_total, paper_total, strict=True)),
                 f"{sum(run_total)} ({sum(paper_total):,})"])  # fmt: skip
    return rows


def export_inputs(ctx: RunContext) -> dict[str, Path]:
    out = ctx.out
    return {
        "reviews": out / "final" / "reviews.parquet",
        "final_dropped": out / "final" / "dropped.parquet",
        "splits": out / "split" / "splits.parquet",
        "artifacts": out / "split" / "artifacts.md",
        "ratings": out / "reviews" / "reviews.json",
        "crowd": out / "crowd" / "items.json",
        "labels": out / "final" / "labels.json",
        "agreement": out / "agree" / "agreement.json",
        "ingest_stats": out / "ingest" / "stats.json",
    }


def release_rows(frame: pd.DataFrame) -> list[dict]:
    """JGLUE's MARC-ja records: ``review_id``, ``sentence``, ``label``."""
    return [
        {"review_id": r.item_id.removeprefix("r-"), "sentence": r.text, "label": r.label}
        for r in frame.itertuples(index=False)
    ]


@family_export(export_inputs)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE's MARC-ja layout per split, the two review-id lists and the card ->
    OUT/dataset."""
    from pipelines.export.records import jsonl

    inputs = files_of(export_step).reads(ctx, arg)
    final = pd.read_parquet(inputs["reviews"]).sort_values("item_id", ignore_index=True)
    dropped = pd.read_parquet(inputs["final_dropped"])
    splits = pd.read_parquet(inputs["splits"])[["item_id", "split"]]
    licence = ctx.recipe.release_licence().release
    tables = {SPLIT_NAMES[s]: g for s, g in final.groupby("split")}
    side = dict(zip(splits["item_id"], splits["split"], strict=True))

    def id_list(ids: list[str]) -> str:
        return "".join(f"{i.removeprefix('r-')}\n" for i in sorted(ids))

    def build(facts: CardFacts) -> tuple[dict, dict, dict]:
        texts = {f"{s}.json": jsonl(release_rows(t)) for s, t in tables.items()}
        frames = {
            f"{s}.parquet": t[
                [
                    "item_id",
                    "text",
                    "label",
                    "rating",
                    "rating_label",
                    "crowd_label",
                    "group",
                    "source",
                ]
            ].assign(license=licence)
            for s, t in tables.items()
        }
        for split in ("dev", "test"):
            name = SPLIT_NAMES[split]
            gone = [i for i in dropped["id"].astype(str) if side.get(i) == split]
            mine = tables.get(name, final.iloc[:0])
            conv = mine.loc[mine["crowd_label"] != mine["rating_label"], "item_id"].tolist()
            texts[f"filter_review_id_list/{name}.txt"] = id_list(gone)
            texts[f"label_conv_review_id_list/{name}.txt"] = id_list(conv)
        return frames, texts, {}

    names = [f"{s}.{e}" for s in tables for e in ("json", "parquet")]
    names += [
        f"{d}/{SPLIT_NAMES[s]}.txt"
        for s in ("dev", "test")
        for d in ("filter_review_id_list", "label_conv_review_id_list")
    ]
    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        {f"{s}.json": len(t) for s, t in tables.items()},
        names,
        [c.name for c in ctx.recipe.corpora],
        "flows/rebuild.py, pipelines/families/marc/",
    )
    return export_outcome(facts, hit, ctx.out / "dataset", Rows("review", len(final), len(final)))


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """Each step's JSON, the labels per split, the split and the paper's sizes."""
    from pipelines.export.card_facts import label_facts

    family = json_inputs(inputs, ("ingest_stats",))
    final = pd.read_parquet(inputs["reviews"])
    drawn = pd.read_parquet(inputs["splits"])["split"].value_counts()
    return {
        "family": family,
        "ingest": json.loads(inputs["ingest_stats"].read_text(encoding="utf-8")),
        "dates": {},  # the recipe's corpora carry no date_field
        "marc": spec_of(ctx).model_dump(mode="json"),
        "paper_sizes": PAPER_SIZES,
        "table_2": table_2(final),
        "artifacts_md": inputs["artifacts"].read_text(encoding="utf-8"),
        "labels": label_facts(final, final, final[["item_id", "split"]], numeric=False),
        "split": {
            "rule": ctx.recipe.split.rule,
            "settings": ctx.recipe.split.model_dump(mode="json"),
            "splits": {k: int(v) for k, v in final["split"].value_counts().items()},
            # issue 54: the artifact report reads the split as drawn, before the 7-of-10
            # rule dropped dev and test reviews (JGLUE 3.1.2)
            "before_revisions": {
                k: int(drawn.get(k, 0)) for k in final["split"].value_counts().index
            },
        },
    }
