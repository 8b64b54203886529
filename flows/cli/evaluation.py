"""``benchforge evaluate`` and ``benchforge baseline``: how hard a built dataset is."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser(
        "evaluate",
        help="score a model's predictions on a built dataset with its paper's metrics",
        description="Score PREDICTIONS (JSON Lines: one object a line with 'guid', the "
        "item's id in the release, and 'prediction'; optionally 'probabilities', class -> "
        "probability, for AUPRC) on one split of the dataset RUN_DIR built, with the "
        "metrics the task kind's paper reports (KLUE: TC macro-F1, STS Pearson and F1 at "
        "3.0, NLI accuracy, NER entity and character macro-F1, RE micro-F1 without "
        "no_relation and AUPRC, MRC EM and ROUGE-W; JGLUE: accuracy, Pearson/Spearman, EM "
        "and character F1; KoBEST macro-F1; KorNLI accuracy, KorSTS Spearman; KoBBQ "
        "accuracy and diff-bias). Every item of the split needs one prediction; errors "
        "name the file and the line. `benchforge list` prints the metrics.",
    )
    ev.add_argument("run_dir", type=Path, help="a rebuild's output folder (or its dataset/)")
    ev.add_argument(
        "--split",
        default="dev",
        help="the split to score: train, dev (JGLUE's valid) or test (default: dev)",
    )
    ev.add_argument(
        "--predictions", type=Path, required=True, metavar="FILE",
        help="the predictions, JSON Lines of guid and prediction",
    )  # fmt: skip
    ev.add_argument("--json", action="store_true", help="print the result as JSON")
    ev.add_argument(
        "--out", type=Path, default=None, metavar="FILE",
        help="also write the result as JSON to FILE (atomically)",
    )  # fmt: skip

    bl = sub.add_parser(
        "baseline",
        help="fine-tune a small encoder on a built dataset and put its figures in the card",
        description="Fine-tune the project's small BERT on RUN_DIR's train split (the "
        "encoder of --encoder, or $BENCHFORGE_HOME/models/encoder-<language> when present, "
        "else a tokenizer and encoder trained here from the train texts), keep the epoch "
        "with the best dev figure, score dev and test with the paper's metrics, write "
        "RUN_DIR/baseline/ (baseline.json and each split's predictions, which `benchforge "
        "evaluate` scores the same) and the figures into the data card (card.json and "
        "DATA_CARD.md/html rendered again). Classes are classified, similarities "
        "predicted as the expectation over 0-5, multiple choice scored option by option, "
        "characters tagged, answers pointed at in the paragraph. On a CPU at demo size in "
        "seconds to minutes; a GPU is used when there is one.",
    )
    bl.add_argument("run_dir", type=Path, help="a rebuild's output folder")
    bl.add_argument(
        "--encoder", type=Path, default=None, metavar="DIR",
        help="a pretrained encoder folder (`benchforge classifiers pretrain --out DIR`)",
    )  # fmt: skip
    bl.add_argument("--epochs", type=int, default=None, help="most epochs (default 10)")
    bl.add_argument("--layers", type=int, default=None, help="encoder layers (default 2)")
    bl.add_argument("--hidden", type=int, default=None, help="hidden size (default 128)")
    bl.add_argument("--lr", type=float, default=None, help="peak learning rate (default 5e-4)")
    bl.add_argument("--seed", type=int, default=None, help="random seed (default 0)")
    bl.add_argument(
        "--device", default=None, help="cpu, cuda or cuda:N (default: a GPU when there is one)"
    )
    bl.add_argument(
        "--no-card", action="store_true",
        help="write RUN_DIR/baseline/ only, leave the data card as it is",
    )  # fmt: skip


def baseline(args: argparse.Namespace) -> int:
    from pipelines.evaluation.baseline import BaselineSettings
    from pipelines.evaluation.baseline import baseline as run

    settings = BaselineSettings()
    for key in ("epochs", "layers", "hidden", "lr", "seed", "device"):
        if getattr(args, key) is not None:
            setattr(settings, key, getattr(args, key))
    if args.encoder is not None:
        settings.encoder = str(args.encoder)
    result = run(args.run_dir, settings, write_card=not args.no_card)
    print(f"{result['task_kind']}: {result['model']}, {result['train_items']} train items, "
          f"{result['seconds']} s on {result['device']}")  # fmt: skip
    for split, s in result["splits"].items():
        figures = ", ".join(f"{k} {'n/a' if v is None else f'{v:.2f}'}"
                            for k, v in s["metrics"].items())  # fmt: skip
        print(f"  {split} ({s['items']} items): {figures}")
    print(f"-> {args.run_dir / 'baseline'}" + ("" if args.no_card else " and the data card"))
    return 0


def evaluate(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_json
    from pipelines.evaluation.evaluate import evaluate as run
    from pipelines.evaluation.evaluate import metric_lines

    result = run(args.run_dir, args.split, args.predictions)
    if args.out is not None:
        write_json(result, args.out)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print("\n".join(metric_lines(result)))
    return 0
