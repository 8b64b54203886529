"""Agreement on structured values (spans, relations, trees), shared by the annotation
value types: a set element is counted as agreed when both annotators give exactly it,
and the figure is the micro-averaged F1 over every pair of annotators on the items they
share (entity-level F1 as seqeval computes it for one pair, ``tests``)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from itertools import combinations

import pandas as pd

from pipelines.measures.reliability import round_figure


def pairwise_set_f1(ratings: pd.DataFrame, elements: Callable[[str], Iterable[Hashable]]) -> dict:
    """Micro F1 between every pair of annotators of an item over the set elements of
    their values (``elements(value)``: spans as (start, end, label), relations, arcs),
    summed over the pairs: ``2 * agreed / (|A| + |B|)``. ``pairs``: the annotator pairs
    compared; ``exact``: the share of pairs whose sets are equal. None when no item has
    two annotators."""
    agreed = total = pairs = exact = 0
    for _, group in ratings.groupby("item_id", sort=True):
        sets = [frozenset(elements(v)) for v in group["value"]]
        for a, b in combinations(sets, 2):
            pairs += 1
            agreed += len(a & b)
            total += len(a) + len(b)
            exact += a == b
    if not pairs:
        return {"f1": None, "pairs": 0, "exact": None}
    f1 = 1.0 if total == 0 else 2 * agreed / total
    return {"f1": round_figure(f1), "pairs": pairs, "exact": round_figure(exact / pairs)}
