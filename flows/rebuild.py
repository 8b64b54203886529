"""``benchforge rebuild RECIPE``: the main job, one Prefect flow from corpora to a
released dataset and its data card.

Steps (each a Prefect task or subflow whose output is persisted under OUT; a finished
step whose inputs and settings have not changed is skipped on a rerun):

1. ``pairs``    ingest (read, clean, segment, noise, PII, dedup, classifiers) and pairing
               (``flows.ingest``, ``flows.pair``) -> OUT/pairs
2. ``items``    the seeded sample that goes to annotators -> OUT/items
3. ``push``     Label Studio project with the recipe's interface and overlap; items
               already there are not imported again (no duplicate tasks on a rerun)
4. ``simulate`` only when the recipe (or ``--simulate``) asks: posts the missing simulated
               annotations
5. ``wait``     until every task has its annotations; on timeout the run stops (exit 3)
               and the same command resumes it later
6. ``pull``     every annotation as a long table -> OUT/annotate/annotations.parquet
7. ``agree``    the agreement rule -> OUT/agree
8. ``split``    the split rule and the artifact report -> OUT/split
9. ``export``   the KLUE-layout dataset and the data card -> OUT/dataset

With no ``LABEL_STUDIO_URL`` set, the local Label Studio server is started (installed
on first use) and left running for the next rebuild; ``benchforge labelstudio down``
stops it. Killing the run at any point and running the same command again finishes the
job; the same seed gives the same dataset.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict
from pathlib import Path

import pandas as pd
from prefect import flow, get_run_logger, task

from pipelines.io import (
    outputs_current,
    sha256_file,
    write_json,
    write_outputs,
    write_parquet,
)
from pipelines.recipe import Recipe, RecipeError, load_recipe

STEPS = ["pairs", "items", "push", "simulate", "wait", "pull", "agree", "split", "export"]


class AnnotationsPending(RuntimeError):
    """The annotators have not finished; the message says how far they are."""


def _key(*parts: object) -> str:
    return json.dumps(parts, sort_keys=True, default=str)


def _check_recipe(recipe: Recipe, path: Path) -> None:
    missing = [s for s in ("pairing", "annotation", "agreement", "split") if not getattr(recipe, s)]
    if missing:
        raise RecipeError(f"{path}: a rebuild recipe needs the sections {missing}")
    config = recipe.resolve(recipe.annotation.config)
    if not config.is_file():
        raise RecipeError(f"{path}: annotation.config: {config} not found")


@task(name="rebuild-items")
def items_task(recipe: Recipe, pairs_dir: Path, out: Path, simulated: bool) -> dict:
    from pipelines.items import sts_items

    pairs_file = pairs_dir / "pairs.parquet"
    key = _key(sha256_file(pairs_file), recipe.items.model_dump(), simulated)
    if outputs_current(out, key, ["items.parquet", "items.json"]):
        return {**json.loads((out / "items.json").read_text(encoding="utf-8")), "cached": True}
    items = sts_items(pd.read_parquet(pairs_file), recipe.items, simulated)
    info = {
        "items": len(items),
        "spec": recipe.items.model_dump(),
        "per_method": {k: int(v) for k, v in items["method"].value_counts().sort_index().items()},
        "per_source": {k: int(v) for k, v in items["source"].value_counts().sort_index().items()},
        "simulated_truth": "sim_similarity" in items.columns,
    }
    write_outputs(out, key, {"items.parquet": items}, {"items.json": info})
    return {**info, "cached": False}


@task(name="rebuild-agree")
def agree_task(recipe: Recipe, annotations: Path, out: Path) -> dict:
    from pipelines.agreement import AgreementSettings, run_agree

    settings = AgreementSettings(**recipe.agreement.model_dump())
    return run_agree(annotations, settings, out)


@task(name="rebuild-split")
def split_task(recipe: Recipe, gold: Path, items: Path, out: Path, seed: int | None) -> dict:
    from pipelines.splits import SplitSettings, run_split

    options = recipe.split.model_dump()
    if seed is not None:
        options["seed"] = seed
    return run_split(gold, SplitSettings(**options), out, items)


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


@task(name="rebuild-export")
def export_task(recipe: Recipe, out: Path, steps: dict, project: str, simulated: bool) -> dict:
    from pipelines.data_card import render_card
    from pipelines.export import jsonl, klue_sts_records

    inputs = {
        "gold": out / "agree" / "gold.parquet",
        "dropped": out / "agree" / "dropped.parquet",
        "items": out / "items" / "items.parquet",
        "splits": out / "split" / "splits.parquet",
        "annotations": out / "annotate" / "annotations.parquet",
        "artifacts": out / "split" / "artifacts.json",
        "agreement": out / "agree" / "agreement.json",
        "pairs_stats": out / "pairs" / "stats.json",
        "ingest_stats": out / "pairs" / "ingest" / "stats.json",
    }
    template = Path(__file__).resolve().parent.parent / "data_cards" / "TEMPLATE.md"
    key = _key({k: sha256_file(p) for k, p in inputs.items()}, sha256_file(template),
               recipe.export.model_dump(), recipe.model_dump(exclude={"base_dir"}))  # fmt: skip
    dataset = out / "dataset"
    names = [f"{s}.{ext}" for s in ("train", "dev", "test") for ext in ("jsonl", "parquet")]
    names += ["DATA_CARD.md", "card.json"]
    if outputs_current(dataset, key, names):
        return {**json.loads((dataset / "card.json").read_text(encoding="utf-8"))["export"],
                "cached": True}  # fmt: skip
    dropped = pd.read_parquet(inputs["dropped"])
    screened = set(dropped.loc[dropped["kind"] == "annotator", "id"].astype(str))
    items = pd.read_parquet(inputs["items"]).drop(columns=["sim_similarity"], errors="ignore")
    splits = pd.read_parquet(inputs["splits"])
    annotations = pd.read_parquet(inputs["annotations"])
    records = klue_sts_records(
        pd.read_parquet(inputs["gold"]), items, splits, annotations, screened,
        recipe.export.guid_prefix or recipe.name,
    )  # fmt: skip
    licenses = sorted(set(items["license"]))
    files = {}
    tables, texts = {}, {}
    for split, rows in records.items():
        texts[f"{split}.jsonl"] = jsonl(rows)
        tables[f"{split}.parquet"] = pd.DataFrame(rows)
        files[f"{split}.jsonl"] = len(rows)
    merged = splits.merge(items[["item_id", "source"]], on="item_id")
    per_source = {
        split: ", ".join(f"{s} {n}" for s, n in part["source"].value_counts().sort_index().items())
        for split, part in merged.groupby("split")
    }
    artifacts = json.loads(inputs["artifacts"].read_text(encoding="utf-8"))
    artifacts_md = (out / "split" / "artifacts.md").read_text(encoding="utf-8")
    recipe_facts = recipe.model_dump(mode="json", exclude={"base_dir"})
    facts = {
        "task": "KLUE-STS-style semantic textual similarity (KLUE 3.2)",
        "recipe": recipe_facts,
        "ingest": json.loads(inputs["ingest_stats"].read_text(encoding="utf-8")),
        "dates": _dates(out / "pairs" / "ingest"),
        "pairs": json.loads(inputs["pairs_stats"].read_text(encoding="utf-8")),
        "classifier_cards": _classifier_cards(recipe),
        "items": steps["items"],
        "annotation": {
            "config": Path(recipe.annotation.config).name,
            "server": "1.23.2" if not os.environ.get("LABEL_STUDIO_URL") else "external",
            "project": project,
            "overlap": recipe.annotation.overlap,
            "annotators": int(annotations["annotator_id"].nunique()),
            "annotations": int(annotations["annotation_id"].nunique()),
            "skipped": int(
                annotations.get("cancelled", pd.Series(dtype=bool)).fillna(False).astype(bool).sum()
            ),
            "simulated": simulated,
            "simulate": recipe.annotation.simulate.model_dump()
            if recipe.annotation.simulate
            else None,
        },  # fmt: skip
        "agreement": json.loads(inputs["agreement"].read_text(encoding="utf-8")),
        "split": artifacts,
        "split_sources": per_source,
        "artifacts_md": artifacts_md,
        "export": {
            "layout": recipe.export.layout,
            "files": files,
            "license": " AND ".join(licenses),
        },
        "provenance": {
            "recipe": recipe.name,
            "benchforge rebuild": "flows/rebuild.py",
            "inputs (sha256, first 12)": ", ".join(
                f"{k} {sha256_file(p)[:12]}" for k, p in inputs.items()
            ),
        },
    }
    card = render_card(facts, template)
    facts.pop("artifacts_md")
    write_outputs(dataset, key, tables, {"card.json": facts}, {**texts, "DATA_CARD.md": card})
    return {**facts["export"], "cached": False}


def _line(step: str, index: int, seconds: float, summary: str) -> None:
    print(f"[{index}/{len(STEPS)}] {step:<8} {seconds:6.1f} s  {summary}", flush=True)


@flow(name="benchforge-rebuild")
def rebuild_flow(
    recipe_path: str, out_dir: str, simulate: bool | None = None, seed: int | None = None,
    port: int | None = None,
) -> dict:  # fmt: skip
    """The whole rebuild (see the module docstring); returns the per-step summary."""
    from flows.annotate import pull_task, push_task, simulate_task, wait_task
    from flows.pair import run_pair
    from pipelines import ls_server

    logger = get_run_logger()
    path = Path(recipe_path)
    recipe = load_recipe(path)
    _check_recipe(recipe, path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ann = recipe.annotation
    simulated = bool(ann.simulate) if simulate is None else simulate
    sim = ann.simulate or None
    if simulated and sim is None:
        from pipelines.recipe import SimulateSpec

        sim = SimulateSpec(annotators=max(ann.overlap, 3))
    project = ann.project or recipe.name
    steps: dict = {}
    state_file = out / "rebuild.json"

    def record(name: str, started: float, result: dict, summary: str) -> None:
        steps[name] = {"seconds": round(time.perf_counter() - started, 1), "summary": summary,
                       **{k: v for k, v in result.items() if k != "payloads"}}  # fmt: skip
        _line(name, STEPS.index(name) + 1, steps[name]["seconds"], summary)
        write_json({"recipe": str(path), "steps": steps}, state_file)

    t = time.perf_counter()
    report = run_pair(path, out / "pairs", None, seed)
    record("pairs", t, {"pairs": report["stats"]["pairs"], "written": report["written"]},
           f"{report['stats']['total_pairs']:,} pairs "
           f"({'written' if report['written'] else 'unchanged'})")  # fmt: skip

    t = time.perf_counter()
    info = items_task(recipe, out / "pairs", out / "items", simulated)
    record("items", t, info, f"{info['items']:,} items"
           f"{' (cached)' if info['cached'] else ''}: {info['per_method']}")  # fmt: skip

    if not os.environ.get("LABEL_STUDIO_URL"):
        server = ls_server.up(port or ls_server.DEFAULT_PORT)
        logger.info("Label Studio at %s", server.get("url"))
    t = time.perf_counter()
    pushed = push_task(out / "items" / "items.parquet", recipe.resolve(ann.config), project,
                       ann.overlap)  # fmt: skip
    record("push", t, pushed, f"project {project!r}: {pushed['created']:,} tasks created, "
           f"{pushed['existing']:,} already there")  # fmt: skip

    t = time.perf_counter()
    if simulated:
        posted = simulate_task(project, sim.annotators, sim.seed)
        record("simulate", t, posted, f"{posted.get('posted', 0):,} annotations posted by "
               f"{sim.annotators} simulated annotators")  # fmt: skip
    else:
        record("simulate", t, {"skipped": True}, "real annotators (no simulation)")

    t = time.perf_counter()
    # simulated annotations are all posted by now: a short wait is enough
    waited = wait_task(project, min(ann.timeout, 60.0) if simulated else ann.timeout,
                       min(ann.poll, 1.0) if simulated else ann.poll)  # fmt: skip
    record("wait", t, waited, f"{waited.get('finished', '?')}/{waited.get('tasks', '?')} "
           "tasks finished")  # fmt: skip
    if not waited["done"]:
        raise AnnotationsPending(
            f"annotators have finished {waited.get('finished')} of {waited.get('tasks')} "
            f"tasks in project {project!r}; run the same command again to resume"
        )

    t = time.perf_counter()
    annotations = out / "annotate" / "annotations.parquet"
    annotations.parent.mkdir(parents=True, exist_ok=True)
    pulled = pull_task(project, annotations)
    # a project may hold tasks of an earlier sample: only this rebuild's items count
    table = pd.read_parquet(annotations)
    wanted = set(pd.read_parquet(out / "items" / "items.parquet")["item_id"])
    other = table[~table["item_id"].astype(str).isin(wanted)]
    if len(other):
        table = table[table["item_id"].astype(str).isin(wanted)]
        write_parquet(table, annotations)
        pulled.update(rows=len(table), annotations=int(table["annotation_id"].nunique()))
    pulled["other_items_ignored"] = int(other["item_id"].nunique())
    record("pull", t, pulled, f"{pulled['annotations']:,} annotations, {pulled['rows']:,} rows"
           + (f"; {pulled['other_items_ignored']} items of the project not in this rebuild "
              "ignored" if len(other) else ""))  # fmt: skip

    t = time.perf_counter()
    agreed = agree_task(recipe, annotations, out / "agree")
    alpha = agreed["krippendorff_alpha"].get("interval", agreed["krippendorff_alpha"])
    record("agree", t, {"gold_items": agreed["gold_items"], "written": agreed["written"]},
           f"{agreed['gold_items']:,} of {agreed['items']:,} items kept; alpha "
           f"(interval) {alpha}")  # fmt: skip

    t = time.perf_counter()
    split = split_task(recipe, out / "agree" / "gold.parquet", out / "items" / "items.parquet",
                       out / "split", seed)  # fmt: skip
    record("split", t, {"splits": split["splits"], "written": split["written"]},
           f"{split['splits']}")  # fmt: skip

    t = time.perf_counter()
    exported = export_task(recipe, out, steps, project, simulated)
    record("export", t, exported, f"{exported['files']} -> {out / 'dataset'}")
    return {"out": str(out), "steps": steps, "simulated": simulated}


def run_rebuild(
    recipe_path: Path, out_dir: Path, simulate: bool | None = None, seed: int | None = None,
    port: int | None = None,
) -> dict:  # fmt: skip
    """Run the flow (inside ``flows.runtime.prefect_server``)."""
    from flows.runtime import result_storage

    out_dir.mkdir(parents=True, exist_ok=True)
    with result_storage(out_dir):
        return rebuild_flow(str(Path(recipe_path).resolve()), str(out_dir.resolve()), simulate,
                            seed, port)  # fmt: skip


__all__ = ["STEPS", "AnnotationsPending", "rebuild_flow", "run_rebuild", "asdict"]
