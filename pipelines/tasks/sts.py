"""Annotation items from built pairs: the sample that goes to annotators.

``sts_items`` draws a seeded sample of pairs, the same number from every value of the
``stratify`` column (the pairing method: intent, topic, gsm, rtt) as far as each has
pairs, and keeps what the STS interface shows (``sentence1``, ``sentence2``) plus the
pair's provenance (``source`` = corpus, ``method``, ``score``, ``license``).

For simulated annotators only (``simulate_truth: sts-pairs``), each item also gets a
latent true similarity ``sim_similarity`` that the simulated annotators perturb
(``pipelines.annotation.simulate``). It is benchforge's assumption, not a measurement: KLUE 3.2.1
expected intent pairs (same intent, paraphrases) to be highly similar, topic pairs
(same topic, other intent) to share a topic only, and GSM pairs to be less similar as
their ROUGE falls. So: intent -> 3.5 + 1.5 * u, topic -> 0.5 + 2.0 * u, gsm and rtt ->
5 * ROUGE score + N(0, 0.5), clipped to 0-5 (u uniform on [0, 1], seeded per pair).
The column never reaches the released data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines.core.recipe import ItemsSpec

ITEM_COLUMNS = ["item_id", "sentence1", "sentence2", "source", "method", "score", "license"]


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


def sts_truth(items: pd.DataFrame, seed: int) -> np.ndarray:
    """The simulated annotators' latent similarity per item (see the module docstring)."""
    out = np.zeros(len(items))
    for i, (item_id, method, score) in enumerate(
        zip(items["item_id"], items["method"], items["score"], strict=True)
    ):
        rng = np.random.default_rng([seed, int.from_bytes(str(item_id).encode()[-8:], "little")])
        u = rng.random()
        if method == "intent":
            out[i] = 3.5 + 1.5 * u
        elif method == "topic":
            out[i] = 0.5 + 2.0 * u
        else:
            out[i] = 5 * float(score) + rng.normal(0, 0.5)
    return np.clip(out, 0, 5).round(2)


def sts_items(pairs: pd.DataFrame, spec: ItemsSpec, simulated: bool) -> pd.DataFrame:
    """The items to annotate (``ITEM_COLUMNS``; ``sim_similarity`` when simulated)."""
    chosen = sample_evenly(pairs, spec.sample, spec.stratify, spec.seed)
    items = pd.DataFrame(
        {
            "item_id": chosen["pair_id"].astype(str),
            "sentence1": chosen["sentence1"],
            "sentence2": chosen["sentence2"],
            "source": chosen["corpus"],
            "method": chosen["method"],
            "score": chosen["score"].astype(float),
            "license": chosen["license"],
        }
    ).reset_index(drop=True)
    if simulated and spec.simulate_truth == "sts-pairs":
        items["sim_similarity"] = sts_truth(items, spec.seed)
    return items
