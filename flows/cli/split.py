"""``benchforge split``: artifact-aware train/dev/test splits and the artifact report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pipelines.core.settings import from_namespace
from pipelines.splits.base import SPLIT_RULES, SplitError
from pipelines.splits.ner import NerSplitSettings
from pipelines.splits.nli import HYPOTHESIS_MODEL, NliSplitSettings
from pipelines.splits.tc import TcSplitSettings


def add_parser(sub: argparse._SubParsersAction) -> None:
    nli_defaults, tc_defaults, ner_defaults = (
        NliSplitSettings(),
        TcSplitSettings(),
        NerSplitSettings(),
    )
    defaults = nli_defaults
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
        choices=SPLIT_RULES.names(),
        help="sts: KLUE 3.2.1 (uniform score bins, overlap preference, source shares, "
        "dev:test 1:2); nli: KLUE 3.3.1 (cross-fitted hypothesis-only classifier, only the "
        "lowest 20%% of premise sets by cross entropy with the uniform distribution in "
        "dev/test, 60/40 formal/colloquial source quotas); tc: KLUE 3.1.1 (by date, unseen "
        "terms preferred); ner: KLUE 3.4.1 (test holds entities unseen in train); random: "
        "seeded, by unit",
    )
    split.add_argument("--out", type=Path, required=True, help="output folder")
    split.add_argument(
        "--items", type=Path, default=None, help="items with the text columns, joined on item_id"
    )
    split.add_argument(
        "--text-columns",
        nargs="+",
        default=None,
        help="text columns, first and last compared for overlap (by rule: sts/random "
        "sentence1 sentence2; nli premise hypothesis; tc title; ner sentence)",
    )
    split.add_argument(
        "--group", nargs="*", default=[], help="columns whose shared values keep items together"
    )
    split.add_argument(
        "--source-column",
        default=None,
        help=f"source column ({defaults.source_column}, used when there is one; a column "
        "named here must exist)",
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
        default=None,
        help="dev's share of dev+test (sts 1/3: dev:test = 1:2, KLUE-STS; others 1/2)",
    )
    split.add_argument(
        "--near-duplicate-threshold",
        type=float,
        default=defaults.near_duplicate_threshold,
        help="character 3-gram Jaccard at which texts count as duplicates (0.8)",
    )
    nli = split.add_argument_group("nli rule")
    nli.add_argument(
        "--eligible-fraction",
        type=float,
        default=nli_defaults.eligible_fraction,
        help="share of premise sets, lowest cross entropy first, that may go to dev/test (0.2)",
    )
    nli.add_argument(
        "--folds", type=int, default=nli_defaults.folds, help="cross-fitting folds of the "
        "hypothesis-only classifier (5)",
    )  # fmt: skip
    nli.add_argument(
        "--style-column", default=nli_defaults.style_column, help="a source's style column (style)"
    )
    nli.add_argument(
        "--style-shares",
        nargs="+",
        default=[f"{k}={v}" for k, v in nli_defaults.style_shares.items()],
        metavar="STYLE=SHARE",
        help="dev/test share of each style, equal counts per source within a style "
        "(formal=0.6 colloquial=0.4)",
    )
    nli.add_argument(
        "--hypothesis-model",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="hypothesis-only classifier settings: vocab_size hidden layers heads "
        "intermediate max_length epochs batch_size lr (defaults: a 2x128 BERT, 4 epochs)",
    )
    nli.add_argument(
        "--partial-models",
        nargs="+",
        choices=["bert", "bow"],
        default=list(nli_defaults.partial_models),
        help="cross-fitted partial-input models to train; the split ranks by the one with "
        "the higher out-of-fold accuracy (bert: the small BERT; bow: bag of morphemes + "
        "logistic regression) (bert bow)",
    )
    nli.add_argument("--device", default=None, help="cpu or cuda (default: cuda when present)")
    tc = split.add_argument_group("tc rule")
    tc.add_argument(
        "--date-column",
        default=tc_defaults.date_column,
        help="date column (date); 'none' for undated items: dev/test then go to the units "
        "with the most terms found in no other unit (KLUE 3.1.1's second criterion only)",
    )
    tc.add_argument(
        "--cutoff",
        default=None,
        help="items on or after this date go to dev/test (default: the date that puts "
        "--eval-fraction of the items on or after it)",
    )
    ner = split.add_argument_group("ner rule")
    ner.add_argument(
        "--entity-column",
        default=ner_defaults.entity_column,
        help="entities column: a list of strings or of spans with text, or JSON (entities)",
    )
    ner.add_argument(
        "--unseen-test-share",
        type=float,
        default=ner_defaults.unseen_test_share,
        help="share of test filled first with items whose entities occur nowhere else (0.5)",
    )
    ner.add_argument(
        "--per-source",
        action="store_true",
        help="fill dev and test per source (--source-column), each source with its "
        "--eval-fraction, as KLUE 3.4.1 splits news and reviews apart",
    )
    balanced = split.add_argument_group("balanced rule")
    balanced.add_argument(
        "--balance-column",
        default="style",
        help="the column whose values dev and test hold in equal numbers (style: KLUE 2.4's "
        "formal and colloquial, for KLUE-DP)",
    )
    split.add_argument("--seed", type=int, default=0, help="random seed (0)")
    split.add_argument("--json", action="store_true", help="print artifacts.json")


def run(args: argparse.Namespace) -> int:
    from pipelines.splits.base import SplitSettings
    from pipelines.splits.run import run_split

    cls = SPLIT_RULES.get(args.rule).settings
    defaults = NliSplitSettings()
    require = (args.source_column,) if args.source_column is not None else ()
    if args.source_column is None:
        args.source_column = defaults.source_column
    convert = {
        "text_columns": lambda v: list(v) if v else None,
        "style_shares": lambda v: _pairs(v, "--style-shares", float),
        "hypothesis_model": lambda v: {**HYPOTHESIS_MODEL,
                                       **_pairs(v, "--hypothesis-model", _number)},
        "date_column": lambda v: None if str(v).lower() == "none" else v,
        "partial_models": list,
    }  # fmt: skip
    settings = SplitSettings(**from_namespace(cls, args, convert, group_columns=list(args.group)))
    result = run_split(args.gold, settings, args.out, args.items, require=require)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print(f"splits: {result['splits']}")
    only = result.get("last_column_only")
    if only:
        print(
            f"last-column-only accuracy {only['accuracy']} vs majority baseline "
            f"{only['majority_baseline']}"
        )
    hyp = result.get("rule_figures", {}).get("hypothesis_only")
    if hyp:
        print(
            f"hypothesis-only classifier (cross-fitted): train {hyp['accuracy_train']}, "
            f"dev+test {hyp['accuracy_dev_test']} vs majority {hyp['majority_baseline_dev_test']}"
        )
    for warning in result.get("warnings", []):
        print(f"benchforge: warning: {warning}", file=sys.stderr)
    state = "written to" if result["written"] else "unchanged in"
    print(f"Outputs {state} {args.out} (artifacts.md for the report)")
    return 0


def _number(text: str) -> int | float:
    return int(text) if text.lstrip("-").isdigit() else float(text)


def _pairs(values: list[str], option: str, cast) -> dict:  # noqa: ANN001
    """KEY=VALUE arguments as a dict; a clear error for a malformed one."""
    out = {}
    for value in values:
        key, sep, raw = value.partition("=")
        try:
            if not sep or not key:
                raise ValueError
            out[key] = cast(raw)
        except ValueError:
            raise SplitError(f"{option}: expected KEY=VALUE with a number, got {value!r}") from None
    return out
