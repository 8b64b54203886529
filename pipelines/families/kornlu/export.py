"""The KorSTS / KorNLI release (``export``) and the card's facts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, declares
from pipelines.families.kornlu.card import table_figures
from pipelines.families.kornlu.sources import (
    HALVES,
    KORSTS_META,
)
from pipelines.rebuild.export import CARD_FILES, export_code, export_outcome, export_settings

# ----------------------------------------------------------------------------- export


def korsts_records(pairs: pd.DataFrame) -> dict[str, list[dict]]:
    """The KorSTS layout (``genre filename year id score sentence1 sentence2``, the
    release's TSV columns) per split, plus ``license``; metadata the source lacks is
    empty."""
    out: dict[str, list[dict]] = {}
    for r in pairs.sort_values("row").itertuples(index=False):
        out.setdefault(r.split, []).append({
            **{k: str(getattr(r, k, "") or "") for k in KORSTS_META},
            "score": float(r.label), "sentence1": r.ko1, "sentence2": r.ko2,
            "license": r.license,
        })  # fmt: skip
    return out


def kornli_records(pairs: pd.DataFrame) -> dict[str, list[dict]]:
    """The KorNLI layout (``sentence1 sentence2 gold_label``) per split, plus
    ``license``."""
    out: dict[str, list[dict]] = {}
    for r in pairs.sort_values("row").itertuples(index=False):
        out.setdefault(r.split, []).append(
            {
                "sentence1": r.ko1,
                "sentence2": r.ko2,
                "gold_label": str(r.label),
                "license": r.license,
            }
        )
    return out


RECORDS = {"korsts": korsts_records, "kornli": kornli_records}  # the release layout per kind


def tsv(records: list[dict], spreadsheet_safe: bool = True) -> str:
    """Records as the releases' TSV: a header, tab-separated, no quoting (a tab or a
    line break inside a field becomes a blank; with ``spreadsheet_safe`` a text cell a
    spreadsheet would run as a formula gets a leading ``'``, pipelines.core.spreadsheet)."""
    from pipelines.core.spreadsheet import delimited

    if not records:
        return ""
    cols = [c for c in records[0] if c != "license"]

    def clean(v: object) -> str:
        text = f"{v:.3f}" if isinstance(v, float) else str(v)
        return " ".join(text.split())  # the written cells' whitespace squeezed

    rows = ([clean(r[c]) for c in cols] for r in records)
    return delimited(rows, cols, spreadsheet_safe=spreadsheet_safe)


def export_inputs(ctx: RunContext, arg: str = "") -> dict[str, Path]:
    """The files the KorSTS / KorNLI release and card are made from."""
    out = ctx.out
    inputs = {n: out / "qa" / f"{n}.parquet" for n in ("dropped", "review", "sentences")}
    inputs["pairs"] = out / "relabel" / "pairs.parquet"
    inputs["relabel"] = out / "relabel" / "relabel.json"
    inputs["qa"] = out / "qa" / "qa.json"
    inputs["translate"] = out / "translate" / "translate.json"
    # no round when every split is machine translated only (Ham et al. 2020, 3.1: train)
    for h in HALVES if ctx.recipe.translation.any_postedit else ():
        for r in ("postedit", "crosscheck"):
            inputs[f"{r}-{h}"] = out / "annotate" / f"{r}-{h}.parquet"
    return inputs


@declares(
    reads=export_inputs,
    writes=lambda ctx, arg: {n: ctx.out / "dataset" / n for n in CARD_FILES},
    # the trained translator's held-out figures are the card's
    settings=lambda ctx, arg: [
        *export_settings(ctx, arg),
        ctx.steps.get("mt-model", {}).get("heldout"),
    ],
    code=export_code,
)
def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dataset in the KorSTS or KorNLI layout per split (``<split>.tsv`` as the
    release, ``.jsonl`` and ``.parquet`` with ``license``) and the data card ->
    OUT/dataset."""
    from pipelines.core.io import outputs_current, write_outputs
    from pipelines.export import data_card
    from pipelines.export.card_facts import release_facts
    from pipelines.export.guards import guard_release
    from pipelines.export.public_eval import overlap
    from pipelines.export.records import jsonl

    kind = ctx.task
    inputs = export_inputs(ctx, arg)
    # from the declaration: its key, and its inputs' SHA-256 (read once)
    key, dataset, hashes = ctx.cache.key, ctx.cache.folder, ctx.cache.digests
    pairs = pd.read_parquet(inputs["pairs"])
    records = RECORDS[kind.name](pairs)
    names = [f"{s}.{e}" for s in records for e in ("tsv", "jsonl", "parquet")]
    names += CARD_FILES
    if outputs_current(dataset, key, names):
        facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
        hit = True
    else:
        facts = card_facts_of(ctx, pairs, records, hashes)
        tables = {f"{s}.parquet": pd.DataFrame(rows) for s, rows in records.items()}
        corpora = [(c.name, ctx.recipe.corpus_path(c)) for c in ctx.recipe.corpora]
        facts.update(release_facts(tables, facts["export"]["files"], kind.hub))
        facts["public_eval"] = overlap(tables, facts["export"]["files"], corpora)
        # issue 51: an empty split or one class refused before any write
        facts["degenerate"] = guard_release(facts, ctx.recipe, f"{ctx.recipe_path}: {dataset}")
        card = data_card.render_card(facts, kind.card(facts))
        safe = ctx.recipe.export.spreadsheet_safe
        texts = {f"{s}.tsv": tsv(rows, safe) for s, rows in records.items()}
        texts.update({f"{s}.jsonl": jsonl(rows) for s, rows in records.items()})
        texts.update(card.texts)
        write_outputs(dataset, key, tables, {"card.json": facts}, texts, card.figures)
        hit = False
    return export_outcome(facts, hit, dataset, Rows("pair", len(pairs), len(pairs)))


def card_facts_of(ctx: RunContext, pairs: pd.DataFrame, records: dict[str, list[dict]],
                  hashes: dict[str, str]) -> dict:  # fmt: skip
    """The card's facts, in the shape the shared card reads (``pipelines.export``)."""
    from pipelines.export import card_facts
    from pipelines.export.card_facts import annotation_facts, licence_facts, round_server

    recipe, out, kind = ctx.recipe, ctx.out, ctx.task
    qa = json.loads((out / "qa" / "qa.json").read_text(encoding="utf-8"))
    translate = json.loads((out / "translate" / "translate.json").read_text(encoding="utf-8"))
    dropped = pd.read_parquet(out / "qa" / "dropped.parquet")
    review = pd.read_parquet(out / "qa" / "review.parquet")
    all_pairs = pd.read_parquet(out / "translate" / "pairs.parquet")
    stages = [
        {"stage": "read", "unit": "pair", "in": len(all_pairs), "kept": len(all_pairs),
         "dropped_total": 0, "dropped": {}},
        {"stage": "qa", "unit": "pair", "in": len(all_pairs), "kept": len(pairs),
         "dropped_total": len(dropped), "dropped": value_counts(dropped["reason"]),
         "corpora": {s: {"in": int((all_pairs["source"] == s).sum()),
                         "kept": int((pairs["source"] == s).sum()),
                         "dropped": value_counts(dropped.loc[dropped["source"] == s, "reason"])}
                     for s in all_pairs["source"].unique()}},
    ]  # fmt: skip
    ingest = {"stages": stages, "corpora": {translate_src: {
        "documents_in": len(all_pairs), "sentences_kept": translate["sentences"]}
        for translate_src in all_pairs["source"].unique()}}  # fmt: skip
    rounds = kind.rounds(ctx)
    released = sum(len(v) for v in records.values())
    gold = pairs.rename(columns={"pair_id": "item_id"})
    facts = {
        "task": kind.title,
        "task_kind": kind.name,
        "paper_agreement": None,
        "recipe": recipe.model_dump(mode="json", exclude={"base_dir"}),
        "ingest": ingest,
        "dates": {},
        "classifier_cards": {},
        "items": translate,
        "translation_qa": qa,
        "review": review.head(30).astype(str).to_dict(orient="records"),
        "mt_model": ctx.steps.get("mt-model", {}),
        "split": {"rule": "source", "splits": {s: len(v) for s, v in records.items()},
                  "settings": {}},  # fmt: skip
        "agreement": {},
        "labels": card_facts.label_facts(gold, gold, gold),
        # the pairs read, then the rebuild's steps (qa among them: not twice)
        "funnel": card_facts.funnel({"stages": stages[:1]}, ctx.steps, released),
        "export": {"layout": kind.layout, "files": {f"{s}.tsv": len(v) for s, v in
                                                    records.items()},
                   # the reference's sentences are released too (the targets of post-editing)
                   "licence": licence_facts(recipe, pd.DataFrame(
                       {"source": [name for part in recipe.translation.parts()
                                   for name in (part.source, part.reference)]}
                   ).dropna())},
        "provenance": {
            "recipe": recipe.name,
            **card_facts.provenance(ctx.recipe_path,
                                    {name: round_server(r) for name, r in rounds.items()}),
            "models": str(ctx.steps.get("mt-model", {}).get("model") or
                          (recipe.translation.translator.model if recipe.translation.translator
                           else "translation memory only")),
            "benchforge rebuild": "flows/rebuild.py, pipelines/families/kornlu/",
            "inputs (sha256, first 12)": ", ".join(f"{k} {h[:12]}" for k, h in hashes.items()),
        },
    }  # fmt: skip
    # Ham et al. 2020, Table 1 / Table 3: pairs and words per split, beside the paper's
    facts["paper_table"] = table_figures(kind.name, records)
    facts["relabelling"] = json.loads(
        (out / "relabel" / "relabel.json").read_text(encoding="utf-8")
    )
    for name, r in rounds.items():
        if not r.annotations.is_file():  # a relabel round with no flagged pair
            continue
        table_ = pd.read_parquet(r.annotations)
        facts[name or "annotation"] = annotation_facts(r, table_, ctx.simulated)
    facts["annotation"] = facts.pop("postedit-a", None) or MT_ONLY_ROUND
    return facts


# the card's main round when no split is post-edited (Ham et al. 2020, 3.1: the training
# sets are machine translated only): nobody annotated anything
MT_ONLY_ROUND = {"config": "none (machine translation only)", "server": "none",
                 "project": "none", "overlap": 0, "annotators": 0, "annotations": 0,
                 "skipped": 0, "simulated": False, "simulate": None, "timeframe": {},
                 "mt_only": True}  # fmt: skip
