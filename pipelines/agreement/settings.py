"""Agreement rules' settings and registry: one settings class per rule (the papers'
values as defaults), ``AgreementSettings(**options)`` (the tagged union over the
registered rules), the ``agreement:`` recipe section and its checks. The rules
themselves are in ``pipelines.agreement.rules``."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import pandas as pd

from pipelines.annotation.values import VALUE_TYPES
from pipelines.core.errors import BenchforgeError
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Recipe, StageOptions, check_stage_options
from pipelines.core.registry import Registry
from pipelines.core.settings import AtLeastOne, NonNegative, rule_settings

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

    def check_values(self) -> None:
        """The interface's answers, each once (issue 51: ``Negative`` beside
        ``negative`` made two classes of one); called by every rule's check."""
        values = getattr(self, "values", None) or []
        seen: dict[str, object] = {}
        for value in values:
            key = str(value).casefold()
            if key in seen:
                raise AgreementError(
                    f"values: {seen[key]!r} and {value!r} are the same answer; name each once"
                )
            seen[key] = value
        share = getattr(self, "suggestion_accept_max", None)
        if share is not None and not (math.isfinite(share) and 0 < share <= 1):
            raise AgreementError(f"suggestion_accept_max must be in (0, 1] or null, got {share}")
        if getattr(self, "suggestion_min_items", 1) < 1:
            raise AgreementError(
                f"suggestion_min_items must be >= 1, got {self.suggestion_min_items}"  # type: ignore[attr-defined]
            )


@dataclass
class _Answers(AgreementSettingsBase):
    """What every rule's settings end with (after the rule's own thresholds)."""

    # the answers the annotation interface allows (a single-choice control's options; the
    # rebuild takes them from the recipe's config): any other value is an error
    values: list[str] | None = None
    # report flags: "auto" drops a reported item; "review" sends it to a review round
    # (pipelines.agreement.review) whose decision keeps, fixes or drops it (issue 35)
    reports: str = "auto"
    report_min: AtLeastOne = 1
    report_flags: list[str] = field(
        default_factory=lambda: [
            "personal_information",
            "hate_or_bias",
            "translation_error",
            "unable_to_decide",
        ]
    )
    # suggestion acceptance (issue 55, pipelines.agreement.suggestions): exclude an
    # annotator who accepts at least this share of the pre-loaded suggestions unchanged
    # while the others accept less (None: off; no paper states a value), counted over
    # ``suggestion_min_items`` items or more
    suggestion_accept_max: float | None = None
    suggestion_min_items: int = 5


ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


@dataclass
class _MeanThresholds(AgreementSettingsBase):
    pearson_min: float | None = 0.80
    alpha_min: float | None = 0.20
    # KLUE 3.2.1: "Krippendorff's alpha (nominal)"; the level of the screening alpha
    alpha_level: str = "nominal"
    min_shared_items: int = 3  # an annotator sharing fewer items is not screened (kept)
    decimals: int = 1
    binary_threshold: NonNegative = 3.0  # a rating (KLUE-STS: 0-5)
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
        self.check_values()
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
        if self.alpha_level not in ALPHA_LEVELS:
            raise AgreementError(
                f"alpha_level must be one of {list(ALPHA_LEVELS)}, got {self.alpha_level!r}"
            )
        if self.min_shared_items < 1:
            raise AgreementError(f"min_shared_items must be >= 1, got {self.min_shared_items}")
        if not 0 <= self.decimals <= 6:
            raise AgreementError(f"decimals must be in [0, 6], got {self.decimals}")


@dataclass
class _MajorityThreshold(AgreementSettingsBase):
    min_votes: int | None = None
    # screening (issue 35): drop an annotator who gives the others' majority answer on
    # fewer than this share of the items (None: off; no paper states a value)
    majority_share_min: float | None = None
    min_screened_items: int = 3  # an annotator with fewer counted items is not screened


@dataclass
class MajoritySettings(_Answers, _MajorityThreshold):
    """KLUE-NLI / KLUE-TC: the label with at least ``min_votes`` votes."""

    rule: str = "majority"

    summary: ClassVar[tuple[str, ...]] = ("min_votes",)

    def __post_init__(self) -> None:
        self.check_values()
        if self.min_votes is None or self.min_votes < 1:
            raise AgreementError("min_votes: the majority rule needs --min-votes K (K >= 1)")
        if self.majority_share_min is not None and not 0 < self.majority_share_min <= 1:
            raise AgreementError(
                f"majority_share_min must be in (0, 1], got {self.majority_share_min}"
            )
        if self.min_screened_items < 1:
            raise AgreementError(f"min_screened_items must be >= 1, got {self.min_screened_items}")


@dataclass
class _SpanVoteThreshold(AgreementSettingsBase):
    min_votes: int | None = None
    value_type: str = "span_set"  # a set-valued type: span_set, relation, dependency_tree
    # screening (issue 35): drop an annotator whose elements' mean F1 against the
    # others' majority elements is under this (None: off; no paper states a value)
    element_f1_min: float | None = None
    min_screened_items: int = 3  # an annotator with fewer counted items is not screened


@dataclass
class SpanVoteSettings(_Answers, _SpanVoteThreshold):
    """Span sets, relations and trees: the elements at least ``min_votes`` annotators
    marked (KLUE 3.4.1 / 3.5.1 / 3.7 keep one reviewed annotation; without a review
    round the elements a majority shares)."""

    rule: str = "span_vote"

    summary: ClassVar[tuple[str, ...]] = ("min_votes", "value_type")

    def __post_init__(self) -> None:
        self.check_values()
        if self.min_votes is None or self.min_votes < 1:
            raise AgreementError("min_votes: the span_vote rule needs --min-votes K (K >= 1)")
        if self.element_f1_min is not None and not 0 < self.element_f1_min <= 1:
            raise AgreementError(f"element_f1_min must be in (0, 1], got {self.element_f1_min}")
        if self.min_screened_items < 1:
            raise AgreementError(f"min_screened_items must be >= 1, got {self.min_screened_items}")
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
