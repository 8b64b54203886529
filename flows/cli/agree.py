"""``benchforge agree``: gold labels and reliability figures from an annotation table."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from pipelines.agreement.rules import AGREEMENT_RULES, AgreementSettings, MeanSettings
from pipelines.agreement.settings import ALPHA_LEVELS
from pipelines.annotation.values import VALUE_TYPES
from pipelines.core.settings import from_namespace


def add_parser(sub: argparse._SubParsersAction) -> None:
    defaults = MeanSettings()
    agree = sub.add_parser(
        "agree",
        help="gold labels from annotations: screening, rules, reliability figures",
        description=(
            "Turn a long table of annotations (Parquet or CSV with item_id, annotator_id, "
            "value; optional role, field, cancelled, report_flags, as `annotate pull` "
            "writes) into gold labels. Writes OUT/gold.parquet (one row per kept item with "
            "its label, number of annotations and agreement figures), OUT/dropped.parquet "
            "(every dropped item and annotator with its reason) and OUT/agreement.json "
            "(Krippendorff's alpha at four levels, Fleiss' kappa, per-annotator Pearson, "
            "and KLUE's NLI validation table when an author role is present)."
        ),
    )
    agree.add_argument("annotations", type=Path, help="the annotation table (.parquet/.csv)")
    agree.add_argument(
        "--rule",
        required=True,
        choices=AGREEMENT_RULES.names(),
        help="mean: KLUE-STS (screening, mean label rounded, binary label, disagreement "
        "drops); majority: the label with at least --min-votes votes; span_vote: the "
        "spans, relations or arcs at least --min-votes annotators marked; tree_vote: one "
        "dependency tree per item, always a tree (plurality per word, else the maximum "
        "spanning arborescence of the votes)",
    )
    agree.add_argument("--out", type=Path, required=True, help="output folder")
    agree.add_argument(
        "--field",
        default=None,
        help="which field of a pulled table to aggregate (default: the only answer field)",
    )
    agree.add_argument(
        "--min-votes",
        type=int,
        default=None,
        help="majority, span_vote: votes needed, the author's included (KLUE-NLI 3 of 5, "
        "KLUE-TC 2 of "
        "3, JNLI 6 of 10, MARC-ja 7 of 10)",
    )
    agree.add_argument(
        "--majority-share-min",
        type=_threshold,
        default=None,
        help="majority: screen out an annotator who gives the others' majority answer on "
        "fewer than this share of the items, in (0, 1]; 'off' screens no one (off)",
    )
    agree.add_argument(
        "--element-f1-min",
        type=_threshold,
        default=None,
        help="span_vote: screen out an annotator whose mean element F1 against the spans "
        "(relations, arcs) most of the others marked is under this, in (0, 1]; 'off' "
        "screens no one (off)",
    )
    agree.add_argument(
        "--suggestion-accept-max",
        type=_threshold,
        default=None,
        help="screen out an annotator who accepts at least this share of the pre-loaded "
        "suggestions unchanged while the others accept less, in (0, 1]; 'off' screens no "
        "one (off; pipelines/agreement/suggestions.py)",
    )
    agree.add_argument(
        "--suggestion-min-items",
        type=int,
        default=5,
        help="an annotator with fewer items with a suggestion is not screened on it (5)",
    )
    agree.add_argument(
        "--min-screened-items",
        type=int,
        default=3,
        help="majority, span_vote: an annotator with fewer items counted for the screening "
        "is not screened (3)",
    )
    agree.add_argument(
        "--value-type",
        default="span_set",
        choices=VALUE_TYPES.names(),
        help="span_vote: the set-valued answers voted on element by element (span_set: "
        "entities; relation; dependency_tree), whose agreement measures are reported "
        "(span_set)",
    )
    agree.add_argument(
        "--pearson-min",
        type=_threshold,
        default=defaults.pearson_min,
        help="mean: drop an annotator whose Pearson r with the others' mean is lower, in "
        f"[-1, 1]; 'off' screens no one on it ({defaults.pearson_min}; KLUE-STS)",
    )
    agree.add_argument(
        "--alpha-min",
        type=_threshold,
        default=defaults.alpha_min,
        help="mean: drop an annotator whose Krippendorff alpha with the others' mean is "
        f"lower, in [-1, 1]; 'off' screens no one on it ({defaults.alpha_min}; KLUE-STS)",
    )
    agree.add_argument(
        "--alpha-level",
        choices=list(ALPHA_LEVELS),
        default=defaults.alpha_level,
        help="mean: the level of that alpha; nominal and ordinal compare the annotator with "
        f"the others' most common rating, interval and ratio with their mean "
        f"({defaults.alpha_level}; KLUE 3.2.1)",
    )
    agree.add_argument(
        "--min-shared-items",
        type=int,
        default=defaults.min_shared_items,
        help="mean: annotators sharing fewer items with others are not screened "
        f"({defaults.min_shared_items})",
    )
    agree.add_argument(
        "--sd-max",
        type=float,
        default=defaults.sd_max,
        help="mean: drop items whose label sd is more than this many sd above the mean item "
        f"sd ({defaults.sd_max}; KLUE-STS); a negative value turns it off",
    )
    agree.add_argument(
        "--variance-max",
        type=float,
        default=None,
        help="mean: drop items whose label variance is this or more (JSTS: 1.0; off)",
    )
    agree.add_argument(
        "--binary-threshold",
        type=float,
        default=defaults.binary_threshold,
        help=f"mean: binary label 1 at or above this label ({defaults.binary_threshold})",
    )
    agree.add_argument(
        "--report-flags",
        nargs="*",
        default=defaults.report_flags,
        help="report flags that drop an item (default: " + " ".join(defaults.report_flags) + ")",
    )
    agree.add_argument(
        "--report-min",
        type=int,
        default=defaults.report_min,
        help=f"annotators who must raise a flag for it to drop the item ({defaults.report_min})",
    )
    allowed = agree.add_mutually_exclusive_group()
    allowed.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the Label Studio config the annotations came from: every value must be one of "
        "its answer control's options (e.g. 0-5 for sts.xml); a value outside them is an "
        "error naming the row",
    )
    allowed.add_argument(
        "--values",
        default=None,
        help="the allowed values, comma-separated (e.g. 0,1,2,3,4,5), instead of --config. "
        "Without either, any value is accepted, but the mean rule always needs finite numbers",
    )
    tree = agree.add_argument_group("tree_vote rule (dependency trees, issue 57)")
    tree.add_argument(
        "--head-final",
        action="store_true",
        help="tree_vote: only heads after their word count, the last word the root (KLUE-DP)",
    )
    tree.add_argument(
        "--max-weak-share",
        type=float,
        default=None,
        help="tree_vote: drop a sentence whose share of arcs chosen by fewer than "
        "--min-votes annotators is above this (default: keep every sentence)",
    )
    agree.add_argument(
        "--reports",
        choices=["auto", "review"],
        default="auto",
        help="auto: drop a reported item (report_min); review: a reported item's fate is its "
        "review decision in --reviews (issue 35; an item without one is dropped) (auto)",
    )
    agree.add_argument(
        "--reviews",
        type=Path,
        default=None,
        help="with --reports review: the reviewers' decisions (.parquet/.csv: item_id, "
        "decision keep/drop/fix, reason, reviewer, fix as JSON {field: text})",
    )
    agree.add_argument("--json", action="store_true", help="print agreement.json")


def _threshold(text: str) -> float | None:
    """A screening threshold: a number, or ``off`` (no screening on it)."""
    if text.strip().lower() in ("off", "none", "null"):
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'off', got {text!r}") from None


def _allowed(args: argparse.Namespace) -> list[str] | None:
    """The allowed values from --values or from the answer control of --config."""
    from pipelines.agreement.rules import AgreementError
    from pipelines.annotation.label_config import parse_label_config

    if args.values:
        return [v.strip() for v in args.values.split(",") if v.strip()]
    if args.config is None:
        return None
    config = parse_label_config(args.config)
    control = config.answer_control(args.field)
    if control is None or not control.options:
        names = [c.name for c in config.answer_controls]
        raise AgreementError(
            f"{args.config}: choose the answer control with --field (controls: {names})"
        )
    return list(control.options)


def run(args: argparse.Namespace) -> int:
    from pipelines.agreement.rules import AgreementError, run_agree

    cls = AGREEMENT_RULES.get(args.rule).settings
    convert = {
        "sd_max": lambda v: None if v is not None and v < 0 else v,
        "report_flags": list,
    }
    options = from_namespace(cls, args, convert, answer_field=args.field, values=_allowed(args))
    settings = AgreementSettings(**options)
    reviews = None
    if args.reviews is not None:
        reviews = (pd.read_csv(args.reviews, dtype=str, keep_default_na=False)
                   if args.reviews.suffix == ".csv" else pd.read_parquet(args.reviews))  # fmt: skip
        missing = {"item_id", "decision", "reviewer"} - set(reviews.columns)
        if missing:
            raise AgreementError(f"{args.reviews}: no column(s) {sorted(missing)}")
        for column in ("reason", "fix"):
            if column not in reviews.columns:
                reviews[column] = None
    figures = run_agree(args.annotations, settings, args.out, reviews=reviews)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=2))
        return 0
    print(
        f"{figures['gold_items']} of {figures['items']} items kept "
        f"({figures['annotators']} annotators, {figures['ratings']} ratings); dropped items: "
        f"{figures['dropped_items'] or 'none'}; dropped annotators: "
        f"{figures['dropped_annotators'] or 'none'}"
        + (
            f"; dropped ratings: {figures['dropped_ratings']}"
            if figures.get("dropped_ratings")
            else ""
        )
    )
    print(measures_line(figures))
    for warning in figures.get("warnings", []):
        print(f"benchforge: warning: {warning}", file=sys.stderr)
    state = "written to" if figures["written"] else "unchanged in"
    print(f"Outputs {state} {args.out}")
    return 0


def measures_line(figures: dict) -> str:
    """The agreement measures of agreement.json in one line (the value type's own)."""
    if "krippendorff_alpha" in figures:
        alpha = figures["krippendorff_alpha"]
        return (
            "Krippendorff alpha "
            + ", ".join(f"{k} {v}" for k, v in alpha.items())
            + f"; Fleiss kappa {figures['fleiss_kappa']['kappa']}"
        )
    return f"{figures.get('value_type')}: " + "; ".join(
        f"{k} {json.dumps(figures.get(k), ensure_ascii=False)}" for k in figures["measures"]
    )
