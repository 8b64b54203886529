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

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from pipelines.core.io import write_json
from pipelines.models.checkpoints import default_device

# the labeled data, settings, tokenizer and batches, shared with pipelines.models.pretrain
# (kept there so that pretrain and this module do not import each other)
from pipelines.models.classifier_data import (
    DEFAULT_DATA,
    ROOT,
    SPECIAL_TOKENS,
    TASKS,
    TrainingDataError,
    TrainSettings,
    load_split,
    model_config,
    shuffled_length_batches,
    train_tokenizer,
)
from pipelines.models.precision import resolve_precision
from pipelines.models.token_batches import encode, pad

log = logging.getLogger(__name__)


__all__ = [
    "DEFAULT_DATA", "ROOT", "SPECIAL_TOKENS", "TASKS", "TrainSettings", "TrainingDataError",
    "evaluate", "fine_tune", "load_split", "macro_f1", "model_config",
    "shuffled_length_batches", "train_classifier", "train_tokenizer",
]  # fmt: skip


def fine_tune(
    model: Any,
    tokenizer: Any,
    texts: Sequence[str],
    labels: Sequence[int],
    settings: TrainSettings,
    dev: tuple[Sequence[str], Sequence[int]] | None = None,
) -> list[dict]:
    """Cross-entropy fine-tuning (class-weighted by default, for macro-F1) with the
    settings' precision, clipping, warm-up and cosine schedule.

    With ``dev`` (texts, label ids), dev macro-F1 is measured after every epoch, the
    weights of the best epoch are kept and restored at the end, and training stops when
    ``settings.patience`` epochs in a row have not improved on it (0: never). Returns one
    row per epoch: mean train loss, dev macro-F1 and the dev predictions' label shares."""
    import torch

    from pipelines.models.classifier import batch_probabilities
    from pipelines.models.collapse import prediction_shares
    from pipelines.models.precision import Stepper, resolve_precision

    device = str(model.device)
    y = torch.as_tensor(np.asarray(labels), device=model.device)
    counts = np.bincount(np.asarray(labels), minlength=model.config.num_labels).astype(float)
    weights = counts.sum() / (len(counts) * np.maximum(counts, 1))
    loss_fn = torch.nn.CrossEntropyLoss(
        weight=torch.tensor(weights, dtype=torch.float32, device=model.device)
        if settings.class_weighted
        else None
    )
    encoded = encode(tokenizer, texts, settings.max_length)
    rng = np.random.default_rng(settings.seed)
    steps = math.ceil(len(texts) / settings.batch_size) * settings.epochs
    precision = resolve_precision(settings.precision, device)
    stepper = Stepper(
        model, settings.lr, settings.weight_decay, steps, settings.warmup, device, precision,
        clip=settings.clip,
    )  # fmt: skip
    cuda = device.startswith("cuda")
    history: list[dict] = []
    best: tuple[float, int, dict] | None = None
    for epoch in range(1, settings.epochs + 1):
        model.train()
        batches = shuffled_length_batches(encoded.lengths, settings.batch_size, rng)
        bar = tqdm(batches, desc=f"train {epoch}/{settings.epochs}", unit="batch", disable=None)
        total = torch.zeros((), device=model.device)
        for step, rows in enumerate(bar, start=1):
            ids, mask = pad(encoded, rows, tokenizer.pad_token_id)
            batch = [torch.from_numpy(ids), torch.from_numpy(mask)]
            if cuda:
                batch = [t.pin_memory().to(device, non_blocking=True) for t in batch]
            with stepper.autocast():
                logits = model(input_ids=batch[0], attention_mask=batch[1]).logits
            loss = loss_fn(logits.float(), y[torch.as_tensor(rows, device=model.device)])
            total += stepper.step(loss)
            if step % 50 == 0:
                bar.set_postfix(loss=f"{total.item() / step:.3f}")
        model.eval()
        row = {"epoch": epoch, "train_loss": round(total.item() / max(1, len(batches)), 4)}
        if dev is not None:
            with stepper.autocast():
                pred = batch_probabilities(model, tokenizer, dev[0], None, settings.max_length)
            pred = pred.argmax(axis=1)
            f1 = macro_f1(dev[1], pred, model.config.num_labels)
            row.update(dev_macro_f1=round(f1, 4), dev_shares=prediction_shares(pred, model.config))
            if best is None or f1 > best[0]:
                state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
                best = (f1, epoch, state)
        history.append(row)
        log.info("epoch %d: %s", epoch, row)
        if best and settings.patience and epoch - best[1] >= settings.patience:
            log.info("no better dev macro-F1 for %d epochs: stopping", settings.patience)
            break
    if best is not None:
        model.load_state_dict(best[2])
        for row in history:
            row["best"] = row["epoch"] == best[1]
    return history


def macro_f1(gold: Sequence[int], pred: Sequence[int], num_labels: int) -> float:
    """Macro-F1 over all ``num_labels`` labels (a label never predicted counts as 0)."""
    from sklearn.metrics import f1_score

    return float(
        f1_score(gold, pred, labels=list(range(num_labels)), average="macro", zero_division=0)
    )


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
    collapse = metrics["collapse"]
    warning = (
        f"""> **WARNING: THIS DETECTOR COLLAPSED IN TRAINING. DO NOT USE IT AS A FILTER.**
> {collapse["summary"]} (collapsed at {collapse["max_share"]:.0%} or more). benchforge's
> filter refuses it. Retrain with a lower learning rate, more warm-up or a pretrained
> encoder (`benchforge classifiers pretrain`).

"""
        if collapse["collapsed"]
        else ""
    )
    epochs = "\n".join(
        f"| {r['epoch']} | {r['train_loss']} | {r.get('dev_macro_f1', '')} | "
        f"{', '.join(f'{k} {v:.0%}' for k, v in r.get('dev_shares', {}).items())} |"
        f"{' best' if r.get('best') else ''} |"
        for r in metrics["history"]
    )
    return f"""# benchforge {task} detector

{warning}A small BERT encoder trained from scratch by `benchforge classifiers train --task {task}`
on the Korean HateSpeech dataset (Moon et al. 2020, CC BY-SA 4.0; train split
{data["train"]}, dev split {data["dev"]}). Labels: {", ".join(TASKS[task]["labels"])};
the filter score is the probability of {", ".join(dev["positive_labels"])}.

Used by benchforge's classifier filter (KLUE 2.3: gender bias >= 0.5, hate >= 0.9).

## Dev results ({dev["examples"]} comments)

Macro-F1: **{dev["macro_f1"]}** (train macro-F1 {metrics["train"]["macro_f1"]}). Dev
predictions: {collapse["summary"]}.

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
{settings.class_weighted}, seed {settings.seed}, device {metrics["device"]}
({metrics["precision"]}), gradient clipping {settings.clip}, warm-up {settings.warmup},
{metrics["train_seconds"]:.0f} s.
Early stopping on dev macro-F1 (patience {settings.patience}): {metrics["epochs_run"]} epochs run,
the weights of epoch {metrics["best_epoch"]} kept. The dev figure above chose that epoch, so it
is slightly optimistic.

| epoch | train loss | dev macro-F1 | dev predictions | kept |
|---|---|---|---|---|
{epochs}

## Limitations

Trained on comments to entertainment news: other domains shift the score distribution,
so thresholds should be checked per corpus. The labels are the dataset's annotators'
judgments and inherit their disagreements. Outputs contain offensive language.
"""


def from_encoder(folder: str | Path, labels: Sequence[str], device: str) -> tuple[Any, Any]:
    """A sequence classifier over ``labels`` on the pretrained encoder in ``folder``
    (``benchforge classifiers pretrain``), and its tokenizer."""
    from transformers import AutoTokenizer, BertForSequenceClassification

    folder = Path(folder)
    if not (folder / "config.json").is_file():
        raise TrainingDataError(f"{folder}: not an encoder folder (no config.json)")
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = BertForSequenceClassification.from_pretrained(
        folder, local_files_only=True, num_labels=len(labels),
        id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)},
    ).to(device)  # fmt: skip
    return model, tokenizer


def train_classifier(
    task: str,
    out: Path,
    data_dir: Path = DEFAULT_DATA,
    settings: TrainSettings | None = None,
) -> dict:
    """Train, evaluate and save one detector; return its metrics. A collapsed detector
    (see :mod:`pipelines.models.collapse`) is saved with ``collapse.collapsed`` true in
    its metrics and a warning at the top of its model card, and logged as an error."""
    import torch
    from transformers import BertForSequenceClassification

    from pipelines.models.pretrain import pretrain_encoder, read_texts

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
        extra.extend(read_texts(Path(path)))
    torch.manual_seed(settings.seed)
    start = time.perf_counter()
    if settings.encoder:
        model, tokenizer = from_encoder(settings.encoder, labels, device)
    elif settings.pretrain_epochs and extra:
        mlm, tokenizer, _, _ = pretrain_encoder(train_texts + extra, settings, device)
        model = BertForSequenceClassification(model_config(tokenizer, labels, settings)).to(device)
        model.bert.load_state_dict(mlm.bert.state_dict(), strict=False)
    else:
        tokenizer = train_tokenizer(train_texts, settings.vocab_size)
        model = BertForSequenceClassification(model_config(tokenizer, labels, settings)).to(device)
    y_train = [labels.index(v) for v in train_labels]
    y_dev = [labels.index(v) for v in dev_labels]
    history = fine_tune(model, tokenizer, train_texts, y_train, settings, (dev_texts, y_dev))
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").unlink(missing_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)

    from pipelines.models.classifier import SequenceClassifier
    from pipelines.models.collapse import collapse_report

    scorer = SequenceClassifier(out, device=device, batch_size=None)
    dev_probs = scorer.predict_proba(dev_texts)
    collapse = collapse_report(dev_probs.argmax(axis=1), y_dev, labels, settings.collapse_share)
    best = next((row["epoch"] for row in history if row.get("best")), len(history))
    metrics = {
        "task": task,
        "device": device,
        "precision": resolve_precision(settings.precision, device),
        "train_seconds": round(seconds, 1),
        "vocab_size": len(tokenizer),
        "settings": asdict(settings),
        "epochs_run": len(history),
        "best_epoch": best,
        "history": history,
        "collapse": collapse,
        "train": evaluate(scorer.predict_proba(train_texts), y_train, labels, spec["positive"]),
        "dev": evaluate(dev_probs, y_dev, labels, spec["positive"]),
    }
    data = {"train": str(data_dir / "train.tsv"), "dev": str(data_dir / "dev.tsv")}
    (out / "README.md").write_text(_model_card(task, metrics, settings, data), encoding="utf-8")
    write_json(metrics, out / "metrics.json")
    if collapse["collapsed"]:
        log.error(
            "%s: the detector COLLAPSED (%s); saved to %s marked as collapsed, the filter "
            "refuses it", task, collapse["summary"], out,
        )  # fmt: skip
    log.info("%s: dev macro-F1 %.4f in %.0f s", task, metrics["dev"]["macro_f1"], seconds)
    return metrics
