"""Seeded samples that every family's item builder shares."""

from __future__ import annotations

import numpy as np
import pandas as pd


def sample_evenly(
    frame: pd.DataFrame, n: int | None, column: str | None, seed: int
) -> pd.DataFrame:
    """``n`` rows (all when None), the same number from every value of ``column`` as far
    as each has rows (what a small group lacks goes to the others); seeded."""
    rng = np.random.default_rng(seed)
    shuffled = frame.iloc[rng.permutation(len(frame))]
    if n is None or n >= len(frame):
        return shuffled.sort_index()
    if not column or column not in frame.columns:
        return shuffled.head(n).sort_index()
    groups = {k: g for k, g in shuffled.groupby(column, sort=True)}
    take = dict.fromkeys(groups, 0)
    left = n
    while left > 0:
        open_groups = [k for k in groups if take[k] < len(groups[k])]
        if not open_groups:
            break
        each = max(1, left // len(open_groups))
        for k in open_groups:
            add = min(each, len(groups[k]) - take[k], left)
            take[k] += add
            left -= add
            if left == 0:
                break
    return pd.concat([groups[k].head(take[k]) for k in groups]).sort_index()
