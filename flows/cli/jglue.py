"""``benchforge jglue ...``: JGLUE's construction rules on their own (Kurihara et al.
2022): JCommonsenseQA's question filters (JGLUE 3.4.2), the captions of JSTS / JNLI
release files (3.2) and JSQuAD's SQuAD layout read and written back (3.3);
``benchforge rebuild`` runs the jsts and jnli task kinds."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_parsers(sub: argparse._SubParsersAction) -> None:
    jglue = sub.add_parser(
        "jglue",
        help="JGLUE: JCommonsenseQA's question filters, captions of JSTS/JNLI files, the "
        "SQuAD layout of JSQuAD",
        description="JGLUE's construction rules (Kurihara et al. 2022) on Japanese text.",
    )
    jsub = jglue.add_subparsers(dest="action", required=True, metavar="ACTION")
    filt = jsub.add_parser(
        "jcqa-filter",
        help="run JCommonsenseQA's question filters over question files",
        description="Run JCommonsenseQA's question filters (JGLUE 3.4.2: a question that "
        'contains one of its choice words, has an "XX文字" expression or does not end '
        "with a question mark is dropped, and so is a question set whose choices are "
        "spelling variants of one word, the same UniDic lemma, or hold one word twice) over "
        "JCommonsenseQA JSON "
        "Lines files. Writes DIR/kept.jsonl, DIR/dropped.parquet (every filter's reason), "
        "DIR/report.json and prints how many questions pass each filter. A malformed line "
        "exits 2 naming the file and the line.",
    )
    filt.add_argument("files", type=Path, nargs="+", help="JCommonsenseQA JSON Lines files")
    filt.add_argument("--out", type=Path, required=True, help="output folder")
    caps = jsub.add_parser(
        "captions",
        help="recover the YJ Captions captions per image from JSTS / JNLI release files",
        description="Read JSTS / JNLI JSON Lines release files (sentence_pair_id, "
        "yjcaptions_id, sentence1, sentence2, label), recover every caption per image from "
        "the pairs' yjcaptions_id, and drop captions whose share of Japanese script is "
        "under --min-share (text in the wrong language). Writes DIR/captions.parquet, "
        "DIR/dropped.parquet, DIR/variants.parquet (a caption written differently in two "
        "places), DIR/captions.json. A malformed line exits 2 naming the file and line.",
    )
    caps.add_argument("files", type=Path, nargs="+", help="JSTS / JNLI JSON Lines files")
    caps.add_argument("--out", type=Path, required=True, help="output folder")
    caps.add_argument(
        "--min-share",
        type=float,
        default=0.5,
        help="the least share of Japanese script (kana, kanji) among a caption's letters "
        "(default 0.5)",
    )
    squad = jsub.add_parser(
        "squad-roundtrip",
        help="read a SQuAD-layout file (JSQuAD) into records and write it back",
        description="Read a SQuAD v1.1 / 2.0 layout file (JSQuAD's release: data[].title, "
        "paragraphs[].context, qas[].id, question, answers[].text and answer_start, "
        "is_impossible) into one record per question, check every answer (a span of its "
        "paragraph that spells its text), and write the records back in the file's own "
        "style. A release file comes back byte-identical; the command says whether it did. "
        "A malformed file or a wrong answer exits 2 naming the file and the question; "
        "nothing is written then.",
    )
    squad.add_argument("source", type=Path, help="the SQuAD-layout JSON file to read")
    squad.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    squad.add_argument(
        "--records", type=Path, default=None,
        help="also write the records as JSON Lines (one question a line)",
    )  # fmt: skip


def squad_roundtrip(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_text
    from pipelines.export.records import jsonl
    from pipelines.families.reading.squad import read_file, write_squad

    release = read_file(args.source)
    text = write_squad(release)  # everything read and checked before anything is written
    if args.records is not None:
        write_text(jsonl(release.records), args.records)
    write_text(text, args.out)
    same = text == args.source.read_text(encoding="utf-8")
    how = "byte-identical" if same else "equal as JSON, formatted differently"
    questions = sum(1 for r in release.records if "question" in r)
    articles = len({r["article"] for r in release.records})
    print(f"{questions:,} questions in {articles:,} articles -> {args.out} ({how})")
    return 0


def captions(args: argparse.Namespace) -> int:
    from pipelines.core.io import sha256_file, write_outputs
    from pipelines.families.jglue.release import ReleaseError, caption_tables

    if not 0 <= args.min_share <= 1:  # issue 32: 5 kept nothing with exit 0
        raise ReleaseError(f"--min-share is a share of letters, in [0, 1]; got {args.min_share}")
    tables, info = caption_tables(list(args.files), "ja", args.min_share)
    # the key holds what the outputs depend on: the files' bytes and the threshold (issue
    # 32: a rerun with another --min-share printed new figures over the old files)
    key = json.dumps(
        {"files": [sha256_file(p) for p in args.files], "min_share": args.min_share},
        sort_keys=True,
    )
    written = write_outputs(args.out, key, tables, {"captions.json": info})
    print(
        f"{info['kept']:,} of {info['captions']:,} captions of {info['images']:,} images "
        f"kept; {info['wrong_language']} not Japanese ({info['wrong_language_share']:.2%}); "
        f"{info['variants']} written differently in two places -> {args.out}"
        + ("" if written else " (unchanged)")
    )
    return 0


def jcqa_filter(args: argparse.Namespace) -> int:
    import pandas as pd

    from pipelines.core.io import write_json, write_parquet, write_text
    from pipelines.export.records import jsonl
    from pipelines.families.jcqa.filters import read_questions, report, run_filters

    frames = []
    for path in args.files:
        frame = read_questions(path)
        frame["file"] = path.name
        frames.append(frame)
    checked = run_filters(pd.concat(frames, ignore_index=True))
    info = {"files": [str(p) for p in args.files], **report(checked)}
    info["per_file"] = {name: report(g) for name, g in checked.groupby("file")}
    args.out.mkdir(parents=True, exist_ok=True)
    columns = [c for c in frames[0].columns if c not in ("line", "file")]
    kept = checked.loc[checked["kept"], columns]
    write_text(jsonl(kept.to_dict(orient="records")), args.out / "kept.jsonl")
    write_parquet(checked[~checked["kept"]].astype({"q_id": str}), args.out / "dropped.parquet")
    write_json(info, args.out / "report.json")
    for name, f in info["filters"].items():
        print(f"{name:<18} {f['flagged']:>5} flagged, pass rate {f['pass_rate']:.2%}")
    print(f"{info['kept']:,} of {info['questions']:,} questions pass every filter "
          f"({info['pass_rate']:.2%}) -> {args.out}")  # fmt: skip
    return 0
