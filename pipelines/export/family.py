"""The export of a family that writes its own release (KoBBQ, JGLUE): one cache key over
its inputs, its code, the recipe and the card template; the card's shared facts; the
files, the card and its figures written atomically together.

``export_dataset(ctx, inputs, rounds, build, facts_of, files, names)``:

- ``inputs``: the files the release is made from (name -> path under OUT), hashed into
  the key and listed in the card's provenance; each round's pulled annotations are
  added;
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

CARD_FILES = ["DATA_CARD.md", "DATA_CARD.html", "card.json"]


def inline_counts(counts: dict) -> str:
    """``{"a": 1, "b": 2}`` as ``a 1, b 2`` (``none`` when empty), for a card's prose."""
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def round_paragraph(name: str, r: dict, unit: str = "item") -> str:
    """One Label Studio round of a family card: config, project, annotations, people."""
    return (
        f"Label Studio round `{name}` (`{r['config']}`, project `{r['project']}`): "
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
    ctx: object,
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
    from pipelines.core.io import outputs_current, sha256_file, write_outputs
    from pipelines.core.steps import code_hash
    from pipelines.export import data_card

    inputs = dict(inputs)
    for name, r in rounds.items():
        inputs[f"{name}-annotations"] = r.annotations
    hashes = {n: sha256_file(p) for n, p in inputs.items() if Path(p).is_file()}
    key = json.dumps(
        [
            hashes,
            [code_hash(f) for f in (build, facts_of, data_card.render_card, ctx.task.card)],
            ctx.recipe.model_dump(exclude={"base_dir"}),
            sha256_file(data_card.TEMPLATE),
        ],
        sort_keys=True,
        default=str,
    )
    dataset = ctx.out / "dataset"
    if outputs_current(dataset, key, [*names, *CARD_FILES]):
        return json.loads((dataset / "card.json").read_text(encoding="utf-8")), True
    facts = {**base_facts(ctx, hashes, rounds, files, sources, rebuild), **facts_of(ctx, inputs)}
    card = data_card.render_card(facts, ctx.task.card(facts))
    tables, texts, jsons = build(facts)
    write_outputs(
        dataset,
        key,
        tables,
        {"card.json": facts, **jsons},
        {**texts, "DATA_CARD.md": card.markdown, "DATA_CARD.html": card.html},
        card.figures,
    )
    return facts, False
