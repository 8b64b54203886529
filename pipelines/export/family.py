"""The export of a family that writes its own release (KorNLU, KoBBQ, JGLUE, KoBEST):
the step's declaration (:func:`family_export`: its inputs and each round's pulled
annotations, the recipe, the card template and the code of ``pipelines.export`` and of
the family's card) gives its cache key, as for every step; the card's shared facts; the
files, the card and its figures written atomically together.

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

import pandas as pd

from pipelines.core.io import sha256_file
from pipelines.core.steps import RunContext, declares

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
    ctx: object,
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
    from pipelines.core.io import outputs_current, write_outputs
    from pipelines.export import card_facts, data_card
    from pipelines.export.guards import guard_release

    # from the step's declaration: its key, and its inputs' SHA-256 (read once)
    key, dataset, hashes = ctx.cache.key, ctx.cache.folder, ctx.cache.digests
    if outputs_current(dataset, key, [*names, *CARD_FILES]):
        return json.loads((dataset / "card.json").read_text(encoding="utf-8")), True
    facts = {**base_facts(ctx, hashes, rounds, files, sources, rebuild), **facts_of(ctx, inputs)}
    tables, texts, jsons = build(facts)
    facts.update(card_facts.release_facts(tables, facts["export"]["files"], ctx.task.hub))
    # an empty split, one class or a degenerate tagger: refused before any write
    facts["degenerate"] = guard_release(facts, ctx.recipe, f"{ctx.recipe_path}: {dataset}")
    card = data_card.render_card(facts, ctx.task.card(facts))
    write_outputs(
        dataset,
        key,
        tables,
        {"card.json": facts, **jsons},
        {**texts, **card.texts},
        card.figures,
    )
    return facts, False


def json_inputs(inputs: dict[str, Path], skip: tuple[str, ...] = ()) -> dict:
    """The JSON files among a family export's inputs (each step's info), read, by input
    name: the ``family`` facts its card renders; ``skip``: inputs read another way."""
    return {name: json.loads(p.read_text(encoding="utf-8"))
            for name, p in inputs.items() if p.suffix == ".json" and name not in skip}  # fmt: skip
