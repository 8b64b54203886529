"""The Prefect pairing flow: an ingest run's sentences in, STS sentence pairs out.

Orchestration only; the stages live in ``pipelines/`` (gsm, rtt, metapairs, pairing).
One task per corpus and method, each cached by a key built from the ingest run's
manifest key, the recipe's settings for that method, the seed and the source of
``pipelines/``: rerunning recomputes nothing, and changing the RTT checks re-checks the
round trips without translating again (the SQLite translation cache answers).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from prefect import flow, get_run_logger, task

from flows.ingest import CACHE_OPTIONS, INGEST_CODE, code_fingerprint
from pipelines.core.io import folder_stamp, output_lock, read_manifest, write_outputs
from pipelines.core.recipe import Recipe, load_recipe, settings_key
from pipelines.core.stage import REJECT_COLUMNS, value_counts
from pipelines.pairing.pairs import (
    PAIR_COLUMNS,
    PairingError,
    gsm_pairs,
    metadata_pairs_for,
    rtt_pairs,
    sample_pools,
    with_metadata,
)
from pipelines.pairing.settings import GsmSpec, MetadataSpec, PairingSettings, RttSettings
from pipelines.pairing.translate import make_translator

# what the pairs depend on besides the ingest's code: the pairing methods and translators
PAIR_CODE = (*INGEST_CODE, "pipelines.pairing")


@task(name="gsm", **CACHE_OPTIONS)
def gsm_task(
    key: str, pool: pd.DataFrame, spec: GsmSpec, metric: str, seed: int, lang: str
) -> tuple:
    return gsm_pairs(pool, spec, metric, seed, lang)


@task(name="metadata", **CACHE_OPTIONS)
def metadata_task(
    key: str, corpus: pd.DataFrame, spec: MetadataSpec, seed: int, lang: str
) -> tuple:
    return metadata_pairs_for(corpus, spec, seed, lang)


@task(name="rtt", **CACHE_OPTIONS)
def rtt_task(
    key: str, sample: pd.DataFrame, settings: RttSettings, base_dir: str, cache: str, lang: str
) -> tuple:
    assert settings.forward is not None  # checked by the recipe
    forward = make_translator(settings.forward, base_dir, cache)
    backward = make_translator(settings.backward, base_dir, cache) if settings.backward else forward
    pairs, rejects, stats = rtt_pairs(sample, forward, backward, settings, lang)
    stats["translations_cached"] = getattr(forward, "hits", 0)
    stats["translations_made"] = getattr(forward, "misses", 0)
    if backward is not forward:
        stats["translations_cached"] += getattr(backward, "hits", 0)
        stats["translations_made"] += getattr(backward, "misses", 0)
    return pairs, rejects, stats


def load_input(folder: Path) -> tuple[pd.DataFrame, str]:
    """The sentences (with document metadata) of a finished ingest run, and its key."""
    try:
        manifest = read_manifest(folder)
    except ValueError as exc:
        raise PairingError(f"{exc}; run `benchforge ingest` into it first") from exc
    sentences = pd.read_parquet(folder / "sentences.parquet")
    documents = pd.read_parquet(folder / "documents.parquet")
    return with_metadata(sentences, documents), str(manifest["key"])


def _model_stamp(settings: RttSettings, base_dir: str) -> list:
    """What identifies the translators' checkpoints: path, size and mtime of each file."""
    stamp = []
    for spec in (settings.forward, settings.backward):
        if spec is None or spec.backend != "transformers":
            continue
        stamp.append(folder_stamp((Path(base_dir) / str(spec.model)).expanduser()))
    return stamp


@flow(name="benchforge-pair")
def pair_flow(recipe_path: str, out_dir: str, input_dir: str, seed: int | None = None) -> dict:
    """Build the recipe's pairs from the ingest output in ``input_dir`` into ``out_dir``."""
    logger = get_run_logger()
    recipe = load_recipe(recipe_path)
    pairing: PairingSettings | None = recipe.pairing
    if pairing is None:
        raise PairingError(f"{recipe_path}: the recipe has no 'pairing' section")
    seed = pairing.seed if seed is None else seed
    out = Path(out_dir)
    sentences, input_key = load_input(Path(input_dir))
    code = code_fingerprint(PAIR_CODE)
    cache = (
        recipe.resolve(pairing.rtt.cache)
        if pairing.rtt.cache
        else out / ".cache" / "translations.sqlite"
    )
    jobs: list[tuple[str, str, object]] = []
    keys: list[str] = []
    for spec in pairing.corpora:
        corpus = sentences[sentences["corpus"] == spec.corpus].reset_index(drop=True)
        if corpus.empty:
            raise PairingError(f"{input_dir}: no sentences of corpus {spec.corpus!r} to pair")
        corpus_spec = next((c for c in recipe.corpora if c.name == spec.corpus), None)
        lang = recipe.corpus_language(corpus_spec) if corpus_spec else recipe.language
        base = settings_key(code, input_key, spec.corpus, seed, lang)
        rtt_sample, pool = sample_pools(corpus, spec, seed)
        if spec.gsm:
            key = settings_key("gsm", base, spec, pairing.metric)
            jobs.append(
                (
                    spec.corpus,
                    "gsm",
                    gsm_task.submit(key, pool, spec.gsm, pairing.metric, seed, lang),
                )
            )
            keys.append(key)
        if spec.metadata:
            key = settings_key("metadata", base, spec.metadata)
            jobs.append(
                (
                    spec.corpus,
                    "metadata",
                    metadata_task.submit(key, corpus, spec.metadata, seed, lang),
                )
            )
            keys.append(key)
        if spec.rtt:
            key = settings_key(
                "rtt", base, spec, pairing.rtt, _model_stamp(pairing.rtt, recipe.base_dir)
            )
            future = rtt_task.submit(
                key, rtt_sample, pairing.rtt, recipe.base_dir, str(cache), lang
            )
            jobs.append((spec.corpus, "rtt", future))
            keys.append(key)

    pairs, rejects = [], []
    stats: dict = {"recipe": recipe.name, "input": str(input_dir), "seed": seed, "corpora": {}}
    tasks = {"computed": 0, "cached": 0}
    for corpus, method, future in jobs:
        result = future.result()
        pairs.append(result[0])
        if len(result[1]):  # every method returns (pairs, rejects, stats)
            rejects.append(result[1])
        stats["corpora"].setdefault(corpus, {})[method] = result[-1]
        tasks["cached" if future.state.name == "Cached" else "computed"] += 1
        logger.info("%s %s: %d pairs", corpus, method, len(result[0]))
    table = pd.concat(pairs, ignore_index=True) if pairs else pd.DataFrame(columns=PAIR_COLUMNS)
    dropped = (
        pd.concat(rejects, ignore_index=True) if rejects else pd.DataFrame(columns=REJECT_COLUMNS)
    )
    stats["pairs"] = value_counts(table["method"])
    stats["total_pairs"] = len(table)
    key = settings_key("pair", keys)
    stats["cache_key"] = key
    written = write_outputs(
        out, key, {"pairs.parquet": table, "rejects.parquet": dropped}, {"stats.json": stats}
    )
    logger.info("outputs %s in %s", "written" if written else "unchanged", out)
    return {"stats": stats, "tasks": tasks, "written": written, "out_dir": str(out)}


def run_pair(
    recipe_path: Path, out_dir: Path, input_dir: Path | None = None, seed: int | None = None
) -> dict:
    """Run ingest when no input is given, then the pairing flow (inside a Prefect server),
    holding OUT's lock."""
    recipe = load_recipe(recipe_path)
    if recipe.pairing is None:
        raise PairingError(f"{recipe_path}: the recipe has no 'pairing' section")
    out_dir.mkdir(parents=True, exist_ok=True)
    with output_lock(out_dir):  # one run at a time writes into OUT
        return _pair(recipe_path, recipe, out_dir, input_dir, seed)


def _pair(recipe_path: Path, recipe: Recipe, out_dir: Path, input_dir: Path | None,
          seed: int | None) -> dict:  # fmt: skip
    from flows.ingest import run_ingest
    from flows.runtime import result_storage

    ingest_report = None
    if input_dir is None and recipe.pairing.input:
        input_dir = recipe.resolve(recipe.pairing.input)
    if input_dir is None:
        input_dir = out_dir / "ingest"
        ingest_report = run_ingest(recipe_path, input_dir)
    with result_storage(out_dir):
        report = pair_flow(
            str(Path(recipe_path).resolve()), str(out_dir.resolve()), str(input_dir), seed
        )
    report["ingest"] = ingest_report
    return report
