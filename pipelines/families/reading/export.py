"""The release of a reading-comprehension dataset and the card's facts.

Per split (JSQuAD: ``train``, ``valid``, ``test``, JGLUE's names; KLUE-MRC: ``train``,
``dev``, ``test``) the export writes into OUT/dataset:

- ``<prefix>_<split>.json``: the SQuAD v1.1 layout (``data[].paragraphs[].qas[]``;
  several answers on dev and test, the writer's first; ``is_impossible``; KLUE-MRC's
  questions carry ``question_type`` (1 paraphrase, 2 multi-sentence reasoning, 3
  unanswerable, KLUE 3.7), ``guid`` and ``plausible_answers``, its articles ``source``),
  written by :func:`pipelines.families.reading.squad.write_squad`, read back with its
  reader and written again: the same bytes, or the export fails;
- ``<split>.jsonl``: one record per question with the Hub's fields (JSQuAD: ``id``,
  ``title``, ``context``, ``question``, ``answers{text, answer_start}``,
  ``is_impossible``; KLUE-MRC: ``guid``, ``title``, ``context``, ``source``,
  ``question``, ``question_type``, ``is_impossible``, ``answers{answer_start, text}``);
- ``<split>.parquet``: the same rows with the question's provenance and licence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.steps import Rows, RunContext, StepOutcome, files_of
from pipelines.export.facts import CardFacts
from pipelines.families.reading.squad import SquadRelease, SquadStyle, read_squad, write_squad
from pipelines.families.reading.steps import rounds, spec_of
from pipelines.rebuild.export import export_dataset, export_outcome, family_export, json_inputs

SPLIT_NAMES = {
    "jsquad": {"train": "train", "dev": "valid", "test": "test"},
    "klue-mrc": {"train": "train", "dev": "dev", "test": "test"},
}
TYPE_NUMBER = {"paraphrase": 1, "multi_sentence": 2, "unanswerable": 3}


def squad_records(questions: pd.DataFrame, kind: str, prefix: str, split: str) -> list[dict]:
    """The SQuAD-layout records of one split (articles and paragraphs numbered in
    title and paragraph order)."""
    out = []
    qs = questions.sort_values(["article_id", "paragraph_id", "item_id"], kind="stable")
    articles = {a: n for n, a in enumerate(dict.fromkeys(qs["article_id"]))}
    paragraphs: dict[str, int] = {}
    for n, q in enumerate(qs.to_dict("records")):
        p = paragraphs.setdefault(
            q["paragraph_id"], sum(1 for k in paragraphs if k.rsplit("-p", 1)[0] == q["article_id"])
        )
        answers = json.loads(q["answers"])
        record = {
            "article": articles[q["article_id"]],
            "paragraph": p,
            "title": q["title"],
            "context": q["context"],
            "question": q["question"],
        }
        guid = f"{prefix}_{split}_{n:05d}"
        if kind == "klue-mrc":
            record.update(
                {
                    "answers": answers,
                    "question_type": TYPE_NUMBER[q["question_type"]],
                    "is_impossible": bool(q["is_impossible"]),
                    "plausible_answers": [],
                    "guid": guid,
                    "article_extra": {"source": q["source"]},
                }
            )
        else:
            record.update(
                {"id": guid, "answers": answers, "is_impossible": bool(q["is_impossible"])}
            )
        out.append(record)
    return out


def hub_record(record: dict, kind: str) -> dict:
    """One question as the Hub's loaders give it (answers as parallel lists)."""
    answers = {
        "text": [a["text"] for a in record["answers"]],
        "answer_start": [a["answer_start"] for a in record["answers"]],
    }
    if kind == "klue-mrc":
        return {
            "guid": record["guid"],
            "title": record["title"],
            "context": record["context"],
            "source": record["article_extra"]["source"],
            "question": record["question"],
            "question_type": record["question_type"],
            "is_impossible": record["is_impossible"],
            "answers": {"answer_start": answers["answer_start"], "text": answers["text"]},
        }
    return {
        "id": record["id"],
        "title": record["title"],
        "context": record["context"],
        "question": record["question"],
        "answers": answers,
        "is_impossible": record["is_impossible"],
    }


def squad_text(records: list[dict], kind: str) -> str:
    """The split's SQuAD-layout file (KLUE-MRC's with ``"version"`` first), checked to
    read back into the same records and to write back byte for byte."""
    style = (
        SquadStyle(top={"version": "v1.1"}, top_order=["version", "data"])
        if kind == "klue-mrc"
        else SquadStyle()
    )
    text = write_squad(SquadRelease(records, style))
    again = read_squad(text, "<export>")
    keys = [{k: v for k, v in r.items()} for r in again.records]
    if keys != records or write_squad(again) != text:
        raise AssertionError("the SQuAD-layout release does not read back as written")
    return text


def export_inputs(ctx: RunContext) -> dict[str, Path]:
    out = ctx.out
    return {
        "questions": out / "final" / "questions.parquet",
        "splits": out / "split" / "splits.parquet",
        "paragraphs": out / "paragraphs" / "paragraphs.json",
        "writing": out / "writing" / "items.json",
        "written": out / "questions" / "questions.json",
        "answers": out / "final" / "answers.json",
        "articles": out / "paragraphs" / "articles.parquet",
        "artifacts": out / "split" / "artifacts.md",
    }


@family_export(export_inputs)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The SQuAD-layout files, the Hub's records and Parquet per split, and the card ->
    OUT/dataset (see the module docstring)."""
    from pipelines.export.records import jsonl

    inputs = files_of(export_step).reads(ctx, arg)
    kind = ctx.task.name
    spec = spec_of(ctx)
    prefix = spec.guid_prefix or ctx.recipe.export.guid_prefix or ctx.recipe.name
    questions = pd.read_parquet(inputs["questions"])
    licence = ctx.recipe.release_licence().release
    names = SPLIT_NAMES[kind]
    per_split = {s: questions[questions["split"] == s] for s in names}
    records = {s: squad_records(t, kind, prefix, names[s]) for s, t in per_split.items()}
    files = {f"{names[s]}.jsonl": len(r) for s, r in records.items()}

    def build(facts: CardFacts) -> tuple[dict, dict, dict]:
        texts, tables = {}, {}
        for s, recs in records.items():
            texts[f"{prefix}_{names[s]}.json"] = squad_text(recs, kind)
            hub = [hub_record(r, kind) for r in recs]
            texts[f"{names[s]}.jsonl"] = jsonl(hub)
            frame = per_split[s].sort_values(
                ["article_id", "paragraph_id", "item_id"], kind="stable"
            )
            tables[f"{names[s]}.parquet"] = pd.DataFrame(
                {
                    **{
                        k: [h[k] for h in hub]
                        for k in ("title", "context", "question", "is_impossible")
                    },
                    "guid": [r.get("guid") or r.get("id") for r in recs],
                    "answers": [json.dumps(h["answers"], ensure_ascii=False) for h in hub],
                    "question_type": frame["question_type"].to_list(),
                    "source": frame["source"].to_list(),
                    "item_id": frame["item_id"].to_list(),
                    "license": licence,
                }
            )
        return tables, texts, {}

    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        files,
        [
            *(f"{prefix}_{names[s]}.json" for s in names),
            *(f"{names[s]}.{e}" for s in names for e in ("jsonl", "parquet")),
        ],
        [s.corpus for s in spec.sources],
        "flows/rebuild.py, pipelines/families/reading/",
    )
    n = len(questions)
    return export_outcome(facts, hit, ctx.out / "dataset", Rows("question", n, n))


# paper figures the card sets beside the demo's (the release's own README table for
# JSQuAD, shipped in data/demo/jglue/README.jglue-upstream.md)
PAPER_SIZES = {
    "jsquad": {
        "source": "JGLUE v1.3 README; the paper's Table 1: 63,870 / 4,475 / 4,470",
        "train": 62697,
        "dev": 4442,
        "test": 4420,
    },
}


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """Each step's JSON, the split and the paper's sizes, for the card."""
    family = json_inputs(inputs)
    splits = pd.read_parquet(inputs["splits"])
    questions = pd.read_parquet(inputs["questions"])
    articles = pd.read_parquet(inputs["articles"])
    from pipelines.export.card_facts import label_facts

    gold = questions.assign(label=questions["question_type"])
    return {
        "family": family,
        "artifacts_md": inputs["artifacts"].read_text(encoding="utf-8"),
        "labels": label_facts(gold, questions, questions[["item_id", "split"]], numeric=False),
        "reading": spec_of(ctx).model_dump(mode="json"),
        "paper_sizes": PAPER_SIZES.get(ctx.task.name),
        "final_splits": {k: int(v) for k, v in questions["split"].value_counts().items()},
        "split": {
            "rule": ctx.recipe.split.rule,
            "settings": ctx.recipe.split.model_dump(mode="json"),
            "splits": {k: int(v) for k, v in questions["split"].value_counts().items()},
            "before_validation": {k: int(v) for k, v in splits["split"].value_counts().items()},
        },
        "top_articles": articles.sort_values("rank").head(12).to_dict("records"),
        "per_type_final": {k: int(v) for k, v in questions["question_type"].value_counts().items()},
    }
