"""The rebuild steps every dataset family shares, registered by name
(``pipelines.core.steps.STEPS``): ``ingest``, ``pairs``, a Label Studio round's
``push``, ``simulate``, ``wait`` and ``pull`` (``push-writing`` is the ``writing``
round's push), ``agree``, ``split`` and ``export``.

They run Prefect subflows or Label Studio operations (``flows.ingest``, ``flows.pair``,
``flows.annotate``), which is why they live in ``flows/``; a family's own steps (its
items, premises, ...) are pure functions in its ``pipelines/tasks`` module. Each reads
what the task kind declares (its rounds, its records, its card section) and none knows a
family by name.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.core.io import (
    outputs_current,
    write_json,
    write_outputs,
    write_parquet,
)
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, declares
from pipelines.export.card_facts import (
    annotation_facts,
    licence_facts,
    round_server,
    server_record,
)
from pipelines.export.family import export_code, export_settings
from pipelines.families import ExportInputs, Round, SharedSteps
from pipelines.families.people import (
    human_files,
    people_files,
    people_screen,
    review_files,
    reviews_of,
)

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class AnnotationsPending(RuntimeError):
    """The annotators have not finished; the message says how far they are."""


@STEPS.register("ingest")
def ingest_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Ingest the recipe's corpora (``flows.ingest``) into OUT/ingest."""
    from flows.ingest import run_ingest

    report = run_ingest(ctx.recipe_path, ctx.out / "ingest")
    kept = sum(c.get("sentences_kept", 0) for c in report["stats"].get("corpora", {}).values())
    return StepOutcome(
        f"{kept:,} sentences ({'written' if report['written'] else 'unchanged'})",
        {"written": report["written"], "sentences": kept},
    )


@STEPS.register("pairs")
def pairs_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Ingest and pair (``flows.pair``, KLUE 3.2.1) into OUT/pairs."""
    from flows.pair import run_pair

    report = run_pair(ctx.recipe_path, ctx.out / "pairs", None, ctx.seed)
    return StepOutcome(
        f"{report['stats']['total_pairs']:,} pairs "
        f"({'written' if report['written'] else 'unchanged'})",
        {"pairs": report["stats"]["pairs"], "written": report["written"]},
    )


def _round(ctx: RunContext, arg: str) -> Round:
    rounds = ctx.task.rounds(ctx)
    if arg not in rounds:
        raise KeyError(f"task kind {ctx.task.name!r} has no annotation round {arg!r}")
    return rounds[arg]


def ensure_server(ctx: RunContext) -> None:
    """Start (or reach) the local Label Studio server once per run, unless
    LABEL_STUDIO_URL names another."""
    from prefect import get_run_logger

    from pipelines.annotation import ls_server

    if os.environ.get("LABEL_STUDIO_URL") or ctx.server_started:
        return
    server = ls_server.up(ctx.port)
    ctx.server_started = True
    get_run_logger().info("Label Studio at %s", server.get("url"))


@STEPS.register("push")
def push_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Create the round's project and import the items not there yet (no duplicate
    tasks); with simulated annotators new tasks carry their annotations (one bulk
    import)."""
    from flows.annotate import push_task

    ensure_server(ctx)
    r = _round(ctx, arg)
    sim = r.simulate
    pushed = push_task(r.items, r.config, r.project, r.overlap,
                       sim.annotators if sim else None, sim.seed if sim else 0, r.pool,
                       sim.careless if sim else None, ctx.reuse_project,
                       sim.unqualified if sim else 0, r.phase, r.guideline)  # fmt: skip
    return StepOutcome(
        f"project {r.project!r}: {pushed['created']:,} tasks created, "
        f"{pushed['existing']:,} already there"
        + (f"; {pushed['annotations']:,} simulated annotations imported with them" if sim else "")
        + (
            f"; {len(pushed['changed']):,} of the tasks there hold other data than their items "
            "(the items changed since they were pushed; see the log)"
            if pushed.get("changed")
            else ""
        ),
        pushed,
    )


@STEPS.register("simulate")
def simulate_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Post the simulated annotations still missing (none after a push that imported
    them); a no-op with real annotators."""
    from flows.annotate import simulate_task

    r = _round(ctx, arg)
    if r.simulate is None:
        return StepOutcome("real annotators (no simulation)", {"skipped": True})
    # the same run's push created every task with its simulated annotations: nothing can
    # be missing, and the whole-project export that would say so is skipped (issue 38)
    pushed = ctx.steps.get(f"push-{arg}" if arg else "push") or {}
    complete = bool(pushed.get("items") and pushed.get("created") == pushed.get("items")
                    and not pushed.get("existing"))  # fmt: skip
    posted = simulate_task(r.project, r.simulate.annotators, r.simulate.seed, r.pool,
                           r.simulate.careless, r.simulate.unqualified, r.phase,
                           complete)  # fmt: skip
    return StepOutcome(
        f"{posted.get('posted', 0):,} missing annotations posted by "
        f"{r.simulate.annotators} simulated {r.pool}s",
        posted,
    )


@STEPS.register("wait")
def wait_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Wait until every task of the round is done; raise AnnotationsPending (exit 3,
    resumable) on timeout."""
    from flows.annotate import wait_task

    r = _round(ctx, arg)
    sim = r.simulate is not None  # simulated annotations are all posted by now
    timeout = min(r.timeout, 60.0) if sim else r.timeout
    if ctx.suspend_waits and not sim:
        timeout = 0.0  # a deployed run suspends instead (flows/suspend.py)
    waited = wait_task(r.project, timeout, min(r.poll, 1.0) if sim else r.poll)
    if not waited["done"]:
        exc = AnnotationsPending(
            f"annotators have finished {waited.get('finished')} of {waited.get('tasks')} "
            f"tasks in project {r.project!r}; run the same command again to resume"
        )
        exc.project, exc.round = r.project, arg  # type: ignore[attr-defined]
        raise exc
    return StepOutcome(f"{waited.get('finished', '?')}/{waited.get('tasks', '?')} tasks finished",
                       waited)  # fmt: skip


@STEPS.register("pull")
def pull_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every annotation of the round as a long table; tasks of other samples in the
    project are left out (and counted)."""
    from flows.annotate import pull_task
    from pipelines.annotation import ls_server

    r = _round(ctx, arg)
    r.annotations.parent.mkdir(parents=True, exist_ok=True)
    pins = ctx.recipe.annotation.value_types if ctx.recipe.annotation else {}
    pulled = pull_task(r.project, r.annotations, pins or None)
    pulled["table_rows"] = pulled.pop("rows")  # not the row contract's `rows`
    version = ls_server.server_version(ls_server.connection())
    write_json({"label_studio": version}, server_record(r))
    table = pd.read_parquet(r.annotations)
    wanted = set(pd.read_parquet(r.items)["item_id"].astype(str))
    other = table[~table["item_id"].astype(str).isin(wanted)]
    if len(other):
        table = table[table["item_id"].astype(str).isin(wanted)]
        write_parquet(table, r.annotations)
        pulled.update(table_rows=len(table), annotations=int(table["annotation_id"].nunique()))
    pulled["other_items_ignored"] = int(other["item_id"].nunique())
    return StepOutcome(
        f"{pulled['annotations']:,} annotations, {pulled['table_rows']:,} rows"
        + (f"; {pulled['other_items_ignored']} items of the project not in this rebuild "
           "ignored" if len(other) else ""),
        pulled,
    )  # fmt: skip


def shared_of(ctx: RunContext) -> SharedSteps:
    """What the shared agree and export steps need of the task kind."""
    if ctx.task.shared is None:
        raise ValueError(
            f"task kind {ctx.task.name!r} runs a shared agree or export step and registers "
            "no SharedSteps (pipelines.families.SharedSteps)"
        )
    return ctx.task.shared


def votes_path(ctx: RunContext) -> Path:
    """The table the agreement step reads: the task kind's (``votes``) or the main
    round's pull."""
    shared = ctx.task.shared
    if shared is not None and shared.votes is not None:
        return shared.votes(ctx)
    return _round(ctx, "").annotations


def _agree_files(ctx: RunContext, arg: str) -> dict[str, Path]:
    agree = ctx.out / "agree"
    files = {"gold": agree / "gold.parquet", "dropped": agree / "dropped.parquet",
             "agreement": agree / "agreement.json"}  # fmt: skip
    if people_files(ctx):
        files["excluded"] = agree / "excluded_annotations.parquet"
    return files


@STEPS.register("agree")
@declares(reads=lambda ctx, arg: {"annotations": votes_path(ctx), **people_files(ctx),
                                  **review_files(ctx)},
          writes=_agree_files)  # fmt: skip
def agree_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's agreement rule (``pipelines.agreement``) -> OUT/agree; values are
    checked against the interface's answer control. With a pilot or control items the
    annotators who did not qualify or fail the controls are screened out first
    (``pipelines.agreement.screening``; their rows in
    OUT/agree/excluded_annotations.parquet)."""
    from pipelines.agreement.rules import recipe_agreement_settings, run_agree

    settings = recipe_agreement_settings(ctx.recipe)
    if settings.values is None:
        settings.values = interface_answers(ctx.recipe, settings.answer_field)
    agreed = run_agree(votes_path(ctx), settings, ctx.out / "agree",
                       interface_value_type(ctx.recipe, settings.answer_field),
                       people_screen(ctx), reviews_of(ctx))  # fmt: skip
    if "krippendorff_alpha" in agreed:
        levels = agreed["krippendorff_alpha"]
        level = "interval" if levels.get("interval") is not None else "nominal"
        headline = f"alpha ({level}) {levels.get(level)}"
    else:
        first = agreed["measures"][0]
        headline = f"{first} {agreed[first]}"
    return StepOutcome(
        f"{agreed['gold_items']:,} of {agreed['items']:,} items kept; {headline}",
        {"gold_items": agreed["gold_items"], "written": agreed["written"]},
        Rows("item", agreed["items"], agreed["gold_items"], agreed["dropped_items"]),
    )


def interface_answers(recipe: Recipe, field: str | None) -> list[str] | None:
    """The options of the recipe interface's single-choice answer control ``field`` (or
    its only answer control): the values the agreement step accepts."""
    from pipelines.annotation.label_config import parse_label_config

    control = parse_label_config(recipe.resolve(recipe.annotation.config)).answer_control(field)
    if control and control.single and control.options:
        return list(control.options)
    return None


def interface_value_type(recipe: Recipe, field: str | None) -> str | None:
    """The value type of the recipe interface's answer control ``field`` (or its only
    one): the recipe's pin, else the type that claims the control; None when the
    interface has several answer controls and no field is named."""
    from pipelines.annotation.label_config import parse_label_config
    from pipelines.annotation.values import value_type_of

    control = parse_label_config(recipe.resolve(recipe.annotation.config)).answer_control(field)
    if control is None:
        return None
    return value_type_of(control, recipe.annotation.value_types.get(control.name)).name


def gold_folder(ctx: RunContext) -> Path:
    """The folder whose gold.parquet and dropped.parquet the split and export read: the
    agreement step's, or the family's final gold step's (``SharedSteps.gold_dir``)."""
    shared = ctx.task.shared
    return ctx.out / (shared.gold_dir if shared is not None else "agree")


def _split_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    return {
        "gold": gold_folder(ctx) / "gold.parquet",
        "items": ctx.out / "items" / "items.parquet",
    }


def _split_writes(ctx: RunContext, arg: str) -> dict[str, Path]:
    split = ctx.out / "split"
    return {"splits": split / "splits.parquet", "artifacts": split / "artifacts.json",
            "artifacts_md": split / "artifacts.md"}  # fmt: skip


@STEPS.register("split")
@declares(reads=_split_reads, writes=_split_writes)
def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule and the artifact report (``pipelines.splits``) ->
    OUT/split."""
    from pipelines.splits.base import recipe_split_settings
    from pipelines.splits.run import run_split

    settings = recipe_split_settings(ctx.recipe, ctx.seed)
    reads = _split_reads(ctx, arg)
    split = run_split(reads["gold"], settings, ctx.out / "split", reads["items"],
                      ctx.recipe.language)  # fmt: skip
    n = sum(split["splits"].values())
    return StepOutcome(f"{split['splits']}", {"splits": split["splits"],
                       "written": split["written"]}, Rows("item", n, n))  # fmt: skip


def _classifier_cards(recipe: Recipe) -> dict:
    cards = {}
    for name, spec in recipe.filters.classifiers.detectors.items():
        metrics = recipe.resolve(spec.model) / "metrics.json"
        if metrics.is_file():
            m = json.loads(metrics.read_text(encoding="utf-8"))
            cards[name] = {"task": m.get("task"), "dev_macro_f1": m.get("dev", {}).get("macro_f1")}
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
        facts = _export(ctx, inputs, hashes, dataset, key, jsonl)
        exported = {**facts["export"], "cached": False}
    n_in = int(pd.read_parquet(inputs["splits"], columns=["item_id"]).shape[0])
    n_out = sum(exported["files"].values())
    return StepOutcome(f"{exported['files']} -> {dataset}", exported,
                       Rows("item", n_in, n_out, {"no_gold_label": n_in - n_out}
                            if n_in != n_out else {}))  # fmt: skip


def _export(ctx: RunContext, inputs: dict, hashes: dict, dataset: Path, key: str,
            jsonl: object) -> dict:  # fmt: skip
    from pipelines.export import card_facts
    from pipelines.export.data_card import render_card
    from pipelines.export.guards import guard_release

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
    facts.update(card_facts.release_facts(tables, files, kind.hub))
    # issue 51: an empty split, one class or a degenerate tagger refused before any write
    facts["degenerate"] = guard_release(facts, recipe, f"{ctx.recipe_path}: {dataset}")
    card = render_card(facts, kind.card(facts))
    facts.pop("artifacts_md")
    write_outputs(dataset, key, tables, {"card.json": facts},
                  {**texts, **card.texts},
                  card.figures)  # fmt: skip
    return facts


__all__ = ["AnnotationsPending"]
