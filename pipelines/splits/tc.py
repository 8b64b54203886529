"""The ``tc`` split rule (KLUE 3.1.1): evaluate on what comes later and on what is new.

YNAT split its headlines by date, so a model is tested on news published after
everything it trained on. Here:

1. A unit (items sharing a group or a near-duplicate text, ``pipelines.splits.base.units``)
   takes its latest date; an item without a parsable date is an error naming it.
2. Units dated on or after the cutoff go to dev/test, all of them (no later item is left
   in train). The cutoff is ``cutoff`` when given, else the latest date at which the
   items on or after it reach ``eval_fraction`` of the whole.
3. When an explicit cutoff leaves fewer evaluation items than ``eval_fraction``, the
   earlier units whose texts carry the most terms (the language's morphemes; MeCab for
   Korean) found in no other unit are added first: they bring terms unseen in train.
4. dev and test are drawn at random from the chosen units (dev:test 1:1 by default).

Undated items (``date_column: null``, e.g. headlines shipped without their publication
dates) cannot be split by date: then only KLUE's second criterion applies, and the
units with the most terms found in no other unit fill dev/test up to ``eval_fraction``;
the figures say ``dated: false`` so that the card does not claim a date split.

The rule's figures report the share of dev/test items that hold a term unseen in train,
against the same share for train items measured against the rest of train.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from pipelines.lang import Language
from pipelines.splits.base import (
    SplitError,
    SplitSettingsBase,
    check_items,
    divide_dev_test,
    split_rule,
    units,
)


@dataclass
class TcSplitSettings(SplitSettingsBase):
    """YNAT's split: by date, then terms unseen elsewhere."""

    rule: str = "tc"
    date_column: str | None = "date"  # None: undated items, unseen terms only
    cutoff: str | None = None  # None: the date that puts eval_fraction of items after it

    text_defaults: ClassVar[tuple[str, ...]] = ("title",)


def unit_terms(texts: list[str], unit: np.ndarray, lang: Language) -> list[set[str]]:
    """The set of morphemes of each unit's texts."""
    terms: list[set[str]] = [set() for _ in range(int(unit.max()) + 1 if len(unit) else 0)]
    for text, u in zip(texts, unit.tolist(), strict=True):
        terms[u].update(lang.morphemes(text))
    return terms


def unseen_share(item_terms: list[set[str]], seen: Counter, own: list[Counter] | None) -> float:
    """Share of items with at least one term that ``seen`` (term -> units) lacks; with
    ``own``, an item's own unit is taken out of ``seen`` first (train against the rest
    of train)."""
    if not item_terms:
        return float("nan")
    hits = 0
    for i, terms in enumerate(item_terms):
        mine = own[i] if own is not None else Counter()
        hits += any(seen[t] - mine[t] <= 0 for t in terms)
    return hits / len(item_terms)


@split_rule("tc", TcSplitSettings)
def tc_split(
    items: pd.DataFrame, settings: TcSplitSettings, lang: Language
) -> tuple[pd.DataFrame, dict]:
    """KLUE 3.1.1 (see the module docstring); ``items`` need the date column unless
    ``date_column`` is None."""
    dated = settings.date_column is not None
    check_items(items, settings, [settings.date_column] if dated else [])
    if dated:
        dates = pd.to_datetime(items[settings.date_column], errors="coerce", utc=True)
    else:
        dates = pd.Series(pd.NaT, index=items.index, dtype="datetime64[ns, UTC]")
    if dated and dates.isna().any():
        bad = dates.isna().to_numpy().nonzero()[0][0]
        raise SplitError(
            f"item {items['item_id'].iloc[bad]!r}: {settings.date_column} "
            f"{items[settings.date_column].iloc[bad]!r} is not a date"
        )
    rng = np.random.default_rng(settings.seed)
    unit = units(items, settings)
    n = len(items)
    sizes = np.bincount(unit)
    unit_date = pd.Series(dates.to_numpy()).groupby(unit).max()
    target = round(settings.eval_fraction * n)
    if not dated:
        cutoff = None
    elif settings.cutoff is not None:
        cutoff = pd.to_datetime(settings.cutoff, utc=True, errors="coerce")
        if pd.isna(cutoff):
            raise SplitError(f"cutoff {settings.cutoff!r} is not a date")
    else:
        per_date = pd.Series(sizes).groupby(unit_date.to_numpy()).sum().sort_index(ascending=False)
        reached = per_date.cumsum() >= target
        cutoff = per_date.index[int(np.argmax(reached.to_numpy()))] if reached.any() else (
            per_date.index[-1]
        )  # fmt: skip
    late = (unit_date >= cutoff).to_numpy() if dated else np.zeros(len(sizes), dtype=bool)
    chosen = np.flatnonzero(late).tolist()
    why = {u: f"dated {unit_date[u].date()} on or after the cutoff {cutoff.date()}" for u in chosen}
    before = "before the cutoff" if dated else "undated"
    texts = [" ".join(map(str, row)) for row in items[settings.text_columns].to_numpy()]
    terms = unit_terms(texts, unit, lang)
    df: Counter = Counter()
    for t in terms:
        df.update(t)
    taken = int(sizes[chosen].sum())
    if taken < target:
        # unseen terms first: terms no other unit has, as a share of the unit's terms
        novelty = np.array([sum(df[t] == 1 for t in ts) / max(1, len(ts)) for ts in terms])
        early = [u for u in np.lexsort((rng.random(len(sizes)), -novelty)) if not late[u]]
        for u in early:
            if taken + sizes[u] > target:
                continue
            chosen.append(int(u))
            why[int(u)] = (
                f"{before}, added for terms found in no other unit ({novelty[u]:.0%} of its terms)"
            )
            taken += int(sizes[u])
            if taken >= target:
                break
    side = divide_dev_test(chosen, sizes, settings.dev_share, rng)
    split = [side.get(u, "train") for u in unit.tolist()]
    reason = [
        why.get(u, f"dated {unit_date[u].date()}, before the cutoff" if dated else "undated")
        for u in unit.tolist()
    ]
    out = pd.DataFrame(
        {
            "item_id": items["item_id"].astype(str).to_numpy(),
            "split": split,
            "rule": "tc",
            "reason": reason,
            "unit": unit,
            "date": dates.dt.strftime("%Y-%m-%d").to_numpy(),
        }
    )
    in_eval = out["split"].isin(["dev", "test"]).to_numpy()
    train_units = sorted(set(unit[~in_eval].tolist()))
    seen: Counter = Counter()
    for u in train_units:
        seen.update(terms[u])
    item_terms = [set(lang.morphemes(t)) for t in texts]
    figures = {
        "dated": dated,
        "cutoff": str(cutoff.date()) if dated else None,
        "cutoff_given": settings.cutoff is not None,
        "target": target,
        "dev_test_on_or_after_cutoff": int(sizes[np.flatnonzero(late)].sum()),
        "dev_test_added_for_unseen_terms": int(taken - sizes[np.flatnonzero(late)].sum()),
        "train_dates": [str(dates[~in_eval].min().date()), str(dates[~in_eval].max().date())]
        if dated and (~in_eval).any()
        else None,
        "dev_test_dates": [str(dates[in_eval].min().date()), str(dates[in_eval].max().date())]
        if dated and in_eval.any()
        else None,
        "unseen_term_share": {
            "dev+test": round(
                unseen_share([item_terms[i] for i in np.flatnonzero(in_eval)], seen, None), 4
            ),
            "train (against the rest of train)": round(
                unseen_share(
                    [item_terms[i] for i in np.flatnonzero(~in_eval)],
                    seen,
                    [Counter(terms[unit[i]]) for i in np.flatnonzero(~in_eval)],
                ),
                4,
            ),
        },
    }
    return out, figures
