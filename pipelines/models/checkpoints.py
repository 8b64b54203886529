"""Local transformers checkpoints: what the translators, the classifier filter and the
classifier trainer share. Nothing is ever downloaded (``local_files_only``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def default_device() -> str:
    """``cuda`` when a GPU is present, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def is_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a checkpoint directory (it holds a ``config.json``)."""
    return (Path(path) / "config.json").is_file()


def load_checkpoint(path: Path, auto_class: Any, device: str | None) -> tuple[Any, Any, str]:
    """Tokenizer, model (eval mode, half precision on a GPU) and device of a checkpoint."""
    import torch
    from transformers import AutoTokenizer

    device = device or default_device()
    dtype = torch.float16 if device.startswith("cuda") else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = auto_class.from_pretrained(path, local_files_only=True, dtype=dtype).to(device)
    model.eval()
    return tokenizer, model, device


def position_limit(model: Any, wanted: int) -> int:
    """``wanted`` capped at the model's position embeddings, when it has a limit."""
    return min(wanted, getattr(model.config, "max_position_embeddings", None) or wanted)


def length_batches(texts: Sequence[str], size: int) -> Iterator[list[int]]:
    """Positions of ``texts`` in batches of ``size``, shortest texts first, so that each
    batch, padded to its own longest text, wastes little on padding."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), size):
        yield order[start : start + size]
