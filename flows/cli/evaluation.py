"""``benchforge evaluate`` and ``benchforge baseline`` (how hard a built dataset is),
``benchforge deploy`` and ``benchforge webhook serve`` (the rebuild on a Prefect server
of the user's)."""

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


def add_prefect_parsers(sub: argparse._SubParsersAction) -> None:
    dp = sub.add_parser(
        "deploy",
        help="make the rebuild of RECIPE a deployment on your Prefect server",
        description="With PREFECT_API_URL set (a Prefect server of yours), create or update "
        "the deployment benchforge-rebuild/NAME of the rebuild flow with RECIPE, --out and "
        "deployed=True as parameters, in a process work pool (created when missing). Run "
        "it with `prefect worker start --pool POOL` and `prefect deployment run "
        "benchforge-rebuild/NAME` (or the UI, or a schedule). A deployed run publishes "
        "Prefect artifacts (each step's rows, the agreement, a link to the data card) and, "
        "when a round waits for people, is suspended until `benchforge webhook serve` "
        "resumes it. Label Studio must be running for the worker (`benchforge labelstudio "
        "up`, or LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY in the worker's environment).",
    )
    dp.add_argument("recipe", type=Path, help="the recipe YAML (validated before anything)")
    dp.add_argument("--out", type=Path, default=None,
                    help="the run's output folder (default: runs/<recipe name>)")  # fmt: skip
    dp.add_argument("--name", default=None, help="deployment name (default: the recipe name)")
    dp.add_argument(
        "--pool",
        default="benchforge",
        help="process work pool (default: benchforge; created when missing)",
    )
    dp.add_argument(
        "--simulate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="simulated annotators on or off (default: as the recipe says)",
    )
    dp.add_argument("--seed", type=int, default=None, help="the rebuild's seed")
    dp.add_argument("--cron", default=None, help="a cron schedule, e.g. '0 3 * * *'")
    dp.add_argument("--interval", type=float, default=None,
                    help="a schedule every N seconds")  # fmt: skip
    wh = sub.add_parser(
        "webhook",
        help="the endpoint that resumes suspended rebuilds when their round is done",
        description="Serve the loopback endpoint Label Studio calls on every annotation "
        "created or updated (a deployed rebuild registers the webhook when it suspends); "
        "each call, and a poll every --poll seconds, resumes every suspended flow run whose "
        "round is done (its waits: $BENCHFORGE_HOME/waits/). Runs until stopped.",
    )
    wsub = wh.add_subparsers(dest="action", required=True, metavar="ACTION")
    serve = wsub.add_parser("serve", help="receive Label Studio's webhooks (until stopped)",
                            description="Receive Label Studio's webhooks and poll.")  # fmt: skip
    serve.add_argument(
        "--port",
        type=int,
        default=None,
        help="port on 127.0.0.1 (default: BENCHFORGE_WEBHOOK_PORT, else 8765)",
    )
    serve.add_argument(
        "--poll",
        type=float,
        default=30.0,
        help="seconds between polls of every wait, the fallback (0: none)",
    )


def deploy(args: argparse.Namespace) -> int:
    from flows.deploy import deploy as run

    result = run(args.recipe, args.out, args.name, args.pool, args.simulate, args.seed,
                 args.cron, args.interval)  # fmt: skip
    print(f"deployment {result['name']} ({result['id']}) in work pool {result['pool']}"
          + (" (created)" if result["pool_created"] else ""))  # fmt: skip
    print(f"  out: {result['parameters']['out_dir']}")
    print(f"  run it: prefect worker start --pool {result['pool']}; "
          f"prefect deployment run {result['name']}")  # fmt: skip
    return 0


def webhook_serve(args: argparse.Namespace) -> int:
    import math

    from flows.runtime import prepare_environment
    from flows.suspend import WebhookError, endpoint_port, open_endpoint, serve, waits_dir

    prepare_environment()
    if not (math.isfinite(args.poll) and args.poll >= 0):
        raise WebhookError(f"--poll {args.poll}: seconds between polls, 0 or more (0: none)")
    port = endpoint_port(args.port)
    server = open_endpoint(port)  # a port taken: one error line, before the address
    waits_dir()  # its imports done before the address is printed (a stop then exits cleanly)
    print(f"benchforge webhook endpoint on http://127.0.0.1:{port}/label-studio", flush=True)
    serve(port, args.poll, server=server)
    return 0


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
          f"{result['seconds']} s on {result['device']}"
          + (" (cached: the same files and settings)" if result.get("cached") else ""))  # fmt: skip
    for split, s in result["splits"].items():
        figures = ", ".join(f"{k} {'n/a' if v is None else f'{v:.2f}'}"
                            for k, v in s["metrics"].items())  # fmt: skip
        print(f"  {split} ({s['items']} items): {figures}")
    from pipelines.export.card_baseline import baseline_notes

    for note in baseline_notes(result):  # a collapse, a model behind the majority
        print("  warning: " + note.replace("**", ""))
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
