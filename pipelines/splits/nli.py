"""The ``nli`` split rule (KLUE 3.3.1): keep hypothesis-only shortcuts out of dev/test.

1. A hypothesis-only classifier (``pipelines.models.hypothesis_only``: a small BERT trained here,
   cross-fitted by unit so no item is scored by a model that saw it or its siblings)
   predicts each pair's label from the hypothesis alone.
2. Each pair's cross entropy between that prediction and the uniform distribution
   (log K when the model cannot tell, large when the hypothesis gives the label away),
   averaged over the unit: a premise's set of hypotheses, together with anything that
   shares a group or a near-duplicate text with it (``pipelines.splits.base.units``).
3. Only units in the lowest ``eligible_fraction`` (20%) by that average may go to
   dev/test; a unit is never split across splits.
4. Per-source quotas as in KLUE: the styles share the evaluation items as
   ``style_shares`` says (60% formal, 40% colloquial; a source's style comes from the
   ``style`` column), and within a style every source gets the same count. What a
   source cannot fill from its eligible units is filled from the other eligible units.
5. dev and test are drawn at random from the chosen units (dev:test 1:1 by default).

Step 1 trains every model of ``partial_models`` (the BERT, and a bag-of-morphemes
logistic regression on the same folds) and ranks by the one with the higher out-of-fold
accuracy: the rule's purpose is to keep the items a hypothesis-only model finds easy out
of dev/test, and on small data the BERT can stay at chance while the bag of morphemes
finds the cues (the KLUE-NLI demo: 0.35 against 1.00). Both accuracies are reported.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field

from pipelines.core.settings import SHARE_TOLERANCE, Share
from pipelines.lang import Language, language
from pipelines.models.hypothesis_only import (
    cross_entropy_with_uniform,
    cross_fitted_bag_of_words,
    cross_fitted_probabilities,
)
from pipelines.models.train_classifier import TrainSettings
from pipelines.splits.base import (
    SplitError,
    SplitSettingsBase,
    check_items,
    divide_dev_test,
    source_of_units,
    split_rule,
    units,
)

# the hypothesis-only classifier: small enough for a CPU in minutes
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


PARTIAL_MODELS = {
    "bert": "cross-fitted BERT on the last text column",
    "bow": "cross-fitted bag of morphemes + logistic regression on the last text column",
}


@dataclass
class NliSplitSettings(SplitSettingsBase):
    """KLUE-NLI's split: the hypothesis-only classifier and the style quotas."""

    rule: str = "nli"
    eligible_fraction: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] = 0.2
    # (KLUE: the lowest 20% of premise sets by cross entropy)
    folds: Annotated[int, Field(ge=2)] = 5
    style_column: str = "style"
    # each style's share of the evaluation items (shares that sum to 1; renormalised over
    # the styles a split has)
    style_shares: dict[str, Share] = field(
        default_factory=lambda: {"formal": 0.6, "colloquial": 0.4}
    )
    hypothesis_model: dict = field(default_factory=lambda: dict(HYPOTHESIS_MODEL))
    device: str | None = None
    # the cross-fitted partial-input models trained; the split ranks by the one with the
    # higher out-of-fold accuracy (bert: the small BERT; bow: bag of morphemes + logistic
    # regression, the artifact report's model)
    partial_models: list[str] = field(default_factory=lambda: ["bert", "bow"])

    text_defaults: ClassVar[tuple[str, ...]] = ("premise", "hypothesis")

    def __post_init__(self) -> None:
        super().__post_init__()
        bad = [m for m in self.partial_models if m not in ("bert", "bow")]
        if bad or not self.partial_models:
            raise SplitError(f"partial_models: {bad or 'none'}; choose from ['bert', 'bow']")
        unknown = set(self.hypothesis_model) - set(HYPOTHESIS_MODEL)
        if unknown:
            raise SplitError(
                f"hypothesis_model: unknown settings {sorted(unknown)}; "
                f"expected some of {sorted(HYPOTHESIS_MODEL)}"
            )
        for key, value in self.hypothesis_model.items():  # issue 51: lr .nan trained to NaN
            whole = isinstance(HYPOTHESIS_MODEL[key], int)
            ok = isinstance(value, int if whole else int | float) and not isinstance(value, bool)
            if not ok or not (math.isfinite(value) and value > 0 and (whole or value <= 1)):
                kind = "a whole number >= 1" if whole else "a number in (0, 1]"
                raise SplitError(f"hypothesis_model.{key}: {kind}, got {value!r}")
        total = sum(self.style_shares.values())
        if self.style_shares and abs(total - 1) > SHARE_TOLERANCE:
            raise SplitError(f"style_shares: the shares sum to {total:g}, not 1")


def source_quotas(
    unit_source: np.ndarray,
    unit_style: dict[str, str],
    style_shares: dict[str, float],
    target: int,
) -> dict[str, float]:
    """Evaluation items per source: styles by ``style_shares`` (renormalised over the
    styles present; a style not named shares what is left equally), equal counts per
    source within a style."""
    sources = sorted(set(unit_source.tolist()))
    by_style: dict[str, list[str]] = {}
    for s in sources:
        by_style.setdefault(unit_style.get(s, ""), []).append(s)
    named = {st: style_shares[st] for st in by_style if st in style_shares}
    unnamed = [st for st in by_style if st not in style_shares]
    rest = max(0.0, 1.0 - sum(named.values()))
    shares = dict(named)
    for st in unnamed:
        shares[st] = rest / len(unnamed) if rest > 0 else 1.0
    total = sum(shares.values()) or 1.0
    quotas: dict[str, float] = {}
    for st, members in by_style.items():
        for s in members:
            quotas[s] = target * shares[st] / total / len(members)
    return quotas


@split_rule("nli", NliSplitSettings)
def nli_split(
    items: pd.DataFrame, settings: NliSplitSettings, lang: Language | None = None
) -> tuple[pd.DataFrame, dict]:
    """KLUE 3.3.1 (see the module docstring); ``items`` need ``label`` and the text
    columns (premise, hypothesis)."""
    check_items(items, settings, ["label"])
    labels = items["label"].astype(str)
    if items["label"].isna().any():
        bad = items["item_id"][items["label"].isna()].iloc[0]
        raise SplitError(f"item {bad!r}: no label")
    rng = np.random.default_rng(settings.seed)
    unit = units(items, settings)
    n = len(items)
    sizes = np.bincount(unit)
    hypotheses = items[settings.text_columns[-1]].astype(str).tolist()
    model = TrainSettings(**settings.hypothesis_model, seed=settings.seed, device=settings.device)
    candidates: dict[str, tuple[np.ndarray, list[str]]] = {}
    try:
        if "bert" in settings.partial_models:
            candidates["bert"] = cross_fitted_probabilities(
                hypotheses, labels.tolist(), unit.tolist(), model, settings.folds
            )
        if "bow" in settings.partial_models:
            lang = lang or language()
            candidates["bow"] = cross_fitted_bag_of_words(
                [lang.morphemes(h) for h in hypotheses],
                labels.tolist(),
                unit.tolist(),
                settings.folds,
                settings.seed,
            )
    except ValueError as err:
        raise SplitError(f"nli rule: {err}") from err
    accuracy = {m: float((np.array(nm)[p.argmax(axis=1)] == labels.to_numpy()).mean())
                for m, (p, nm) in candidates.items()}  # fmt: skip
    # the strongest: the higher out-of-fold accuracy (ties: the order of partial_models)
    strongest = max(settings.partial_models, key=lambda m: accuracy[m])
    probs, names = candidates[strongest]
    ce = cross_entropy_with_uniform(probs)
    unit_ce = np.bincount(unit, weights=ce) / sizes
    # the lowest eligible_fraction of units (ties broken at random, seeded)
    order = np.lexsort((rng.random(len(sizes)), unit_ce))
    n_eligible = int(np.ceil(settings.eligible_fraction * len(sizes)))
    eligible = np.zeros(len(sizes), dtype=bool)
    eligible[order[:n_eligible]] = True
    cutoff_ce = float(unit_ce[order[n_eligible - 1]]) if n_eligible else float("nan")

    unit_source = source_of_units(items, unit, settings.source_column)
    unit_style: dict[str, str] = {}
    if settings.style_column in items.columns and settings.source_column in items.columns:
        pairs = items[[settings.source_column, settings.style_column]].astype(str)
        unit_style = (
            pairs.groupby(settings.source_column)[settings.style_column]
            .agg(lambda s: s.value_counts().index[0])
            .to_dict()
        )
    target = round(settings.eval_fraction * n)
    quotas = source_quotas(unit_source, unit_style, settings.style_shares, target)
    taken: Counter = Counter()
    chosen: list[int] = []
    why: dict[int, str] = {}
    pool = [u for u in rng.permutation(len(sizes)).tolist() if eligible[u]]
    # pass 1: the source furthest under its quota takes its next eligible unit
    remaining = {s: [u for u in pool if unit_source[u] == s] for s in quotas}
    total = 0

    def fill(within_quota: bool) -> None:
        nonlocal total
        while total < target:
            open_sources = [
                s for s in quotas if remaining[s] and (not within_quota or taken[s] < quotas[s])
            ]
            if not open_sources:
                break
            s = max(open_sources, key=lambda s: (quotas[s] - taken[s], s))
            u = remaining[s].pop(0)
            if total + sizes[u] > target + 1:
                continue
            chosen.append(u)
            why[u] = (f"source {s!r} quota {quotas[s]:.0f}" if within_quota
                      else f"source {s!r} filling for sources short of eligible sets")  # fmt: skip
            taken[s] += int(sizes[u])
            total += int(sizes[u])

    fill(within_quota=True)
    # pass 2: what some sources could not fill, from the other sources' eligible units,
    # the source furthest under its quota first
    fill(within_quota=False)
    side = divide_dev_test(chosen, sizes, settings.dev_share, rng)
    split, reason = [], []
    for u in unit.tolist():
        rank = f"set cross entropy {unit_ce[u]:.4f}"
        if u in side:
            split.append(side[u])
            reason.append(f"{rank} in the lowest {settings.eligible_fraction:.0%}; {why[u]}")
        elif eligible[u]:
            split.append("train")
            reason.append(f"{rank} eligible, beyond the dev/test quotas")
        else:
            split.append("train")
            reason.append(f"{rank} above the eligible cutoff {cutoff_ce:.4f}")
    predicted = [names[i] for i in probs.argmax(axis=1)]
    out = pd.DataFrame(
        {
            "item_id": items["item_id"].astype(str).to_numpy(),
            "split": split,
            "rule": "nli",
            "reason": reason,
            "unit": unit,
            "hypothesis_only_label": predicted,
            "hypothesis_only_ce": ce.round(4),
            "set_ce": unit_ce[unit].round(4),
            "eligible": eligible[unit],
        }
    )
    correct = np.array(predicted) == labels.to_numpy()
    in_eval = out["split"].isin(["dev", "test"]).to_numpy()
    majority = labels[~in_eval].value_counts().index[0] if (~in_eval).any() else None
    sources = pd.Series(items[settings.source_column].astype(str).to_numpy()
                        if settings.source_column in items.columns else [""] * n)  # fmt: skip
    figures = {
        "partial_input_models": {
            m: {"accuracy_all": round(a, 4), "model": PARTIAL_MODELS[m]}
            for m, a in accuracy.items()
        },
        "hypothesis_only": {
            "model": f"{PARTIAL_MODELS[strongest]} (the strongest of "
            f"{', '.join(settings.partial_models)} by out-of-fold accuracy)",
            "chosen": strongest,
            "folds": settings.folds,
            "labels": names,
            "accuracy_all": round(float(correct.mean()), 4),
            "accuracy_train": round(float(correct[~in_eval].mean()), 4)
            if (~in_eval).any()
            else None,
            "accuracy_dev_test": round(float(correct[in_eval].mean()), 4)
            if in_eval.any()
            else None,
            "majority_baseline_dev_test": round(float((labels[in_eval] == majority).mean()), 4)
            if in_eval.any()
            else None,
            "majority_label": majority,
            "uniform_ce": round(float(np.log(len(names))), 4),
        },
        "eligible_units": int(eligible.sum()),
        "units": int(len(sizes)),
        "eligible_cutoff_ce": round(cutoff_ce, 4),
        "target": target,
        "source_quotas": {s: round(q, 1) for s, q in sorted(quotas.items())},
        "source_styles": unit_style,
        "dev_test_per_source": {
            k: int(v) for k, v in sorted(Counter(sources[in_eval].tolist()).items())
        },
    }
    return out, figures
