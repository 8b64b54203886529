"""``benchforge klue ...``: KLUE's pieces on their own (Park et al. 2021): ``ner-layout``
turns a KLUE-NER release file into character spans and back; ``ner-tagger`` trains the
character tagger that pseudo-labels KLUE-NER's sentences (a checkpoint a recipe's
``ner.tagger.checkpoint`` can name)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    klue = sub.add_parser(
        "klue",
        help="KLUE: the KLUE-NER release layout to spans and back; train the NER tagger",
        description="KLUE's release layouts (Park et al. 2021).",
    )
    ksub = klue.add_subparsers(dest="action", required=True, metavar="ACTION")
    layout = ksub.add_parser(
        "ner-layout",
        help="a KLUE-NER release file (.tsv) to character spans (.jsonl), or back",
        description="to-spans: read a KLUE-NER release file (a '## <guid>\\t<inline-tagged "
        "sentence>' line, then one '<char>\\t<BIO tag>' line per character, a blank line "
        "between sentences) and write JSON Lines: a first line with the file's own header, "
        "then guid, text and entities (start, end exclusive, label, text) per sentence. "
        "from-spans: the reverse. A file read and written back is byte-identical. A "
        "malformed line exits 2 naming the file and the line; nothing is written then.",
    )
    layout.add_argument(
        "direction",
        choices=["to-spans", "from-spans"],
        help="to-spans: release .tsv -> .jsonl; from-spans: .jsonl -> .tsv",
    )
    layout.add_argument("source", type=Path, help="the file to read")
    layout.add_argument("--out", type=Path, required=True, help="the file to write")
    tagger = ksub.add_parser(
        "ner-tagger",
        help="train the character NER tagger (KLUE 3.4.1's pseudo-labeller) on a KMOU corpus",
        description="Train a character-level token classifier (transformers, from scratch) "
        "on a KMOU-format NER corpus (the 2016 release: '; raw' and '$ inline-tagged' lines "
        "per sentence, .gz allowed), its types mapped to KLUE's six, decoded with a "
        "constrained BIO Viterbi. Writes the checkpoint, chars.json, metrics.json (dev "
        "entity F1 with seqeval, character macro F1, per type) and MODEL_CARD.md into OUT. "
        "Resumable by epoch: run the same command again after an interruption. Uses the "
        "GPU when there is one.",
    )
    tagger.add_argument("--train", type=Path, required=True, help="KMOU-format training file")
    tagger.add_argument("--dev", type=Path, required=True, help="KMOU-format dev file")
    tagger.add_argument("--out", type=Path, required=True, help="the checkpoint folder")
    tagger.add_argument("--limit", type=int, default=None,
                        help="train on the first N sentences only (default: all)")  # fmt: skip
    defaults = _tagger_defaults()
    for name, kind, what in (
        ("epochs", int, "training epochs"),
        ("hidden", int, "hidden size"),
        ("layers", int, "transformer layers"),
        ("heads", int, "attention heads"),
        ("intermediate", int, "feed-forward size"),
        ("max-length", int, "characters per window"),
        ("batch-size", int, "windows per batch"),
        ("lr", float, "peak learning rate (warm-up, then cosine decay)"),
        ("seed", int, "random seed"),
    ):
        default = getattr(defaults, name.replace("-", "_"))
        tagger.add_argument(f"--{name}", type=kind, default=default,
                            help=f"{what} (default: {default})")  # fmt: skip
    tagger.add_argument("--precision", default="auto", choices=["auto", "fp32", "bf16", "fp16"],
                        help="auto: bf16 on a GPU that has it, fp32 on a CPU")  # fmt: skip
    tagger.add_argument("--device", default=None, help="cuda or cpu (default: cuda when present)")


def _tagger_defaults():  # noqa: ANN202 - the tagger's default settings
    from pipelines.models.char_tagger import TaggerSettings

    return TaggerSettings()


def ner_tagger(args: argparse.Namespace) -> int:
    from pipelines.families.klue.kmou import read_kmou, training_pairs
    from pipelines.models.char_tagger import TaggerSettings, train_tagger

    frames = {}
    for name in ("train", "dev"):
        path = getattr(args, name)
        if not path.is_file():
            raise FileNotFoundError(f"{path}: file not found")
        frame, dropped, _ = read_kmou(path)
        if len(dropped):
            print(f"{path}: {len(dropped)} sentence(s) dropped: "
                  f"{dropped['reason'].value_counts().to_dict()}")  # fmt: skip
        frames[name] = frame.head(args.limit) if name == "train" and args.limit else frame
    settings = TaggerSettings(
        hidden=args.hidden, layers=args.layers, heads=args.heads, intermediate=args.intermediate,
        max_length=args.max_length, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
        seed=args.seed, precision=args.precision, device=args.device,
    )  # fmt: skip
    pairs = {n: training_pairs(f) for n, f in frames.items()}
    sources = {"train": args.train.name + (f" (first {args.limit})" if args.limit else ""),
               "dev": args.dev.name}  # fmt: skip
    metrics = train_tagger(pairs["train"], pairs["dev"], settings, args.out, sources)
    dev = metrics["dev"] or {}
    print(f"dev entity F1 {dev.get('entity_f1')}, char macro F1 {dev.get('char_macro_f1')} "
          f"(best epoch {metrics['best_epoch']}, {metrics['device']}) -> {args.out}")  # fmt: skip
    return 0


def ner_layout(args: argparse.Namespace) -> int:
    from pipelines.core.io import read_text, write_text
    from pipelines.families.klue.ner_layout import (
        NerLayoutError,
        from_spans,
        read_file,
        to_spans,
        write_layout,
    )

    if not args.source.is_file():
        raise NerLayoutError(f"{args.source}: file not found")
    if args.direction == "to-spans":
        release = read_file(args.source)
        text = to_spans(release)
    else:
        release = from_spans(read_text(args.source), str(args.source))
        text = write_layout(release)
    write_text(text, args.out)  # atomically, and only once everything was read
    entities = sum(len(s.entities) for s in release.sentences)
    print(f"{len(release.sentences)} sentences, {entities} entities -> {args.out}")
    return 0
