"""A hypothesis-only classifier, cross-fitted: every item is scored by a model that never
saw it (KLUE 3.3.1, Gururangan et al. 2018).

A BPE tokenizer is trained once on all the texts (no labels involved), then for
each of ``folds`` folds a small BERT encoder is trained from scratch on the other folds'
texts and gold labels and predicts the held-out fold. Folds are cut by group (a premise's
set of hypotheses, a unit of the split), so a model never sees a sibling of the item it
scores. The result is one probability row per item, as if each had been unseen.

:func:`cross_fitted_bag_of_words` does the same with a bag-of-morphemes logistic
regression on the same folds: on small or cue-laden data it finds shortcuts the small
BERT misses, and the split rule keeps the stronger of the two (issue 34).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from pipelines.models.classifier import batch_probabilities
from pipelines.models.train_classifier import (
    TrainSettings,
    fine_tune,
    model_config,
    train_tokenizer,
)

log = logging.getLogger(__name__)


def cross_fitted_probabilities(
    texts: Sequence[str],
    labels: Sequence[str],
    groups: Sequence[int],
    settings: TrainSettings,
    folds: int = 5,
) -> tuple[np.ndarray, list[str]]:
    """Out-of-fold class probabilities for every text, and the label order of the
    columns (sorted label names)."""
    import torch
    from transformers import BertForSequenceClassification

    from pipelines.models.checkpoints import default_device

    names = sorted(set(labels))
    if len(names) < 2:
        raise ValueError(f"a hypothesis-only classifier needs two labels or more, got {names}")
    device = settings.device or default_device()
    y = np.array([names.index(label) for label in labels])
    fold, folds = fold_of(groups, folds, settings.seed)
    tokenizer = train_tokenizer(list(texts), settings.vocab_size)
    probs = np.zeros((len(texts), len(names)), dtype=np.float32)
    start = time.perf_counter()
    for k in range(folds):
        held = np.flatnonzero(fold == k)
        train = np.flatnonzero(fold != k)
        torch.manual_seed(settings.seed + k)
        model = BertForSequenceClassification(model_config(tokenizer, names, settings)).to(device)
        fine_tune(model, tokenizer, [texts[i] for i in train], y[train].tolist(), settings)
        probs[held] = batch_probabilities(
            model, tokenizer, [texts[i] for i in held], None, settings.max_length
        )
        log.info("hypothesis-only fold %d/%d: %d held-out items", k + 1, folds, len(held))
    log.info("hypothesis-only classifier: %d folds in %.0f s", folds, time.perf_counter() - start)
    return probs, names


def fold_of(groups: Sequence[int], folds: int, seed: int) -> tuple[np.ndarray, int]:
    """Each item's fold (groups whole, shuffled with ``seed``) and the number of folds
    (at least 2, at most the number of groups)."""
    group_ids = np.unique(np.asarray(groups))
    if len(group_ids) < 2:
        raise ValueError("cross-fitting needs two groups or more; all items form one group")
    folds = max(2, min(folds, len(group_ids)))
    rng = np.random.default_rng(seed)
    fold_of_group = dict(zip(rng.permutation(group_ids).tolist(), range(len(group_ids)),
                             strict=True))  # fmt: skip
    return np.array([fold_of_group[g] % folds for g in np.asarray(groups).tolist()]), folds


def cross_fitted_bag_of_words(
    tokens: Sequence[list[str]],
    labels: Sequence[str],
    groups: Sequence[int],
    folds: int = 5,
    seed: int = 0,
) -> tuple[np.ndarray, list[str]]:
    """Out-of-fold class probabilities of a bag-of-morphemes logistic regression (the
    artifact report's partial-input model, scikit-learn), on the same folds as the BERT
    (:func:`fold_of`); columns in sorted label order. A label a fold's training part
    lacks gets probability 0 there."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    names = sorted(set(labels))
    y = np.array([names.index(label) for label in labels])
    fold, folds = fold_of(groups, folds, seed)
    probs = np.zeros((len(tokens), len(names)), dtype=np.float64)
    for k in range(folds):
        held, train = np.flatnonzero(fold == k), np.flatnonzero(fold != k)
        seen = np.unique(y[train])
        if len(seen) < 2:  # one label to learn: it is the prediction
            probs[np.ix_(held, seen)] = 1.0
            continue
        vec = CountVectorizer(analyzer=lambda toks: toks)
        clf = LogisticRegression(max_iter=2000, random_state=seed)
        clf.fit(vec.fit_transform([tokens[i] for i in train]), y[train])
        probs[np.ix_(held, clf.classes_)] = clf.predict_proba(
            vec.transform([tokens[i] for i in held])
        )
    return probs, names


def cross_entropy_with_uniform(probs: np.ndarray) -> np.ndarray:
    """H(u, p) = -(1/K) sum_k log p_k per row: log K when the model has no idea, large
    when it is confident (KLUE 3.3.1 keeps the lowest for dev/test)."""
    return -np.log(np.clip(probs, 1e-12, 1.0)).mean(axis=1)
