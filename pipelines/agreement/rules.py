"""Agreement filtering: annotator screening, gold labels and reliability figures.

Input: a long table of annotations with ``item_id``, ``annotator_id``, ``value`` and
optionally ``role`` (``author`` for the writer of an NLI hypothesis), ``field``,
``cancelled`` and ``report_flags`` (as written by ``benchforge annotate pull``). Items are
not labeled by every annotator: missing ratings stay missing (NaN in the reliability
matrix), they are never filled.

Rules (the papers' settings are the defaults of ``AgreementSettings``):

- ``mean`` (KLUE 3.2.1, STS): screen annotators first: an annotator whose Pearson r with
  the mean of the other annotators (on the items they share) is under 0.80, or whose
  Krippendorff alpha (interval) with that mean is under 0.20, is dropped with all their
  ratings. The gold label is the mean of the remaining ratings rounded to one decimal,
  with a binary label at >= 3.0. Items whose ratings disagree too much are dropped: the
  item's standard deviation is more than 2 standard deviations above the mean item
  standard deviation (``sd_max``). JSTS variant (Kurihara et al. 2022, 3.2): drop items
  whose rating variance is 1.0 or more (``variance_max``).
- ``majority`` with ``min_votes`` K (KLUE-NLI 3.3.1: 3 of 5 including the author; KLUE-TC
  3.1.1: 2 of 3 on the first-ranked topic; JNLI: 6 of 10; MARC-ja: 7 of 10): the label
  with at least K votes; items without one are dropped (``no_majority``).
- Report flags (KLUE: personal information, hate or bias, translation error, unable to
  decide) drop the item with the flag as its reason, when at least ``report_min``
  annotators raised it.

Figures: Krippendorff's alpha at the nominal, ordinal, interval and ratio levels (the
``krippendorff`` package; nominal only for non-numeric labels), Fleiss' kappa
(statsmodels; over the items with the most common number of ratings, since it needs an
equal count per item), Pearson per annotator against the others, and for NLI the
validation table of KLUE's Table 5.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from pipelines.agreement.measures import (  # noqa: F401 - re-exported: the rules' figures
    _round,
    alpha,
    alphas,
    fleiss,
    numeric_values,
    reliability_matrix,
)
from pipelines.annotation.label_config import REPORT_FIELDS
from pipelines.annotation.values import VALUE_TYPES
from pipelines.core.errors import BenchforgeError
from pipelines.core.io import read_table
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Recipe, StageOptions, check_stage_options
from pipelines.core.registry import Registry
from pipelines.core.settings import rule_settings

DROPPED_COLUMNS = ["kind", "id", "reason", "detail"]


class AgreementError(BenchforgeError, ValueError):
    """Annotations that cannot be used; the message names the file, the row or column."""


@dataclass
class AgreementSettingsBase:
    """What every agreement rule's settings start with: the rule and the answer field."""

    rule: str = "mean"
    answer_field: str | None = None  # the field to aggregate (default: the only one)

    numeric: ClassVar[bool] = False  # the rule averages: every value must be a number
    summary: ClassVar[tuple[str, ...]] = ()  # the settings an error message quotes


@dataclass
class _Answers(AgreementSettingsBase):
    """What every rule's settings end with (after the rule's own thresholds)."""

    # the answers the annotation interface allows (a single-choice control's options; the
    # rebuild takes them from the recipe's config): any other value is an error
    values: list[str] | None = None
    # report flags
    report_min: int = 1
    report_flags: list[str] = field(
        default_factory=lambda: [
            "personal_information",
            "hate_or_bias",
            "translation_error",
            "unable_to_decide",
        ]
    )


@dataclass
class _MeanThresholds(AgreementSettingsBase):
    pearson_min: float | None = 0.80
    alpha_min: float | None = 0.20
    min_shared_items: int = 3  # an annotator sharing fewer items is not screened (kept)
    decimals: int = 1
    binary_threshold: float = 3.0
    sd_max: float | None = 2.0
    variance_max: float | None = None  # JSTS: 1.0


@dataclass
class MeanSettings(_Answers, _MeanThresholds):
    """KLUE-STS (3.2.1): annotator screening, mean label, disagreement drops."""

    rule: str = "mean"

    numeric: ClassVar[bool] = True
    summary: ClassVar[tuple[str, ...]] = ("pearson_min", "alpha_min", "sd_max", "variance_max")

    def __post_init__(self) -> None:
        """Thresholds in their ranges (issue 32: ``pearson_min: -2`` or ``nan`` silently
        turned screening off): a correlation and an alpha in [-1, 1], ``null`` to turn the
        screen off; spreads and variances finite and not negative."""
        for name in ("pearson_min", "alpha_min"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and -1 <= value <= 1):
                raise AgreementError(
                    f"{name} must be in [-1, 1] (null or 'off' turns the screen off), got {value}"
                )
        for name in ("sd_max", "variance_max"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise AgreementError(f"{name} must be a finite number >= 0 or null, got {value}")
        if not math.isfinite(self.binary_threshold):
            raise AgreementError(f"binary_threshold must be finite, got {self.binary_threshold}")
        if self.min_shared_items < 1:
            raise AgreementError(f"min_shared_items must be >= 1, got {self.min_shared_items}")
        if not 0 <= self.decimals <= 6:
            raise AgreementError(f"decimals must be in [0, 6], got {self.decimals}")


@dataclass
class _MajorityThreshold(AgreementSettingsBase):
    min_votes: int | None = None


@dataclass
class MajoritySettings(_Answers, _MajorityThreshold):
    """KLUE-NLI / KLUE-TC: the label with at least ``min_votes`` votes."""

    rule: str = "majority"

    summary: ClassVar[tuple[str, ...]] = ("min_votes",)

    def __post_init__(self) -> None:
        if self.min_votes is None or self.min_votes < 1:
            raise AgreementError("the majority rule needs --min-votes K (K >= 1)")


@dataclass
class _SpanVoteThreshold(AgreementSettingsBase):
    min_votes: int | None = None
    value_type: str = "span_set"  # a set-valued type: span_set, relation, dependency_tree


@dataclass
class SpanVoteSettings(_Answers, _SpanVoteThreshold):
    """Span sets, relations and trees: the elements at least ``min_votes`` annotators
    marked (KLUE 3.4.1 / 3.5.1 / 3.7 keep one reviewed annotation; without a review
    round the elements a majority shares)."""

    rule: str = "span_vote"

    summary: ClassVar[tuple[str, ...]] = ("min_votes", "value_type")

    def __post_init__(self) -> None:
        if self.min_votes is None or self.min_votes < 1:
            raise AgreementError("the span_vote rule needs --min-votes K (K >= 1)")
        kind = VALUE_TYPES.get(self.value_type)
        if "span_vote" not in kind.rules:
            raise AgreementError(
                f"value type {self.value_type!r} is not voted on element by element (its "
                f"rules: {list(kind.rules)})"
            )


@dataclass
class AgreementRule:
    """A registered agreement rule: its settings class and its function
    ``rule(ratings, settings) -> (gold, dropped records, per-annotator figures or None)``."""

    name: str
    settings: type[AgreementSettingsBase]
    apply: Callable[..., tuple[pd.DataFrame, list[dict], pd.DataFrame | None]]


AGREEMENT_RULES: Registry[AgreementRule] = Registry(
    "agreement rule", "pipelines.agreement", "agreement rules"
)


def agreement_rule(name: str, settings: type[AgreementSettingsBase]) -> Callable:
    """Decorator registering an agreement rule with its settings class."""

    def add(fn: Callable) -> Callable:
        AGREEMENT_RULES.add(name, AgreementRule(name, settings, fn), (fn.__doc__ or "").strip())
        return fn

    return add


def AgreementSettings(**options: object) -> AgreementSettingsBase:  # noqa: N802 - a class to read
    """The settings of the rule ``options["rule"]`` (``mean`` by default): the tagged union
    over the registered rules' settings classes."""
    return rule_settings(AGREEMENT_RULES, options, AgreementError, "agreement", "mean")


def recipe_agreement_settings(
    recipe: Recipe, values: list[str] | None = None
) -> AgreementSettingsBase:
    """The typed settings of the recipe's ``agreement`` section (``values``: the
    interface's answers, when the recipe gives none)."""
    options = recipe.agreement.model_dump()
    if options.get("values") is None and values is not None:
        options["values"] = values
    return AgreementSettings(**options)


def _check_section(recipe: Recipe, options: StageOptions) -> None:
    """The section against its rule's settings; ``min_votes`` above the annotation's
    overlap keeps no item (issue 32): known at load, not after the annotation round."""
    check_stage_options(options, AGREEMENT_RULES, "agreement")
    votes = options.model_dump().get("min_votes")
    if recipe.annotation is not None and isinstance(votes, int) and not isinstance(
            votes, bool) and votes > recipe.annotation.overlap:  # fmt: skip
        raise ValueError(
            f"agreement.min_votes {votes} > annotation.overlap {recipe.annotation.overlap}: "
            "no item could reach it"
        )


register_section(RecipeSection(
    "agreement", StageOptions,
    "The agreement rule (rule: mean, majority, ...) and its settings (pipelines.agreement)",
    _check_section,
))  # fmt: skip


# ------------------------------------------------------------------------------ input


def read_annotations(path: Path) -> pd.DataFrame:
    """A Parquet or CSV long table with at least item_id, annotator_id and value."""
    if not path.is_file():
        raise AgreementError(f"{path}: file not found")
    if path.suffix not in (".parquet", ".csv"):
        raise AgreementError(f"{path}: expected a .parquet or .csv file")
    frame = read_table(path, AgreementError, {"item_id": str, "annotator_id": str, "value": str})
    missing = [c for c in ("item_id", "annotator_id", "value") if c not in frame.columns]
    if missing:
        raise AgreementError(f"{path}: no column {missing} (columns: {list(frame.columns)})")
    for col in ("item_id", "annotator_id"):
        empty = frame[col].isna()
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0]) + 2 if path.suffix == ".csv" else None
            where = f"line {row}" if row else f"row {int(np.flatnonzero(empty.to_numpy())[0])}"
            raise AgreementError(f"{path}: {where}: empty {col}")
    frame = frame.copy()
    frame["item_id"] = frame["item_id"].astype(str)
    frame["annotator_id"] = frame["annotator_id"].astype(str)
    return frame


def split_annotations(
    frame: pd.DataFrame, settings: AgreementSettingsBase
) -> tuple[pd.DataFrame, dict[str, dict[str, int]], list[dict]]:
    """The ratings of the chosen field (item_id, annotator_id, value, role), the report
    flags per item ({item: {flag: annotators}}) and a dropped record (kind ``rating``,
    reason ``empty_value``, the table row) for each annotation that is not cancelled but
    has no value: nothing is dropped silently (issue 32). Cancelled annotations carry no
    rating."""
    work = frame
    if "cancelled" in work.columns:
        work = work[~work["cancelled"].fillna(False).astype(bool)]
    flags: dict[str, dict[str, set]] = {}

    def add_flag(item: str, who: str, text: object) -> None:
        if isinstance(text, str) and text:
            for flag in text.split("|"):
                flags.setdefault(item, {}).setdefault(flag, set()).add(who)

    if "report_flags" in work.columns:
        for item, who, text in work[["item_id", "annotator_id", "report_flags"]].itertuples(
            index=False
        ):
            add_flag(item, who, text)
    if "field" in work.columns:
        reports = work[work["field"].isin(REPORT_FIELDS)]
        for item, who, text in reports[["item_id", "annotator_id", "value"]].itertuples(
            index=False
        ):
            add_flag(item, who, text)
        answers = work[~work["field"].isin(REPORT_FIELDS) & work["field"].notna()]
        fields = sorted(answers["field"].unique())
        chosen = settings.answer_field or (fields[0] if len(fields) == 1 else None)
        if chosen is None:
            raise AgreementError(f"the annotations hold fields {fields}: choose one with --field")
        if chosen not in fields:
            raise AgreementError(f"no field {chosen!r} in the annotations (fields: {fields})")
        work = answers[answers["field"] == chosen]
    ratings = work[["item_id", "annotator_id", "value"]].copy()
    ratings["role"] = work["role"].fillna("") if "role" in work.columns else ""
    empty = ratings["value"].isna() | (ratings["value"].astype(str).str.strip() == "")
    check_values(ratings[~empty], settings)
    dup = ratings.duplicated(["item_id", "annotator_id"], keep=False)
    if dup.any():
        first = ratings[dup].iloc[0]
        raise AgreementError(
            f"annotator {first.annotator_id!r} rated item {first.item_id!r} more than once"
        )
    counts = {item: {f: len(who) for f, who in per.items()} for item, per in flags.items()}
    blanks = [
        {"kind": "rating", "id": f"{row.item_id}/{row.annotator_id}", "reason": "empty_value",
         "detail": f"row {int(index) + 1}: an annotation that is not cancelled has no value"}
        for index, row in ratings[empty].iterrows()
    ]  # fmt: skip
    return ratings[~empty].reset_index(drop=True), counts, blanks


def _canonical(value: object) -> str:
    """A value as compared with the allowed answers: numbers by value ("5" == "5.0")."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return repr(number) if math.isfinite(number) else text


def check_values(ratings: pd.DataFrame, settings: AgreementSettingsBase) -> None:
    """Every rating is one of ``settings.values`` (when given), and for the mean rule a
    finite number; the error names the table row (counted from 1), the annotator, the
    item and the value."""

    def fail(index: object, problem: str) -> None:
        row = ratings.loc[index]
        raise AgreementError(
            f"row {int(index) + 1}: annotator {row['annotator_id']!r}, item "
            f"{row['item_id']!r}: value {row['value']!r} {problem}"
        )

    if settings.values is not None:
        allowed = {_canonical(v) for v in settings.values}
        bad = ~ratings["value"].map(_canonical).isin(allowed)
        if bad.any():
            fail(bad.idxmax(), f"is not one of the interface's answers {settings.values}")
    if settings.numeric:
        numbers = pd.to_numeric(ratings["value"], errors="coerce").astype(float)
        bad = ~np.isfinite(numbers.to_numpy())
        if bad.any():
            fail(ratings.index[int(np.flatnonzero(bad)[0])], "is not a finite number")


def annotator_figures(matrix: pd.DataFrame, min_shared: int) -> pd.DataFrame:
    """Per annotator: items rated, items shared with others, Pearson r and Krippendorff's
    alpha (interval) of their ratings against the mean of the other annotators."""
    rows = []
    values = matrix.to_numpy()
    for pos, annotator in enumerate(matrix.index):
        own = values[pos]
        others = np.delete(values, pos, axis=0)
        with np.errstate(invalid="ignore"), np.testing.suppress_warnings() as sup:
            sup.filter(RuntimeWarning)
            mean_others = np.nanmean(others, axis=0) if len(others) else np.full_like(own, np.nan)
        shared = ~np.isnan(own) & ~np.isnan(mean_others)
        r = a = None
        if shared.sum() >= max(2, min_shared):
            x, y = own[shared], mean_others[shared]
            if x.std() > 0 and y.std() > 0:
                r = float(np.corrcoef(x, y)[0, 1])
            a = alpha(np.vstack([x, y]), "interval")
        rows.append(
            {
                "annotator_id": annotator,
                "items": int((~np.isnan(own)).sum()),
                "shared_items": int(shared.sum()),
                "pearson": _round(r),
                "alpha": _round(a),
            }
        )
    return pd.DataFrame(rows, columns=["annotator_id", "items", "shared_items", "pearson", "alpha"])


def label_agreement(ratings: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Per annotator of a categorical rule (no screening): items answered, how many of
    them have a gold label, the share of those where the annotator chose the gold label,
    and the share where they chose what the other annotators' majority chose (their own
    vote left out; items where the others tie or nobody else answered are not counted)."""
    values = ratings.assign(value=ratings["value"].astype(str))
    gold_of = dict(zip(gold["item_id"], gold["label"].astype(str), strict=True))
    counts = values.groupby(["item_id", "value"]).size()
    rows = []
    for annotator, own in values.groupby("annotator_id", sort=True):
        with_gold = [(i, v) for i, v in zip(own["item_id"], own["value"], strict=True)
                     if i in gold_of]  # fmt: skip
        same, compared = 0, 0
        for item, value in zip(own["item_id"], own["value"], strict=True):
            others = counts.loc[item].copy()
            others[value] -= 1
            others = others[others > 0]
            if others.empty or (others == others.max()).sum() > 1:
                continue
            compared += 1
            same += int(others.idxmax() == value)
        rows.append({
            "annotator_id": annotator,
            "items": int(len(own)),
            "gold_items": len(with_gold),
            "gold_agreement": _round(sum(v == gold_of[i] for i, v in with_gold) / len(with_gold))
            if with_gold else None,
            "others_agreement": _round(same / compared) if compared else None,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["annotator_id", "items", "gold_items", "gold_agreement",
                                       "others_agreement"])  # fmt: skip


# ------------------------------------------------------------------------------ rules


@agreement_rule("mean", MeanSettings)
def mean_rule(
    ratings: pd.DataFrame, settings: MeanSettings
) -> tuple[pd.DataFrame, list[dict], pd.DataFrame]:
    """KLUE-STS: screen annotators, then mean label, binary label, disagreement drops.
    Returns (gold, dropped records, per-annotator figures)."""
    values = numeric_values(ratings)
    if values is None:
        bad = ratings[pd.to_numeric(ratings["value"], errors="coerce").isna()].iloc[0]
        raise AgreementError(
            f"the mean rule needs numeric labels; item {bad.item_id!r} annotator "
            f"{bad.annotator_id!r} has {bad.value!r}"
        )
    ratings = ratings.assign(v=values.to_numpy())
    figures = annotator_figures(reliability_matrix(ratings, values), settings.min_shared_items)
    dropped: list[dict] = []
    screened: set[str] = set()
    for row in figures.itertuples():
        reasons = []
        if (
            settings.pearson_min is not None
            and row.pearson is not None
            and (row.pearson < settings.pearson_min)
        ):
            reasons.append(f"pearson {row.pearson:.3f} < {settings.pearson_min}")
        if (
            settings.alpha_min is not None
            and row.alpha is not None
            and (row.alpha < settings.alpha_min)
        ):
            reasons.append(f"alpha {row.alpha:.3f} < {settings.alpha_min}")
        if reasons:
            screened.add(row.annotator_id)
            reason = "low_pearson" if reasons[0].startswith("pearson") else "low_alpha"
            dropped.append(
                {"kind": "annotator", "id": row.annotator_id, "reason": reason,
                 "detail": "; ".join(reasons)}
            )  # fmt: skip
    figures["screened_out"] = figures["annotator_id"].isin(screened)
    if screened and screened == set(ratings["annotator_id"]):
        detail = "; ".join(f"{d['id']}: {d['detail']}" for d in dropped)
        raise AgreementError(
            f"the screening would remove every annotator ({len(screened)}: {detail}) with "
            f"pearson_min {settings.pearson_min} and alpha_min {settings.alpha_min}; with so "
            "few or so noisy annotators, lower the thresholds (or set them to null) in the "
            "recipe's agreement section, or collect more annotations"
        )
    kept = ratings[~ratings["annotator_id"].isin(screened)]
    stats = kept.groupby("item_id")["v"].agg(["mean", "std", "var", "count"])
    stats[["std", "var"]] = stats[["std", "var"]].fillna(0.0)  # one rating: no spread
    rounded = stats["mean"].round(settings.decimals)  # rounding overflows too (x 10^d)
    infinite = ~np.isfinite(np.column_stack([stats[["mean", "var"]].to_numpy(), rounded]))
    infinite = infinite.any(axis=1)
    if infinite.any():  # finite ratings whose sums overflow (hypothesis found 1.8e307)
        raise AgreementError(
            f"item {stats.index[infinite][0]!r}: the mean or variance of its ratings is not "
            "a finite number (ratings too large to average); ratings must be on the "
            "interface's scale"
        )
    for item in sorted(set(ratings["item_id"]) - set(stats.index)):
        dropped.append(
            {"kind": "item", "id": item, "reason": "no_rating_left",
             "detail": "every annotator of the item was screened out"}
        )  # fmt: skip
    drop = pd.Series(False, index=stats.index)
    reason_of: dict[str, tuple[str, str]] = {}
    if settings.sd_max is not None and len(stats) > 1:
        mu, sigma = stats["std"].mean(), stats["std"].std()
        limit = mu + settings.sd_max * sigma
        over = stats["std"] > limit
        for item in stats.index[over]:
            reason_of[item] = (
                "disagreement",
                f"label sd {stats.at[item, 'std']:.3f} > {limit:.3f} "
                f"(mean item sd {mu:.3f} + {settings.sd_max} sd)",
            )
        drop |= over
    if settings.variance_max is not None:
        over = stats["var"] >= settings.variance_max
        for item in stats.index[over & ~drop]:
            reason_of[item] = (
                "high_variance",
                f"label variance {stats.at[item, 'var']:.3f} >= {settings.variance_max}",
            )
        drop |= over
    for item, (reason, detail) in reason_of.items():
        dropped.append({"kind": "item", "id": item, "reason": reason, "detail": detail})
    keep = stats[~drop]
    label = keep["mean"].round(settings.decimals)
    gold = pd.DataFrame(
        {
            "item_id": keep.index.astype(str),
            "label": label.to_numpy(),
            "real_label": keep["mean"].to_numpy(),
            "binary_label": (label >= settings.binary_threshold).astype(int).to_numpy(),
            "n_annotations": keep["count"].astype(int).to_numpy(),
            "label_sd": keep["std"].round(4).to_numpy(),
        }
    )
    return gold, dropped, figures


@agreement_rule("majority", MajoritySettings)
def majority_rule(
    ratings: pd.DataFrame, settings: MajoritySettings
) -> tuple[pd.DataFrame, list[dict], None]:
    """The label with at least ``min_votes`` votes (the author's label counts as a vote);
    a tie between two such labels, or none, drops the item."""
    k = int(settings.min_votes or 0)
    rows, dropped = [], []
    for item, group in ratings.groupby("item_id", sort=True):
        counts = group["value"].astype(str).value_counts()
        top = counts[counts == counts.max()]
        if counts.max() < k:
            dropped.append(
                {"kind": "item", "id": item, "reason": "no_majority",
                 "detail": f"top label has {int(counts.max())} of {len(group)} votes; {k} needed"}
            )  # fmt: skip
            continue
        if len(top) > 1:
            dropped.append(
                {"kind": "item", "id": item, "reason": "tie",
                 "detail": f"labels {sorted(top.index)} tie at {int(counts.max())} votes"}
            )  # fmt: skip
            continue
        rows.append(
            {
                "item_id": item,
                "label": str(top.index[0]),
                "n_annotations": len(group),
                "votes": int(counts.max()),
                "vote_share": round(float(counts.max()) / len(group), 4),
            }
        )
    gold = pd.DataFrame(rows, columns=["item_id", "label", "n_annotations", "votes", "vote_share"])
    return gold, dropped, None


@agreement_rule("span_vote", SpanVoteSettings)
def span_vote_rule(
    ratings: pd.DataFrame, settings: SpanVoteSettings
) -> tuple[pd.DataFrame, list[dict], None]:
    """Per item, the elements (spans, relations, arcs) that at least ``min_votes`` of
    its annotators marked; of two voted elements that conflict (overlapping spans, two
    heads for one word) the one with more votes stays (then the earlier). Every element
    left out is a dropped row (kind ``span``: ``few_votes`` or ``conflict``); an item
    whose voted elements make no valid value (a word without a head) is dropped
    (``no_majority``). An item where nobody marked anything has the empty value."""
    kind = VALUE_TYPES.get(settings.value_type)
    k = int(settings.min_votes or 0)
    rows, dropped = [], []
    for item, group in ratings.groupby("item_id", sort=True):
        values = [str(v) for v in group["value"]]
        counts = Counter(e for v in values for e in set(kind.elements(v)))
        kept: list = []
        for element, n in sorted(counts.items(), key=lambda en: (-en[1], en[0])):
            ident = f"{item}/{json.dumps(element, ensure_ascii=False)}"
            if n < k:
                dropped.append(
                    {
                        "kind": "span",
                        "id": ident,
                        "reason": "few_votes",
                        "detail": f"{n} of {len(values)} annotators; {k} needed",
                    }
                )
            elif any(kind.conflicts(element, other) for other in kept):
                dropped.append(
                    {
                        "kind": "span",
                        "id": ident,
                        "reason": "conflict",
                        "detail": f"{n} votes; overlaps an element with more",
                    }
                )
            else:
                kept.append(element)
        value = kind.from_elements(kept, values)
        if value is None:
            dropped.append(
                {
                    "kind": "item",
                    "id": item,
                    "reason": "no_majority",
                    "detail": f"the elements {k} of {len(values)} annotators share "
                    f"make no {settings.value_type}",
                }
            )
            continue
        rows.append(
            {"item_id": item, "label": value, "n_annotations": len(values), "elements": len(kept)}
        )
    gold = pd.DataFrame(rows, columns=["item_id", "label", "n_annotations", "elements"])
    return gold, dropped, None


def nli_validation_table(ratings: pd.DataFrame, gold: pd.DataFrame) -> dict | None:
    """KLUE Table 5, from the items that have an author label: unanimous gold label,
    individual (validator) label = gold, individual = author, gold = author,
    gold != author, and no gold label; as shares (0-1) with their counts."""
    if "role" not in ratings.columns or not (ratings["role"] == "author").any():
        return None
    gold_of = dict(zip(gold["item_id"], gold["label"].astype(str), strict=True))
    authored = ratings[ratings["role"] == "author"]
    author_of = dict(zip(authored["item_id"], authored["value"].astype(str), strict=True))
    items = sorted(author_of)
    sub = ratings[ratings["item_id"].isin(items)]
    validators = sub[sub["role"] != "author"]
    unanimous = sum(1 for _, g in sub.groupby("item_id") if g["value"].astype(str).nunique() == 1)
    with_gold = [i for i in items if i in gold_of]
    pairs = list(zip(validators["item_id"], validators["value"].astype(str), strict=True))
    ind_gold = sum(v == gold_of.get(i) for i, v in pairs)
    ind_author = sum(v == author_of[i] for i, v in pairs)
    gold_author = sum(gold_of[i] == author_of[i] for i in with_gold)

    def share(n: int, d: int) -> dict:
        return {"count": int(n), "of": int(d), "share": round(n / d, 4) if d else None}

    return {
        "unanimous_gold_label": share(unanimous, len(items)),
        "individual_label_eq_gold": share(ind_gold, len(validators)),
        "individual_label_eq_author": share(ind_author, len(validators)),
        "gold_label_eq_author": share(gold_author, len(items)),
        "gold_label_ne_author": share(len(with_gold) - gold_author, len(items)),
        "no_gold_label": share(len(items) - len(with_gold), len(items)),
    }


# ---------------------------------------------------------------------------- driver


def agree(
    frame: pd.DataFrame,
    settings: AgreementSettingsBase,
    value_type: str | None = None,
    context: dict | None = None,
) -> dict:
    """Gold labels, dropped items and annotators, and the dataset-level figures: the
    agreement measures of the answers' value type (``value_type``; by default the
    rule's, else ``rating`` when every value is a number and ``choice`` when not;
    ``context``: what a structured type's measures need, e.g. the texts' lengths)."""
    if value_type or getattr(settings, "value_type", None):  # known: checked before reading
        value_type_for(frame.iloc[:0], settings, value_type)
    ratings, flags, blanks = split_annotations(frame, settings)
    if ratings.empty:
        raise AgreementError("no ratings to aggregate (every annotation empty or cancelled)")
    kind = value_type_for(ratings, settings, value_type)
    dropped: list[dict] = list(blanks)
    flagged: set[str] = set()
    wanted = set(settings.report_flags)
    for item, per_flag in sorted(flags.items()):
        hits = {f: n for f, n in per_flag.items() if f in wanted and n >= settings.report_min}
        if hits:
            flagged.add(item)
            first = sorted(hits)[0]
            detail = "; ".join(f"{f} by {n} annotator(s)" for f, n in sorted(hits.items()))
            dropped.append({"kind": "item", "id": item, "reason": first, "detail": detail})
    annotators = None
    usable = ratings[~ratings["item_id"].isin(flagged)]
    gold, rule_drops, annotators = AGREEMENT_RULES.get(settings.rule).apply(usable, settings)
    dropped.extend(rule_drops)
    if "simulated" in frame.columns:
        sim = frame.groupby("item_id")["simulated"].agg(lambda s: bool(s.astype(bool).any()))
        gold["simulated"] = gold["item_id"].map(sim).fillna(False).astype(bool)
    items = ratings["item_id"].nunique()
    figures = {
        "rule": settings.rule,
        "settings": asdict(settings),
        "items": int(items),
        "annotators": int(ratings["annotator_id"].nunique()),
        "ratings": int(len(ratings)),
        "ratings_per_item": round(len(ratings) / items, 3),
        "gold_items": int(len(gold)),
        "dropped_items": _reason_counts(dropped, "item"),
        "dropped_annotators": _reason_counts(dropped, "annotator"),
        "dropped_ratings": _reason_counts(dropped, "rating"),
        "warnings": agreement_warnings(ratings, blanks),
        "value_type": kind.name,
    }
    measures = kind.measures(ratings, context)
    figures.update(measures, measures=list(measures))
    if annotators is not None:
        figures["annotators_table"] = json.loads(annotators.to_json(orient="records"))
        kept = ratings[~ratings["annotator_id"].isin(
            {d["id"] for d in dropped if d["kind"] == "annotator"}
        )]  # fmt: skip
        figures["krippendorff_alpha_after_screening"] = alphas(kept) if len(kept) else {}
    else:
        table = label_agreement(ratings, gold)
        figures["annotator_label_agreement"] = json.loads(table.to_json(orient="records"))
    nli = nli_validation_table(ratings, gold)
    if nli is not None:
        figures["nli_validation"] = nli
    if "simulated" in frame.columns:
        figures["simulated"] = bool(frame["simulated"].astype(bool).any())
    dropped_frame = pd.DataFrame(dropped, columns=DROPPED_COLUMNS)
    return {"gold": gold, "dropped": dropped_frame, "figures": figures}


def value_type_for(ratings: pd.DataFrame, settings: AgreementSettingsBase, name: str | None = None):  # noqa: ANN201 - a pipelines.annotation.values.ValueType
    """The value type of the answers: ``name``, the rule's own (``span_vote``'s
    ``value_type``), or ``rating``/``choice`` by whether every value is a number; the
    rule must be one the type can aggregate."""
    name = name or getattr(settings, "value_type", None)
    if not name:
        name = "rating" if numeric_values(ratings) is not None else "choice"
    kind = VALUE_TYPES.get(name)
    if settings.rule not in kind.rules:
        raise AgreementError(
            f"rule {settings.rule!r} cannot aggregate {name} answers (its rules: "
            f"{list(kind.rules)})"
        )
    return kind


def agreement_warnings(ratings: pd.DataFrame, blanks: list[dict]) -> list[str]:
    """What a user must hear though the step succeeds (issue 32): items rated by one
    person only (no agreement can be measured or screened: KLUE 3.2.1's screening and
    disagreement rules need several ratings per item), and ratings without a value."""
    out = []
    per_item = ratings.groupby("item_id")["annotator_id"].nunique()
    single = int((per_item < 2).sum())
    if single == len(per_item):
        out.append(
            f"every item has a single rating ({ratings['annotator_id'].nunique()} annotator(s) "
            "in all): no agreement can be measured, no annotator screened and no disagreement "
            "dropped; each gold label is one person's"
        )
    elif single:
        out.append(f"{single} of {len(per_item)} items have a single rating (no agreement on them)")
    if blanks:
        out.append(
            f"{len(blanks)} annotation(s) have no value and are not cancelled: dropped with "
            f"reason empty_value (first: {blanks[0]['detail']})"
        )
    return out


def _settings_text(settings: AgreementSettingsBase) -> str:
    keys = settings.summary
    return ", ".join(f"{k} {getattr(settings, k)}" for k in (*keys, "report_min"))


def _reason_counts(dropped: list[dict], kind: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in dropped:
        if row["kind"] == kind:
            out[row["reason"]] = out.get(row["reason"], 0) + 1
    return dict(sorted(out.items()))


def run_agree(
    path: Path, settings: AgreementSettingsBase, out: Path, value_type: str | None = None
) -> dict:
    """Read ``path``, apply the rule, write gold.parquet, dropped.parquet and
    agreement.json (atomically, manifest last; a rerun with the same input and settings
    rewrites nothing). Returns the figures, with ``written``. When no item keeps a gold
    label the step stops (AgreementError naming the figures and settings) and writes
    nothing: an empty gold table would only fail later, in the split."""
    from pipelines.core.io import output_lock

    try:
        result = agree(read_annotations(path), settings, value_type)
        if result["gold"].empty:
            figures = result["figures"]
            raise AgreementError(
                f"no item keeps a gold label: all {figures['items']} items dropped "
                f"({figures['dropped_items']}; annotators screened out: "
                f"{figures['dropped_annotators'] or 'none'}) by rule {settings.rule!r} with "
                f"{_settings_text(settings)}; nothing to split"
            )
    except AgreementError as exc:
        message = str(exc)
        raise AgreementError(
            message if message.startswith(str(path)) else f"{path}: {message}"
        ) from None
    with output_lock(out):  # one run at a time writes into OUT
        return _write_agree(path, settings, out, result)


def _write_agree(path: Path, settings: AgreementSettingsBase, out: Path, result: dict) -> dict:
    from pipelines.core.io import sha256_file, write_outputs

    key = json.dumps({"input": sha256_file(path), "settings": asdict(settings),
                      "value_type": result["figures"]["value_type"]}, sort_keys=True)  # fmt: skip
    figures = {**result["figures"], "input": str(path)}
    written = write_outputs(
        out,
        key,
        {"gold.parquet": result["gold"], "dropped.parquet": result["dropped"]},
        {"agreement.json": figures},
    )
    return {**figures, "written": written}
