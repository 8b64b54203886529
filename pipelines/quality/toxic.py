"""Stage ``classify``: drop toxic sentences with classifiers (KLUE 2.3).

KLUE removed sentences that a gender-bias detector scored 0.5 or more and that a
hate-speech detector scored 0.9 or more, both trained on the Korean HateSpeech dataset,
and did not run them on the text of three news publishers: The Korea Economy Daily,
ACROFAN and YNA, as the approach "does not work well for more formal text, such as
found in news articles" (KLUE 2.3; the other formal corpora, Wikitree, policy news,
Wikipedia and WikiNews, were filtered). The filter is on by default: each detector is
the built-in one of its name (:mod:`pipelines.models.builtin_detectors`, a calibrated
character n-gram model trained from the shipped data on first use) unless the recipe
names a folder: a transformers sequence-classification checkpoint or a saved n-gram
detector. Its score for a sentence is the summed probability of its positive labels
(``hate`` for the hate detector, ``True`` for the gender-bias detector by default).
Every scored sentence gets a ``score_<detector>`` column (empty where the corpus was
skipped); a sentence at or over a threshold is dropped with reason ``gender_bias`` or
``hate`` (the first detector in that order that fires) and every firing score in
``detail``.

Thresholds come from the recipe: KLUE's by default, per corpus overridable ("the
thresholds are manually determined for each corpus"). A corpus is skipped, with the
reason the data card shows (:func:`skip_reasons`), when its override says ``skip``, its
``publisher`` is in ``skip_publishers`` (KLUE's three by default), its style is in
``skip_styles`` (none by default), or, with the built-in detectors, it is not in their
language (Korean).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.stage import StageResult, split_by_reason
from pipelines.models.classifier import SequenceClassifier
from pipelines.models.ngram_detector import NgramDetector, is_ngram_detector, predict_many
from pipelines.quality.settings import ClassifierSettings, skip_reasons

__all__ = ["detector_folders", "filter_toxic", "load_detectors", "scored_mask", "skip_reasons"]

DETECTOR_ORDER = ("gender_bias", "hate")
Detector = SequenceClassifier | NgramDetector


def detector_folders(
    settings: ClassifierSettings, resolve: Callable[[str], Path]
) -> dict[str, Path]:
    """Each active detector's folder: the recipe's ``model`` (``resolve``: a recipe path
    to an absolute one), else the built-in detector, trained now if it is not yet."""
    from pipelines.models.builtin_detectors import builtin_detector

    return {
        name: resolve(spec.model) if spec.model else builtin_detector(name)
        for name, spec in settings.active.items()
    }


def load_detectors(
    settings: ClassifierSettings, models: dict[str, str | Path]
) -> dict[str, Detector]:
    """The recipe's detectors (``name -> folder``): a saved n-gram detector, or a
    transformers checkpoint with the recipe's batching, length, device and label names
    (a collapsed checkpoint is refused: ``SequenceClassifier``)."""
    out: dict[str, Detector] = {}
    for name, path in models.items():
        labels = settings.detectors[name].labels
        if is_ngram_detector(path):
            out[name] = NgramDetector(path, label_map=labels)
            continue
        out[name] = SequenceClassifier(
            path,
            device=settings.device,
            batch_size=settings.batch_size,
            batch_tokens=settings.batch_tokens,
            max_length=settings.max_length,
            label_map=labels,
        )
    return out


def scored_mask(sentences: pd.DataFrame, settings: ClassifierSettings,
                skips: dict[str, str] | None = None) -> np.ndarray:  # fmt: skip
    """Which sentences the detectors run on (not a skipped corpus, nor a skipped style)."""
    return (
        ~sentences["style"].isin(settings.skip_styles)
        & ~sentences["corpus"].isin(list(skips or {}))
    ).to_numpy()


def filter_toxic(
    sentences: pd.DataFrame,
    settings: ClassifierSettings,
    classifiers: dict[str, Detector],
    progress: bool = False,
    skips: dict[str, str] | None = None,
) -> StageResult:
    """Score ``sentences`` with each detector and drop those over their thresholds;
    ``skips``: the corpora not scored (:func:`skip_reasons`)."""
    frame = sentences.reset_index(drop=True).copy()
    mask = scored_mask(frame, settings, skips)
    texts = frame.loc[mask, "text"].tolist()
    fired: list[list[str]] = [[] for _ in range(len(frame))]
    ngram = {n: c for n, c in classifiers.items() if isinstance(c, NgramDetector)}
    shared = predict_many(ngram, texts) if texts and ngram else {}  # one transform for all
    for name in DETECTOR_ORDER:
        if name not in classifiers:
            continue
        clf = classifiers[name]
        positive = clf.label_index(settings.positive(name))
        scores = np.full(len(frame), np.nan)
        if texts:
            probs = shared[name] if name in shared else clf.predict_proba(texts, progress=progress)
            scores[mask] = probs[:, positive].sum(axis=1)
        frame[f"score_{name}"] = scores
        limits = frame["corpus"].map(lambda c, n=name: settings.threshold(n, c)).to_numpy()
        for i in np.flatnonzero(scores >= limits):  # NaN (skipped) never fires
            fired[i].append(f"{name} {scores[i]:.3f}")
    reasons = pd.Series([f[0].split(" ")[0] if f else None for f in fired], dtype="object")
    details = pd.Series(["; ".join(f) if f else None for f in fired], dtype="object")
    return split_by_reason("classify", "sentence", frame, reasons, details)
