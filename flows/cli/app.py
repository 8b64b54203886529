"""The ``benchforge`` command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.core.recipe import RecipeError, load_recipe


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchforge",
        description="Rebuild Korean NLU benchmark datasets end to end.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = sub.add_parser(
        "ingest",
        help="read, clean, split, filter and deduplicate a recipe's corpora",
        description=(
            "Run the Prefect ingestion flow for RECIPE: read every corpus, clean documents "
            "(KLUE 2.3 noise rules), split them into sentences with kss (MeCab backend), drop "
            "noisy sentences and sentences with personal information, remove exact and near "
            "duplicates. Writes documents.parquet, sentences.parquet, rejects.parquet (every "
            "dropped row with its stage and reason), stats.json and manifest.json to --out. "
            "Task results are cached under OUT/.cache: running again recomputes only what "
            "changed."
        ),
    )
    ingest.add_argument("recipe", type=Path, help="the recipe YAML file")
    ingest.add_argument("--out", type=Path, required=True, help="output folder (created)")
    ingest.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local Dask worker processes (default: the recipe's runner.workers, else all cores)",
    )
    ingest.add_argument(
        "--dask-address",
        default=None,
        help="address of an existing Dask scheduler, e.g. tcp://10.0.0.5:8786 "
        "(default: the recipe's runner.dask_address, else a local cluster)",
    )
    ingest.add_argument(
        "--shard-size",
        type=int,
        default=None,
        help="documents per shard (default: the recipe's runner.shard_size, 20000)",
    )
    ingest.add_argument("--json", action="store_true", help="print the run report as JSON")

    pair = sub.add_parser(
        "pair",
        help="build STS sentence pairs (GSM, round-trip translation, metadata)",
        description=(
            "Run the Prefect pairing flow for RECIPE's 'pairing' section (KLUE 3.2.1): greedy "
            "sentence matching on MeCab-morpheme ROUGE for less similar pairs, round-trip "
            "translation for similar pairs (each round trip checked; drops kept in "
            "rejects.parquet), and intent/topic pairs from metadata. Reads an ingest run's "
            "output (--input, else the recipe's pairing.input, else ingests the recipe's "
            "corpora into OUT/ingest first). Writes pairs.parquet, rejects.parquet, "
            "stats.json and manifest.json to --out; tasks and translations are cached under "
            "OUT/.cache."
        ),
    )
    pair.add_argument("recipe", type=Path, help="the recipe YAML file (with a pairing section)")
    pair.add_argument("--out", type=Path, required=True, help="output folder (created)")
    pair.add_argument(
        "--input",
        type=Path,
        default=None,
        help="folder of a finished `benchforge ingest` run to pair (default: see above)",
    )
    pair.add_argument(
        "--seed", type=int, default=None, help="random seed (default: the recipe's pairing.seed)"
    )
    pair.add_argument("--json", action="store_true", help="print the run report as JSON")

    classifiers = sub.add_parser(
        "classifiers",
        help="train the hate-speech and bias detectors used as filters",
        description="Detectors for the KLUE 2.3 toxic-content filter.",
    )
    csub = classifiers.add_subparsers(dest="action", required=True, metavar="ACTION")
    builtin = csub.add_parser(
        "builtin",
        help="the built-in detectors the filter uses by default: train them if missing, show them",
        description=(
            "The built-in gender_bias and hate detectors a recipe's filter uses when it names "
            "no model (KLUE 2.3's toxic-content filter is on by default): character 1-4-gram "
            "TF-IDF, a linear SVM and probabilities calibrated on out-of-fold decision "
            "values, trained from the shipped Korean HateSpeech data in seconds and kept in "
            "benchforge's data folder (BENCHFORGE_HOME/detectors/, keyed by the data's hash "
            "and the settings). The set-up trains them; this prints each one's folder, dev "
            "macro-F1 and calibration error, training any that is missing."
        ),
    )
    builtin.add_argument("--json", action="store_true", help="print the detectors' metrics as JSON")
    train = csub.add_parser(
        "train",
        help="train one detector on the shipped Korean HateSpeech data",
        description=(
            "Train a BPE tokenizer and a small BERT encoder from scratch on the Korean "
            "HateSpeech train split (optionally pretrained with masked language modelling on "
            "unlabeled text first), evaluate on its dev split, and save a transformers "
            "checkpoint with a model card (README.md: dev macro-F1, per-class F1, score "
            "distribution, epochs) and metrics.json to --out. Defaults train in minutes on a "
            "CPU; a larger encoder is used when a GPU is present. A detector whose dev "
            "predictions collapse onto one label is saved marked as collapsed, the filter "
            "refuses it, and the command exits with status 3."
        ),
    )
    train.add_argument(
        "--task",
        required=True,
        choices=["hate", "bias", "gender_bias"],
        help="hate: none/offensive/hate; bias: none/others/gender; gender_bias: False/True",
    )
    train.add_argument("--out", type=Path, required=True, help="checkpoint folder (created)")
    train.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder with train.tsv and dev.tsv (default: data/demo/korean-hate-speech/labeled)",
    )
    train.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="most fine-tuning epochs (default 6 on a CPU, 10 on a GPU; early stopping may "
        "end sooner)",
    )
    train.add_argument(
        "--lr", type=float, default=None, help="peak learning rate (default 3e-4 CPU, 1e-4 GPU)"
    )
    train.add_argument(
        "--patience",
        type=int,
        default=None,
        help="stop after N epochs without a better dev macro-F1 and keep the best epoch's "
        "weights (default 2; 0: run every epoch, still keep the best)",
    )
    train.add_argument(
        "--encoder",
        type=Path,
        default=None,
        help="start from this pretrained encoder (a `classifiers pretrain` output folder or "
        "any local BERT checkpoint with its tokenizer); the size options are then ignored",
    )
    _encoder_options(train)
    train.add_argument(
        "--pretrain-texts",
        type=Path,
        nargs="*",
        default=None,
        help="unlabeled text files (one text a line, or .jsonl[.gz]) for MLM pretraining "
        "before fine-tuning, in the same run",
    )
    train.add_argument(
        "--pretrain-epochs", type=int, default=None, help="MLM epochs over them (default 0)"
    )
    train.add_argument(
        "--pretrain-lr", type=float, default=None, help="MLM peak learning rate (default 5e-4)"
    )
    train.add_argument(
        "--limit", type=int, default=None, help="train on the first N comments only (quick runs)"
    )
    train.add_argument("--json", action="store_true", help="print the metrics as JSON")

    pretrain = csub.add_parser(
        "pretrain",
        help="pretrain an encoder once with masked language modelling, for train --encoder",
        description=(
            "Train a BPE tokenizer and a small BERT encoder with masked language "
            "modelling (15%% of tokens, BERT's 80/10/10) on unlabeled text files plus the "
            "comments of the labeled train split (without their labels; the dev split is "
            "never seen), and save it to --out as a transformers checkpoint with "
            "pretrain.json (texts, loss per epoch, throughput, settings). The texts are "
            "tokenized once in parallel and cached under --out/.cache; every epoch is saved "
            "so an interrupted run resumes. `classifiers train --encoder DIR` fine-tunes "
            "it for each task."
        ),
    )
    pretrain.add_argument(
        "--texts",
        type=Path,
        nargs="+",
        required=True,
        help="unlabeled texts: files with one text a line (.txt, .txt.gz), .jsonl[.gz] with "
        "a text, review or comments field (the NSMC crawl), a sentences.parquet of "
        "`benchforge ingest`, or an ingest output folder",
    )
    pretrain.add_argument("--out", type=Path, required=True, help="encoder folder (created)")
    pretrain.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder with the labeled train.tsv whose comments are added "
        "(default: data/demo/korean-hate-speech/labeled)",
    )
    pretrain.add_argument("--epochs", type=int, default=None, help="MLM epochs (default 3)")
    pretrain.add_argument(
        "--lr", type=float, default=None, help="MLM peak learning rate (default 5e-4)"
    )
    _encoder_options(pretrain)
    pretrain.add_argument(
        "--limit", type=int, default=None, help="pretrain on the first N texts only (quick runs)"
    )
    pretrain.add_argument(
        "--restart",
        action="store_true",
        help="discard a finished or unfinished pretraining in --out and start again "
        "(without it, a rerun with the same texts and settings resumes after the last "
        "finished epoch, and one with others is refused)",
    )
    pretrain.add_argument("--json", action="store_true", help="print the summary as JSON")
    from flows.cli.agree import add_parser as add_agree
    from flows.cli.annotate import add_parsers
    from flows.cli.evaluation import add_parsers as add_evaluation
    from flows.cli.evaluation import add_prefect_parsers as add_prefect
    from flows.cli.jglue import add_parsers as add_jglue
    from flows.cli.klue import add_parsers as add_klue
    from flows.cli.kobbq import add_parsers as add_kobbq
    from flows.cli.rebuild import add_parser as add_rebuild
    from flows.cli.split import add_parser as add_split
    from flows.cli.translate import add_parsers as add_translate

    sub.add_parser(
        "setup",
        help="prepare the servers a rebuild starts (scripts/bootstrap.sh runs it)",
        description=(
            "Install Label Studio into its own virtual environment with an empty, migrated "
            "database that new data folders start from, and migrate Prefect's database "
            "(PREFECT_HOME, default ~/.benchforge/prefect), both at once: done here, once, "
            "the main job starts both servers in seconds. Quick when done."
        ),
    )
    add_parsers(sub)
    add_agree(sub)
    add_split(sub)
    add_rebuild(sub)
    add_translate(sub)
    add_kobbq(sub)
    add_jglue(sub)
    add_klue(sub)
    add_evaluation(sub)
    add_prefect(sub)
    card_cmd = sub.add_parser(
        "card",
        help="a finished run's data card: render it again, or check it against its files",
        description="Work on a finished rebuild's data card: `render` writes it again from "
        "the run's facts; `check` recomputes what it states from the released files.",
    )
    card_sub = card_cmd.add_subparsers(dest="action", required=True, metavar="ACTION")
    check = card_sub.add_parser(
        "check",
        help="verify the release files against their manifest and recompute the card's "
        "counts from them; exit 1 on a mismatch",
        description="Verify every file of RUN_DIR's release (dataset/ and the release "
        "layout's release/, the card's files included) against the SHA-256 and size that "
        "dataset/release_manifest.json recorded when the rebuild finished, naming each file "
        "missing, changed or added, and recompute every count the card states from the "
        "released files themselves: the records of each release file, the items of each "
        "split and each split's label distribution (pipelines.export.card_check). Print "
        "each mismatch (what the card or the manifest says, what the files hold) and what "
        "could not be recomputed; exit 1 when any file or count differs or the manifest is "
        "missing, 2 when RUN_DIR has no card.",
    )
    check.add_argument(
        "run_dir", type=Path, help="a rebuild's output folder (runs/<recipe>) or its dataset/"
    )
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    card = card_sub.add_parser(
        "render",
        help="render a finished run's data card again (nothing recomputed)",
        description="Render RUN_DIR/dataset/DATA_CARD.md, DATA_CARD.html (figures embedded) "
        "and figures/*.png again from the run's card.json and split/artifacts.md, with the "
        "current template, task-kind sections, figures and warning rules: nothing is "
        "recomputed and the dataset files are not touched.",
    )
    card.add_argument("run_dir", type=Path, help="a rebuild's output folder (runs/<recipe>)")
    card.add_argument(
        "--to",
        type=Path,
        default=None,
        metavar="DIR",
        help="also copy the card (DATA_CARD.md, DATA_CARD.html, figures/) into DIR, e.g. "
        "to publish it beside the dataset or commit it (data_cards/<recipe>/)",
    )
    sub.add_parser(
        "list",
        help="what is registered: task kinds, steps, split and agreement rules, ...",
        description="Print every registry (task kinds, rebuild steps, split rules, agreement "
        "rules, pairing methods, translator backends, annotation configs, languages) with "
        "each member's one-line description: what a recipe may name.",
    )
    return parser


# command (and action) -> "module:function"; a new command is one line here
COMMANDS = {
    "ingest": "flows.cli.app:_ingest",
    "pair": "flows.cli.app:_pair",
    "classifiers builtin": "flows.cli.app:_classifiers_builtin",
    "classifiers train": "flows.cli.app:_classifiers_train",
    "classifiers pretrain": "flows.cli.app:_classifiers_pretrain",
    "agree": "flows.cli.agree:run",
    "split": "flows.cli.split:run",
    "rebuild": "flows.cli.rebuild:run",
    "translate": "flows.cli.translate:run",
    "translators train": "flows.cli.translate:train",
    "kobbq survey": "flows.cli.kobbq:survey",
    "kobbq expand": "flows.cli.kobbq:expand",
    "kobbq survey-items": "flows.cli.kobbq:survey_items",
    "kobbq check-items": "flows.cli.kobbq:check_items",
    "kobbq eval-set": "flows.cli.kobbq:eval_set",
    "kobbq baseline": "flows.cli.kobbq:baseline",
    "kobbq score": "flows.cli.kobbq:score",
    "jglue jcqa-filter": "flows.cli.jglue:jcqa_filter",
    "jglue captions": "flows.cli.jglue:captions",
    "jglue squad-roundtrip": "flows.cli.jglue:squad_roundtrip",
    "klue ner-layout": "flows.cli.klue:ner_layout",
    "klue wos-layout": "flows.cli.klue:wos_layout",
    "klue wos-check": "flows.cli.klue:wos_check",
    "klue ner-tagger": "flows.cli.klue:ner_tagger",
    "klue dp-layout": "flows.cli.klue:dp_layout",
    "klue dp-check": "flows.cli.klue:dp_check",
    "klue dp-parser": "flows.cli.klue:dp_parser",
    "labelstudio up": "flows.cli.annotate:server_up",
    "labelstudio install": "flows.cli.annotate:server_install",
    "labelstudio status": "flows.cli.annotate:server_status",
    "labelstudio down": "flows.cli.annotate:server_down",
    "annotate push": "flows.cli.annotate:push",
    "annotate wait": "flows.cli.annotate:wait",
    "annotate simulate": "flows.cli.annotate:simulate",
    "annotate repair": "flows.cli.annotate:repair",
    "annotate pull": "flows.cli.annotate:pull",
    "annotate status": "flows.cli.annotate:status",
    "annotate invite": "flows.cli.annotate:invite",
    "list": "flows.cli.app:_list",
    "setup": "flows.cli.app:_setup",
    "card render": "flows.cli.app:_card",
    "card check": "flows.cli.app:_card_check",
    "evaluate": "flows.cli.evaluation:evaluate",
    "baseline": "flows.cli.evaluation:baseline",
    "deploy": "flows.cli.evaluation:deploy",
    "webhook serve": "flows.cli.evaluation:webhook_serve",
}


def _handler(args: argparse.Namespace):  # noqa: ANN202
    import importlib

    key = f"{args.command} {getattr(args, 'action', '')}".strip()
    target = COMMANDS.get(key) or COMMANDS[args.command]
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _card(args: argparse.Namespace) -> int:
    from pipelines.export.data_card import copy_card, regenerate

    try:
        path = regenerate(args.run_dir)
        if args.to is not None:
            path = copy_card(args.run_dir, args.to)
    except (OSError, ValueError, KeyError) as exc:
        print(f"benchforge: error: {args.run_dir}: {exc}", file=sys.stderr)
        return 2
    print(f"Data card written to {path}")
    return 0


def _card_check(args: argparse.Namespace) -> int:
    from pipelines.export.card_check import check_card

    try:
        result = check_card(args.run_dir)
    except (OSError, ValueError, KeyError) as exc:
        print(f"benchforge: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"dataset": str(result.dataset), "ok": result.ok,
                          "checked": result.checked, "unchecked": result.unchecked,
                          "verified": result.verified,
                          "mismatches": [str(m) for m in result.mismatches]},
                         ensure_ascii=False, indent=2))  # fmt: skip
    else:
        for line in result.mismatches:
            print(f"MISMATCH {line}")
        for line in result.unchecked:
            print(f"unchecked {line}")
        print(
            f"{result.dataset}/card.json: {len(result.checked)} counts checked, "
            f"{len(result.mismatches)} mismatch(es), {len(result.unchecked)} unchecked; "
            f"{len(result.verified)} release files match release_manifest.json"
        )
    return 0 if result.ok else 1


def _setup(args: argparse.Namespace) -> int:
    from flows.setup import setup

    for key, value in setup().items():
        print(f"{key}: {value}")
    return 0


def _list(args: argparse.Namespace) -> int:
    import flows.steps  # noqa: F401 - registers the rebuild steps that run Prefect
    import pipelines.quality.translation_qa  # noqa: F401 - the translation checks
    from pipelines.core.registry import registries

    for kind, registry in registries().items():
        print(f"{kind}s ({registry.describe}):" if registry.describe else f"{kind}s:")
        for name in registry.names():
            doc = registry.doc(name)
            print(f"  {name:<22} {doc[:90]}" if doc else f"  {name}")
    return 0


def _encoder_options(parser: argparse.ArgumentParser) -> None:
    """The encoder-size, batching, device and seed options shared by train and pretrain."""
    parser.add_argument("--layers", type=int, default=None, help="encoder layers (default 4)")
    parser.add_argument("--hidden", type=int, default=None, help="hidden size (default 256)")
    parser.add_argument("--heads", type=int, default=None, help="attention heads (default 4)")
    parser.add_argument(
        "--intermediate", type=int, default=None, help="feed-forward size (default 4x hidden)"
    )
    parser.add_argument(
        "--vocab-size", type=int, default=None, help="BPE vocabulary size (default 8000)"
    )
    parser.add_argument("--batch-size", type=int, default=None, help="batch size (default 32)")
    parser.add_argument(
        "--dropout", type=float, default=None, help="hidden and attention dropout (default 0.1)"
    )
    parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    parser.add_argument(
        "--precision",
        choices=["auto", "fp32", "bf16", "fp16"],
        default=None,
        help="training arithmetic (default auto: bf16 autocast on a GPU that has it, fp16 "
        "with loss scaling on an older GPU, fp32 on a CPU)",
    )
    parser.add_argument("--seed", type=int, default=None, help="random seed (default 0)")


def _ingest(args: argparse.Namespace) -> int:
    from flows.runtime import prefect_server
    from pipelines.core.report import print_report

    overrides = {
        "runner": {
            "workers": args.workers,
            "dask_address": args.dask_address,
            "shard_size": args.shard_size,
        }
    }
    from pipelines.preflight import check_ingest_inputs

    # fail fast on a bad recipe or corpus, before any server or cluster starts
    check_ingest_inputs(load_recipe(args.recipe, overrides), args.recipe)
    with prefect_server():
        from flows.ingest import run_ingest

        report = run_ingest(args.recipe, args.out, overrides)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print_report(report["stats"], report["tasks"])
        state = "written to" if report["written"] else "unchanged in"
        print(f"Outputs {state} {args.out}")
    return 0


def _pair(args: argparse.Namespace) -> int:
    from flows.runtime import prefect_server
    from pipelines.core.report import print_pair_report

    recipe = load_recipe(args.recipe)
    if recipe.pairing is None:
        raise RecipeError(f"{args.recipe}: the recipe has no 'pairing' section")
    with prefect_server():
        from flows.pair import run_pair

        report = run_pair(args.recipe, args.out, args.input, args.seed)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print_pair_report(report["stats"], report["tasks"])
        state = "written to" if report["written"] else "unchanged in"
        print(f"Outputs {state} {args.out}")
    return 0


def _train_settings(args: argparse.Namespace, **chosen: object):  # noqa: ANN202
    """TrainSettings from the options given on the command line (the rest default)."""
    from pipelines.models.checkpoints import default_device
    from pipelines.models.train_classifier import TrainSettings

    for name in ("layers", "hidden", "heads", "intermediate", "vocab_size", "batch_size"):
        chosen[name] = getattr(args, name)
    chosen.update(dropout=args.dropout, limit=args.limit, device=args.device, seed=args.seed)
    chosen.update(precision=args.precision)
    chosen = {k: v for k, v in chosen.items() if v is not None}
    if "hidden" in chosen and "intermediate" not in chosen:
        chosen["intermediate"] = 4 * chosen["hidden"]
    return TrainSettings.for_device(args.device or default_device(), **chosen)


def _classifiers_builtin(args: argparse.Namespace) -> int:
    from flows.setup import detectors
    from pipelines.models.ngram_detector import NgramDetector

    found = {name: NgramDetector(folder).metrics | {"folder": str(folder)}
             for name, folder in detectors().items()}  # fmt: skip
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return 0
    for name, m in found.items():
        print(f"{name}: dev macro-F1 {m['dev']['macro_f1']}, dev ECE {m['reliability']['ece']} "
              f"({m['dev']['examples']} comments), {m['folder']}")  # fmt: skip
    return 0


def _classifiers_train(args: argparse.Namespace) -> int:
    from pipelines.models.train_classifier import DEFAULT_DATA, train_classifier

    settings = _train_settings(
        args,
        epochs=args.epochs,
        lr=args.lr,
        encoder=str(args.encoder) if args.encoder else None,
        pretrain_texts=[str(p) for p in args.pretrain_texts] if args.pretrain_texts else None,
        pretrain_epochs=args.pretrain_epochs,
        pretrain_lr=args.pretrain_lr,
        patience=args.patience,
    )
    metrics = train_classifier(args.task, args.out, args.data or DEFAULT_DATA, settings)
    if args.json:
        print(json.dumps(metrics, ensure_ascii=False, indent=2))
    else:
        dev = metrics["dev"]
        per_class = ", ".join(f"{k} {v}" for k, v in dev["per_class_f1"].items())
        print(
            f"{args.task}: dev macro-F1 {dev['macro_f1']} ({per_class}); "
            f"{metrics['train_seconds']:.0f} s on {metrics['device']}, best epoch "
            f"{metrics['best_epoch']} of {metrics['epochs_run']}; saved to {args.out}"
        )
    if metrics["collapse"]["collapsed"]:
        print(
            f"benchforge: error: the {args.task} detector collapsed "
            f"({metrics['collapse']['summary']}); {args.out} is marked as collapsed and the "
            "filter refuses it",
            file=sys.stderr,
        )
        return 3
    return 0


def _classifiers_pretrain(args: argparse.Namespace) -> int:
    from pipelines.models.pretrain import pretrain
    from pipelines.models.train_classifier import DEFAULT_DATA

    settings = _train_settings(args, pretrain_epochs=args.epochs or 3, pretrain_lr=args.lr)
    info = pretrain(args.texts, args.out, settings, args.data or DEFAULT_DATA, args.restart)
    if args.json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
    else:
        print(
            f"pretrained on {info['texts']:,} texts ({info['tokens']:,} tokens), MLM loss by "
            f"epoch {info['epoch_loss']}; {info['train_seconds']:.0f} s on {info['device']} "
            f"({info['throughput']['tokens_per_second']:,} tokens/s)"
            f"{' (done already)' if info.get('cached') else ''}; saved to {args.out}"
        )
    return 0


# commands that write into --out: they take its lock before anything else (issue 32)
LOCKED = ("ingest", "pair", "agree", "split")


def _interrupt(signum: int, frame: object) -> None:
    """SIGINT and SIGTERM end the run through KeyboardInterrupt (every ``finally`` runs:
    the lock is released, the temporary Prefect server stopped); a second signal while
    that happens ends the process at once."""
    import os
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: os._exit(130))
    raise KeyboardInterrupt


def _os_error(exc: OSError) -> str:
    """One line for a failed file operation: the path, the problem, what to do."""
    import errno

    where = exc.filename or "(unknown path)"
    advice = {
        errno.ENOSPC: "no space left on the device: free some space there or choose another "
        "output folder, then run the same command to resume",
        errno.EDQUOT: "disk quota exceeded: free some space or choose another output folder",
        errno.EACCES: "permission denied: choose a folder you can write to, or fix its permissions",
        errno.EPERM: "operation not permitted: choose a folder you can write to",
        errno.EROFS: "read-only file system: choose an output folder on a writable disk",
    }.get(exc.errno, exc.strerror or str(exc))
    detail = f" ({exc.strerror})" if exc.errno == errno.ENOSPC and exc.strerror and \
        "MB" in exc.strerror else ""  # fmt: skip
    return f"{where}: {advice}{detail}"


MIN_FREE_MB = 64  # a run needs room for its cache and outputs: refused before any work below


def check_free_space(out: Path) -> None:
    """Stop before any work when the file system of ``out`` has less than
    ``BENCHFORGE_MIN_FREE_MB`` (64 by default) free: Prefect's cache writes fail quietly
    on a full disk, and a run would work for minutes before its own write fails."""
    import errno
    import os
    import shutil

    want = int(os.environ.get("BENCHFORGE_MIN_FREE_MB") or MIN_FREE_MB)
    folder = out.resolve()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    free = shutil.disk_usage(folder).free / 2**20
    if free < want:
        raise OSError(errno.ENOSPC, f"only {free:.1f} MB free, {want} MB needed", str(out))


def _leave_now(code: int) -> None:
    """End the process after an interrupt without finalising the interpreter: every
    ``finally`` has run (the lock released, the temporary servers stopped) and the exit
    handlers run here, but the garbage collection of every module a run imported (torch,
    pandas, Prefect) took 3.5 of a Ctrl-C's 6 s on a loaded machine (issue 51)."""
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    import signal

    from flows.runtime import current_step
    from pipelines.core.io import output_lock

    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("httpx").setLevel(logging.DEBUG if args.verbose else logging.WARNING)
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        out = getattr(args, "out", None)
        if out is not None and args.command in (*LOCKED, "rebuild"):
            check_free_space(out)
        with output_lock(out) if args.command in LOCKED and out else contextlib.nullcontext():
            return _handler(args)(args)
    except KeyboardInterrupt:
        step = current_step() or args.command
        print(f"benchforge: interrupted during step {step}; run the same command to resume",
              file=sys.stderr)  # fmt: skip
        if argv is None:  # the command itself, not a call from Python
            _leave_now(130)
        return 130
    except OSError as exc:
        if not exc.filename and getattr(args, "out", None) is not None:
            exc.filename = str(args.out)
        print(f"benchforge: error: {_os_error(exc)}", file=sys.stderr)
        return 2
    except BenchforgeError as exc:  # every error a user can mend: one line, no traceback
        print(f"benchforge: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 1


if __name__ == "__main__":
    sys.exit(main())
