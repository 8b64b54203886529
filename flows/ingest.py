"""The Prefect ingestion flow: read -> clean -> segment -> noise -> pii -> dedup -> write.

Orchestration only; the stages live in ``pipelines/``. Corpora are read whole (so bad
input stops the run before anything is written), cut into shards, and the shards run
in parallel on the Dask task runner. Every task is cached by a key built from what it
depends on: the corpus file's SHA-256, the corpus entry of the recipe, the settings
that stage uses and the source of the stages it runs (``INGEST_CODE`` and what it
imports, not the families'). Rerunning a recipe recomputes
nothing; changing one corpus recomputes that corpus and the dedup; changing a PII
setting leaves sentence splitting cached.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from prefect import flow, get_run_logger, task
from prefect.futures import as_completed
from tqdm.auto import tqdm

from pipelines.core.code import code_key
from pipelines.core.io import folder_stamp, output_lock, write_outputs
from pipelines.core.line_files import InputError
from pipelines.core.recipe import CorpusSpec, load_recipe, settings_key
from pipelines.core.stage import StageResult, StageStats, value_counts
from pipelines.ingest.readers import file_fingerprint, read_documents
from pipelines.ingest.segment import SENTENCE_COLUMNS
from pipelines.ingest.shards import (
    CLEANING_FIELDS,
    ShardOutput,
    check_continuity,
    filter_sentences,
    process_documents,
)
from pipelines.preflight import check_ingest_inputs
from pipelines.quality.dedup import deduplicate
from pipelines.quality.settings import ClassifierSettings, DedupSettings, NoiseSettings, PiiSettings
from pipelines.quality.toxic import detector_folders, filter_toxic, load_detectors, skip_reasons

# The code the ingest's results depend on (pipelines.core.code.code_key: these and what
# they import): editing a stage or a language pack reruns the ingest; editing a family,
# the annotation or the export does not.
INGEST_CODE = ("pipelines.ingest", "pipelines.quality.dedup", "pipelines.quality.toxic",
               "pipelines.lang", "pipelines.core.recipe", "pipelines.core.io")  # fmt: skip


def code_fingerprint(roots: tuple[str, ...] = INGEST_CODE) -> str:
    """Hash of the source the cached results depend on (``roots`` and their imports)."""
    return code_key(roots)


def _by_key(context, parameters: dict) -> str:  # noqa: ANN001 - Prefect's task run context
    return parameters["key"]


CACHE_OPTIONS = {"cache_key_fn": _by_key, "persist_result": True, "cache_expiration": None}


@task(name="read", **CACHE_OPTIONS)
def read_task(key: str, corpus: CorpusSpec, path: str) -> StageResult:
    return read_documents(corpus, Path(path))


@task(name="clean+segment", **CACHE_OPTIONS)
def segment_task(key: str, docs: pd.DataFrame, noise: NoiseSettings, lang: str) -> ShardOutput:
    return process_documents(docs, noise, lang)


@task(name="noise+pii", **CACHE_OPTIONS)
def filter_task(
    key: str, shard: ShardOutput, noise: NoiseSettings, pii: PiiSettings, lang: str
) -> ShardOutput:
    return filter_sentences(shard.kept, noise, pii, lang)


@task(name="dedup", **CACHE_OPTIONS)
def dedup_task(key: str, shards: list[ShardOutput], settings: DedupSettings) -> StageResult:
    parts = [s.kept for s in shards]
    sentences = (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=SENTENCE_COLUMNS)
    )
    return deduplicate(sentences, settings, progress=True)


@task(name="classify", **CACHE_OPTIONS)
def classify_task(
    key: str,
    sentences: pd.DataFrame,
    settings: ClassifierSettings,
    models: dict[str, str],
    skips: dict[str, str],
) -> StageResult:
    return filter_toxic(sentences, settings, load_detectors(settings, models), progress=True,
                        skips=skips)  # fmt: skip


def pii_kind_counts(rejects: pd.DataFrame) -> dict[str, int]:
    """How many dropped sentences contained each kind of PII (a sentence may hold several),
    whichever stage dropped them: the ``pii:<kind>`` flags of every reject."""
    flags = rejects["flags"].dropna().str.split(",").explode()
    kinds = flags[flags.str.startswith("pii:")].str.removeprefix("pii:")
    return value_counts(kinds)


def _summary(stats: dict, corpora: list[str]) -> dict:
    by_stage = {s["stage"]: s for s in stats["stages"]}
    out = {}
    for name in corpora:

        def count(stage: str, field: str, name: str = name) -> int:
            return by_stage.get(stage, {}).get("corpora", {}).get(name, {}).get(field, 0)

        out[name] = {
            "documents_in": count("read", "in"),
            "documents_kept": count("segment", "kept"),
            "sentences_in": count("noise", "in"),
            "sentences_kept": count("classify" if "classify" in by_stage else "dedup", "kept"),
        }
    return out


@flow(name="benchforge-ingest")
def ingest_flow(recipe_path: str, out_dir: str, overrides: dict | None = None) -> dict:
    """Ingest a recipe's corpora into ``out_dir``; return the run report."""
    logger = get_run_logger()
    recipe = load_recipe(recipe_path, overrides)
    out = Path(out_dir)
    code = code_fingerprint()
    noise, pii, dedup = recipe.filters.noise, recipe.filters.pii, recipe.filters.dedup
    cleaning = noise.model_dump(include=set(CLEANING_FIELDS))
    filtering = noise.model_dump(exclude=set(CLEANING_FIELDS))
    shard_size = recipe.runner.shard_size

    # check_ingest_inputs (run_ingest) has checked the corpora and checkpoints already;
    # a built-in detector not trained yet is trained here (a few seconds, then cached)
    classifiers = recipe.filters.classifiers
    models = {n: str(p) for n, p in detector_folders(classifiers, recipe.resolve).items()}
    skips = skip_reasons(classifiers, recipe) if models else {}
    paths = {c.name: recipe.corpus_path(c) for c in recipe.corpora}
    fingerprints = {c.name: file_fingerprint(paths[c.name]) for c in recipe.corpora}
    read_keys = [settings_key("read", code, c, fingerprints[c.name]) for c in recipe.corpora]
    reads = [
        read_task.submit(key, c, str(paths[c.name]))
        for key, c in zip(read_keys, recipe.corpora, strict=True)
    ]
    read_results: list[StageResult] = [f.result() for f in reads]

    shard_keys, segments, filters = [], [], []
    for read_key, read, corpus in zip(read_keys, read_results, recipe.corpora, strict=True):
        docs = read.kept
        lang = recipe.corpus_language(corpus)
        for start in range(0, len(docs), shard_size):
            shard = docs.iloc[start : start + shard_size].reset_index(drop=True)
            seg_key = settings_key("segment", read_key, code, start, shard_size, cleaning, lang)
            fil_key = settings_key("filter", seg_key, code, filtering, pii)
            seg = segment_task.submit(seg_key, shard, noise, lang)
            segments.append(seg)
            filters.append(filter_task.submit(fil_key, seg, noise, pii, lang))
            shard_keys.append(fil_key)
    logger.info("%d corpora, %d shards of up to %d documents", len(reads), len(filters), shard_size)
    for _ in tqdm(as_completed(filters), total=len(filters), desc="shards", unit="shard"):
        pass
    dedup_key = settings_key("dedup", code, shard_keys, dedup)
    dedup_future = dedup_task.submit(dedup_key, filters, dedup)
    deduped = dedup_future.result()
    final, final_key, classified, classify_future = deduped, dedup_key, None, None
    if models:
        final_key = settings_key(
            "classify",
            dedup_key,
            code,
            classifiers,
            {n: folder_stamp(Path(p)) for n, p in models.items()},
            skips,
        )
        classify_future = classify_task.submit(final_key, deduped.kept, classifiers, models, skips)
        classified = final = classify_future.result()

    seg_out: list[ShardOutput] = [f.result() for f in segments]
    fil_out: list[ShardOutput] = [f.result() for f in filters]
    documents = pd.concat(
        [s.documents for s in seg_out] or [read_results[0].kept.iloc[0:0]], ignore_index=True
    )
    rejects = pd.concat(
        [r.rejects() for r in read_results]
        + [s.rejects for s in seg_out]
        + [s.rejects for s in fil_out]
        + [deduped.rejects()]
        + ([classified.rejects()] if classified else []),
        ignore_index=True,
    )
    stats = StageStats.merge(
        [r.stats() for r in read_results]
        + [s.stats for s in seg_out]
        + [s.stats for s in fil_out]
        + [deduped.stats()]
        + ([classified.stats()] if classified else [])
    ).to_dict()
    corpora = [c.name for c in recipe.corpora]
    stats["corpora"] = _summary(stats, corpora)
    stats["pii_kinds"] = pii_kind_counts(rejects)
    stats["classify"] = {
        "detectors": {n: Path(p).name for n, p in models.items()},
        "skipped_corpora": skips,
    }
    stats["recipe"] = recipe.name
    stats["cache_key"] = final_key
    check_continuity(stats, sum(len(s.kept) for s in seg_out))

    states = {
        "read": reads,
        "clean+segment": segments,
        "noise+pii": filters,
        "dedup": [dedup_future],
    }
    if classify_future is not None:
        states["classify"] = [classify_future]
    tasks = {
        name: {
            "cached": sum(f.state.name == "Cached" for f in futures),
            "computed": sum(f.state.name != "Cached" for f in futures),
        }
        for name, futures in states.items()
    }
    if final.kept.empty and not all(c.allow_empty for c in recipe.corpora):
        raise InputError(
            f"{recipe_path}: no sentence is left after the filters ({stats['corpora']}); "
            f"the outputs in {out} are left as they were (see the rejects of a run with "
            "looser filters, or set allow_empty: true on the corpora if that is expected)"
        )
    written = write_outputs(
        out,
        final_key,
        {
            "documents.parquet": documents,
            "sentences.parquet": final.kept,
            "rejects.parquet": rejects,
        },
        {"stats.json": stats},
    )
    logger.info("outputs %s in %s", "written" if written else "unchanged", out)
    return {"stats": stats, "tasks": tasks, "written": written, "out_dir": str(out)}


def run_ingest(recipe_path: Path, out_dir: Path, overrides: dict | None = None) -> dict:
    """Run the flow on the recipe's task runner (inside ``flows.runtime.prefect_server``);
    the corpora and checkpoints are checked first, before the cluster starts."""
    from flows.runtime import dask_task_runner, result_storage

    recipe = load_recipe(recipe_path, overrides)
    check_ingest_inputs(recipe, recipe_path)  # files checked already are not read again
    out_dir.mkdir(parents=True, exist_ok=True)
    with output_lock(out_dir), result_storage(out_dir):  # one run at a time writes into OUT
        runner = dask_task_runner(recipe.runner.workers, recipe.runner.dask_address)
        return ingest_flow.with_options(task_runner=runner)(
            str(Path(recipe_path).resolve()), str(out_dir.resolve()), overrides
        )
