"""``benchforge klue ...``: KLUE's pieces on their own (Park et al. 2021): ``ner-layout``
turns a KLUE-NER release file into character spans and back; ``ner-tagger`` trains the
character tagger that pseudo-labels KLUE-NER's sentences (a checkpoint a recipe's
``ner.tagger.checkpoint`` can name); ``dp-layout`` turns a KLUE-DP release file into
trees and back, ``dp-check`` runs the errata checks on one, ``dp-parser`` trains the
pseudo-parser on UD Korean trees (issue 57); ``wos-layout`` turns a KLUE-WoS release
file into turns and back and ``wos-check`` checks one against its ontology (issue 58)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    klue = sub.add_parser(
        "klue",
        help="KLUE: the KLUE-NER and KLUE-DP release layouts, their checks, the NER tagger "
        "and the DP parser",
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
    dp = ksub.add_parser(
        "dp-layout",
        help="a KLUE-DP release file (.tsv) to trees (.jsonl), or back",
        description="to-trees: read a KLUE-DP release file (a '## <guid>\\t<sentence>' "
        "line, then one 'INDEX\\tWORD_FORM\\tLEMMA\\tPOS\\tHEAD\\tDEPREL' line per word, a "
        "blank line between sentences) and write JSON Lines: a first line with the file's "
        "layout, then guid, text and words (form, lemma, pos, head, deprel) per sentence. "
        "from-trees: the reverse. A file read and written back is byte-identical. A wrong "
        "column count, a head out of range, a cycle, no root or two, a label outside "
        "KLUE's tagset, words that do not spell the sentence: exit 2 naming the file and "
        "the line; nothing is written then.",
    )
    dp.add_argument(
        "direction",
        choices=["to-trees", "from-trees"],
        help="to-trees: release .tsv -> .jsonl; from-trees: .jsonl -> .tsv",
    )
    dp.add_argument("source", type=Path, help="the file to read")
    dp.add_argument("--out", type=Path, required=True, help="the file to write")
    check = ksub.add_parser(
        "dp-check",
        help="errata checks on a KLUE-DP file (KLUE's own or one benchforge wrote)",
        description="Report, per kind and with the line, what a KLUE-DP release file "
        "carries: morphemes that do not rebuild their word, spreadsheet damage (#NAME?, a "
        "number made a percentage), POS tags outside the Sejong tagset, labels outside "
        "KLUE's, no root or two roots, cycles, heads before their word (KLUE-DP is "
        "head-final), non-projective arcs (reported, not fatal), wrong column counts. "
        "Exit 0 when no fatal problem is found, 1 otherwise.",
    )
    check.add_argument("files", type=Path, nargs="+", help="KLUE-DP .tsv files")
    check.add_argument(
        "--show", type=int, default=10, help="problems to list per file (default 10)"
    )
    check.add_argument("--json", action="store_true", help="the counts as JSON")
    wos = ksub.add_parser(
        "wos-layout",
        help="a KLUE-WoS release file (.json) to turns (.jsonl), or back",
        description="to-turns: read a KLUE-WoS release file (a JSON list of dialogues: "
        "guid, domains, dialogue: turns with role user or sys, text, and a user turn's "
        "cumulative state of 'domain-slot-value' strings) and write JSON Lines: a first "
        "line with the file's layout, then one object per turn (guid, domains, index, "
        "role, text, state). from-turns: the reverse. A file read and written back is "
        "byte-identical. A dialogue without a guid or a user turn, a role other than user "
        "or sys, a state that is not 'domain-slot-value' strings: exit 2 naming the file "
        "and the line; nothing is written then.",
    )
    wos.add_argument(
        "direction",
        choices=["to-turns", "from-turns"],
        help="to-turns: release .json -> .jsonl; from-turns: .jsonl -> .json",
    )
    wos.add_argument("source", type=Path, help="the file to read")
    wos.add_argument("--out", type=Path, required=True, help="the file to write")
    wcheck = ksub.add_parser(
        "wos-check",
        help="errata checks on a KLUE-WoS file against its ontology",
        description="Report, per kind and with the line of the dialogue, what a KLUE-WoS "
        "release file carries against an ontology: values outside a closed slot's values "
        "or slots outside the ontology, a slot that leaves the cumulative state, a slot "
        "of a domain the dialogue does not list, a listed domain no state uses (reported, "
        "not fatal). Exit 0 when no fatal problem is found, 1 otherwise.",
    )
    wcheck.add_argument("files", type=Path, nargs="+", help="KLUE-WoS .json files")
    wcheck.add_argument(
        "--ontology", type=Path, default=None,
        help="the ontology (default: ontology.json beside the file)",
    )  # fmt: skip
    wcheck.add_argument("--show", type=int, default=10, help="problems to list per file")
    wcheck.add_argument("--json", action="store_true", help="the counts as JSON")
    parser = ksub.add_parser(
        "dp-parser",
        help="train the KLUE-DP pseudo-parser on UD Korean trees (CoNLL-U)",
        description="Convert UD treebanks to KLUE-DP's conventions (eojeols, heads last, "
        "KLUE labels from MeCab's morphology and the UD relation), hold out every "
        "HOLDOUT-th sentence of each file, train a head-final biaffine parser and write "
        "parser.json (held-out UAS and LAS, the right-branching baseline's UAS) and "
        "model.safetensors into OUT; a recipe's dp.parser.checkpoint can name it.",
    )
    parser.add_argument("--train", type=Path, nargs="+", required=True, help="CoNLL-U files")
    parser.add_argument("--out", type=Path, required=True, help="the checkpoint folder")
    parser.add_argument("--holdout", type=int, default=10, help="hold out every Nth sentence")
    parser.add_argument("--encoder", choices=["lstm", "transformer"], default="lstm")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when present)")


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


def _convert_layout(args: argparse.Namespace, layout: object, to_json: str, noun: str,
                    count: object) -> int:  # fmt: skip
    """A KLUE release file to its JSON Lines (``args.direction`` ``to_json``) or back,
    with ``layout``'s reader and writer; the target written atomically, and only once
    the whole source was read."""
    from pipelines.core.io import read_text, write_text

    if not args.source.is_file():
        raise layout.LayoutError(f"{args.source}: file not found")
    if args.direction == to_json:
        release = layout.read_file(args.source)
        text = layout.to_json(release)
    else:
        release = layout.from_json(read_text(args.source), str(args.source))
        text = layout.write_layout(release)
    write_text(text, args.out)
    units = getattr(release, "sentences", None)
    units, unit = (units, "sentences") if units is not None else (release.dialogues, "dialogues")
    print(f"{len(units)} {unit}, {count(release)} {noun} -> {args.out}")
    return 0


def ner_layout(args: argparse.Namespace) -> int:
    from types import SimpleNamespace

    from pipelines.families.klue import ner_layout as m

    layout = SimpleNamespace(LayoutError=m.NerLayoutError, read_file=m.read_file,
                             to_json=m.to_spans, from_json=m.from_spans,
                             write_layout=m.write_layout)  # fmt: skip
    return _convert_layout(args, layout, "to-spans", "entities",
                           lambda r: sum(len(s.entities) for s in r.sentences))  # fmt: skip


def dp_layout(args: argparse.Namespace) -> int:
    from types import SimpleNamespace

    from pipelines.families.klue import dp_layout as m

    layout = SimpleNamespace(LayoutError=m.DpLayoutError, read_file=m.read_file,
                             to_json=m.to_trees, from_json=m.from_trees,
                             write_layout=m.write_layout)  # fmt: skip
    return _convert_layout(args, layout, "to-trees", "words",
                           lambda r: sum(len(s.words) for s in r.sentences))  # fmt: skip


def wos_layout(args: argparse.Namespace) -> int:
    from types import SimpleNamespace

    from pipelines.families.klue import wos_layout as m

    layout = SimpleNamespace(LayoutError=m.WosLayoutError, read_file=m.read_wos,
                             to_json=m.to_turns, from_json=m.from_turns,
                             write_layout=m.write_wos)  # fmt: skip
    return _convert_layout(args, layout, "to-turns", "turns",
                           lambda r: sum(len(d.turns) for d in r.dialogues))  # fmt: skip


def wos_check(args: argparse.Namespace) -> int:
    import json

    from pipelines.families.klue.wos_layout import WosLayoutError, errata, read_wos
    from pipelines.families.klue.wos_ontology import read_ontology

    report, fatal = {}, False
    for path in args.files:
        if not path.is_file():
            raise WosLayoutError(f"{path}: file not found")
        source = args.ontology or path.with_name("ontology.json")
        if not source.is_file():
            raise WosLayoutError(f"{path}: no ontology: {source} not found (--ontology PATH)")
        release, found = read_wos(path), errata(read_wos(path), read_ontology(source))
        counts = found.counts()
        fatal |= any(p.fatal for p in found.problems)
        report[str(path)] = {"dialogues": len(release.dialogues),
                             "user_turns": sum(len(d.user_turns()) for d in release.dialogues),
                             "ontology": str(source), "problems": counts}  # fmt: skip
        if args.json:
            continue
        print(f"{path}: {len(release.dialogues)} dialogues, "
              f"{report[str(path)]['user_turns']} user turns (ontology {source})")  # fmt: skip
        for kind, n in counts.items():
            flag = "error" if any(p.fatal for p in found.problems if p.kind == kind) else "note"
            print(f"  {kind:20} {n:6}  ({flag})")
        for p in found.problems[: args.show]:
            print(f"  {path}:{p.line}: {p.kind}: {p.guid}: {p.detail}")
        if not counts:
            print("  no problem found")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    return 1 if fatal else 0


def dp_check(args: argparse.Namespace) -> int:
    import json

    from pipelines.families.klue.dp_layout import KINDS, DpLayoutError, errata, errata_counts

    report, fatal = {}, False
    for path in args.files:
        if not path.is_file():
            raise DpLayoutError(f"{path}: file not found")
        release, problems = errata(path)
        counts = errata_counts(problems)
        fatal |= any(p.fatal for p in problems)
        report[str(path)] = {"sentences": len(release.sentences),
                             "words": sum(len(s.words) for s in release.sentences),
                             "problems": counts}  # fmt: skip
        if args.json:
            continue
        print(f"{path}: {len(release.sentences)} sentences, "
              f"{report[str(path)]['words']} words")  # fmt: skip
        for kind, n in counts.items():
            flag = "error" if kind in {p.kind for p in problems if p.fatal} else "note"
            print(f"  {kind:20} {n:6}  ({flag}) {KINDS[kind]}")
        for p in problems[: args.show]:
            print(f"  {path}:{p.line}: {p.kind}: {p.guid}: {p.detail}")
        if not counts:
            print("  no problem found")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    return 1 if fatal else 0


def dp_parser(args: argparse.Namespace) -> int:
    from pipelines.families.klue.dp_parse import train_on_ud
    from pipelines.models.dep_parser import ParserSettings

    settings = ParserSettings(encoder=args.encoder, epochs=args.epochs, seed=args.seed,
                              device=args.device)  # fmt: skip
    info = train_on_ud(list(args.train), settings, args.out, args.holdout)
    dev = info["dev"] or {}
    print(f"held-out UAS {dev.get('uas')}, LAS {dev.get('las')} ({info['dev_sentences']} "
          f"sentences; right-branching UAS {info['right_branching_dev_uas']}; best epoch "
          f"{info['best_epoch']}, {info['device']}) -> {args.out}")  # fmt: skip
    return 0
