"""The detectors' labeled data, training settings, tokenizer, model configuration and
length-sorted batches: the parts :mod:`pipelines.models.train_classifier` (fine-tuning)
and :mod:`pipelines.models.pretrain` (masked language modelling) share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT / "data" / "demo" / "korean-hate-speech" / "labeled"

TASKS: dict[str, dict] = {
    "hate": {"column": "hate", "labels": ["none", "offensive", "hate"], "positive": ["hate"]},
    "bias": {"column": "bias", "labels": ["none", "others", "gender"], "positive": ["gender"]},
    "gender_bias": {
        "column": "contain_gender_bias",
        "labels": ["False", "True"],
        "positive": ["True"],
    },
}
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


class TrainingDataError(BenchforgeError, ValueError):
    """Labeled data that cannot be used; the message names the file and the row."""


@dataclass
class TrainSettings:
    """Model size and optimisation; the defaults train in minutes on a 2-core CPU."""

    vocab_size: int = 8000
    hidden: int = 256
    layers: int = 4
    heads: int = 4
    intermediate: int = 1024
    max_length: int = 128
    epochs: int = 6
    batch_size: int = 32
    lr: float = 3e-4
    weight_decay: float = 0.01
    warmup: float = 0.1
    dropout: float = 0.1
    class_weighted: bool = True
    seed: int = 0
    limit: int | None = None  # train on the first N examples only (quick runs, tests)
    pretrain_texts: list[str] = field(default_factory=list)
    pretrain_epochs: int = 0
    pretrain_lr: float = 5e-4
    encoder: str | None = None  # a pretrained encoder folder (``classifiers pretrain``)
    device: str | None = None
    precision: str = "auto"  # auto: bf16 on a GPU that has it, fp16 on older GPUs, fp32 on a CPU
    clip: float = 1.0  # gradient norm clipping
    patience: int = 2  # stop after this many epochs without a better dev macro-F1 (0: never)
    collapse_share: float = 0.98  # one label in this share of dev predictions: collapsed

    @classmethod
    def for_device(cls, device: str, **overrides: object) -> TrainSettings:
        """Defaults for ``device``. On a GPU: 6 layers x 512, batch 64, learning rate
        1e-4, 10 epochs with early stopping. Issue 22 measured 3e-4 collapsing that
        encoder on bias and gender_bias from scratch, and 1e-4 fine-tuning it stably."""
        base = cls(**overrides)
        if device.startswith("cuda") and not overrides.get("hidden"):
            base.hidden, base.layers, base.heads, base.intermediate = 512, 6, 8, 2048
            base.batch_size = max(base.batch_size, 64)
            if "lr" not in overrides:
                base.lr = 1e-4
            if "epochs" not in overrides:
                base.epochs = 10
        return base


def load_split(path: Path, task: str) -> tuple[list[str], list[str]]:
    """Texts and labels of one Korean HateSpeech split (TSV with a header)."""
    spec = TASKS[task]
    if not path.is_file():
        raise TrainingDataError(f"{path}: file not found")
    frame = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, quoting=3)
    for col in ("comments", spec["column"]):
        if col not in frame.columns:
            raise TrainingDataError(f"{path}: no column {col!r} (columns: {list(frame.columns)})")
    labels = frame[spec["column"]].tolist()
    for row, label in enumerate(labels, start=2):
        if label not in spec["labels"]:
            raise TrainingDataError(
                f"{path}:{row}: label {label!r} is not one of {spec['labels']} ({task})"
            )
    return frame["comments"].tolist(), labels


def train_tokenizer(texts: Sequence[str], vocab_size: int):  # noqa: ANN201
    """A BPE tokenizer (NFKC, SentencePiece-style word boundaries ``▁``, punctuation split
    off) trained on ``texts``.

    BPE with ``▁`` marks rather than WordPiece with ``##`` continuations: tokenizers'
    WordPiece trainer gives a different vocabulary from run to run on the same texts (it
    numbers the ``##`` pieces in hash-map order and breaks count ties by those numbers;
    huggingface/tokenizers#1794), which made seeded training irreproducible. This one is
    identical on every run (tested), and decodes back to the text."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers.trainers import BpeTrainer
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Metaspace(), pre_tokenizers.Punctuation()]
    )
    tok.decoder = decoders.Metaspace()
    trainer = BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS)
    tok.train_from_iterator(texts, trainer=trainer)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_input_names=["input_ids", "attention_mask"],
    )


def model_config(tokenizer: Any, labels: Sequence[str], settings: TrainSettings) -> Any:
    """A BertConfig of ``settings``' size for ``tokenizer`` and ``labels``."""
    from transformers import BertConfig

    return BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=settings.hidden,
        num_hidden_layers=settings.layers,
        num_attention_heads=settings.heads,
        intermediate_size=settings.intermediate,
        max_position_embeddings=settings.max_length,
        hidden_dropout_prob=settings.dropout,
        attention_probs_dropout_prob=settings.dropout,
        pad_token_id=tokenizer.pad_token_id,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )


def shuffled_length_batches(
    lengths: Sequence[int], size: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Shuffled training batches of similar lengths: the examples are shuffled, cut into
    pools of 50 batches, each pool sorted by length and cut into batches, and the batches
    shuffled, so each batch pads to a near-uniform length (far less padding than random
    batches) while every epoch still sees a new random order."""
    lengths = np.asarray(lengths)
    order = rng.permutation(len(lengths))
    pool = size * 50
    out: list[np.ndarray] = []
    for start in range(0, len(order), pool):
        chunk = order[start : start + pool]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        out.extend(chunk[k : k + size] for k in range(0, len(chunk), size))
    return [out[i] for i in rng.permutation(len(out))]
