"""``benchforge rebuild RECIPE``: the main job, one Prefect flow from corpora to a
released dataset and its data card.

The recipe's ``export.layout`` picks the chain; every step is a Prefect task or subflow
whose output is persisted under OUT, and a finished step whose inputs and settings have
not changed is skipped on a rerun.

``klue-sts`` (``STEPS``):

1. ``pairs``    ingest (read, clean, segment, noise, PII, dedup, classifiers) and pairing
               (``flows.ingest``, ``flows.pair``) -> OUT/pairs
2. ``items``    the seeded sample that goes to annotators -> OUT/items
3. ``push``     Label Studio project with the recipe's interface and overlap; items
               already there are not imported again (no duplicate tasks on a rerun);
               with simulated annotators, new tasks arrive with their simulated
               annotations in the same bulk import
4. ``simulate`` only when the recipe (or ``--simulate``) asks: posts the simulated
               annotations still missing (after a kill between push and simulate)
5. ``wait``     until every task has its annotations; on timeout the run stops (exit 3)
               and the same command resumes it later
6. ``pull``     every annotation as a long table -> OUT/annotate/annotations.parquet
7. ``agree``    the agreement rule -> OUT/agree
8. ``split``    the split rule and the artifact report -> OUT/split
9. ``export``   the KLUE-layout dataset and the data card -> OUT/dataset

``klue-nli`` (``NLI_STEPS``, KLUE 3.3.1): ``ingest`` -> ``premises`` (KLUE's premise
rules, pipelines.tasks.nli_premises) -> the writing round (``push-writing``, ``simulate-writing``,
``wait-writing``, ``pull-writing``: one writer per premise, project
``<name>-writing``) -> ``hypotheses`` (three pairs per written premise,
pipelines.tasks.nli) -> the validation round (push, simulate, wait, pull) -> ``agree``
(the writer's label as a vote) -> ``split`` -> ``export``.

``klue-ynat`` (``TC_STEPS``, KLUE 3.1.1): ``ingest`` -> ``items`` (headlines,
pipelines.tasks.ynat) -> push, simulate, wait, pull -> agree -> split -> export.

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

from pipelines.core.io import (
    output_lock,
    outputs_current,
    sha256_file,
    write_json,
    write_outputs,
    write_parquet,
)
from pipelines.core.preflight import check_rebuild_recipe
from pipelines.core.recipe import Recipe, load_recipe
from pipelines.core.stage import value_counts

STEPS = ["pairs", "items", "push", "simulate", "wait", "pull", "agree", "split", "export"]
NLI_STEPS = ["ingest", "premises", "push-writing", "simulate-writing", "wait-writing",
             "pull-writing", "hypotheses", "push", "simulate", "wait", "pull", "agree", "split",
             "export"]  # fmt: skip
TC_STEPS = ["ingest", "items", "push", "simulate", "wait", "pull", "agree", "split", "export"]


class AnnotationsPending(RuntimeError):
    """The annotators have not finished; the message says how far they are."""


def _key(*parts: object) -> str:
    return json.dumps(parts, sort_keys=True, default=str)


@task(name="rebuild-items")
def items_task(recipe: Recipe, pairs_dir: Path, out: Path, simulated: bool) -> dict:
    from pipelines.pairing.pairs import pair_rejects
    from pipelines.tasks.sts import sts_items

    pairs_file = pairs_dir / "pairs.parquet"
    key = _key(sha256_file(pairs_file), recipe.items.model_dump(), simulated)
    names = ["items.parquet", "rejects.parquet", "items.json"]
    if outputs_current(out, key, names):
        return {**json.loads((out / "items.json").read_text(encoding="utf-8")), "cached": True}
    pairs = pd.read_parquet(pairs_file)
    items = sts_items(pairs, recipe.items, simulated)
    left = pairs[~pairs["pair_id"].astype(str).isin(set(items["item_id"]))]
    rejects = pair_rejects(left, "items", "not_sampled")
    info = {
        "in": len(pairs),
        "items": len(items),
        "dropped": value_counts(rejects["reason"]),
        "spec": recipe.items.model_dump(),
        "per_method": {k: int(v) for k, v in items["method"].value_counts().sort_index().items()},
        "per_source": {k: int(v) for k, v in items["source"].value_counts().sort_index().items()},
        "simulated_truth": "sim_similarity" in items.columns,
    }
    write_outputs(out, key, {"items.parquet": items, "rejects.parquet": rejects},
                  {"items.json": info})  # fmt: skip
    return {**info, "cached": False}


@task(name="rebuild-agree")
def agree_task(recipe: Recipe, annotations: Path, out: Path) -> dict:
    from pipelines.agreement.rules import AgreementSettings, run_agree

    options = recipe.agreement.model_dump()
    if options.get("values") is None:
        options["values"] = interface_answers(recipe, options.get("answer_field"))
    return run_agree(annotations, AgreementSettings(**options), out)


def interface_answers(recipe: Recipe, field: str | None) -> list[str] | None:
    """The options of the recipe interface's single-choice answer control ``field`` (or
    its only answer control): the values the agreement step accepts."""
    from pipelines.annotation.label_config import parse_label_config

    control = parse_label_config(recipe.resolve(recipe.annotation.config)).answer_control(field)
    if control and control.single and control.options:
        return list(control.options)
    return None


@task(name="rebuild-split")
def split_task(recipe: Recipe, gold: Path, items: Path, out: Path, seed: int | None) -> dict:
    from pipelines.splits.rules import SplitSettings, run_split

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


def _annotation_facts(config: str, project: str, table: pd.DataFrame, overlap: int,
                      simulated: bool, sim: object | None) -> dict:  # fmt: skip
    cancelled = table.get("cancelled", pd.Series(dtype=bool)).fillna(False).astype(bool)
    return {
        "config": Path(config).name,
        "server": "1.23.2" if not os.environ.get("LABEL_STUDIO_URL") else "external",
        "project": project,
        "overlap": overlap,
        "annotators": int(table["annotator_id"].nunique()),
        "annotations": int(table["annotation_id"].nunique()),
        "skipped": int(table.loc[cancelled, "annotation_id"].nunique()),
        "simulated": simulated,
        "simulate": sim.model_dump() if simulated and sim else None,
    }


@task(name="rebuild-export")
def export_task(recipe: Recipe, out: Path, steps: dict, project: str, simulated: bool,
                annotations: Path) -> dict:  # fmt: skip
    from pipelines.export import data_card
    from pipelines.export import records as export
    from pipelines.export.data_card import render_card
    from pipelines.export.records import (
        jsonl,
        klue_nli_records,
        klue_sts_records,
        klue_ynat_records,
    )

    nli = recipe.export.layout == "klue-nli"
    tc = recipe.export.layout == "klue-ynat"
    ingest_dir = out / "ingest" if nli or tc else out / "pairs" / "ingest"
    inputs = {
        "gold": out / "agree" / "gold.parquet",
        "dropped": out / "agree" / "dropped.parquet",
        "items": out / "items" / "items.parquet",
        "splits": out / "split" / "splits.parquet",
        "annotations": annotations,
        "artifacts": out / "split" / "artifacts.json",
        "agreement": out / "agree" / "agreement.json",
        "ingest_stats": ingest_dir / "stats.json",
    }
    if nli:
        inputs["premises"] = out / "premises" / "premises.json"
        inputs["hypotheses"] = out / "items" / "items.json"
        inputs["writing"] = out / "annotate" / "writing.parquet"
    elif tc:
        inputs["titles"] = out / "items" / "items.json"
    else:
        inputs["pairs_stats"] = out / "pairs" / "stats.json"
    template = Path(__file__).resolve().parents[1] / "data_cards" / "TEMPLATE.md"
    code = [sha256_file(Path(m.__file__)) for m in (data_card, export)]  # a new layout or card
    hashes = {k: sha256_file(p) for k, p in inputs.items()}
    key = _key(hashes, sha256_file(template), code,
               recipe.export.model_dump(), recipe.model_dump(exclude={"base_dir"}))  # fmt: skip
    dataset = out / "dataset"
    names = [f"{s}.{ext}" for s in ("train", "dev", "test") for ext in ("jsonl", "parquet")]
    names += ["DATA_CARD.md", "card.json"]
    if outputs_current(dataset, key, names):
        return {**json.loads((dataset / "card.json").read_text(encoding="utf-8"))["export"],
                "cached": True}  # fmt: skip
    items = pd.read_parquet(inputs["items"])
    items = items.drop(columns=[c for c in items.columns if c.startswith("sim_")])
    splits = pd.read_parquet(inputs["splits"])
    table = pd.read_parquet(inputs["annotations"])
    gold = pd.read_parquet(inputs["gold"])
    prefix = recipe.export.guid_prefix or recipe.name
    ann = recipe.annotation
    if nli:
        records = klue_nli_records(gold, items, splits, table, prefix)
    elif tc:
        records = klue_ynat_records(gold, items, splits, table, prefix)
    else:
        dropped = pd.read_parquet(inputs["dropped"])
        screened = set(dropped.loc[dropped["kind"] == "annotator", "id"].astype(str))
        records = klue_sts_records(gold, items, splits, table, screened, prefix)
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
    validation = table[table["role"] != "author"] if "role" in table.columns else table
    facts = {
        "task": "KLUE-NLI-style natural language inference (KLUE 3.3)" if nli
        else "YNAT-style topic classification of news headlines (KLUE 3.1)" if tc
        else "KLUE-STS-style semantic textual similarity (KLUE 3.2)",
        "recipe": recipe_facts,
        "ingest": json.loads(inputs["ingest_stats"].read_text(encoding="utf-8")),
        "dates": _dates(ingest_dir),
        "classifier_cards": _classifier_cards(recipe),
        "items": steps["hypotheses" if nli else "items"],
        "annotation": _annotation_facts(ann.config, project, validation, ann.overlap,
                                        simulated, _simulation(ann, simulated, ann.overlap)),
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
            "inputs (sha256, first 12)": ", ".join(f"{k} {h[:12]}" for k, h in hashes.items()),
        },
    }  # fmt: skip
    if nli:
        writing = ann.writing
        facts["premises"] = json.loads(inputs["premises"].read_text(encoding="utf-8"))
        facts["writing"] = _annotation_facts(
            writing.config, writing.project or f"{recipe.name}-writing",
            pd.read_parquet(inputs["writing"]), 1, simulated,
            _simulation(writing, simulated, 1),
        )  # fmt: skip
    elif tc:
        facts["titles"] = json.loads(inputs["titles"].read_text(encoding="utf-8"))
    else:
        facts["pairs"] = json.loads(inputs["pairs_stats"].read_text(encoding="utf-8"))
    card = render_card(facts, template)
    facts.pop("artifacts_md")
    write_outputs(dataset, key, tables, {"card.json": facts}, {**texts, "DATA_CARD.md": card})
    return {**facts["export"], "cached": False}


def _line(step: str, index: int, total: int, seconds: float, summary: str) -> None:
    print(f"[{index}/{total}] {step:<16} {seconds:6.1f} s  {summary}", flush=True)


class _Steps:
    """The per-step record: a progress line each, and OUT/rebuild.json rewritten."""

    def __init__(self, names: list[str], path: Path, state_file: Path) -> None:
        self.names, self.path, self.state_file, self.steps = names, path, state_file, {}

    def __call__(self, name: str, started: float, result: dict, summary: str) -> None:
        self.steps[name] = {"seconds": round(time.perf_counter() - started, 1),
                            "summary": summary,
                            **{k: v for k, v in result.items() if k != "payloads"}}  # fmt: skip
        _line(name, self.names.index(name) + 1, len(self.names), self.steps[name]["seconds"],
              summary)  # fmt: skip
        write_json({"recipe": str(self.path), "steps": self.steps}, self.state_file)


def _annotation_round(
    record: _Steps, suffix: str, items: Path, config: Path, project: str, overlap: int,
    sim: object | None, pool: str, timeout: float, poll: float, out: Path,
) -> dict:  # fmt: skip
    """push -> simulate (when ``sim``) -> wait -> pull of one Label Studio round; the
    pulled table keeps only the items of ``items`` (a project may hold an earlier
    sample's tasks). Raises AnnotationsPending when the annotators are not done."""
    from flows.annotate import pull_task, push_task, simulate_task, wait_task

    t = time.perf_counter()
    # simulated annotators: new tasks are imported with their annotations (bulk)
    pushed = push_task(items, config, project, overlap, sim.annotators if sim else None,
                       sim.seed if sim else 0, pool)  # fmt: skip
    record(f"push{suffix}", t, pushed, f"project {project!r}: {pushed['created']:,} tasks "
           f"created, {pushed['existing']:,} already there" + (
               f"; {pushed['annotations']:,} simulated annotations imported with them"
               if sim else ""))  # fmt: skip

    t = time.perf_counter()
    if sim is not None:
        posted = simulate_task(project, sim.annotators, sim.seed, pool)
        record(f"simulate{suffix}", t, posted, f"{posted.get('posted', 0):,} missing "
               f"annotations posted by {sim.annotators} simulated {pool}s")  # fmt: skip
    else:
        record(f"simulate{suffix}", t, {"skipped": True}, "real annotators (no simulation)")

    t = time.perf_counter()
    # simulated annotations are all posted by now: a short wait is enough
    waited = wait_task(project, min(timeout, 60.0) if sim else timeout,
                       min(poll, 1.0) if sim else poll)  # fmt: skip
    record(f"wait{suffix}", t, waited, f"{waited.get('finished', '?')}/"
           f"{waited.get('tasks', '?')} tasks finished")  # fmt: skip
    if not waited["done"]:
        raise AnnotationsPending(
            f"annotators have finished {waited.get('finished')} of {waited.get('tasks')} "
            f"tasks in project {project!r}; run the same command again to resume"
        )

    t = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    pulled = pull_task(project, out)
    table = pd.read_parquet(out)
    wanted = set(pd.read_parquet(items)["item_id"].astype(str))
    other = table[~table["item_id"].astype(str).isin(wanted)]
    if len(other):
        table = table[table["item_id"].astype(str).isin(wanted)]
        write_parquet(table, out)
        pulled.update(rows=len(table), annotations=int(table["annotation_id"].nunique()))
    pulled["other_items_ignored"] = int(other["item_id"].nunique())
    record(f"pull{suffix}", t, pulled, f"{pulled['annotations']:,} annotations, "
           f"{pulled['rows']:,} rows" + (f"; {pulled['other_items_ignored']} items of the "
           "project not in this rebuild ignored" if len(other) else ""))  # fmt: skip
    return pulled


def _simulation(ann: object, simulated: bool, fallback: int) -> object | None:
    from pipelines.core.recipe import SimulateSpec

    if not simulated:
        return None
    return ann.simulate or SimulateSpec(annotators=max(fallback, 3))


def _agree_split_export(
    record: _Steps, recipe: Recipe, out: Path, annotations: Path, seed: int | None,
    project: str, simulated: bool,
) -> None:  # fmt: skip
    t = time.perf_counter()
    agreed = agree_task(recipe, annotations, out / "agree")
    levels = agreed["krippendorff_alpha"]
    level = "interval" if levels.get("interval") is not None else "nominal"
    record("agree", t, {"gold_items": agreed["gold_items"], "written": agreed["written"]},
           f"{agreed['gold_items']:,} of {agreed['items']:,} items kept; alpha "
           f"({level}) {levels.get(level)}")  # fmt: skip

    t = time.perf_counter()
    split = split_task(recipe, out / "agree" / "gold.parquet", out / "items" / "items.parquet",
                       out / "split", seed)  # fmt: skip
    record("split", t, {"splits": split["splits"], "written": split["written"]},
           f"{split['splits']}")  # fmt: skip

    t = time.perf_counter()
    exported = export_task(recipe, out, record.steps, project, simulated, annotations)
    record("export", t, exported, f"{exported['files']} -> {out / 'dataset'}")


def _start_server(port: int | None) -> None:
    from pipelines.annotation import ls_server

    if not os.environ.get("LABEL_STUDIO_URL"):
        server = ls_server.up(port)
        get_run_logger().info("Label Studio at %s", server.get("url"))


def _ingest_step(record: _Steps, path: Path, out: Path) -> None:
    from flows.ingest import run_ingest

    t = time.perf_counter()
    report = run_ingest(path, out / "ingest")
    kept = sum(c.get("sentences_kept", 0) for c in report["stats"].get("corpora", {}).values())
    record("ingest", t, {"written": report["written"], "sentences": kept},
           f"{kept:,} sentences ({'written' if report['written'] else 'unchanged'})")  # fmt: skip


def _one_round(record: _Steps, recipe: Recipe, out: Path, simulated: bool, project: str,
               port: int | None, seed: int | None) -> dict:  # fmt: skip
    """One annotation round over OUT/items, then agree, split and export."""
    ann = recipe.annotation
    _start_server(port)
    annotations = out / "annotate" / "annotations.parquet"
    _annotation_round(record, "", out / "items" / "items.parquet", recipe.resolve(ann.config),
                      project, ann.overlap, _simulation(ann, simulated, ann.overlap),
                      "annotator", ann.timeout, ann.poll, annotations)  # fmt: skip
    _agree_split_export(record, recipe, out, annotations, seed, project, simulated)
    return {"out": str(out), "steps": record.steps, "simulated": simulated}


def _sts(path: Path, recipe: Recipe, out: Path, simulate: bool | None, seed: int | None,
         port: int | None) -> dict:  # fmt: skip
    from flows.pair import run_pair

    ann = recipe.annotation
    simulated = bool(ann.simulate) if simulate is None else simulate
    project = ann.project or recipe.name
    record = _Steps(STEPS, path, out / "rebuild.json")

    t = time.perf_counter()
    report = run_pair(path, out / "pairs", None, seed)
    record("pairs", t, {"pairs": report["stats"]["pairs"], "written": report["written"]},
           f"{report['stats']['total_pairs']:,} pairs "
           f"({'written' if report['written'] else 'unchanged'})")  # fmt: skip

    t = time.perf_counter()
    info = items_task(recipe, out / "pairs", out / "items", simulated)
    record("items", t, info, f"{info['items']:,} items"
           f"{' (cached)' if info['cached'] else ''}: {info['per_method']}")  # fmt: skip

    return _one_round(record, recipe, out, simulated, project, port, seed)


@task(name="rebuild-premises")
def premises_task(recipe: Recipe, ingest_dir: Path, out: Path, simulated: bool) -> dict:
    from pipelines.tasks.nli import premise_items
    from pipelines.tasks.nli_premises import select_premises

    sentences = ingest_dir / "sentences.parquet"
    spec = recipe.items
    key = _key(sha256_file(sentences), spec.model_dump(), simulated)
    if outputs_current(out, key, ["premises.parquet", "rejected.parquet", "premises.json"]):
        return {**json.loads((out / "premises.json").read_text(encoding="utf-8")), "cached": True}
    chosen, rejected = select_premises(
        pd.read_parquet(sentences), spec.premises, spec.sample, spec.stratify, spec.seed
    )
    items = premise_items(chosen, spec.simulate_truth, simulated)
    info = {
        "premises": len(items),
        "sentences": len(chosen) + len(rejected),
        "rules": spec.premises.model_dump(),
        "spec": spec.model_dump(exclude={"premises"}),
        "rejected": {k: int(v) for k, v in rejected["reason"].value_counts().sort_index().items()},
        "passing_per_source": {
            k: int(v)
            for k, v in pd.concat(
                [chosen["corpus"], rejected.loc[rejected["reason"] == "not_sampled", "corpus"]]
            )
            .value_counts()
            .sort_index()
            .items()
        },  # fmt: skip
        "per_source": {k: int(v) for k, v in items["source"].value_counts().sort_index().items()},
        "simulated_truth": "sim_entailment" in items.columns,
    }
    write_outputs(out, key, {"premises.parquet": items, "rejected.parquet": rejected},
                  {"premises.json": info})  # fmt: skip
    return {**info, "cached": False}


@task(name="rebuild-hypotheses")
def hypotheses_task(writing: Path, premises: Path, out: Path, simulated: bool) -> dict:
    from pipelines.tasks.nli import hypothesis_items

    key = _key(sha256_file(writing), sha256_file(premises), simulated)
    names = ["items.parquet", "dropped_premises.parquet", "items.json"]
    if outputs_current(out, key, names):
        return {**json.loads((out / "items.json").read_text(encoding="utf-8")), "cached": True}
    items, dropped = hypothesis_items(pd.read_parquet(writing), pd.read_parquet(premises),
                                      simulated)  # fmt: skip
    info = {
        "items": len(items),
        "premises_written": int(items["premise_id"].nunique()) if len(items) else 0,
        "premises_dropped": {k: int(v) for k, v in dropped["reason"].value_counts().items()},
        "per_source": {k: int(v) for k, v in items["source"].value_counts().sort_index().items()},
        "per_method": {k: int(v) for k, v in items["author_label"].value_counts().items()},
    }
    write_outputs(out, key, {"items.parquet": items, "dropped_premises.parquet": dropped},
                  {"items.json": info})  # fmt: skip
    return {**info, "cached": False}


def _nli(path: Path, recipe: Recipe, out: Path, simulate: bool | None, seed: int | None,
         port: int | None) -> dict:  # fmt: skip
    from pipelines.tasks.nli import with_authors

    ann = recipe.annotation
    writing = ann.writing
    simulated = bool(ann.simulate or writing.simulate) if simulate is None else simulate
    project = ann.project or recipe.name
    record = _Steps(NLI_STEPS, path, out / "rebuild.json")

    _ingest_step(record, path, out)

    t = time.perf_counter()
    info = premises_task(recipe, out / "ingest", out / "premises", simulated)
    record("premises", t, info, f"{info['premises']:,} premises of {info['sentences']:,} "
           f"sentences{' (cached)' if info['cached'] else ''}: {info['per_source']}")  # fmt: skip

    _start_server(port)
    written = out / "annotate" / "writing.parquet"
    _annotation_round(record, "-writing", out / "premises" / "premises.parquet",
                      recipe.resolve(writing.config), writing.project or f"{recipe.name}-writing",
                      1, _simulation(writing, simulated, 1), "writer", ann.timeout, ann.poll,
                      written)  # fmt: skip

    t = time.perf_counter()
    hyp = hypotheses_task(written, out / "premises" / "premises.parquet", out / "items",
                          simulated)  # fmt: skip
    record("hypotheses", t, hyp, f"{hyp['items']:,} pairs from {hyp['premises_written']:,} "
           f"premises; premises dropped {hyp['premises_dropped']}")  # fmt: skip

    validation = out / "annotate" / "validation.parquet"
    _annotation_round(record, "", out / "items" / "items.parquet", recipe.resolve(ann.config),
                      project, ann.overlap, _simulation(ann, simulated, ann.overlap),
                      "annotator", ann.timeout, ann.poll, validation)  # fmt: skip
    votes = out / "annotate" / "annotations.parquet"
    hypotheses = pd.read_parquet(out / "items" / "items.parquet")
    table = with_authors(pd.read_parquet(validation), hypotheses)
    if not votes.is_file() or not pd.read_parquet(votes).equals(table):
        write_parquet(table, votes)
    _agree_split_export(record, recipe, out, votes, seed, project, simulated)
    return {"out": str(out), "steps": record.steps, "simulated": simulated}


@task(name="rebuild-titles")
def titles_task(recipe: Recipe, ingest_dir: Path, out: Path, simulated: bool) -> dict:
    from pipelines.core.stage import split_by_reason
    from pipelines.tasks.ynat import title_item_id, title_items

    sentences = ingest_dir / "sentences.parquet"
    spec = recipe.items
    key = _key(sha256_file(sentences), spec.model_dump(), simulated)
    names = ["items.parquet", "rejects.parquet", "items.json"]
    if outputs_current(out, key, names):
        return {**json.loads((out / "items.json").read_text(encoding="utf-8")), "cached": True}
    frame = pd.read_parquet(sentences)
    items = title_items(frame, spec.sample, spec.stratify, spec.seed, spec.simulate_truth,
                        simulated)  # fmt: skip
    chosen = frame["sent_id"].map(title_item_id).isin(set(items["item_id"]))
    rejects = split_by_reason("items", "sentence", frame,
                              chosen.map({True: None, False: "not_sampled"})).rejects()  # fmt: skip
    info = {
        "items": len(items),
        "sentences": len(frame),
        "dropped": value_counts(rejects["reason"]),
        "spec": spec.model_dump(exclude={"premises"}),
        "per_source": {k: int(v) for k, v in items["source"].value_counts().sort_index().items()},
        "dated": int(items["date"].notna().sum()),
        "simulated_truth": (
            {k: int(v) for k, v in items["sim_topic1"].value_counts().sort_index().items()}
            if "sim_topic1" in items.columns else None
        ),
    }  # fmt: skip
    write_outputs(out, key, {"items.parquet": items, "rejects.parquet": rejects},
                  {"items.json": info})  # fmt: skip
    return {**info, "cached": False}


def _tc(path: Path, recipe: Recipe, out: Path, simulate: bool | None, seed: int | None,
        port: int | None) -> dict:  # fmt: skip
    ann = recipe.annotation
    simulated = bool(ann.simulate) if simulate is None else simulate
    project = ann.project or recipe.name
    record = _Steps(TC_STEPS, path, out / "rebuild.json")

    _ingest_step(record, path, out)

    t = time.perf_counter()
    info = titles_task(recipe, out / "ingest", out / "items", simulated)
    record("items", t, info, f"{info['items']:,} headlines of {info['sentences']:,}"
           f"{' (cached)' if info['cached'] else ''}: {info['per_source']}")  # fmt: skip

    return _one_round(record, recipe, out, simulated, project, port, seed)


@flow(name="benchforge-rebuild")
def rebuild_flow(
    recipe_path: str, out_dir: str, simulate: bool | None = None, seed: int | None = None,
    port: int | None = None,
) -> dict:  # fmt: skip
    """The whole rebuild (see the module docstring); returns the per-step summary."""
    path = Path(recipe_path)
    recipe = load_recipe(path)
    check_rebuild_recipe(recipe, path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if recipe.export.layout == "klue-nli":
        return _nli(path, recipe, out, simulate, seed, port)
    if recipe.export.layout == "klue-ynat":
        return _tc(path, recipe, out, simulate, seed, port)
    return _sts(path, recipe, out, simulate, seed, port)


def run_rebuild(
    recipe_path: Path, out_dir: Path, simulate: bool | None = None, seed: int | None = None,
    port: int | None = None,
) -> dict:  # fmt: skip
    """Run the flow (inside ``flows.runtime.prefect_server``)."""
    from flows.runtime import result_storage

    out_dir.mkdir(parents=True, exist_ok=True)
    with output_lock(out_dir), result_storage(out_dir):  # one run at a time writes into OUT
        return rebuild_flow(str(Path(recipe_path).resolve()), str(out_dir.resolve()), simulate,
                            seed, port)  # fmt: skip


__all__ = [
    "NLI_STEPS",
    "STEPS",
    "TC_STEPS",
    "AnnotationsPending",
    "rebuild_flow",
    "run_rebuild",
    "asdict",
]
