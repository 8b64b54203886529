"""``benchforge klue ...``: KLUE's release layouts on their own (Park et al. 2021):
``ner-layout`` turns a KLUE-NER release file into character spans and back."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    klue = sub.add_parser(
        "klue",
        help="KLUE: the KLUE-NER release layout to spans and back",
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


def ner_layout(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_text
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
        release = from_spans(args.source.read_text(encoding="utf-8"), str(args.source))
        text = write_layout(release)
    write_text(text, args.out)  # atomically, and only once everything was read
    entities = sum(len(s.entities) for s in release.sentences)
    print(f"{len(release.sentences)} sentences, {entities} entities -> {args.out}")
    return 0
