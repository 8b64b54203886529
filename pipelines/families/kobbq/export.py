"""The KoBBQ release (``export``): ``all_samples`` and ``test_samples`` in the release's
layout, the survey's targets, the baselines' scores and the card's facts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.facts import CardFacts
from pipelines.families.kobbq.steps import rounds
from pipelines.rebuild.export import export_dataset, export_outcome, family_export


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
    the data card (``pipelines.rebuild.export``)."""
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq.templates import release_tsv

    out, recipe = ctx.out, ctx.recipe
    inputs = files_of(export_step).reads(ctx, arg)
    samples, test, readers, dropped = released(ctx, inputs)
    licence = recipe.release_licence().release

    def build(facts: CardFacts) -> tuple[dict, dict, dict]:
        records = {"all_samples": records_of(samples), "test_samples": records_of(test)}
        safe = ctx.recipe.export.spreadsheet_safe
        texts = {f"{s}.tsv": release_tsv(rows, safe) for s, rows in records.items()}
        texts.update({f"{s}.jsonl": jsonl([{**r, "license": licence} for r in rows])
                      for s, rows in records.items()})  # fmt: skip
        tables = {f"{s}.parquet": pd.DataFrame(rows).assign(license=licence)
                  for s, rows in records.items()}  # fmt: skip
        tables["targets.parquet"] = pd.read_parquet(inputs["targets"])
        tables["dropped_samples.parquet"] = dropped
        return tables, texts, {"scores.json": facts["scores"]}

    parts = {"all_samples": len(samples), "test_samples": len(test)}
    names = [f"{s}.{e}" for s in parts for e in ("tsv", "jsonl", "parquet")]
    facts, hit = export_dataset(
        ctx, inputs, rounds(ctx), build,
        lambda c, i: card_facts_of(c, i, (samples, test, readers)),
        {f"{s}.tsv": n for s, n in parts.items()},
        [*names, "targets.parquet", "dropped_samples.parquet", "scores.json"],
        [recipe.kobbq.templates], "flows/rebuild.py, pipelines/families/kobbq/",
    )  # fmt: skip
    n, d = len(samples), len(dropped)
    return export_outcome(
        facts, hit, out / "dataset",
        Rows("sample", n + d, n, {"low_reader_accuracy": d} if d else {}),
        after=f"; {d} samples of low-accuracy templates dropped" if d else "",
    )  # fmt: skip


def released(ctx: RunContext, inputs: dict[str, Path]) -> tuple:
    """(samples, evaluation samples, the readers' figures, the dropped samples): KoBBQ
    3.2.5 drops every sample of a template whose checked samples fewer than
    ``check_round.min_reader_accuracy`` (half) of the readers answered correctly; each
    dropped sample is kept in ``dropped_samples.parquet`` with its reason. Without a
    check round nothing is dropped."""
    from pipelines.families.kobbq import scoring

    samples = pd.read_parquet(inputs["samples"])
    test = pd.read_parquet(inputs["test"])
    none = samples.iloc[0:0].assign(reason=pd.Series(dtype=object),
                                    detail=pd.Series(dtype=object))  # fmt: skip
    check = inputs.get("check-annotations")
    spec = ctx.recipe.kobbq.check_round
    if check is None or not check.is_file() or spec is None:
        return samples, test, None, none
    accuracy = scoring.reader_accuracy(test, pd.read_parquet(check))
    low = scoring.low_accuracy_templates(accuracy, spec.min_reader_accuracy)
    of = accuracy.set_index("template_id")["accuracy"]
    drop = samples["template_id"].isin(low)
    dropped = samples[drop].assign(
        reason="low_reader_accuracy",
        detail=samples.loc[drop, "template_id"].map(
            lambda t: f"readers answered {of[t]:.0%} of the template's checked samples "
            f"correctly (below {spec.min_reader_accuracy:.0%}, KoBBQ 3.2.5)"),
    ).reset_index(drop=True)  # fmt: skip
    readers = {"min_accuracy": spec.min_reader_accuracy,
               "templates": accuracy.to_dict(orient="records"), "dropped_templates": low,
               "dropped_samples": int(drop.sum())}  # fmt: skip
    kept_test = test[~test["template_id"].isin(low)].reset_index(drop=True)
    return samples[~drop].reset_index(drop=True), kept_test, readers, dropped


def _dropped(path: Path) -> list[dict]:
    """The questions the survey rules dropped (for the card)."""
    t = pd.read_parquet(path)
    t = t[~t["kept"]]
    return [{"question_id": r.question_id, "category": r.category, "stereotype": r.stereotype,
             "type": int(r.type), "kept": False, "reason": r.reason,
             "targets": list(r.targets), "non_targets": list(r.non_targets),
             "templates": list(r.templates)} for r in t.itertuples(index=False)]  # fmt: skip


def card_facts_of(ctx: RunContext, inputs: dict[str, Path], kept: tuple) -> dict:
    """KoBBQ's facts for the card: the expansion, the survey and what its rules dropped,
    and the scores of the baselines (and of the readers' majority when there was a check
    round) on the evaluation set. ``kept``: (samples, evaluation samples, the readers'
    figures), as :func:`released` gave them to the export step."""
    from pipelines.families.kobbq import scoring

    samples, test, readers = kept
    scores = {b: scoring.score(test, scoring.baseline(test, b), averaged=False)
              for b in ("unknown", "biased")}  # fmt: skip
    check = inputs.get("check-annotations")
    if check is not None and check.is_file():
        votes = scoring.majority_answers(pd.read_parquet(check))
        scores["readers (majority)"] = scoring.score(test, votes[["sample_id", "prediction"]],
                                                     averaged=False)  # fmt: skip
    splits = {"all_samples": len(samples), "test_samples": len(test)}
    expand = json.loads(inputs["expand"].read_text(encoding="utf-8"))
    if readers and readers["dropped_samples"]:
        # issue 54: the count table is the release's (Table 1 counts the released
        # samples), not the expansion's before the reading check dropped templates
        from pipelines.families.kobbq.steps import _templates
        from pipelines.families.kobbq.templates import counts

        expand["counts_expanded"] = expand["counts"]
        expand["counts"] = counts(samples, _templates(ctx.recipe)).to_dict(orient="records")
    total = next(r for r in expand["counts"] if r["category"] == "total")
    return {
        "expand": expand,
        # what the card states of a release file, checked against it (card check)
        "totals": [
            {
                "what": "the count table's total samples",
                "file": "all_samples.parquet",
                "records": int(total["samples"]),
            }
        ],  # fmt: skip
        "survey": json.loads(inputs["survey"].read_text(encoding="utf-8")),
        "scores": scores,
        "dropped_stereotypes": _dropped(inputs["targets"]),
        "readers": readers,
        "split": {"rule": "release", "splits": splits, "settings": {}},
    }
