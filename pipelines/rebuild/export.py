"""The export step of every family: the shared ``export`` step of a family that
declares its release records (:class:`pipelines.rebuild.kinds.SharedSteps`, the KLUE
kinds), and :func:`export_dataset`, the export of a family that writes its own release
(KorNLU, KoBBQ, JGLUE, KoBEST). Each step's declaration (:func:`family_export`: its
inputs and each round's pulled annotations, the recipe, the card template and the code
of ``pipelines.export`` and of the family's card) gives its cache key, as for every
step; the card's shared facts; the files, the card and its figures written atomically
together.

``export_dataset(ctx, inputs, rounds, build, facts_of, files, names)``:

- ``inputs``: the step's declared inputs (name -> path), listed in the card's
  provenance;
- ``facts_of(ctx, inputs) -> dict``: the family's own facts, merged over the shared
  skeleton (:func:`base_facts`) before the family's ``card`` renders them;
- ``build(facts) -> (tables, texts, jsons)``: the release's Parquet tables, text files
  and JSON files by name;
- ``files``: the release's files and their row counts (the card's export facts);
- ``names``: every file ``build`` writes (the card's three are added).

A rerun with the same key writes nothing and returns the stored facts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.core.io import outputs_current, sha256_file, write_outputs
from pipelines.core.steps import STEPS, Cached, Rows, RunContext, StepOutcome, declares
from pipelines.export.card_facts import annotation_facts, licence_facts, round_server
from pipelines.export.facts import CardFacts
from pipelines.rebuild.agree import gold_folder, shared_of, votes_path
from pipelines.rebuild.kinds import ExportInputs
from pipelines.rebuild.people import human_files, people_files, review_files

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

CARD_FILES = ["DATA_CARD.md", "DATA_CARD.html", "README.md", "card.json"]


def export_settings(ctx: RunContext, arg: str = "") -> list:
    """The settings of every export's cache key: the recipe and the card template."""
    from pipelines.export import data_card

    return [ctx.recipe.model_dump(exclude={"base_dir"}), sha256_file(data_card.TEMPLATE)]


def export_code(ctx: RunContext, arg: str = "") -> list[str]:
    """The code of every export's cache key beyond its step's module: the shared export
    package, the task kind's card module (with its card template) and, for the shared
    export, its records' module."""
    shared = ctx.task.shared
    return ["pipelines.export", ctx.task.card.__module__,
            *([shared.records.__module__] if shared else [])]  # fmt: skip


def family_export(inputs: Callable[[RunContext], dict[str, Path]]) -> Callable:
    """Decorator: declare a family's own export step. It reads ``inputs(ctx)`` and the
    pulled annotations of each of its rounds that has them, writes the card into
    OUT/dataset (its release files are its own), and is cached on
    :func:`export_settings` and :func:`export_code`."""

    def reads(ctx: RunContext, arg: str) -> dict[str, Path]:
        files = dict(inputs(ctx))
        for name, r in ctx.task.rounds(ctx).items():
            if r.annotations.is_file():  # a round the recipe does not run has none
                files[f"{name}-annotations"] = r.annotations
        return files

    def writes(ctx: RunContext, arg: str) -> dict[str, Path]:
        return {name: ctx.out / "dataset" / name for name in CARD_FILES}

    return declares(reads=reads, writes=writes, settings=export_settings, code=export_code)


def inline_counts(counts: dict) -> str:
    """``{"a": 1, "b": 2}`` as ``a 1, b 2`` (``none`` when empty), for a card's prose."""
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def round_paragraph(name: str, r: dict, unit: str = "item") -> str:
    """One Label Studio round of a family card: config, project, annotations, people."""
    from pipelines.core.markdown import code

    return (
        f"Label Studio round {code(name)} ({code(r['config'])}, project {code(r['project'])}): "
        f"{r['annotations']} annotations by {r['annotators']} "
        f"{'simulated ' if r['simulated'] else ''}people, {r['overlap']} per {unit}."
    )


def base_facts(
    ctx: RunContext,
    hashes: dict[str, str],
    rounds: dict,
    files: dict[str, int],
    sources: list[str],
    rebuild: str,
) -> dict:
    """The shared template's facts of a family release (no agreement, funnel or label
    tables of the shared kind; the family's card supplies those sections)."""
    from pipelines.export import card_facts
    from pipelines.export.card_facts import annotation_facts, licence_facts, round_server

    recipe = ctx.recipe
    facts = {
        "task": ctx.task.title,
        "task_kind": ctx.task.name,
        "paper_agreement": None,
        "recipe": recipe.model_dump(mode="json", exclude={"base_dir"}),
        "labels": {},
        "funnel": [],
        "agreement": {},
        "split": {"rule": "release", "splits": dict(files), "settings": {}},
        "annotation": {"simulated": False, "overlap": 0},
        "export": {
            "layout": ctx.task.layout,
            "files": dict(files),
            "licence": licence_facts(recipe, pd.DataFrame({"source": sources})),
        },
        "provenance": {
            "recipe": recipe.name,
            **card_facts.provenance(
                ctx.recipe_path, {n: round_server(r) for n, r in rounds.items()}
            ),
            "benchforge rebuild": rebuild,
            "inputs (sha256, first 12)": ", ".join(f"{k} {h[:12]}" for k, h in hashes.items()),
        },
        "rounds": {},
    }
    for name, r in rounds.items():
        if r.annotations.is_file():
            facts["rounds"][name] = annotation_facts(
                r, pd.read_parquet(r.annotations), ctx.simulated
            )
    facts["annotation"]["simulated"] = any(r.get("simulated") for r in facts["rounds"].values())
    return facts


def export_dataset(
    ctx: RunContext,
    inputs: dict[str, Path],
    rounds: dict,
    build: Callable[[dict], tuple[dict, dict, dict]],
    facts_of: Callable[[object, dict[str, Path]], dict],
    files: dict[str, int],
    names: list[str],
    sources: list[str],
    rebuild: str,
) -> tuple[dict, bool]:
    """Write OUT/dataset (see the module docstring); return (facts, cached)."""
    # from the step's declaration: its key, and its inputs' SHA-256 (read once)
    key, dataset, hashes = ctx.cache.key, ctx.cache.folder, ctx.cache.digests
    if outputs_current(dataset, key, [*names, *CARD_FILES]):
        return json.loads((dataset / "card.json").read_text(encoding="utf-8")), True
    facts = {**base_facts(ctx, hashes, rounds, files, sources, rebuild), **facts_of(ctx, inputs)}
    tables, texts, jsons = build(facts)
    write_release(ctx, facts, tables, texts, jsons)
    return facts, False


def export_outcome(facts: CardFacts, hit: bool, dataset: Path, rows: Rows,
                   after: str = "") -> StepOutcome:  # fmt: skip
    """A family export's epilogue: "<files per split> -> <dataset>", the cached mark
    and ``after``; the info is the release's ``export`` facts with ``"cached"``."""
    return Cached(facts["export"], hit).outcome(
        f"{facts['export']['files']} -> {dataset}", rows, after=after
    )


def write_release(ctx: RunContext, facts: CardFacts, tables: dict[str, pd.DataFrame],
                  texts: dict[str, str], jsons: dict[str, object],
                  transient: tuple[str, ...] = ()) -> None:  # fmt: skip
    """The last stretch of every export, the shared step's and a family's: the
    release's facts (its files' schema and sizes, ``card_facts.release_facts``), the
    guard (an empty split, one class or a degenerate tagger is refused before any
    write, issue 51), the facts checked against their types (``facts.CardFacts``: a
    wrong type or a missing key is a ``CardFactsError`` naming its key path, before any
    write; the dict written is the one built), the card rendered from ``facts`` by the
    task kind's section, and every file written atomically into OUT/dataset under the
    step's cache key with card.json (``facts`` without the ``transient`` ones, which
    only the card reads)."""
    from pipelines.export import card_facts, data_card
    from pipelines.export.facts import check_facts
    from pipelines.export.guards import guard_release
    from pipelines.export.public_eval import overlap

    key, dataset = ctx.cache.key, ctx.cache.folder
    corpora = [(c.name, ctx.recipe.corpus_path(c)) for c in ctx.recipe.corpora]
    facts.update(card_facts.release_facts(tables, facts["export"]["files"], ctx.task.hub))
    facts["public_eval"] = overlap(tables, facts["export"]["files"], corpora)
    facts["degenerate"] = guard_release(facts, ctx.recipe, f"{ctx.recipe_path}: {dataset}")
    check_facts(facts, f"{ctx.recipe_path}: {dataset}")  # their types, before any write
    card = data_card.render_card(facts, ctx.task.card(facts))
    for name in transient:
        facts.pop(name)
    write_outputs(dataset, key, tables, {"card.json": facts, **jsons},
                  {**texts, **card.texts}, card.figures)  # fmt: skip


def json_inputs(inputs: dict[str, Path], skip: tuple[str, ...] = ()) -> dict:
    """The JSON files among a family export's inputs (each step's info), read, by input
    name: the ``family`` facts its card renders; ``skip``: inputs read another way."""
    return {name: json.loads(p.read_text(encoding="utf-8"))
            for name, p in inputs.items() if p.suffix == ".json" and name not in skip}  # fmt: skip


def _classifier_cards(recipe: Recipe) -> dict:
    """Each active detector's model card facts: its task, kind, folder name, dev
    macro-F1 and (a calibrated n-gram detector) dev ECE, from its ``metrics.json`` or
    ``detector.json``; a detector that left neither has none."""
    from pipelines.quality.toxic import detector_folders

    cards = {}
    settings = recipe.filters.classifiers
    for name, folder in detector_folders(settings, recipe.resolve).items():
        for manifest in ("detector.json", "metrics.json"):
            if (folder / manifest).is_file():
                m = json.loads((folder / manifest).read_text(encoding="utf-8"))
                cards[name] = {
                    "task": m.get("task"),
                    "kind": m.get("kind", "transformers"),
                    "folder": folder.name,
                    "dev_macro_f1": m.get("dev", {}).get("macro_f1"),
                    "ece": (m.get("reliability") or {}).get("ece"),
                }
                break
    return cards


def _dates(ingest_dir: Path) -> dict:
    docs = pd.read_parquet(ingest_dir / "documents.parquet", columns=["corpus", "date"])
    out = {}
    for corpus, dates in docs.groupby("corpus")["date"]:
        known = dates.dropna()
        out[corpus] = f"{known.min()} to {known.max()}" if len(known) else "undated"
    return out


def export_reads(ctx: RunContext, arg: str = "") -> dict[str, Path]:
    """What the shared export reads: the gold labels and the dropped items, the items,
    the splits and their artifact report, the annotations agreed on, the agreement
    figures, the ingest's statistics, and the files the task kind's card reads
    (``export_inputs``)."""
    out, kind = ctx.out, shared_of(ctx)
    return {
        "gold": gold_folder(ctx) / "gold.parquet",
        "dropped": gold_folder(ctx) / "dropped.parquet",
        "items": out / "items" / "items.parquet",
        "splits": out / "split" / "splits.parquet",
        "annotations": votes_path(ctx),
        "artifacts": out / "split" / "artifacts.json",
        "agreement": out / "agree" / "agreement.json",
        "ingest_stats": out / kind.ingest_dir / "stats.json",
        **{name: out / rel for name, rel in kind.export_inputs.items()},
        **people_files(ctx),
        **review_files(ctx),
        **human_files(ctx),
    }


EXPORT_NAMES = [f"{s}.{ext}" for s in ("train", "dev", "test") for ext in ("jsonl", "parquet")]


@STEPS.register("export")
@declares(
    reads=export_reads,
    writes=lambda ctx, arg: {
        n: ctx.out / "dataset" / n
        for n in (*EXPORT_NAMES, "DATA_CARD.md", "README.md", "card.json")
    },
    settings=export_settings,
    code=export_code,
)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dataset in the task kind's release layout (its ``shared.records``) as JSON
    Lines and Parquet per split, and the data card (its ``card`` section) ->
    OUT/dataset."""
    from pipelines.export.records import jsonl

    inputs = export_reads(ctx, arg)  # its declaration: the orchestrator has checked them
    # the key its declaration gives, and its inputs' SHA-256 (read once, before it ran)
    key, dataset, hashes = ctx.cache.key, ctx.cache.folder, ctx.cache.digests
    names = [*EXPORT_NAMES, "DATA_CARD.md", "DATA_CARD.html", "README.md", "card.json"]
    if outputs_current(dataset, key, names):
        facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
        exported = {**facts["export"], "cached": True}
    else:
        facts = _export(ctx, inputs, hashes, jsonl)
        exported = {**facts["export"], "cached": False}
    n_in = int(pd.read_parquet(inputs["splits"], columns=["item_id"]).shape[0])
    n_out = sum(exported["files"].values())
    return StepOutcome(f"{exported['files']} -> {dataset}", exported,
                       Rows("item", n_in, n_out, {"no_gold_label": n_in - n_out}
                            if n_in != n_out else {}))  # fmt: skip


def _export(ctx: RunContext, inputs: dict, hashes: dict,
            jsonl: Callable[[list[dict]], str]) -> dict:  # fmt: skip
    from pipelines.export import card_facts

    recipe, out, kind = ctx.recipe, ctx.out, ctx.task
    from pipelines.agreement.review import apply_fixes

    items = pd.read_parquet(inputs["items"])
    items = items.drop(columns=[c for c in items.columns if c.startswith("sim_")])
    splits = pd.read_parquet(inputs["splits"])
    table = pd.read_parquet(inputs["annotations"])
    gold = pd.read_parquet(inputs["gold"])
    items = apply_fixes(items, gold)  # a reviewer's fix of a reported item (issue 35)
    shared = shared_of(ctx)
    records = shared.records(ExportInputs(
        gold=gold, items=items, splits=splits, annotations=table,
        dropped=pd.read_parquet(inputs["dropped"]), prefix=recipe.export.guid_prefix or recipe.name,
    ))  # fmt: skip
    records = card_facts.with_licences(records, gold, items, splits)
    files, tables, texts = {}, {}, {}
    for split, rows in records.items():
        texts[f"{split}.jsonl"] = jsonl(rows)
        tables[f"{split}.parquet"] = pd.DataFrame(rows)
        files[f"{split}.jsonl"] = len(rows)
    ingest = json.loads(inputs["ingest_stats"].read_text(encoding="utf-8"))
    rounds = kind.rounds(ctx)
    validation = table[table["role"] != "author"] if "role" in table.columns else table
    facts = {
        "task": kind.title,
        "task_kind": kind.name,
        "paper_agreement": shared.paper_agreement,
        "recipe": recipe.model_dump(mode="json", exclude={"base_dir"}),
        "ingest": ingest,
        "dates": _dates(out / shared.ingest_dir),
        "classifier_cards": _classifier_cards(recipe),
        "items": ctx.steps[shared.items_step],
        "annotation": annotation_facts(rounds[""], validation, ctx.simulated),
        "agreement": json.loads(inputs["agreement"].read_text(encoding="utf-8")),
        "split": json.loads(inputs["artifacts"].read_text(encoding="utf-8")),
        "artifacts_md": (out / "split" / "artifacts.md").read_text(encoding="utf-8"),
        "labels": card_facts.label_facts(gold, items, splits),
        "funnel": card_facts.funnel(ingest, ctx.steps, sum(files.values())),
        "export": {"layout": kind.layout, "files": files, "licence": licence_facts(recipe, items)},
        "provenance": {
            "recipe": recipe.name,
            **card_facts.provenance(
                ctx.recipe_path, {name: round_server(r) for name, r in rounds.items()}
            ),
            "models": card_facts.models_used(
                recipe.model_dump(mode="json"), _classifier_cards(recipe)
            ),
            "benchforge rebuild": "flows/rebuild.py",
            "inputs (sha256, first 12)": ", ".join(f"{k} {h[:12]}" for k, h in hashes.items()),
        },
    }
    for fact, name in shared.card_json.items():
        facts[fact] = json.loads(inputs[name].read_text(encoding="utf-8"))
    if "human_performance" in inputs:  # issue 35: the human performance round
        facts["human_performance"] = json.loads(
            inputs["human_performance"].read_text(encoding="utf-8")
        )
    for name, r in rounds.items():
        if name:
            facts[name] = annotation_facts(r, pd.read_parquet(r.annotations), ctx.simulated)
    write_release(ctx, facts, tables, texts, {}, transient=("artifacts_md",))
    return facts
