"""The ``ner`` split rule (KLUE 3.4.1): the test set holds entities unseen in train.

A model that memorised the training entities should not pass the test, so:

1. Each item's entities come from the ``entities`` column: a list of strings, of spans
   (``{"text": ...}`` as ``annotate pull`` writes Label Studio labels), or the same as a
   JSON string. Entities are compared case-folded with spaces squeezed.
2. A unit (``pipelines.splits.base.units``) is *novel* when it has an entity that no other
   unit has: put in test, that entity is unseen in train.
3. Test (its share of ``eval_fraction``) takes novel units first, in seeded random
   order, until ``unseen_test_share`` of its items are filled that way; the rest of test
   and all of dev are drawn at random from the other units. The rest is train.
4. With ``per_source`` (KLUE 3.4.1 splits each source so), the targets and the draws of
   3. are made per source (a unit's source: its first item's ``source_column``), so
   each source has its ``eval_fraction`` in dev and test; novelty stays global (an
   entity unseen in the whole train split).

The rule's figures: the share of test and dev items holding an entity unseen in train,
and the share of distinct test entities unseen in train.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from pipelines.core.settings import Share
from pipelines.lang import Language
from pipelines.splits.base import SplitError, SplitSettingsBase, check_items, split_rule, units


@dataclass
class NerSplitSettings(SplitSettingsBase):
    """KLUE-NER's split: entities unseen in train go to test first."""

    rule: str = "ner"
    entity_column: str = "entities"
    unseen_test_share: Share = 0.5  # test items chosen for entities unseen in train first
    per_source: bool = False  # the targets and draws per source (KLUE 3.4.1)

    text_defaults: ClassVar[tuple[str, ...]] = ("sentence",)


def entity_set(value: object, item_id: str) -> set[str]:
    """The normalised entity strings of one item's ``entities`` value."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return set()
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return set()
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise SplitError(f"item {item_id!r}: entities {text[:60]!r} is not JSON") from err
    if isinstance(value, dict):
        value = [value]
    if not hasattr(value, "__iter__"):
        raise SplitError(f"item {item_id!r}: entities must be a list, got {value!r}")
    out = set()
    for entity in value:
        if isinstance(entity, dict):
            entity = entity.get("text", entity.get("entity"))
        if not isinstance(entity, str):
            raise SplitError(f"item {item_id!r}: entity {entity!r} has no text")
        norm = " ".join(entity.casefold().split())
        if norm:
            out.add(norm)
    return out


def _fill(
    members: list[int],
    sizes: np.ndarray,
    novel: np.ndarray,
    settings: NerSplitSettings,
    side: dict[int, str],
    why: dict[int, str],
) -> dict:
    """Step 3 over the units ``members`` (in seeded order): test takes novel units
    first, then test and dev are filled at random; ``side`` and ``why`` get each chosen
    unit's split and reason. Returns the targets and counts."""
    n = int(sum(sizes[u] for u in members))
    target = round(settings.eval_fraction * n)
    test_target = round(target * (1 - settings.dev_share))
    dev_target = target - test_target
    test_n = dev_n = 0
    for u in members:  # test: novel units first
        if test_n >= settings.unseen_test_share * test_target:
            break
        if novel[u] and test_n + sizes[u] <= test_target:
            side[u], why[u] = "test", "entities found in no other unit: unseen in train"
            test_n += int(sizes[u])
    for u in members:  # the rest of test, then dev, at random
        if u in side:
            continue
        if test_n + sizes[u] <= test_target and test_n < test_target:
            side[u], why[u] = "test", "seeded random order of units"
            test_n += int(sizes[u])
        elif dev_n + sizes[u] <= dev_target and dev_n < dev_target:
            side[u], why[u] = "dev", "seeded random order of units"
            dev_n += int(sizes[u])
        if test_n >= test_target and dev_n >= dev_target:
            break
    return {"target": target, "test": test_n, "dev": dev_n}  # fmt: skip


@split_rule("ner", NerSplitSettings)
def ner_split(
    items: pd.DataFrame, settings: NerSplitSettings, lang: Language | None = None
) -> tuple[pd.DataFrame, dict]:
    """KLUE 3.4.1 (see the module docstring)."""
    check_items(items, settings, [settings.entity_column])
    ents = [
        entity_set(v, i)
        for v, i in zip(items[settings.entity_column], items["item_id"].astype(str), strict=True)
    ]
    if settings.per_source and settings.source_column not in items.columns:
        raise SplitError(f"per_source: no source column {settings.source_column!r} in the items")
    rng = np.random.default_rng(settings.seed)
    unit = units(items, settings)
    sizes = np.bincount(unit)
    unit_ents: list[set[str]] = [set() for _ in range(len(sizes))]
    for e, u in zip(ents, unit.tolist(), strict=True):
        unit_ents[u] |= e
    df: Counter = Counter()
    for e in unit_ents:
        df.update(e)
    novel = np.array([any(df[e] == 1 for e in es) for es in unit_ents])
    order = rng.permutation(len(sizes)).tolist()
    side: dict[int, str] = {}
    why: dict[int, str] = {}
    unit_source = [""] * len(sizes)
    if settings.per_source and settings.source_column in items.columns:
        for u, src in zip(unit.tolist(), items[settings.source_column].astype(str), strict=True):
            unit_source[u] = unit_source[u] or src
    per_source = {}
    for src in sorted(set(unit_source)):
        members = [u for u in order if unit_source[u] == src]
        got = _fill(members, sizes, novel, settings, side, why)
        per_source[src] = {"items": int(sum(sizes[u] for u in members)), **got}
    target = sum(v["target"] for v in per_source.values())
    split = [side.get(u, "train") for u in unit.tolist()]
    out = pd.DataFrame(
        {
            "item_id": items["item_id"].astype(str).to_numpy(),
            "split": split,
            "rule": "ner",
            "reason": [why.get(u, "not chosen for dev/test") for u in unit.tolist()],
            "unit": unit,
            "entities": [len(e) for e in ents],
        }
    )
    parts = np.array(split)
    train_ents: set[str] = set().union(*[ents[i] for i in np.flatnonzero(parts == "train")])

    def share(part: str) -> float | None:
        idx = np.flatnonzero(parts == part)
        if not len(idx):
            return None
        return round(float(np.mean([bool(ents[i] - train_ents) for i in idx])), 4)

    test_ents = set().union(*[ents[i] for i in np.flatnonzero(parts == "test")])
    figures = {
        "target": target,
        **({"per_source": per_source} if settings.per_source else {}),
        "novel_units": int(novel.sum()),
        "items_with_unseen_entity": {"test": share("test"), "dev": share("dev")},
        "test_entities": len(test_ents),
        "test_entities_unseen_in_train": round(len(test_ents - train_ents) / len(test_ents), 4)
        if test_ents
        else None,
        "train_entities": len(train_ents),
    }
    return out, figures
