"""The built-in detectors: trained from the shipped Korean HateSpeech data on first use.

A recipe's detector without a ``model`` is the built-in one of its name (``gender_bias``
or ``hate``, the tasks of :data:`pipelines.models.classifier_data.TASKS`): the
character n-gram detector of :mod:`pipelines.models.ngram_detector`. The set-up trains
both (``benchforge classifiers builtin``); a run that finds one missing trains it (a few
seconds). Each lives in benchforge's data folder under
``detectors/<task>-<key>``, the key hashing the training data (SHA-256 of ``train.tsv``
and ``dev.tsv``), the settings, scikit-learn's version and the detector's code, so that
changing any of them trains a new one and never reuses a stale one. A detector is
trained into a temporary folder beside it and renamed into place: an interrupted
training leaves nothing that looks finished, and two runs training at once both end
with the same complete folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from pipelines.core.code import cache_key
from pipelines.core.home import home
from pipelines.models.classifier_data import DEFAULT_DATA
from pipelines.models.ngram_detector import NgramSettings, is_ngram_detector, train_ngram_detector

CODE = ("pipelines.models.ngram_detector",)


def builtin_folder(task: str, data_dir: Path = DEFAULT_DATA,
                   settings: NgramSettings | None = None) -> Path:  # fmt: skip
    """Where the built-in ``task`` detector for this data and these settings lives."""
    import sklearn

    settings = settings or NgramSettings()
    inputs = {"train": data_dir / "train.tsv", "dev": data_dir / "dev.tsv"}
    key = cache_key(inputs, [task, settings.__dict__, sklearn.__version__], CODE)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return home() / "detectors" / f"{task}-{digest}"


def builtin_detector(task: str, data_dir: Path = DEFAULT_DATA,
                     settings: NgramSettings | None = None) -> Path:  # fmt: skip
    """The built-in ``task`` detector's folder, trained first when it is not there yet."""
    folder = builtin_folder(task, data_dir, settings)
    if is_ngram_detector(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{folder.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        train_ngram_detector(task, tmp, data_dir, settings)
        try:
            tmp.rename(folder)
        except OSError:  # another run finished first: keep its folder
            if not is_ngram_detector(folder):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
