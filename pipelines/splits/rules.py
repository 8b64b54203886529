"""Artifact-aware train/dev/test splits.

Every rule assigns *units*, never single items: a unit is a connected set of items that
share a group (same premise, source document, intent: ``group_columns``) or whose texts
are exact or near duplicates (``pipelines.quality.dedup.near_duplicate_links`` over every text
column). So no group straddles two splits and no duplicate text leaks from train into
dev/test, whatever the rule. Everything is seeded and reproducible.

Rules:

- ``sts`` (KLUE 3.2.1): dev+test near-uniform over the 51 score bins 0.0-5.0: each bin
  gets the same quota of evaluation items (what a bin lacks is spread over the others);
  within a bin, pairs with score >= 3 are preferred with the least morpheme overlap
  (MeCab, Jaccard) and pairs below 3 with the most, so that lexical overlap does not give
  the score away; each source keeps its share of the evaluation items; dev:test = 1:2
  within every bin; binary label at 3.0.
- ``nli`` (KLUE 3.3.1, ``pipelines.splits.nli``): a cross-fitted hypothesis-only classifier;
  only premise sets whose mean cross entropy with the uniform distribution is in the
  lowest 20% may go to dev/test; per-source quotas (60% formal, 40% colloquial, equal
  counts per source within a style).
- ``tc`` (KLUE 3.1.1, ``pipelines.splits.tc``): by date, items on or after the cutoff go to
  dev/test; when they are too few, items with terms unseen elsewhere are added first.
- ``ner`` (KLUE 3.4.1, ``pipelines.splits.ner``): the test set takes items whose entities
  occur nowhere else first, so it holds entities unseen in train.
- ``random``: a seeded unit-level split by ``eval_fraction`` and dev:test ratio (no
  artifact guard beyond groups and duplicates; for corpora without a paper rule).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.quality.dedup import near_duplicate_links

SPLIT_RULES = ("sts", "nli", "tc", "ner", "random")
# each rule's text columns, first and last compared for overlap
DEFAULT_TEXT_COLUMNS = {
    "sts": ["sentence1", "sentence2"],
    "nli": ["premise", "hypothesis"],
    "tc": ["title"],
    "ner": ["sentence"],
    "random": ["sentence1", "sentence2"],
}
# the hypothesis-only classifier of the nli rule: small enough for a CPU in minutes
HYPOTHESIS_MODEL = {
    "vocab_size": 4000,
    "hidden": 128,
    "layers": 2,
    "heads": 2,
    "intermediate": 512,
    "max_length": 64,
    "epochs": 4,
    "batch_size": 32,
    "lr": 5e-4,
}
SPLIT_COLUMNS = ["item_id", "split", "rule", "reason"]


class SplitError(ValueError):
    """Items that cannot be split; the message names the column or the item."""


@dataclass
class SplitSettings:
    """A split rule and its settings (defaults: KLUE's)."""

    rule: str = "sts"
    seed: int = 0
    eval_fraction: float = 0.15  # dev + test share of the items
    dev_share: float | None = None  # dev's share of dev+test: sts 1/3 (1:2), others 1/2
    text_columns: list[str] | None = None  # None: the rule's (DEFAULT_TEXT_COLUMNS)
    group_columns: list[str] = field(default_factory=list)
    source_column: str | None = "source"
    near_duplicate_threshold: float = 0.8
    # sts
    bins: int = 51
    high_score: float = 3.0  # KLUE: prefer least overlap at >= 3, most overlap below
    binary_threshold: float = 3.0
    # nli
    eligible_fraction: float = 0.2  # KLUE: the lowest 20% of premise sets by cross entropy
    folds: int = 5
    style_column: str = "style"
    style_shares: dict[str, float] = field(
        default_factory=lambda: {"formal": 0.6, "colloquial": 0.4}
    )
    hypothesis_model: dict = field(default_factory=lambda: dict(HYPOTHESIS_MODEL))
    device: str | None = None
    # tc
    date_column: str | None = "date"  # None: undated items, unseen terms only
    cutoff: str | None = None  # None: the date that puts eval_fraction of items after it
    # ner
    entity_column: str = "entities"
    unseen_test_share: float = 0.5  # test items chosen for entities unseen in train first

    def __post_init__(self) -> None:
        if self.rule not in SPLIT_RULES:
            raise SplitError(f"unknown rule {self.rule!r}; expected one of {SPLIT_RULES}")
        if not 0 < self.eval_fraction < 1:
            raise SplitError(f"eval_fraction must be in (0, 1), got {self.eval_fraction}")
        if self.dev_share is None:
            self.dev_share = 1 / 3 if self.rule == "sts" else 1 / 2
        if not 0 <= self.dev_share <= 1:
            raise SplitError(f"dev_share must be in [0, 1], got {self.dev_share}")
        if not self.text_columns:
            self.text_columns = list(DEFAULT_TEXT_COLUMNS[self.rule])
        unknown = set(self.hypothesis_model) - set(HYPOTHESIS_MODEL)
        if unknown:
            raise SplitError(
                f"hypothesis_model: unknown settings {sorted(unknown)}; "
                f"expected some of {sorted(HYPOTHESIS_MODEL)}"
            )


def units(items: pd.DataFrame, settings: SplitSettings) -> np.ndarray:
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
        for i, key in enumerate(items[col].tolist()):
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


def morpheme_overlap(a: str, b: str) -> float:
    """Jaccard of the two sentences' MeCab morpheme sets (KLUE 3.2.1)."""
    from pipelines.lang.ko import morphemes

    sa, sb = set(morphemes(a)), set(morphemes(b))
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


def _check(items: pd.DataFrame, settings: SplitSettings, needed: list[str]) -> None:
    cols = ["item_id", *needed, *settings.text_columns, *settings.group_columns]
    missing = [c for c in dict.fromkeys(cols) if c not in items.columns]
    if missing:
        raise SplitError(f"no column {missing} in the items (columns: {list(items.columns)})")
    dup = items["item_id"].duplicated()
    if dup.any():
        raise SplitError(f"item_id {items['item_id'][dup].iloc[0]!r} appears twice")


def sts_split(items: pd.DataFrame, settings: SplitSettings) -> pd.DataFrame:
    """KLUE 3.2.1 (see the module docstring); ``items`` need ``label`` (0-5)."""
    _check(items, settings, ["label"])
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
            morpheme_overlap(a, b)
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
    return out


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


def random_split(items: pd.DataFrame, settings: SplitSettings) -> pd.DataFrame:
    """Seeded unit-level split: units in random order fill dev+test up to
    ``eval_fraction``, dev:test by ``dev_share``."""
    _check(items, settings, [])
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
    return pd.DataFrame(
        {
            "item_id": items["item_id"].astype(str).to_numpy(),
            "split": [side.get(u, "train") for u in unit.tolist()],
            "rule": "random",
            "reason": "seeded random order of units",
            "unit": unit,
        }
    )


def split_with_figures(items: pd.DataFrame, settings: SplitSettings) -> tuple[pd.DataFrame, dict]:
    """The split of every item (``SPLIT_COLUMNS`` first, then rule-specific columns) and
    the rule's own figures for the report."""
    if settings.rule == "sts":
        return sts_split(items, settings), {}
    if settings.rule == "nli":
        from pipelines.splits.nli import nli_split

        return nli_split(items, settings)
    if settings.rule == "tc":
        from pipelines.splits.tc import tc_split

        return tc_split(items, settings)
    if settings.rule == "ner":
        from pipelines.splits.ner import ner_split

        return ner_split(items, settings)
    return random_split(items, settings), {}


def split_items(items: pd.DataFrame, settings: SplitSettings) -> pd.DataFrame:
    """The split of every item (see :func:`split_with_figures`)."""
    return split_with_figures(items, settings)[0]


def settings_dict(settings: SplitSettings) -> dict:
    return asdict(settings)


def read_table(path: Path) -> pd.DataFrame:
    """A Parquet, CSV or JSON Lines table with a unique item_id per row and at least one
    row; errors name the file (and the row of a repeated id)."""
    from pipelines.core.io import read_table as read_any

    frame = read_any(path, SplitError, {"item_id": str})
    if "item_id" not in frame.columns:
        raise SplitError(f"{path}: no item_id column (columns: {list(frame.columns)})")
    if frame.empty:
        raise SplitError(f"{path}: no rows: nothing to split")
    frame["item_id"] = frame["item_id"].astype(str)
    repeated = frame["item_id"].duplicated()
    if repeated.any():
        row = int(np.flatnonzero(repeated.to_numpy())[0])
        first = int(np.flatnonzero((frame["item_id"] == frame["item_id"].iloc[row]).to_numpy())[0])
        raise SplitError(
            f"{path}: row {row + 1}: item_id {frame['item_id'].iloc[row]!r} repeats row {first + 1}"
        )
    return frame


def run_split(
    gold_path: Path, settings: SplitSettings, out: Path, items_path: Path | None = None
) -> dict:
    """Split the gold items (joined with ``items_path`` for their texts), write
    splits.parquet, artifacts.json and artifacts.md atomically; return a summary."""
    from pipelines.core.io import output_lock

    with output_lock(out):  # one run at a time writes into OUT
        return _run_split(gold_path, settings, out, items_path)


def _run_split(
    gold_path: Path, settings: SplitSettings, out: Path, items_path: Path | None
) -> dict:
    import json

    from pipelines.core.io import outputs_current, sha256_file, write_outputs
    from pipelines.splits.artifacts import artifact_report, report_markdown

    gold = read_table(gold_path)
    frame = gold
    if items_path is not None:
        items = read_table(items_path)
        extra = [c for c in items.columns if c not in gold.columns or c == "item_id"]
        frame = gold.merge(items[extra], on="item_id", how="left", validate="one_to_one")
        lost = frame[settings.text_columns].isna().any(axis=1)
        if lost.any():
            raise SplitError(
                f"{items_path}: no texts for gold item {frame['item_id'][lost].iloc[0]!r}"
            )
    sources = [str(gold_path)] + ([str(items_path)] if items_path else [])
    key = json.dumps(
        {"inputs": [sha256_file(p) for p in sources], "settings": asdict(settings)},
        sort_keys=True,
    )
    names = ["splits.parquet", "artifacts.json", "artifacts.md"]
    if outputs_current(out, key, names):  # a rerun: nothing to recompute (nli trains models)
        figures = json.loads((out / "artifacts.json").read_text(encoding="utf-8"))
        return {**figures, "written": False}
    splits, rule_figures = split_with_figures(frame, settings)
    report = artifact_report(frame, splits, settings.text_columns, settings.binary_threshold,
                             seed=settings.seed)  # fmt: skip
    report["rule_figures"] = rule_figures
    figures = {
        **report,
        "rule": settings.rule,
        "settings": asdict(settings),  # the split's; the report's are in report_settings
        "report_settings": report["settings"],
        "inputs": sources,
    }
    written = write_outputs(
        out,
        key,
        {"splits.parquet": splits},
        {"artifacts.json": figures},
        {"artifacts.md": report_markdown(report, settings.rule)},
    )
    return {**figures, "written": written}
