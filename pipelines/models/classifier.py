"""Sequence classifiers from local transformers checkpoints, scored in batches.

:class:`SequenceClassifier` loads any local sequence-classification checkpoint directory
(its tokenizer and model; nothing is downloaded) and returns class probabilities for a
list of texts. For speed the texts are tokenized in one call, sorted by length and cut
into batches by a token budget, each padded only to its own longest text, so that little
time goes into padding or into small launches; on a GPU the model runs in half
precision, batches are copied from pinned memory without blocking and the logits stay on
the device until the end. The probabilities come back in the input order. A detector
whose training collapsed (``metrics.json``) is refused.

Label names are the checkpoint's ``id2label``, renamed through an optional mapping
(``LABEL_1 -> hate``), so a recipe can name the labels of a checkpoint trained elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from pipelines.core.errors import BenchforgeError
from pipelines.models.checkpoints import is_checkpoint, load_checkpoint, position_limit
from pipelines.models.token_batches import encode, pad, token_batches


class ClassifierError(BenchforgeError, RuntimeError):
    """A checkpoint that cannot be used; the message names the folder and the problem."""


class SequenceClassifier:
    """A local sequence-classification checkpoint (see the module docstring)."""

    def __init__(
        self,
        checkpoint: str | Path,
        device: str | None = None,
        batch_size: int | None = None,
        max_length: int = 128,
        label_map: dict[str, str] | None = None,
        batch_tokens: int | None = None,
    ) -> None:
        path = Path(checkpoint)
        check_detector(path)
        from transformers import AutoModelForSequenceClassification

        self.path = path.resolve()
        self.tokenizer, self.model, self.device = load_checkpoint(
            path, AutoModelForSequenceClassification, device
        )
        self.batch_size, self.batch_tokens = batch_size, batch_tokens
        self.max_length = position_limit(self.model, max_length)
        raw = [self.model.config.id2label[i] for i in range(self.model.config.num_labels)]
        mapping = label_map or {}
        self.labels = [mapping.get(str(name), str(name)) for name in raw]

    def label_index(self, names: Sequence[str]) -> list[int]:
        """Positions of ``names`` among the labels; a clear error for an unknown one."""
        missing = [n for n in names if n not in self.labels]
        if missing:
            raise ClassifierError(
                f"{self.path}: no label {missing} among the checkpoint's labels {self.labels}; "
                "map them with `labels:` in the recipe"
            )
        return [self.labels.index(n) for n in names]

    def predict_proba(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Class probabilities, one row per text in input order (softmax over logits)."""
        return batch_probabilities(
            self.model, self.tokenizer, texts, self.batch_size, self.max_length, progress,
            batch_tokens=self.batch_tokens,
        )  # fmt: skip


def check_detector(path: Path) -> None:
    """A checkpoint directory, and not one whose training collapsed (its ``metrics.json``
    from ``classifiers train`` says so): a collapsed detector is never used as a filter."""
    if not is_checkpoint(path):
        raise ClassifierError(
            f"{path}: not a checkpoint directory (no config.json); train one with "
            "`benchforge classifiers train` or point the recipe at a local checkpoint"
        )
    metrics = path / "metrics.json"
    if metrics.is_file():
        found = json.loads(metrics.read_text(encoding="utf-8")).get("collapse") or {}
        if found.get("collapsed"):
            raise ClassifierError(
                f"{path}: this detector collapsed in training ({found.get('summary')}); "
                "it is not used as a filter: retrain it (see its README.md)"
            )


def default_batch_tokens(device: str) -> int:
    """Tokens per batch when the recipe sets none: large on a GPU (a 64-row batch leaves
    it launch-bound), moderate on a CPU (measured by ``benchmarks/classify.py``)."""
    return 65536 if device.startswith("cuda") else 8192


def batch_probabilities(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    batch_size: int | None = None,
    max_length: int = 128,
    progress: bool = False,
    batch_tokens: int | None = None,
    chunk: int = 200_000,
) -> np.ndarray:
    """Softmax probabilities of a sequence-classification ``model``, one row per text in
    input order.

    The texts are tokenized ``chunk`` at a time in one call each, sorted by token length
    and cut into batches of at most ``batch_tokens`` padded tokens (and ``batch_size``
    rows when given; see :mod:`pipelines.models.token_batches`). On a GPU each batch is
    copied from pinned memory without blocking, the logits stay on the device, and the
    probabilities are copied back once per chunk: no batch waits for the host."""
    import torch

    device = model.device
    cuda = device.type == "cuda"
    budget = batch_tokens or default_batch_tokens(device.type)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = np.zeros((len(texts), model.config.num_labels), dtype=np.float32)
    bar = tqdm(total=len(texts), desc="classify", unit="sent", disable=not progress)
    for start in range(0, len(texts), chunk):
        part = texts[start : start + chunk]
        encoded = encode(tokenizer, part, max_length)
        logits = torch.empty(
            (len(part), model.config.num_labels), dtype=torch.float32, device=device
        )
        for rows in token_batches(encoded.lengths, budget, batch_size):
            ids, mask = pad(encoded, rows, pad_id)
            batch = [torch.from_numpy(a) for a in (ids, mask, rows)]
            if cuda:
                batch = [t.pin_memory().to(device, non_blocking=True) for t in batch]
            with torch.inference_mode():
                logits[batch[2]] = model(input_ids=batch[0], attention_mask=batch[1]).logits.float()
            bar.update(len(rows))
        with torch.inference_mode():
            out[start : start + len(part)] = torch.softmax(logits, dim=-1).cpu().numpy()
    bar.close()
    return out
