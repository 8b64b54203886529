"""The ``balanced`` split rule: dev and test hold each value of ``balance_column`` in
equal numbers (KLUE 2.4 for DP: "we balance formal and colloquial writing styles";
KLUE-DP's 10k / 2k / 2.5k sentences are the default proportions, ``eval_fraction``
4.5 / 14.5 and ``dev_share`` 2 / 4.5).

1. Units as every rule has them (groups and near duplicates,
   :func:`pipelines.splits.base.units`); a unit's value of ``balance_column`` is its
   items' most common one.
2. Each value gets the same evaluation target: ``eval_fraction`` of all items divided
   by the number of values, capped at half the items of the smallest value (so that
   every value keeps at least half of its items for training).
3. Per value, units in seeded random order fill that target; they are divided between
   dev and test by ``dev_share`` within the value, so dev and test are each balanced.
   The rest is train.

Figures: items per split and value, and the largest share gap between values in dev
and in test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipelines.lang import Language
from pipelines.splits.base import (
    SplitError,
    SplitSettingsBase,
    check_items,
    divide_dev_test,
    source_of_units,
    split_rule,
    units,
)


@dataclass
class BalancedSplitSettings(SplitSettingsBase):
    """Dev and test balanced over ``balance_column`` (KLUE-DP's proportions)."""

    rule: str = "balanced"
    eval_fraction: float = 4.5 / 14.5  # KLUE-DP: 2k dev + 2.5k test of 14.5k
    dev_share: float | None = 2 / 4.5
    balance_column: str = "style"
    text_defaults = ("text",)


@split_rule("balanced", BalancedSplitSettings)
def balanced_split(
    items: pd.DataFrame, settings: BalancedSplitSettings, lang: Language | None = None
) -> tuple[pd.DataFrame, dict]:
    """Dev and test with equal numbers of each ``balance_column`` value (module docstring)."""
    check_items(items, settings, [settings.balance_column])
    values = items[settings.balance_column].astype(str)
    if values.eq("").any() or items[settings.balance_column].isna().any():
        first = items.loc[values.eq("") | items[settings.balance_column].isna(), "item_id"]
        raise SplitError(f"item {first.iloc[0]!r} has no {settings.balance_column}")
    rng = np.random.default_rng(settings.seed)
    unit = units(items, settings)
    sizes = np.bincount(unit) if len(items) else np.zeros(0, dtype=int)
    unit_value = source_of_units(items, unit, settings.balance_column)
    kinds = sorted(set(unit_value.tolist()))
    counts = {k: int(sizes[unit_value == k].sum()) for k in kinds}
    target = min([round(settings.eval_fraction * len(items) / max(len(kinds), 1))]
                 + [c // 2 for c in counts.values()]) if kinds else 0  # fmt: skip
    side: dict[int, str] = {}
    for k in kinds:
        chosen, taken = [], 0
        for u in rng.permutation(np.flatnonzero(unit_value == k)).tolist():
            if taken + sizes[u] <= target:
                chosen.append(u)
                taken += int(sizes[u])
        side |= divide_dev_test(chosen, sizes, settings.dev_share, rng)
    split = [side.get(u, "train") for u in unit.tolist()]
    frame = pd.DataFrame({
        "item_id": items["item_id"].astype(str).to_numpy(), "split": split,
        "rule": "balanced",
        "reason": [f"{settings.balance_column} {v}: equal numbers in dev and test"
                   if s != "train" else "the rest" for v, s in zip(values, split, strict=True)],
        "unit": unit,
    })  # fmt: skip
    table = pd.crosstab(frame["split"], values.to_numpy())
    per = {s: {str(k): int(v) for k, v in table.loc[s].items()} for s in table.index}
    gaps = {}
    for s in ("dev", "test"):
        row = per.get(s, {})
        total = sum(row.values())
        gaps[s] = (round((max(row.values()) - min(row.values())) / total, 4)
                   if total and len(row) == len(kinds) else None)  # fmt: skip
    return frame, {"per_split": per, "balance_gap": gaps, "target_per_value": target}
