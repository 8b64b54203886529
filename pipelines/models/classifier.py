"""Sequence classifiers from local transformers checkpoints, scored in batches.

:class:`SequenceClassifier` loads any local sequence-classification checkpoint directory
(its tokenizer and model; nothing is downloaded) and returns class probabilities for a
list of texts. For speed the texts are sorted by length and cut into batches, each
padded only to its own longest text (dynamic padding), so that little time goes into
padding; on a GPU the model runs in half precision. The probabilities come back in the
input order.

Label names are the checkpoint's ``id2label``, renamed through an optional mapping
(``LABEL_1 -> hate``), so a recipe can name the labels of a checkpoint trained elsewhere.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from pipelines.models.checkpoints import (
    is_checkpoint,
    length_batches,
    load_checkpoint,
    position_limit,
)


class ClassifierError(RuntimeError):
    """A checkpoint that cannot be used; the message names the folder and the problem."""


class SequenceClassifier:
    """A local sequence-classification checkpoint (see the module docstring)."""

    def __init__(
        self,
        checkpoint: str | Path,
        device: str | None = None,
        batch_size: int = 64,
        max_length: int = 128,
        label_map: dict[str, str] | None = None,
    ) -> None:
        path = Path(checkpoint)
        if not is_checkpoint(path):
            raise ClassifierError(
                f"{path}: not a checkpoint directory (no config.json); train one with "
                "`benchforge classifiers train` or point the recipe at a local checkpoint"
            )
        from transformers import AutoModelForSequenceClassification

        self.path = path.resolve()
        self.tokenizer, self.model, self.device = load_checkpoint(
            path, AutoModelForSequenceClassification, device
        )
        self.batch_size = batch_size
        self.max_length = position_limit(self.model, max_length)
        forward = inspect.signature(self.model.forward).parameters
        self._inputs = {"input_ids", "attention_mask", "token_type_ids"} & set(forward)
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
            inputs=self._inputs,
        )  # fmt: skip


def batch_probabilities(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    batch_size: int = 64,
    max_length: int = 128,
    progress: bool = False,
    inputs: set[str] | None = None,
) -> np.ndarray:
    """Softmax probabilities of a sequence-classification ``model``, one row per text in
    input order, scored in length-sorted batches with dynamic padding."""
    import torch

    keep = inputs or {"input_ids", "attention_mask", "token_type_ids"}
    out = np.zeros((len(texts), model.config.num_labels), dtype=np.float32)
    batches = list(length_batches(texts, batch_size))
    for idx in tqdm(batches, desc="classify", unit="batch", disable=not progress):
        enc = tokenizer(
            [texts[i] for i in idx],
            padding=True,
            truncation=True,
            max_length=max_length,
            return_tensors="pt",
        ).to(model.device)
        with torch.inference_mode():
            logits = model(**{k: v for k, v in enc.items() if k in keep}).logits.float()
        out[idx] = torch.softmax(logits, dim=-1).cpu().numpy()
    return out
