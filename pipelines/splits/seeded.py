"""The ``random`` split rule: a seeded unit-level split by ``eval_fraction`` and the
dev:test ratio (no artifact guard beyond groups and duplicates; for corpora without a
paper rule)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipelines.lang import Language
from pipelines.splits.base import SplitSettingsBase, check_items, divide_dev_test, split_rule, units


@dataclass
class RandomSplitSettings(SplitSettingsBase):
    """A seeded split with no rule of its own."""

    rule: str = "random"


@split_rule("random", RandomSplitSettings)
def random_split(
    items: pd.DataFrame, settings: RandomSplitSettings, lang: Language | None = None
) -> tuple[pd.DataFrame, dict]:
    """Seeded, by unit: units in random order fill dev+test up to ``eval_fraction``."""
    check_items(items, settings, [])
    rng = np.random.default_rng(settings.seed)
    unit = units(items, settings)
    n = len(items)
    sizes = np.bincount(unit) if n else np.zeros(0, dtype=int)
    target = round(settings.eval_fraction * n)
    chosen: list[int] = []
    taken = 0
    for u in rng.permutation(len(sizes)).tolist():
        if taken + sizes[u] <= target:
            chosen.append(u)
            taken += int(sizes[u])
    side = divide_dev_test(chosen, sizes, settings.dev_share, rng)
    frame = pd.DataFrame(
        {
            "item_id": items["item_id"].astype(str).to_numpy(),
            "split": [side.get(u, "train") for u in unit.tolist()],
            "rule": "random",
            "reason": "seeded random order of units",
            "unit": unit,
        }
    )
    return frame, {}
