"""Texts tokenized once and cut into batches by a token budget.

What the classifier filter, fine-tuning and MLM pretraining share:

- :func:`encode` tokenizes a whole list in one call of the fast tokenizer (its Rust
  batch encoder runs on every core; a call per batch of 64 is about 5x slower) and
  returns the ids as one flat array with offsets, so millions of texts cost a few bytes
  a token rather than a Python list each.
- :func:`token_batches` cuts positions, sorted by length, into batches whose padded size
  (rows x longest row) stays within a token budget: short sentences go many to a batch,
  long ones few, so each forward pass does about the same work and almost none of it is
  padding.
- :func:`pad` builds one batch's padded ids and attention mask with array operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Encoded:
    """Token ids of many texts: ``flat[offsets[i] : offsets[i] + lengths[i]]`` is text i."""

    flat: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.lengths)

    def ids(self, i: int) -> np.ndarray:
        return self.flat[self.offsets[i] : self.offsets[i] + self.lengths[i]]

    def save(self, path: Any) -> None:
        """One ``.npz`` file (written by the caller's atomic writer)."""
        np.savez(path, flat=self.flat, offsets=self.offsets, lengths=self.lengths)

    @classmethod
    def load(cls, path: Any) -> Encoded:
        with np.load(path) as data:
            return cls(data["flat"], data["offsets"], data["lengths"])


def encode(tokenizer: Any, texts: Sequence[str], max_length: int, chunk: int = 100_000) -> Encoded:
    """Ids of ``texts`` with special tokens, truncated to ``max_length``, no padding;
    tokenized ``chunk`` texts per call of the fast tokenizer."""
    parts: list[np.ndarray] = []
    lengths = np.zeros(len(texts), dtype=np.int64)
    for start in range(0, len(texts), chunk):
        batch = tokenizer(
            list(texts[start : start + chunk]), truncation=True, max_length=max_length
        )["input_ids"]
        lengths[start : start + len(batch)] = [len(ids) for ids in batch]
        parts.append(np.fromiter((t for ids in batch for t in ids), dtype=np.int32))
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    offsets = np.zeros(len(texts), dtype=np.int64)
    if len(texts):
        offsets[1:] = np.cumsum(lengths)[:-1]
    return Encoded(flat, offsets, lengths)


def token_batches(
    lengths: np.ndarray, budget: int, max_rows: int | None = None
) -> list[np.ndarray]:
    """Positions sorted by length (stable), cut so that each batch's rows x longest row
    is at most ``budget`` tokens (a text longer than the budget goes alone) and it has at
    most ``max_rows`` rows."""
    order = np.argsort(lengths, kind="stable")
    ls = np.maximum(np.asarray(lengths)[order], 1)
    out: list[np.ndarray] = []
    start, n = 0, len(order)
    while start < n:
        # (end - start) * ls[end - 1] grows with end (rows sorted ascending): bisect the
        # largest end within the budget
        lo, hi = start + 1, min(n, start + (max_rows or n))
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if (mid - start) * int(ls[mid - 1]) <= budget:
                lo = mid
            else:
                hi = mid - 1
        out.append(order[start:lo])
        start = lo
    return out


def pad(encoded: Encoded, rows: np.ndarray, pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """(input_ids, attention_mask), int64 arrays of shape rows x longest row."""
    lengths = encoded.lengths[rows]
    width = int(lengths.max()) if len(rows) else 0
    cols = np.arange(width)
    mask = cols[None, :] < lengths[:, None]
    if not len(encoded.flat):
        return np.full(mask.shape, pad_id, dtype=np.int64), mask.astype(np.int64)
    where = np.minimum(encoded.offsets[rows][:, None] + cols[None, :], len(encoded.flat) - 1)
    ids = np.where(mask, encoded.flat[where], pad_id).astype(np.int64)
    return ids, mask.astype(np.int64)
