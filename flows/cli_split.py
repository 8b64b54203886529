"""``benchforge split``: artifact-aware train/dev/test splits and the artifact report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipelines.splits import SPLIT_RULES, SplitSettings


def add_parser(sub: argparse._SubParsersAction) -> None:
    defaults = SplitSettings()
    split = sub.add_parser(
        "split",
        help="artifact-aware train/dev/test splits with an artifact report",
        description=(
            "Split gold items (e.g. `agree`'s gold.parquet, joined with --items for their "
            "texts) into train/dev/test. Items that share a group (--group) or whose texts "
            "are exact or near duplicates always land in one split. Writes OUT/splits.parquet "
            "(item_id, split, rule, reason, ...), OUT/artifacts.json and OUT/artifacts.md "
            "(label, length and overlap per label, cue morphemes by PMI and skew, a "
            "last-column-only classifier against the majority baseline; train and dev+test "
            "side by side)."
        ),
    )
    split.add_argument(
        "gold", type=Path, help="gold items: .parquet/.csv/.jsonl with item_id, label"
    )
    split.add_argument(
        "--rule",
        required=True,
        choices=SPLIT_RULES,
        help="sts: KLUE 3.2.1 (uniform score bins, overlap preference, source shares, "
        "dev:test 1:2); random: seeded, by unit",
    )
    split.add_argument("--out", type=Path, required=True, help="output folder")
    split.add_argument(
        "--items", type=Path, default=None, help="items with the text columns, joined on item_id"
    )
    split.add_argument(
        "--text-columns",
        nargs="+",
        default=defaults.text_columns,
        help="text columns, first and last compared for overlap (sentence1 sentence2)",
    )
    split.add_argument(
        "--group", nargs="*", default=[], help="columns whose shared values keep items together"
    )
    split.add_argument(
        "--source-column", default=defaults.source_column, help="source column (source)"
    )
    split.add_argument(
        "--eval-fraction",
        type=float,
        default=defaults.eval_fraction,
        help=f"dev+test share of the items ({defaults.eval_fraction})",
    )
    split.add_argument(
        "--dev-share",
        type=float,
        default=defaults.dev_share,
        help="dev's share of dev+test (1/3: dev:test = 1:2, KLUE)",
    )
    split.add_argument(
        "--near-duplicate-threshold",
        type=float,
        default=defaults.near_duplicate_threshold,
        help="character 3-gram Jaccard at which texts count as duplicates (0.8)",
    )
    split.add_argument("--seed", type=int, default=0, help="random seed (0)")
    split.add_argument("--json", action="store_true", help="print artifacts.json")


def run(args: argparse.Namespace) -> int:
    from pipelines.splits import run_split

    settings = SplitSettings(
        rule=args.rule,
        seed=args.seed,
        eval_fraction=args.eval_fraction,
        dev_share=args.dev_share,
        text_columns=list(args.text_columns),
        group_columns=list(args.group),
        source_column=args.source_column,
        near_duplicate_threshold=args.near_duplicate_threshold,
    )
    result = run_split(args.gold, settings, args.out, args.items)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    only = result["last_column_only"]
    print(f"splits: {result['splits']}")
    print(
        f"last-column-only accuracy {only['accuracy']} vs majority baseline "
        f"{only['majority_baseline']}"
    )
    state = "written to" if result["written"] else "unchanged in"
    print(f"Outputs {state} {args.out} (artifacts.md for the report)")
    return 0
