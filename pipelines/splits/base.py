"""Artifact-aware train/dev/test splits: what every split rule shares.

Every rule assigns *units*, never single items: a unit is a connected set of items that
share a group (same premise, source document, intent: ``group_columns``; a list value
puts an item in each group it names, e.g. the two images of a JSTS-B pair) or whose texts
are exact or near duplicates (``pipelines.quality.dedup.near_duplicate_links`` over every
text column). So no group straddles two splits and no duplicate text leaks from train
into dev/test, whatever the rule. Everything is seeded and reproducible.

A split rule is one registration: a module of this package defines the rule's settings
(a :class:`SplitSettingsBase` subclass with its own fields and a ``rule`` default) and
its function ``split(items, settings, lang) -> (splits, figures)``, and registers both
with ``@split_rule("name", Settings)``. The recipe's ``split:`` section and ``benchforge
split`` build the rule's settings with :func:`SplitSettings` (a union tagged by
``rule``): a key the rule does not have is an error naming the nearest valid one.

Rules: ``sts`` (KLUE 3.2.1, ``sts.py``), ``nli`` (KLUE 3.3.1, ``nli.py``), ``tc`` (KLUE
3.1.1, ``tc.py``), ``ner`` (KLUE 3.4.1, ``ner.py``), ``balanced`` (KLUE 2.4 for DP: a
column's values in equal numbers in dev and test, ``balanced.py``), ``random``
(``seeded.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Recipe, StageOptions, check_stage_options
from pipelines.core.registry import Registry
from pipelines.core.settings import Seed, rule_settings
from pipelines.quality.dedup import near_duplicate_links

# the artifact report's high/low cut of numeric labels, for rules without a
# ``binary_threshold`` setting of their own (sts has one)
REPORT_THRESHOLD = 3.0
SPLIT_COLUMNS = ["item_id", "split", "rule", "reason"]


class SplitError(BenchforgeError, ValueError):
    """Items that cannot be split; the message names the column or the item."""


@dataclass
class SplitSettingsBase:
    """The settings every split rule has (defaults: KLUE's); a rule's class adds its own."""

    rule: str = "random"
    seed: Seed = 0
    eval_fraction: float = 0.15  # dev + test share of the items
    dev_share: float | None = None  # dev's share of dev+test (None: the rule's default)
    text_columns: list[str] | None = None  # None: the rule's (first and last compared)
    group_columns: list[str] = field(default_factory=list)
    source_column: str | None = "source"
    near_duplicate_threshold: float = 0.8

    text_defaults: ClassVar[tuple[str, ...]] = ("sentence1", "sentence2")
    dev_share_default: ClassVar[float] = 1 / 2

    def __post_init__(self) -> None:
        from dataclasses import asdict

        from pydantic import ValidationError

        from pipelines.core.recipe import problems
        from pipelines.core.settings import options_model

        try:  # the fields' types and ranges, however the settings are made (CLI, recipe)
            options_model(type(self)).model_validate(asdict(self))
        except ValidationError as exc:
            raise SplitError(problems(exc, "split")) from None
        if not 0 < self.eval_fraction < 1:
            raise SplitError(f"eval_fraction must be in (0, 1), got {self.eval_fraction}")
        if self.dev_share is None:
            self.dev_share = self.dev_share_default
        if not 0 <= self.dev_share <= 1:
            raise SplitError(f"dev_share must be in [0, 1], got {self.dev_share}")
        if not self.text_columns:
            self.text_columns = list(self.text_defaults)
        if not 0 < self.near_duplicate_threshold <= 1:  # issue 32: datasketch's ValueError
            raise SplitError(
                f"near_duplicate_threshold must be in (0, 1], got {self.near_duplicate_threshold}"
            )


@dataclass
class SplitRule:
    """A registered split rule: its settings class and its function."""

    name: str
    settings: type[SplitSettingsBase]
    split: Callable[..., tuple[pd.DataFrame, dict]]


SPLIT_RULES: Registry[SplitRule] = Registry("split rule", "pipelines.splits", "split rules")


def split_rule(name: str, settings: type[SplitSettingsBase]) -> Callable:
    """Decorator registering ``split(items, settings, lang) -> (splits, figures)`` as the
    rule ``name`` with its settings class."""

    def add(fn: Callable) -> Callable:
        SPLIT_RULES.add(name, SplitRule(name, settings, fn), (fn.__doc__ or "").strip())
        return fn

    return add


def SplitSettings(**options: object) -> SplitSettingsBase:  # noqa: N802 - reads as a class
    """The settings of the rule ``options["rule"]`` (``sts`` by default): the tagged
    union over the registered rules' settings classes."""
    return rule_settings(SPLIT_RULES, options, SplitError, "split", "sts")


def recipe_split_settings(recipe: Recipe, seed: int | None = None) -> SplitSettingsBase:
    """The typed settings of the recipe's ``split`` section (``seed`` overrides the
    recipe's)."""
    options = recipe.split.model_dump()
    if seed is not None:
        options["seed"] = seed
    return SplitSettings(**options)


register_section(RecipeSection(
    "split", StageOptions,
    "The split rule (rule: sts, nli, tc, random, ...) and its settings (pipelines.splits)",
    lambda recipe, options: check_stage_options(options, SPLIT_RULES, "split"),
))  # fmt: skip


def units(items: pd.DataFrame, settings: SplitSettingsBase) -> np.ndarray:
    """A unit number per item: connected components of shared groups and duplicate
    texts."""
    n = len(items)
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return int(i)

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    for col in settings.group_columns:
        first: dict[object, int] = {}
        for i, value in enumerate(items[col].tolist()):
            # a list value puts the item in every group it names (a pair of two images)
            for key in value if isinstance(value, list | tuple | np.ndarray) else [value]:
                if key is None or (isinstance(key, float) and math.isnan(key)):
                    continue
                union(first.setdefault(key, i), i)
    texts: list[str] = []
    owner: list[int] = []
    for col in settings.text_columns:
        for i, text in enumerate(items[col].astype(str).tolist()):
            texts.append(text)
            owner.append(i)
    for a, b in near_duplicate_links(texts, settings.near_duplicate_threshold):
        union(owner[a], owner[b])
    roots = np.array([find(i) for i in range(n)])
    _, numbered = np.unique(roots, return_inverse=True)
    return numbered


def check_items(items: pd.DataFrame, settings: SplitSettingsBase, needed: list[str]) -> None:
    cols = ["item_id", *needed, *settings.text_columns, *settings.group_columns]
    missing = [c for c in dict.fromkeys(cols) if c not in items.columns]
    if missing:
        raise SplitError(f"no column {missing} in the items (columns: {list(items.columns)})")
    dup = items["item_id"].duplicated()
    if dup.any():
        raise SplitError(f"item_id {items['item_id'][dup].iloc[0]!r} appears twice")


def divide_dev_test(
    chosen: Sequence[int], sizes: np.ndarray, dev_share: float, rng: np.random.Generator
) -> dict[int, str]:
    """dev or test for each chosen unit: units in seeded random order, each to dev while
    dev holds no more than ``dev_share`` of the items assigned so far."""
    out: dict[int, str] = {}
    taken = dev = 0
    for u in rng.permutation(np.asarray(sorted(chosen), dtype=int)).tolist():
        size = int(sizes[u])
        side = "dev" if dev + size / 2 <= dev_share * (taken + size) else "test"
        out[u] = side
        taken += size
        dev += size if side == "dev" else 0
    return out


def source_of_units(items: pd.DataFrame, unit: np.ndarray, column: str | None) -> np.ndarray:
    """Each unit's source: the most common among its items ("" without a source column)."""
    if not column or column not in items.columns:
        return np.array([""] * (unit.max() + 1 if len(unit) else 0), dtype=object)
    frame = pd.DataFrame({"unit": unit, "source": items[column].astype(str).to_numpy()})
    return frame.groupby("unit")["source"].agg(lambda s: s.value_counts().index[0]).to_numpy()
