"""Pairs from metadata (KLUE 3.2.1): ParaKQC's intents and topics.

KLUE-STS took sentence pairs from ParaKQC by its annotation: two utterances of the same
intent are similar; utterances of different intents within the same topic are less
similar. :func:`metadata_pairs` draws both kinds, seeded:

- ``intent`` pairs: for every group, up to ``similar_per_group`` distinct pairs of its
  members (every unordered pair of the group is equally likely);
- ``topic`` pairs: for every group, up to ``dissimilar_per_group`` pairs of one of its
  members and a member of another group of the same topic (of any other group when no
  topic is given).

No unordered pair is drawn twice, and the groups are visited in sorted order so that the
same seed and data give the same pairs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd


def metadata_pairs(
    groups: pd.Series,
    topics: pd.Series | None,
    similar_per_group: int,
    dissimilar_per_group: int,
    seed: int,
) -> pd.DataFrame:
    """Positions ``i``, ``j`` into the inputs, with ``method`` (intent or topic)."""
    rng = np.random.default_rng(seed)
    groups = groups.reset_index(drop=True).astype(str)
    topics = (
        pd.Series("", index=groups.index)
        if topics is None
        else topics.reset_index(drop=True).astype(str)
    )
    members = {g: idx.to_numpy() for g, idx in groups.groupby(groups, sort=True).groups.items()}
    seen: set[tuple[int, int]] = set()
    rows: list[tuple[int, int, str]] = []

    def add(i: int, j: int, method: str) -> bool:
        key = (min(i, j), max(i, j))
        if i == j or key in seen:
            return False
        seen.add(key)
        rows.append((key[0], key[1], method))
        return True

    for group, idx in members.items():
        if similar_per_group and len(idx) >= 2:
            combos = list(itertools.combinations(idx.tolist(), 2))
            take = min(similar_per_group, len(combos))
            for k in rng.choice(len(combos), size=take, replace=False):
                add(*combos[int(k)], "intent")
        if not dissimilar_per_group:
            continue
        topic = topics.iloc[idx[0]]
        others = np.flatnonzero((topics == topic).to_numpy() & (groups != group).to_numpy())
        if len(others) == 0:
            continue
        made, tries = 0, 0
        while made < dissimilar_per_group and tries < 20 * dissimilar_per_group:
            tries += 1
            made += add(int(rng.choice(idx)), int(rng.choice(others)), "topic")
    return pd.DataFrame(rows, columns=["i", "j", "method"])
