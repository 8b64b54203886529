"""``benchforge translate`` and ``benchforge translators train``: the first steps of a
translated dataset (KorSTS/KorNLI, Ham et al. 2020) on their own."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    translate = sub.add_parser(
        "translate",
        help="translate a recipe's English dataset (memory, then MT) without the rounds",
        description="Run the first steps of a translated-dataset recipe (task korsts or "
        "kornli) as a Prefect flow: train the MT model when the recipe's translation.train "
        "asks for it (OUT/mt-model, once), read the English pairs and the aligned reference, "
        "and translate every distinct sentence: the translation memory first (exact, then "
        "fuzzy above its threshold), the machine translator for the rest, each translation "
        "cached in SQLite (a crash resumes without translating again). Writes "
        "OUT/translate/pairs.parquet and sentences.parquet (each sentence's lineage: "
        "backend, model, memory score and matched source). `benchforge rebuild` runs the "
        "same steps, then the post-editing rounds, QA and export.",
    )
    translate.add_argument("recipe", type=Path, help="a recipe with a translation section")
    translate.add_argument("--out", type=Path, default=None,
                           help="output folder (default: runs/<recipe name>)")  # fmt: skip
    translate.add_argument("--json", action="store_true", help="print the steps' figures as JSON")

    translators = sub.add_parser(
        "translators",
        help="train a machine translator from parallel sentences",
        description="Machine translators for translated datasets and round-trip pairs.",
    )
    tsub = translators.add_subparsers(dest="action", required=True, metavar="ACTION")
    train = tsub.add_parser(
        "train",
        help="train a small Marian model on parallel sentences (CPU or GPU)",
        description="Train a joint sentencepiece vocabulary and a Marian encoder-decoder from "
        "scratch on a TSV/CSV of source and target sentences, keep the epoch with the lowest "
        "held-out loss, score held-out sentences (never trained on) with sacrebleu (chrF, "
        "BLEU, TER), and save a transformers checkpoint with a model card (README.md) and "
        "metrics.json to --out. Uses the GPU (bf16 where supported) when there is one. The "
        "defaults train in about a minute on a 2-core CPU over 2,000 pairs.",
    )
    train.add_argument(
        "--parallel",
        type=Path,
        required=True,
        help="TSV (no quoting) or CSV with a header: source and target columns",
    )
    train.add_argument("--out", type=Path, required=True, help="checkpoint folder (created)")
    train.add_argument("--source-column", default="source", help="source column (default source)")
    train.add_argument("--target-column", default="target", help="target column (default target)")
    train.add_argument("--source-lang", default="en", help="source language code (default en)")
    train.add_argument("--target-lang", default="ko", help="target language code (default ko)")
    for name, kind, doc in (
        ("epochs", int, "training epochs (default 20)"),
        ("lr", float, "peak learning rate (default 1e-3)"),
        ("batch-size", int, "sentence pairs per step (default 32)"),
        ("vocab-size", int, "sentencepiece vocabulary (default 2000)"),
        ("d-model", int, "model width (default 128)"),
        ("layers", int, "encoder and decoder layers each (default 2)"),
        ("heads", int, "attention heads (default 4)"),
        ("ffn-dim", int, "feed-forward width (default 512)"),
        ("heldout", int, "held-out source sentences for the scores (default 100)"),
        ("limit", int, "train on the first N pairs only (quick runs)"),
        ("seed", int, "random seed (default 0)"),
    ):  # fmt: skip
        train.add_argument(f"--{name}", type=kind, default=None, help=doc)
    train.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    train.add_argument("--json", action="store_true", help="print the metrics as JSON")


def translate_flow(recipe_path: str, out_dir: str) -> dict:
    """The task kind's ``mt-model`` and ``translate`` steps, as in a rebuild."""
    from flows.rebuild import run_steps
    from pipelines.core.recipe import load_recipe
    from pipelines.core.steps import RunContext
    from pipelines.rebuild.kinds import task_kind

    recipe = load_recipe(recipe_path)
    kind = task_kind(recipe.task)
    # these two steps only, whatever the family's plan for the whole rebuild
    first = dataclasses.replace(kind, steps=[s for s in ("mt-model", "translate")
                                             if s in kind.steps], plan=None)  # fmt: skip
    ctx = RunContext(recipe, Path(recipe_path), Path(out_dir), first, False)
    return run_steps(ctx, Path(out_dir) / "translate-run.json")


def run(args: argparse.Namespace) -> int:
    from flows.runtime import prefect_server, result_storage
    from pipelines.core.io import output_lock
    from pipelines.core.recipe import RecipeError, load_recipe
    from pipelines.preflight import check_ingest_inputs, check_rebuild_recipe

    recipe = load_recipe(args.recipe)
    if recipe.translation is None:
        raise RecipeError(f"{args.recipe}: no translation section (task korsts or kornli)")
    check_ingest_inputs(recipe, args.recipe)
    check_rebuild_recipe(recipe, args.recipe)  # the source, its reference, the memory
    out = args.out or Path("runs") / recipe.name
    out.mkdir(parents=True, exist_ok=True)
    from prefect import flow  # imported on use: the CLI starts without Prefect

    run_flow = flow(name="benchforge-translate")(translate_flow)
    with prefect_server(), output_lock(out), result_storage(out):
        steps = run_flow(str(args.recipe.resolve()), str(out.resolve()))
    if args.json:
        print(json.dumps(steps, ensure_ascii=False, indent=2, default=str))
    else:
        for name, entry in steps.items():
            print(f"{name:<10} {entry['seconds']:6.1f} s  {entry['summary']}")
        print(f"Translations in {out / 'translate'} (sentences.parquet, pairs.parquet)")
    return 0


def train(args: argparse.Namespace) -> int:
    from pipelines.models.train_mt import MtSettings, train_mt

    chosen = {f.name: getattr(args, f.name) for f in dataclasses.fields(MtSettings)
              if getattr(args, f.name, None) is not None}  # fmt: skip
    metrics = train_mt(args.parallel, args.out, MtSettings(**chosen), args.source_column,
                       args.target_column, (args.source_lang, args.target_lang))  # fmt: skip
    if args.json:
        print(json.dumps(metrics, ensure_ascii=False, indent=2))
    else:
        h = metrics["heldout"]
        print(f"held-out chrF {h.get('chrf')}, BLEU {h.get('bleu')}, TER {h.get('ter')} on "
              f"{h['sentences']} sentences; {metrics['parameters']:,} parameters, "
              f"{metrics['seconds']:.0f} s on {metrics['device']}; saved to {args.out} "
              "(model card: README.md)")  # fmt: skip
    return 0
