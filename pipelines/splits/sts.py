"""The ``sts`` split rule (KLUE 3.2.1).

Dev+test near-uniform over the 51 score bins 0.0-5.0: each bin gets the same quota of
evaluation items (what a bin lacks is spread over the others); within a bin, pairs with
score >= 3 are preferred with the least morpheme overlap (Jaccard of the language's
morphemes) and pairs below 3 with the most, so that lexical overlap does not give the
score away; each source keeps its share of the evaluation items; dev:test = 1:2 within
every bin; binary label at 3.0.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field

from pipelines.core.settings import NonNegative
from pipelines.lang import Language
from pipelines.splits.base import (
    SplitError,
    SplitSettingsBase,
    check_items,
    split_rule,
    units,
)


@dataclass
class StsSplitSettings(SplitSettingsBase):
    """KLUE-STS's split: score bins and the overlap preference."""

    rule: str = "sts"
    bins: Annotated[int, Field(ge=2)] = 51
    high_score: NonNegative = 3.0  # KLUE: prefer least overlap at >= 3, most overlap below
    binary_threshold: NonNegative = 3.0  # the binary label (and the artifact report's)

    dev_share_default: ClassVar[float] = 1 / 3  # dev:test = 1:2


def morpheme_overlap(a: str, b: str, lang: Language) -> float:
    """Jaccard of the two sentences' morpheme sets (KLUE 3.2.1: MeCab)."""
    sa, sb = set(lang.morphemes(a)), set(lang.morphemes(b))
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


@split_rule("sts", StsSplitSettings)
def sts_split(
    items: pd.DataFrame, settings: StsSplitSettings, lang: Language
) -> tuple[pd.DataFrame, dict]:
    """KLUE 3.2.1: uniform score bins, overlap preference, source shares, dev:test 1:2."""
    check_items(items, settings, ["label"])
    labels = pd.to_numeric(items["label"], errors="coerce")
    if labels.isna().any() or (labels < 0).any() or (labels > 5).any():
        bad = items["item_id"][labels.isna() | (labels < 0) | (labels > 5)].iloc[0]
        raise SplitError(f"item {bad!r}: label must be a number in 0-5")
    rng = np.random.default_rng(settings.seed)
    unit = units(items, settings)
    n = len(items)
    step = 5.0 / (settings.bins - 1)
    bin_of = np.rint(labels.to_numpy() / step).astype(int)
    overlap = np.array(
        [
            morpheme_overlap(a, b, lang)
            for a, b in zip(
                items[settings.text_columns[0]].astype(str),
                items[settings.text_columns[-1]].astype(str),
                strict=True,
            )
        ]
    )
    source = (
        items[settings.source_column].astype(str).to_numpy()
        if settings.source_column and settings.source_column in items.columns
        else np.array([""] * n)
    )
    target = round(settings.eval_fraction * n)
    share = {s: c / n for s, c in Counter(source).items()}
    unit_size = np.bincount(unit)
    # a bin's quota, with what small bins lack spread over the others
    counts = np.bincount(bin_of, minlength=settings.bins)
    quota = np.zeros(settings.bins, dtype=int)
    left, open_bins = target, [b for b in range(settings.bins) if counts[b]]
    while left > 0 and open_bins:
        each = max(1, left // len(open_bins))
        nxt = []
        for b in open_bins:
            take = min(each, counts[b] - quota[b], left)
            quota[b] += take
            left -= take
            if quota[b] < counts[b]:
                nxt.append(b)
            if left == 0:
                break
        open_bins = nxt
    chosen_units: set[int] = set()
    taken_source: Counter = Counter()
    in_eval = np.zeros(n, dtype=bool)
    filled = np.zeros(settings.bins, dtype=int)
    unit_members = [np.flatnonzero(unit == u) for u in range(unit.max() + 1 if n else 0)]

    def fits(u: int, b: int, slack: int) -> bool:
        # a unit may not push any bin past its quota (some slack for the other bins it
        # touches, so that groups of several items can be chosen at all)
        for bb, cnt in Counter(bin_of[unit_members[u]].tolist()).items():
            if filled[bb] + cnt > quota[bb] + (0 if bb == b else slack):
                return False
        return True

    order_bins = rng.permutation(settings.bins)
    # first pass: one item of slack; second pass, for bins still empty: three
    for b, slack in [(b, 1) for b in order_bins] + [(b, 3) for b in order_bins]:
        if slack > 1 and filled[b] > 0:
            continue
        members = np.flatnonzero(bin_of == b)
        if not len(members) or quota[b] == 0:
            continue
        high = b * step >= settings.high_score
        key = overlap[members] if high else -overlap[members]
        tie = rng.random(len(members))
        ranked = members[np.lexsort((tie, key))]
        while filled[b] < quota[b] and (filled.sum() < target or filled[b] == 0):
            # the source furthest under its share of the evaluation items goes next
            need = {s: share[s] * target - taken_source[s] for s in share}
            pick = None
            for s in sorted(need, key=lambda s: (-need[s], s)):
                for i in ranked:
                    if source[i] == s and unit[i] not in chosen_units and fits(unit[i], b, slack):
                        pick = i
                        break
                if pick is not None:
                    break
            if pick is None:
                break
            u = unit[pick]
            chosen_units.add(u)
            in_eval[unit_members[u]] = True
            np.add.at(filled, bin_of[unit_members[u]], 1)
            taken_source.update(source[unit_members[u]].tolist())
    # dev:test = 1:2 within every bin, by unit; the rounding error is carried from bin
    # to bin so that the whole evaluation set keeps the ratio too
    split = np.array(["train"] * n, dtype=object)
    reason = np.array(["not chosen for dev/test"] * n, dtype=object)
    assigned: dict[int, str] = {}
    carry = 0.0
    for b in order_bins:
        members = [i for i in np.flatnonzero(bin_of == b) if in_eval[i]]
        if not members:
            continue
        want = settings.dev_share * len(members) + carry
        dev_n = sum(1 for i in members if assigned.get(unit[i]) == "dev")
        for i in rng.permutation(members):
            u = unit[i]
            if u in assigned:
                continue
            size = int(bin_of[unit_members[u]].tolist().count(b))
            side = "dev" if dev_n + size / 2 <= want else "test"
            assigned[u] = side
            dev_n += size if side == "dev" else 0
        carry = want - dev_n
    for i in range(n):
        if in_eval[i]:
            split[i] = assigned[unit[i]]
            direction = "least" if bin_of[i] * step >= settings.high_score else "most"
            reason[i] = (
                f"score bin {bin_of[i] * step:.1f}: quota {quota[bin_of[i]]}, {direction} "
                f"morpheme overlap first (overlap {overlap[i]:.3f})"
            )
            if unit_size[unit[i]] > 1:
                reason[i] += f"; unit of {unit_size[unit[i]]} items kept together"
        elif unit_size[unit[i]] > 1:
            reason[i] = f"not chosen for dev/test; unit of {unit_size[unit[i]]} items"
    out = pd.DataFrame(
        {
            "item_id": items["item_id"].astype(str).to_numpy(),
            "split": split,
            "rule": "sts",
            "reason": reason,
            "unit": unit,
            "score_bin": np.round(bin_of * step, 1),
            "morpheme_overlap": overlap.round(4),
            "binary_label": (labels.to_numpy() >= settings.binary_threshold).astype(int),
        }
    )
    return out, {}
