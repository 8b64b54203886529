"""The baseline's models, one fitter per target (``label``, ``score``, ``choice`` here;
``tags`` in :mod:`.tags`, ``answer`` in :mod:`.answers`): ``fit(ev, data, settings) ->
(predictions by split, history)``, where ``data`` holds the release records of train, dev
and test and a prediction is ``{"prediction": ..., ["probabilities": ...]}`` in the
records' order. See :mod:`pipelines.evaluation.baseline` for how each target becomes a
classifier."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipelines.evaluation.spec import Evaluation, EvaluationError


@dataclass
class BaselineSettings:
    """The encoder's size and fine-tuning (the defaults train a demo's splits in
    seconds to a minute on a CPU; a pretrained ``encoder`` brings its own size)."""

    vocab_size: int = 4000
    hidden: int = 128
    layers: int = 2
    heads: int = 2
    intermediate: int = 512
    max_length: int = 128
    epochs: int = 10
    batch_size: int = 16
    lr: float = 5e-4
    patience: int = 4
    seed: int = 0
    encoder: str | None = None  # a pretrained encoder folder (classifiers pretrain)
    device: str | None = None
    # a model that answers one thing to this share of the items, or whose scores spread
    # less than this times the gold's, collapsed (pipelines.evaluation.references)
    collapse_share: float = 0.95
    collapse_spread: float = 0.1

    def check(self) -> None:
        """Every setting usable, before any work: whole numbers in range, a finite
        positive learning rate, a hidden size the heads divide, an encoder folder that
        holds one, a device this machine has. An :class:`EvaluationError` names the
        option (``--epochs``, ``--lr``, ...) and the problem."""
        for name, least in (("epochs", 1), ("layers", 1), ("hidden", 1), ("heads", 1),
                            ("intermediate", 1), ("vocab_size", 100), ("max_length", 8),
                            ("batch_size", 1), ("patience", 0), ("seed", 0)):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise EvaluationError(f"--{name.replace('_', '-')} {value!r}: a whole number "
                                      f"of at least {least}")  # fmt: skip
        if isinstance(self.lr, bool) or not isinstance(self.lr, int | float) or \
                not math.isfinite(self.lr) or not 0 < self.lr < 1:  # fmt: skip
            raise EvaluationError(f"--lr {self.lr!r}: a learning rate is a number above 0 and "
                                  "below 1 (default 5e-4)")  # fmt: skip
        for name in ("collapse_share", "collapse_spread"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or \
                    not math.isfinite(value) or not 0 < value <= 1:  # fmt: skip
                raise EvaluationError(f"{name} {value!r}: a share above 0 and at most 1")
        if not self.encoder and self.hidden % self.heads:
            raise EvaluationError(f"--hidden {self.hidden}: the encoder's {self.heads} "
                                  "attention heads must divide it (e.g. 128)")  # fmt: skip
        if self.encoder is not None:
            folder = Path(self.encoder)
            if not (folder / "config.json").is_file():
                raise EvaluationError(
                    f"--encoder {folder}: " + ("no such folder" if not folder.exists()
                                               else "not an encoder folder (no config.json)")
                    + "; an encoder is written by `benchforge classifiers pretrain --out DIR`"
                )  # fmt: skip
        check_device(self.device)

    def train_settings(self) -> object:
        from pipelines.models.train_classifier import TrainSettings

        return TrainSettings(
            vocab_size=self.vocab_size, hidden=self.hidden, layers=self.layers,
            heads=self.heads, intermediate=self.intermediate, max_length=self.max_length,
            epochs=self.epochs, batch_size=self.batch_size, lr=self.lr, seed=self.seed,
            patience=self.patience, encoder=self.encoder, device=self.device,
        )  # fmt: skip


def check_device(device: str | None) -> None:
    """``device`` (``cpu``, ``cuda`` or ``cuda:N``; None: the default) is one this
    machine's torch can use; else an :class:`EvaluationError` saying which it has."""
    if device is None or device == "cpu":
        return
    match = re.fullmatch(r"cuda(?::(\d+))?", device)
    if match is None:
        raise EvaluationError(f"--device {device!r}: cpu, cuda or cuda:N")
    import torch

    if not torch.cuda.is_available():
        build = (f"a CUDA {torch.version.cuda} build that finds no GPU" if torch.version.cuda
                 else "a build without CUDA")  # fmt: skip
        raise EvaluationError(f"--device {device}: this machine's torch {torch.__version__} is "
                              f"{build}; use --device cpu (or leave --device out)")  # fmt: skip
    count = torch.cuda.device_count()
    if match.group(1) is not None and int(match.group(1)) >= count:
        raise EvaluationError(f"--device {device}: this machine has {count} GPU(s) "
                              f"(cuda:0-cuda:{count - 1})")  # fmt: skip


def _joined(ev: Evaluation, record: dict) -> str:
    text = str(ev.text(record))
    return f"{text} [SEP] {ev.text_pair(record)}" if ev.text_pair else text


# -- classifiers over texts ------------------------------------------------------------


def _classifier(texts: list[str], y: list[int], names: list[str], dev: tuple[list[str], list[int]],
                settings: BaselineSettings) -> tuple[object, object, list[dict]]:  # fmt: skip
    """A small BERT fine-tuned on ``texts`` -> ``y`` (class ids of ``names``)."""
    import torch
    from transformers import BertForSequenceClassification

    from pipelines.models.checkpoints import default_device
    from pipelines.models.train_classifier import (
        fine_tune,
        from_encoder,
        model_config,
        train_tokenizer,
    )

    ts = settings.train_settings()
    device = settings.device or default_device()
    ts.device = device
    torch.manual_seed(settings.seed)
    if settings.encoder:
        model, tokenizer = from_encoder(settings.encoder, names, device)
    else:
        tokenizer = train_tokenizer(texts, settings.vocab_size)
        model = BertForSequenceClassification(model_config(tokenizer, names, ts)).to(device)
    history = fine_tune(model, tokenizer, texts, y, ts, dev if dev[0] else None)
    return model, tokenizer, history


def _probabilities(model: object, tokenizer: object, texts: list[str], max_length: int
                   ) -> np.ndarray:  # fmt: skip
    from pipelines.models.classifier import batch_probabilities

    if not texts:
        return np.zeros((0, model.config.num_labels), dtype=np.float32)  # type: ignore[attr-defined]
    return batch_probabilities(model, tokenizer, texts, None, max_length)


def _fit_label(ev: Evaluation, data: dict[str, list[dict]], settings: BaselineSettings
               ) -> tuple[dict, list[dict]]:  # fmt: skip
    names = ev.classes([ev.gold(r) for r in data["train"]])
    index = {n: i for i, n in enumerate(names)}
    texts = [_joined(ev, r) for r in data["train"]]
    y = [index[str(ev.gold(r))] for r in data["train"]]
    dev = [r for r in data["dev"] if str(ev.gold(r)) in index]
    model, tok, history = _classifier(
        texts, y, names, ([_joined(ev, r) for r in dev], [index[str(ev.gold(r))] for r in dev]),
        settings,
    )  # fmt: skip
    out = {}
    for split in ("dev", "test"):
        probs = _probabilities(model, tok, [_joined(ev, r) for r in data[split]],
                               settings.max_length)  # fmt: skip
        out[split] = [
            {"prediction": names[int(p.argmax())],
             "probabilities": {n: round(float(x), 6) for n, x in zip(names, p, strict=True)}}
            for p in probs
        ]  # fmt: skip
    return out, history


def _fit_score(ev: Evaluation, data: dict[str, list[dict]], settings: BaselineSettings
               ) -> tuple[dict, list[dict]]:  # fmt: skip
    names = [str(k) for k in range(6)]

    def bucket(r: dict) -> int:
        return int(np.clip(np.rint(float(ev.gold(r))), 0, 5))

    texts = [_joined(ev, r) for r in data["train"]]
    model, tok, history = _classifier(
        texts, [bucket(r) for r in data["train"]], names,
        ([_joined(ev, r) for r in data["dev"]], [bucket(r) for r in data["dev"]]), settings,
    )  # fmt: skip
    out = {}
    for split in ("dev", "test"):
        probs = _probabilities(model, tok, [_joined(ev, r) for r in data[split]],
                               settings.max_length)  # fmt: skip
        out[split] = [{"prediction": round(float(p @ np.arange(6)), 4)} for p in probs]
    return out, history


def _pairs(ev: Evaluation, records: list[dict]) -> tuple[list[str], list[int], list[int]]:
    texts, y, owner = [], [], []
    for i, r in enumerate(records):
        gold = int(ev.gold(r))
        for k, option in enumerate(ev.choices(r)):  # type: ignore[misc]
            texts.append(f"{ev.text(r)} [SEP] {option}")
            y.append(int(k == gold))
            owner.append(i)
    return texts, y, owner


def _fit_choice(ev: Evaluation, data: dict[str, list[dict]], settings: BaselineSettings
                ) -> tuple[dict, list[dict]]:  # fmt: skip
    texts, y, _ = _pairs(ev, data["train"])
    dev_texts, dev_y, _ = _pairs(ev, data["dev"])
    model, tok, history = _classifier(texts, y, ["wrong", "right"], (dev_texts, dev_y),
                                      settings)  # fmt: skip
    out = {}
    for split in ("dev", "test"):
        t, _, owner = _pairs(ev, data[split])
        right = _probabilities(model, tok, t, settings.max_length)[:, 1]
        # each item's options are consecutive: the answer is the likeliest of its own
        counts = np.bincount(owner, minlength=len(data[split]))
        out[split] = [{"prediction": int(part.argmax())}
                      for part in np.split(right, np.cumsum(counts)[:-1])]  # fmt: skip
    return out, history


FITTERS = {"label": _fit_label, "score": _fit_score, "choice": _fit_choice}


def register_fitter(target: str):  # noqa: ANN201 - a decorator
    """Decorator: the baseline of another target (``tags``, ``answer``: their modules)."""

    def add(fn):  # noqa: ANN001, ANN202
        FITTERS[target] = fn
        return fn

    return add
