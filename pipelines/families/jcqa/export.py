"""JCommonsenseQA's release (JGLUE's layout) and the card's facts.

Per split (``train``, ``valid``, ``test``, JGLUE's names) in OUT/dataset:
``<split>.json`` (JSON Lines of ``q_id``, ``question``, ``choice0`` .. ``choice4``,
``label``: JGLUE's fields) and ``<split>.parquet`` (with the question set, its source
concept and relation, the answer and the licence). The release is read back with
``pipelines.families.jcqa.filters``'s reader and every question passes its filters, or the export
fails (the self-test JGLUE's release passes).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.facts import CardFacts
from pipelines.families.jcqa.steps import kept_questions, rounds, spec_of
from pipelines.rebuild.export import export_dataset, export_outcome, family_export, json_inputs

SPLIT_NAMES = {"train": "train", "dev": "valid", "test": "test"}
PAPER_SIZES = {"source": "JGLUE v1.3 README", "train": 8939, "dev": 1119, "test": 1118}
FIELDS = ["q_id", "question", "choice0", "choice1", "choice2", "choice3", "choice4", "label"]


def export_inputs(ctx: RunContext) -> dict[str, Path]:
    out = ctx.out
    return {
        "questions": kept_questions(out, ctx.recipe),
        "splits": out / "split" / "splits.parquet",
        "artifacts": out / "split" / "artifacts.md",
        "question_sets": out / "question-sets" / "sets.json",
        "synonyms": out / "sets" / "sets.json",
        "written": out / "questions" / "questions.json",
        "distractors": out / "distractors" / "distractors.json",
        "answers": out / "final" / "answers.json",
        **({"check": out / "check" / "check.json"} if ctx.recipe.jcqa.final_check else {}),
    }


def release_records(frame: pd.DataFrame, start: int) -> list[dict]:
    """JGLUE's records, ``q_id`` numbered from ``start``."""
    return [
        {
            "q_id": start + n,
            "question": r["question"],
            **{f"choice{i}": r[f"choice{i}"] for i in range(5)},
            "label": int(r["label"]),
        }
        for n, r in enumerate(frame.to_dict("records"))
    ]


def self_test(text: str) -> None:
    """The release reads back and passes JCommonsenseQA's filters."""
    import tempfile

    from pipelines.families.jcqa.filters import read_questions, run_filters

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "split.json"
        path.write_text(text, encoding="utf-8")
        checked = run_filters(read_questions(path))
    failed = checked[~checked["kept"]]
    if len(failed):
        raise AssertionError(
            f"released questions fail the filters: {failed.head(3).to_dict('records')}"
        )


@family_export(export_inputs)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE's JCommonsenseQA layout per split and the card -> OUT/dataset."""
    from pipelines.export.records import jsonl

    inputs = files_of(export_step).reads(ctx, arg)
    qs = pd.read_parquet(inputs["questions"])
    splits = pd.read_parquet(inputs["splits"])[["item_id", "split"]]
    qs = qs.merge(splits, on="item_id", validate="one_to_one").sort_values("item_id")
    licence = ctx.recipe.release_licence().release
    tables, start = {}, 0
    for split in ("train", "dev", "test"):
        part = qs[qs["split"] == split].reset_index(drop=True)
        if len(part):
            tables[SPLIT_NAMES[split]] = (part, start)
            start += len(part)

    def build(facts: CardFacts) -> tuple[dict, dict, dict]:
        texts, frames = {}, {}
        for name, (part, first) in tables.items():
            records = release_records(part, first)
            texts[f"{name}.json"] = jsonl(records)
            self_test(texts[f"{name}.json"])
            frames[f"{name}.parquet"] = pd.DataFrame(records).assign(
                set_id=part["set_id"].to_numpy(),
                source_concept=part["source"].to_numpy(),
                relation=part["relation"].to_numpy(),
                answer=part["answer"].to_numpy(),
                license=licence,
            )
        return frames, texts, {}

    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        {f"{n}.json": len(p) for n, (p, _) in tables.items()},
        [f"{n}.{e}" for n in tables for e in ("json", "parquet")],
        [c.name for c in ctx.recipe.corpora],
        "flows/rebuild.py, pipelines/families/jcqa/",
    )
    return export_outcome(facts, hit, ctx.out / "dataset", Rows("question", len(qs), len(qs)))


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """Each step's JSON, the labels per split and the paper's sizes."""
    from pipelines.export.card_facts import label_facts

    family = json_inputs(inputs)
    qs = pd.read_parquet(inputs["questions"])
    splits = pd.read_parquet(inputs["splits"])[["item_id", "split"]]
    gold = qs.assign(label=qs["label"].astype(str), source=qs["relation"])
    return {
        "family": family,
        "jcqa": spec_of(ctx).model_dump(mode="json"),
        "paper_sizes": PAPER_SIZES,
        "artifacts_md": inputs["artifacts"].read_text(encoding="utf-8"),
        "labels": label_facts(gold, gold, splits, numeric=False),
        "split": {
            "rule": ctx.recipe.split.rule,
            "settings": ctx.recipe.split.model_dump(mode="json"),
            "splits": {k: int(v) for k, v in splits["split"].value_counts().items()},
        },
    }
