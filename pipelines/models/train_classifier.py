"""Train the hate-speech and gender-bias detectors here, from the shipped labeled data.

KLUE 2.3 filtered its corpora with detectors trained on the Korean HateSpeech dataset
(Moon et al. 2020). No model hub can be reached, so benchforge trains its own: a
BPE tokenizer trained on the comments, and a small BERT encoder trained from
scratch (optionally first pretrained with masked language modelling on unlabeled text),
then fine-tuned on the train split and measured on the dev split. Tasks:

- ``hate``: none / offensive / hate (column ``hate``);
- ``bias``: none / others / gender (column ``bias``);
- ``gender_bias``: False / True (column ``contain_gender_bias``).

The result is an ordinary transformers checkpoint directory (model, tokenizer, config
with ``id2label``) plus ``README.md``, a model card with dev macro-F1, per-class F1 and
the distribution of the positive score, and ``metrics.json``. The model is sized to
train in minutes on a 2-core CPU, and larger when a GPU is present.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from pipelines.core.io import write_json
from pipelines.models.checkpoints import default_device

log = logging.getLogger(__name__)

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


class TrainingDataError(ValueError):
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

    @classmethod
    def for_device(cls, device: str, **overrides: object) -> TrainSettings:
        """Defaults for ``device``: a base-sized encoder when a GPU trains it."""
        base = cls(**overrides)
        if device.startswith("cuda") and not overrides.get("hidden"):
            base.hidden, base.layers, base.heads, base.intermediate = 512, 6, 8, 2048
            base.batch_size = max(base.batch_size, 64)
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


def _config(tokenizer, labels: Sequence[str], settings: TrainSettings):  # noqa: ANN001, ANN202
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


def _batches(lengths: Sequence[int], size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Shuffled training batches of similar lengths: the examples are shuffled, cut into
    pools of 50 batches, each pool sorted by length and cut into batches, and the batches
    shuffled, so each batch pads to a near-uniform length (far less padding than random
    batches) while every epoch still sees a new random order."""
    order = rng.permutation(len(lengths))
    pool = size * 50
    out: list[np.ndarray] = []
    for start in range(0, len(order), pool):
        chunk = order[start : start + pool]
        chunk = chunk[np.argsort([lengths[i] for i in chunk], kind="stable")]
        out.extend(chunk[k : k + size] for k in range(0, len(chunk), size))
    return [out[i] for i in rng.permutation(len(out))]


def _schedule(optimizer, total: int, warmup: float):  # noqa: ANN001, ANN202
    import torch

    warm = max(1, int(total * warmup))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm))))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def pretrain_mlm(model, tokenizer, texts: Sequence[str], settings: TrainSettings) -> list[float]:  # noqa: ANN001
    """Masked language modelling (15% of tokens, BERT's 80/10/10) on unlabeled ``texts``;
    the weights of ``model`` (a BertForMaskedLM) are trained in place. Returns the mean
    loss of each epoch."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    enc = tokenizer(list(texts), truncation=True, max_length=settings.max_length)["input_ids"]
    rng = np.random.default_rng(settings.seed)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.pretrain_lr, weight_decay=settings.weight_decay
    )
    total = math.ceil(len(enc) / settings.batch_size) * settings.pretrain_epochs
    scheduler = _schedule(optimizer, total, settings.warmup)
    model.train()
    losses = []
    for epoch in range(settings.pretrain_epochs):
        bar = tqdm(
            _batches([len(e) for e in enc], settings.batch_size, rng),
            desc=f"pretrain {epoch + 1}/{settings.pretrain_epochs}",
            unit="batch",
            disable=None,
        )
        total_loss, seen = 0.0, 0
        for idx in bar:
            batch = collator([{"input_ids": enc[i]} for i in idx])
            batch = {k: v.to(model.device) for k, v in batch.items()}
            loss = _masked_loss(model, batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            total_loss, seen = total_loss + loss.item(), seen + 1
            bar.set_postfix(loss=f"{loss.item():.3f}")
        losses.append(round(total_loss / max(1, seen), 4))
        log.info("pretrain epoch %d: mean MLM loss %.4f", epoch + 1, losses[-1])
    model.eval()
    return losses


def _masked_loss(model, batch: dict):  # noqa: ANN001, ANN202
    """The MLM cross entropy, with the vocabulary projection applied to the masked
    positions only (about 15% of them): the same loss as ``model(**batch).loss`` at a
    fraction of the cost, since the projection dominates a small encoder's step."""
    import torch

    hidden = model.bert(
        input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
    ).last_hidden_state
    masked = batch["labels"] != -100
    logits = model.cls(hidden[masked])
    return torch.nn.functional.cross_entropy(logits, batch["labels"][masked])


def pretrain_encoder(
    texts: Sequence[str], settings: TrainSettings, device: str
) -> tuple[object, object, list[float]]:
    """A BPE tokenizer trained on ``texts`` and a BertForMaskedLM pretrained on them;
    returns (model, tokenizer, mean loss per epoch)."""
    import torch
    from transformers import BertForMaskedLM

    torch.manual_seed(settings.seed)
    tokenizer = train_tokenizer(texts, settings.vocab_size)
    model = BertForMaskedLM(_config(tokenizer, ["0", "1"], settings)).to(device)
    losses = pretrain_mlm(model, tokenizer, texts, settings)
    return model, tokenizer, losses


def pretrain(
    text_paths: Sequence[Path], out: Path, settings: TrainSettings, data_dir: Path = DEFAULT_DATA
) -> dict:
    """``benchforge classifiers pretrain``: pretrain an encoder once on unlabeled text (and
    the labeled train split's comments, without their labels), save it to ``out`` as a
    transformers checkpoint with its tokenizer, for ``classifiers train --encoder``."""
    device = settings.device or default_device()
    texts: list[str] = []
    for path in text_paths:
        texts.extend(_read_texts(Path(path)))
    train_texts, _ = load_split(data_dir / "train.tsv", "hate")
    texts = train_texts + texts
    if settings.limit:
        texts = texts[: settings.limit]
    start = time.perf_counter()
    model, tokenizer, losses = pretrain_encoder(texts, settings, device)
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    info = {
        "kind": "benchforge-mlm-encoder",
        "texts": len(texts),
        "sources": [str(p) for p in text_paths] + [str(data_dir / "train.tsv")],
        "epoch_loss": losses,
        "device": device,
        "train_seconds": round(seconds, 1),
        "vocab_size": len(tokenizer),
        "settings": asdict(settings),
    }
    write_json(info, out / "pretrain.json")
    log.info("pretrained on %d texts in %.0f s; MLM loss by epoch %s", len(texts), seconds, losses)
    return info


def fine_tune(
    model,  # noqa: ANN001 - a transformers sequence-classification model
    tokenizer,  # noqa: ANN001
    texts: Sequence[str],
    labels: Sequence[int],
    settings: TrainSettings,
) -> None:
    """Cross-entropy fine-tuning (class-weighted by default, for macro-F1)."""
    import torch

    y = np.asarray(labels)
    counts = np.bincount(y, minlength=model.config.num_labels).astype(np.float64)
    weights = counts.sum() / (len(counts) * np.maximum(counts, 1))
    loss_fn = torch.nn.CrossEntropyLoss(
        weight=torch.tensor(weights, dtype=torch.float32, device=model.device)
        if settings.class_weighted
        else None
    )
    rng = np.random.default_rng(settings.seed)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay
    )
    steps = math.ceil(len(texts) / settings.batch_size) * settings.epochs
    scheduler = _schedule(optimizer, steps, settings.warmup)
    model.train()
    for epoch in range(settings.epochs):
        bar = tqdm(
            _batches([len(t) for t in texts], settings.batch_size, rng),
            desc=f"train {epoch + 1}/{settings.epochs}",
            unit="batch",
            disable=None,  # no bar when the output is not a terminal
        )
        for idx in bar:
            enc = tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=settings.max_length,
                return_tensors="pt",
            ).to(model.device)
            target = torch.tensor(y[idx], device=model.device)
            loss = loss_fn(model(**enc).logits, target)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            bar.set_postfix(loss=f"{loss.item():.3f}")
    model.eval()


def evaluate(
    probabilities: np.ndarray, gold: Sequence[int], labels: Sequence[str], positive: Sequence[str]
) -> dict:
    """Macro-F1, per-class F1 and the distribution of the positive score (sum of the
    positive labels' probabilities) on labeled data."""
    from sklearn.metrics import f1_score

    pred = probabilities.argmax(axis=1)
    per_class = f1_score(gold, pred, labels=list(range(len(labels))), average=None, zero_division=0)
    pos = [labels.index(p) for p in positive]
    score = probabilities[:, pos].sum(axis=1)
    edges = np.linspace(0, 1, 11)
    hist, _ = np.histogram(score, bins=edges)
    return {
        "macro_f1": round(float(per_class.mean()), 4),
        "per_class_f1": {
            label: round(float(f), 4) for label, f in zip(labels, per_class, strict=True)
        },
        "positive_labels": list(positive),
        "positive_score_quantiles": {
            str(q): round(float(np.quantile(score, q)), 4) for q in (0.1, 0.25, 0.5, 0.75, 0.9)
        },
        "positive_score_histogram": {
            f"{lo:.1f}-{hi:.1f}": int(n) for lo, hi, n in zip(edges, edges[1:], hist, strict=False)
        },
        "examples": len(gold),
    }


def _model_card(task: str, metrics: dict, settings: TrainSettings, data: dict) -> str:
    dev = metrics["dev"]
    rows = "\n".join(f"| {k} | {v} |" for k, v in dev["per_class_f1"].items())
    hist = "\n".join(f"| {k} | {v} |" for k, v in dev["positive_score_histogram"].items())
    sources = "the training comments" + (
        " and the pretraining texts " + ", ".join(settings.pretrain_texts)
        if settings.pretrain_texts
        else ""
    )
    return f"""# benchforge {task} detector

A small BERT encoder trained from scratch by `benchforge classifiers train --task {task}`
on the Korean HateSpeech dataset (Moon et al. 2020, CC BY-SA 4.0; train split
{data["train"]}, dev split {data["dev"]}). Labels: {", ".join(TASKS[task]["labels"])};
the filter score is the probability of {", ".join(dev["positive_labels"])}.

Used by benchforge's classifier filter (KLUE 2.3: gender bias >= 0.5, hate >= 0.9).

## Dev results ({dev["examples"]} comments)

Macro-F1: **{dev["macro_f1"]}** (train macro-F1 {metrics["train"]["macro_f1"]})

| label | F1 |
|---|---|
{rows}

Positive score distribution on dev:

| score | comments |
|---|---|
{hist}

## Training

Encoder: {settings.layers} layers, hidden {settings.hidden}, {settings.heads} heads,
intermediate {settings.intermediate}, max length {settings.max_length}; BPE vocabulary of
{metrics["vocab_size"]} trained on {sources}.
MLM pretraining epochs: {settings.pretrain_epochs}. Fine-tuning: {settings.epochs} epochs,
batch {settings.batch_size}, learning rate {settings.lr}, class-weighted loss:
{settings.class_weighted}, seed {settings.seed}, device {metrics["device"]},
{metrics["train_seconds"]:.0f} s.

## Limitations

Trained on comments to entertainment news: other domains shift the score distribution,
so thresholds should be checked per corpus. The labels are the dataset's annotators'
judgments and inherit their disagreements. Outputs contain offensive language.
"""


def train_classifier(
    task: str,
    out: Path,
    data_dir: Path = DEFAULT_DATA,
    settings: TrainSettings | None = None,
) -> dict:
    """Train, evaluate and save one detector; return its metrics."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    if task not in TASKS:
        raise TrainingDataError(f"unknown task {task!r}; expected one of {sorted(TASKS)}")
    device = (settings.device if settings else None) or default_device()
    settings = settings or TrainSettings.for_device(device)
    spec = TASKS[task]
    labels = spec["labels"]
    train_texts, train_labels = load_split(data_dir / "train.tsv", task)
    if settings.limit:
        train_texts, train_labels = train_texts[: settings.limit], train_labels[: settings.limit]
    dev_texts, dev_labels = load_split(data_dir / "dev.tsv", task)
    extra: list[str] = []
    for path in settings.pretrain_texts:
        extra.extend(_read_texts(Path(path)))
    torch.manual_seed(settings.seed)
    start = time.perf_counter()
    head = {
        "num_labels": len(labels),
        "id2label": dict(enumerate(labels)),
        "label2id": {label: i for i, label in enumerate(labels)},
    }
    if settings.encoder:
        encoder = Path(settings.encoder)
        if not (encoder / "config.json").is_file():
            raise TrainingDataError(f"{encoder}: not an encoder folder (no config.json)")
        tokenizer = AutoTokenizer.from_pretrained(encoder, local_files_only=True)
        model = BertForSequenceClassification.from_pretrained(
            encoder, local_files_only=True, **head
        ).to(device)
    elif settings.pretrain_epochs and extra:
        mlm, tokenizer, _ = pretrain_encoder(train_texts + extra, settings, device)
        model = BertForSequenceClassification(_config(tokenizer, labels, settings)).to(device)
        model.bert.load_state_dict(mlm.bert.state_dict(), strict=False)
    else:
        tokenizer = train_tokenizer(train_texts, settings.vocab_size)
        model = BertForSequenceClassification(_config(tokenizer, labels, settings)).to(device)
    y_train = [labels.index(v) for v in train_labels]
    fine_tune(model, tokenizer, train_texts, y_train, settings)
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)

    from pipelines.models.classifier import SequenceClassifier

    scorer = SequenceClassifier(out, device=device, batch_size=128)
    metrics = {
        "task": task,
        "device": device,
        "train_seconds": round(seconds, 1),
        "vocab_size": len(tokenizer),
        "settings": asdict(settings),
        "train": evaluate(scorer.predict_proba(train_texts), y_train, labels, spec["positive"]),
        "dev": evaluate(
            scorer.predict_proba(dev_texts),
            [labels.index(v) for v in dev_labels],
            labels,
            spec["positive"],
        ),
    }
    data = {"train": str(data_dir / "train.tsv"), "dev": str(data_dir / "dev.tsv")}
    write_json(metrics, out / "metrics.json")
    (out / "README.md").write_text(_model_card(task, metrics, settings, data), encoding="utf-8")
    log.info("%s: dev macro-F1 %.4f in %.0f s", task, metrics["dev"]["macro_f1"], seconds)
    return metrics


def _read_texts(path: Path) -> list[str]:
    """One text a line (a .jsonl file: its ``text``, ``review`` or ``comments`` field)."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        lines = [line.rstrip("\n") for line in fh]
    if ".jsonl" in path.name:
        out = []
        for line in lines:
            if line.strip():
                row = json.loads(line)
                out.append(next(str(row[k]) for k in ("text", "review", "comments") if k in row))
        return out
    return [line for line in lines if line.strip()]
