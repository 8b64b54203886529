"""The KoBBQ release (``export``): ``all_samples`` and ``test_samples`` in the release's
layout, the survey's targets, the baselines' scores and the card's facts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.family import export_dataset, family_export
from pipelines.families.kobbq.steps import rounds


def records_of(samples: pd.DataFrame) -> list[dict]:
    from pipelines.families.kobbq.templates import release_records

    return release_records(samples)


def export_inputs(ctx: RunContext) -> dict[str, Path]:
    """The files KoBBQ's release and card are made from."""
    out = ctx.out
    return {
        "samples": out / "expand" / "samples.parquet",
        "expand": out / "expand" / "expand.json",
        "test": out / "evaluation" / "test.parquet",
        "targets": out / "survey" / "targets.parquet",
        "survey": out / "survey" / "survey.json",
    }


@family_export(export_inputs)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The release layout -> OUT/dataset: ``all_samples`` and ``test_samples`` as TSV (as
    the release writes them), JSON Lines and Parquet (with ``license``), the survey's
    targets, the baselines' scores on the evaluation set (always "unknown", always the
    biased answer: the bounds), the readers' scores when there was a check round, and
    the data card (``pipelines.export.family``)."""
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq.templates import release_tsv

    out, recipe = ctx.out, ctx.recipe
    inputs = files_of(export_step).reads(ctx, arg)
    samples = pd.read_parquet(inputs["samples"])
    test = pd.read_parquet(inputs["test"])
    licence = recipe.release_licence().release

    def build(facts: dict) -> tuple[dict, dict, dict]:
        records = {"all_samples": records_of(samples), "test_samples": records_of(test)}
        safe = ctx.recipe.export.spreadsheet_safe
        texts = {f"{s}.tsv": release_tsv(rows, safe) for s, rows in records.items()}
        texts.update({f"{s}.jsonl": jsonl([{**r, "license": licence} for r in rows])
                      for s, rows in records.items()})  # fmt: skip
        tables = {f"{s}.parquet": pd.DataFrame(rows).assign(license=licence)
                  for s, rows in records.items()}  # fmt: skip
        tables["targets.parquet"] = pd.read_parquet(inputs["targets"])
        return tables, texts, {"scores.json": facts["scores"]}

    parts = {"all_samples": len(samples), "test_samples": len(test)}
    names = [f"{s}.{e}" for s in parts for e in ("tsv", "jsonl", "parquet")]
    facts, hit = export_dataset(
        ctx, inputs, rounds(ctx), build, card_facts_of, {f"{s}.tsv": n for s, n in parts.items()},
        [*names, "targets.parquet", "scores.json"], [recipe.kobbq.templates],
        "flows/rebuild.py, pipelines/families/kobbq/",
    )  # fmt: skip
    n = len(samples)
    return StepOutcome(f"{facts['export']['files']} -> {out / 'dataset'}"
                       f"{' (cached)' if hit else ''}",
                       {**facts["export"], "cached": hit}, Rows("sample", n, n))  # fmt: skip


def _dropped(path: Path) -> list[dict]:
    """The questions the survey rules dropped (for the card)."""
    t = pd.read_parquet(path)
    t = t[~t["kept"]]
    return [{"question_id": r.question_id, "category": r.category, "stereotype": r.stereotype,
             "type": int(r.type), "kept": False, "reason": r.reason,
             "targets": list(r.targets), "non_targets": list(r.non_targets),
             "templates": list(r.templates)} for r in t.itertuples(index=False)]  # fmt: skip


def card_facts_of(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """KoBBQ's facts for the card: the expansion, the survey and what its rules dropped,
    and the scores of the baselines (and of the readers' majority when there was a check
    round) on the evaluation set."""
    from pipelines.families.kobbq import scoring

    test = pd.read_parquet(inputs["test"])
    scores = {b: scoring.score(test, scoring.baseline(test, b), averaged=False)
              for b in ("unknown", "biased")}  # fmt: skip
    check = inputs.get("check-annotations")
    if check is not None and check.is_file():
        votes = scoring.majority_answers(pd.read_parquet(check))
        scores["readers (majority)"] = scoring.score(test, votes[["sample_id", "prediction"]],
                                                     averaged=False)  # fmt: skip
    splits = {"all_samples": len(pd.read_parquet(inputs["samples"], columns=["sample_id"])),
              "test_samples": len(test)}  # fmt: skip
    return {
        "expand": json.loads(inputs["expand"].read_text(encoding="utf-8")),
        "survey": json.loads(inputs["survey"].read_text(encoding="utf-8")),
        "scores": scores,
        "dropped_stereotypes": _dropped(inputs["targets"]),
        "split": {"rule": "release", "splits": splits, "settings": {}},
    }
