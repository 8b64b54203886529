"""Stage ``classify``: drop toxic sentences with classifiers (KLUE 2.3).

KLUE removed sentences that a gender-bias detector scored 0.5 or more and that a
hate-speech detector scored 0.9 or more, both trained on the Korean HateSpeech dataset,
and did not run them on the text of three news publishers: The Korea Economy Daily,
ACROFAN and YNA (KLUE 2.3; the other formal corpora, Wikitree, policy news, Wikipedia
and WikiNews, were filtered). Here each detector is a local
sequence-classification checkpoint; its score for a sentence is the summed probability
of its positive labels (``hate`` for the hate detector, ``True`` for the gender-bias
detector by default). Every scored sentence gets a ``score_<detector>`` column (empty
where the corpus was skipped); a sentence at or over a threshold is dropped with reason
``gender_bias`` or ``hate`` (the first detector in that order that fires) and every
firing score in ``detail``.

Thresholds come from the recipe: KLUE's by default, per corpus overridable, and a
corpus is skipped when its ``publisher`` is in ``skip_publishers`` (KLUE's three by
default), its style is in ``skip_styles`` (none by default) or its override says
``skip``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.stage import StageResult, split_by_reason
from pipelines.models.classifier import SequenceClassifier
from pipelines.quality.settings import ClassifierSettings

DETECTOR_ORDER = ("gender_bias", "hate")


def load_detectors(
    settings: ClassifierSettings, models: dict[str, str | Path]
) -> dict[str, SequenceClassifier]:
    """The recipe's detectors (``name -> checkpoint folder``) with its batching, length,
    device and label names; a collapsed checkpoint is refused (``SequenceClassifier``)."""
    return {
        name: SequenceClassifier(
            path,
            device=settings.device,
            batch_size=settings.batch_size,
            batch_tokens=settings.batch_tokens,
            max_length=settings.max_length,
            label_map=settings.detectors[name].labels,
        )
        for name, path in models.items()
    }


def skipped_corpora(settings: ClassifierSettings, publishers: dict[str, str | None]) -> set[str]:
    """The corpora the detectors do not run on: an override's ``skip``, or a publisher of
    ``skip_publishers`` (``publishers``: corpus name -> its recipe ``publisher``)."""
    skip = {p.casefold() for p in settings.skip_publishers}
    by_publisher = {c for c, p in publishers.items() if p and p.casefold() in skip}
    return by_publisher | {name for name, o in settings.corpora.items() if o.skip}


def scored_mask(sentences: pd.DataFrame, settings: ClassifierSettings,
                publishers: dict[str, str | None] | None = None) -> np.ndarray:  # fmt: skip
    """Which sentences the detectors run on (not a skipped publisher, style or corpus)."""
    skipped = skipped_corpora(settings, publishers or {})
    return (
        ~sentences["style"].isin(settings.skip_styles) & ~sentences["corpus"].isin(skipped)
    ).to_numpy()


def filter_toxic(
    sentences: pd.DataFrame,
    settings: ClassifierSettings,
    classifiers: dict[str, SequenceClassifier],
    progress: bool = False,
    publishers: dict[str, str | None] | None = None,
) -> StageResult:
    """Score ``sentences`` with each detector and drop those over their thresholds;
    ``publishers`` maps each corpus to its recipe ``publisher`` (the skip list's key)."""
    frame = sentences.reset_index(drop=True).copy()
    mask = scored_mask(frame, settings, publishers)
    texts = frame.loc[mask, "text"].tolist()
    fired: list[list[str]] = [[] for _ in range(len(frame))]
    for name in DETECTOR_ORDER:
        if name not in classifiers:
            continue
        clf = classifiers[name]
        positive = clf.label_index(settings.positive(name))
        scores = np.full(len(frame), np.nan)
        if texts:
            scores[mask] = clf.predict_proba(texts, progress=progress)[:, positive].sum(axis=1)
        frame[f"score_{name}"] = scores
        limits = frame["corpus"].map(lambda c, n=name: settings.threshold(n, c)).to_numpy()
        for i in np.flatnonzero(scores >= limits):  # NaN (skipped) never fires
            fired[i].append(f"{name} {scores[i]:.3f}")
    reasons = pd.Series([f[0].split(" ")[0] if f else None for f in fired], dtype="object")
    details = pd.Series(["; ".join(f) if f else None for f in fired], dtype="object")
    return split_by_reason("classify", "sentence", frame, reasons, details)
