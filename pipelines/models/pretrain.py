"""``benchforge classifiers pretrain``: masked language modelling on unlabeled Korean text.

The detectors beat a character n-gram reference only when their encoder has first been
pretrained on a large unlabeled corpus (issue 22's measurements: the NSMC crawl and the
Korean HateSpeech unlabeled comments, 754,193 texts). This module makes that a recipe:

- **Sources**: text files (one text a line, ``.txt`` or ``.txt.gz``), JSON Lines
  (``.jsonl[.gz]``, the ``text``, ``review`` or ``comments`` field: the NSMC crawl), a
  ``sentences.parquet`` of ``benchforge ingest`` or an ingest output folder holding one.
  The labeled train split's comments are added without their labels; dev is never seen.
- **Tokenized once**: a BPE tokenizer is trained on the texts, then every text is
  tokenized in large parallel calls of the fast tokenizer and the ids cached to
  ``OUT/.cache/tokens-<digest>.npz`` (:mod:`pipelines.models.token_batches`).
- **Training**: BERT's masking (15% of tokens, 80/10/10), length-bucketed batches,
  bf16 autocast on a GPU that has it (fp16 with loss scaling otherwise; see
  :mod:`pipelines.models.precision`), gradient clipping, warm-up and cosine decay, a
  progress bar with the loss and tokens per second.
- **Resumable by epoch**: after every epoch the model, optimiser, schedule and random
  states are written atomically to ``OUT/resume.pt``; a rerun with the same texts and
  settings continues after the last finished epoch, and a finished run is not repeated.
  A rerun with other texts or settings is refused unless ``--restart`` is given.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import write_json
from pipelines.models.checkpoints import default_device
from pipelines.models.precision import Stepper, resolve_precision
from pipelines.models.token_batches import Encoded, encode, pad

log = logging.getLogger(__name__)

TEXT_FIELDS = ("text", "review", "comments")
# settings that change what pretraining computes (a resume must match them all)
FINGERPRINT_FIELDS = (
    "vocab_size", "hidden", "layers", "heads", "intermediate", "max_length", "batch_size",
    "pretrain_epochs", "pretrain_lr", "weight_decay", "warmup", "dropout", "seed",
)  # fmt: skip


class PretrainError(BenchforgeError, ValueError):
    """Unusable pretraining input or state; the message names the file and the problem."""


def read_texts(path: Path) -> list[str]:
    """The texts of one source (see the module docstring); blank texts are skipped."""
    path = Path(path)
    if path.is_dir():
        if not (path / "sentences.parquet").is_file():
            raise PretrainError(f"{path}: a folder without sentences.parquet (ingest output)")
        path = path / "sentences.parquet"
    if not path.is_file():
        raise PretrainError(f"{path}: file not found")
    if path.suffix == ".parquet":
        import pandas as pd

        frame = pd.read_parquet(path)
        if "text" not in frame.columns:
            raise PretrainError(f"{path}: no 'text' column (columns: {list(frame.columns)})")
        return [t for t in frame["text"].astype(str) if t.strip()]
    opener = gzip.open if path.suffix == ".gz" else open
    jsonl = ".jsonl" in path.name
    out: list[str] = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            if not jsonl:
                out.append(line.rstrip("\n"))
                continue
            try:
                row = json.loads(line)
                text = next(str(row[k]) for k in TEXT_FIELDS if k in row)
            except (json.JSONDecodeError, TypeError) as exc:
                raise PretrainError(f"{path}:{number}: malformed JSON ({exc})") from None
            except StopIteration:
                raise PretrainError(
                    f"{path}:{number}: no text field (one of {', '.join(TEXT_FIELDS)})"
                ) from None
            if text.strip():
                out.append(text)
    return out


def digest_texts(texts: Sequence[str]) -> str:
    """A short digest of the texts, in order."""
    h = hashlib.sha256()
    for text in texts:
        h.update(text.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()[:16]


def mlm_epochs(
    model: Any,
    tokenizer: Any,
    encoded: Encoded,
    settings: Any,
    device: str,
    resume: Path | None = None,
    fingerprint: dict | None = None,
) -> tuple[list[float], dict]:
    """Masked language modelling of ``model`` (a BertForMaskedLM, trained in place) on
    ``encoded`` for ``settings.pretrain_epochs`` epochs; with ``resume``, the state after
    each epoch is saved there and a saved state is continued from. Returns the mean loss
    of each epoch and the throughput."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    from pipelines.models.classifier_data import shuffled_length_batches

    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    special = np.asarray(tokenizer.all_special_ids)
    precision = resolve_precision(settings.precision, device)
    rng = np.random.default_rng(settings.seed)
    # pools are whole batches, so an epoch has ceil(n / batch) of them (as in fine_tune)
    steps_per_epoch = math.ceil(len(encoded) / settings.batch_size)
    stepper = Stepper(
        model, settings.pretrain_lr, settings.weight_decay,
        steps_per_epoch * settings.pretrain_epochs, settings.warmup, device, precision,
    )  # fmt: skip
    losses: list[float] = []
    seconds, tokens = 0.0, 0
    if resume is not None and resume.is_file():
        state = torch.load(resume, map_location=device, weights_only=False)
        if state["fingerprint"] != fingerprint:
            raise PretrainError(f"{resume}: saved for other texts or settings")
        model.load_state_dict(state["model"])
        stepper.load_state_dict(state["stepper"])
        rng.bit_generator.state = state["rng"]
        torch.set_rng_state(state["torch_rng"])
        losses, seconds, tokens = state["losses"], state["seconds"], state["tokens"]
        log.info("resuming pretraining after epoch %d of %d", len(losses), settings.pretrain_epochs)
    pad_id = tokenizer.pad_token_id
    cuda = device.startswith("cuda")
    for epoch in range(len(losses), settings.pretrain_epochs):
        model.train()
        start = time.perf_counter()
        batches = shuffled_length_batches(encoded.lengths, settings.batch_size, rng)
        bar = tqdm(batches, desc=f"pretrain {epoch + 1}/{settings.pretrain_epochs}",
                   unit="batch", disable=None)  # fmt: skip
        total = torch.zeros((), device=device)
        epoch_tokens = 0
        for step, rows in enumerate(bar, start=1):
            ids, mask = pad(encoded, rows, pad_id)
            inputs, labels = collator.torch_mask_tokens(
                torch.from_numpy(ids), torch.from_numpy(np.isin(ids, special))
            )
            batch = [inputs, torch.from_numpy(mask), labels]
            if cuda:
                batch = [t.pin_memory().to(device, non_blocking=True) for t in batch]
            with stepper.autocast():
                loss = masked_loss(model, batch[0], batch[1], batch[2])
            total += stepper.step(loss)
            epoch_tokens += int(encoded.lengths[rows].sum())
            if step % 50 == 0:
                rate = epoch_tokens / (time.perf_counter() - start)
                bar.set_postfix(loss=f"{total.item() / step:.3f}", tok_s=f"{rate:,.0f}")
        model.eval()
        losses.append(round(float(total.item()) / max(1, len(batches)), 4))
        took = time.perf_counter() - start
        seconds, tokens = seconds + took, tokens + epoch_tokens
        log.info(
            "pretrain epoch %d: mean MLM loss %.4f, %.0f s, %,.0f tokens/s, %,.0f texts/s",
            epoch + 1, losses[-1], took, epoch_tokens / took, len(encoded) / took,
        )  # fmt: skip
        if resume is not None:
            state = {
                "fingerprint": fingerprint, "model": model.state_dict(),
                "stepper": stepper.state_dict(), "rng": rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(), "losses": losses,
                "seconds": seconds, "tokens": tokens,
            }  # fmt: skip
            tmp = resume.with_suffix(".tmp")
            torch.save(state, tmp)
            os.replace(tmp, resume)
    throughput = {
        "seconds": round(seconds, 1),
        "tokens_per_second": round(tokens / seconds) if seconds else None,
        "texts_per_second": round(len(encoded) * len(losses) / seconds) if seconds else None,
        "precision": precision,
    }
    return losses, throughput


def masked_loss(model: Any, input_ids: Any, attention_mask: Any, labels: Any) -> Any:
    """The MLM cross entropy, with the vocabulary projection applied to the masked
    positions only (about 15% of them): the same loss as ``model(...).loss`` at a
    fraction of the cost, since the projection dominates a small encoder's step."""
    import torch

    hidden = model.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    masked = labels != -100
    logits = model.cls(hidden[masked])
    return torch.nn.functional.cross_entropy(logits.float(), labels[masked])


def pretrain_encoder(
    texts: Sequence[str],
    settings: Any,
    device: str,
    tokenizer: Any = None,
    encoded: Encoded | None = None,
    resume: Path | None = None,
    fingerprint: dict | None = None,
) -> tuple[Any, Any, list[float], dict]:
    """A BertForMaskedLM pretrained on ``texts`` (a BPE tokenizer is trained on them
    unless given); returns (model, tokenizer, mean loss per epoch, throughput)."""
    import torch
    from transformers import BertForMaskedLM

    from pipelines.models.classifier_data import model_config, train_tokenizer

    torch.manual_seed(settings.seed)
    tokenizer = tokenizer or train_tokenizer(texts, settings.vocab_size)
    if encoded is None:
        encoded = encode(tokenizer, texts, settings.max_length)
    model = BertForMaskedLM(model_config(tokenizer, ["0", "1"], settings)).to(device)
    losses, throughput = mlm_epochs(
        model, tokenizer, encoded, settings, device, resume, fingerprint
    )
    return model, tokenizer, losses, throughput


def pretrain(
    text_paths: Sequence[Path],
    out: Path,
    settings: Any,
    data_dir: Path | None = None,
    restart: bool = False,
) -> dict:
    """Pretrain an encoder on ``text_paths`` (plus the labeled train split's comments)
    and save it to ``out`` with ``pretrain.json``, for ``classifiers train --encoder``;
    resumable (see the module docstring). Returns the summary written to pretrain.json."""
    from transformers import AutoTokenizer

    from pipelines.models.classifier_data import DEFAULT_DATA, load_split, train_tokenizer

    data_dir = data_dir or DEFAULT_DATA
    device = settings.device or default_device()
    texts, sources = [], {}
    for path in text_paths:
        found = read_texts(Path(path))
        sources[str(path)] = len(found)
        texts.extend(found)
    train_texts, _ = load_split(data_dir / "train.tsv", "hate")
    sources[str(data_dir / "train.tsv")] = len(train_texts)
    texts = train_texts + texts
    if settings.limit:
        texts = texts[: settings.limit]
    fingerprint = {"texts": digest_texts(texts), "count": len(texts)}
    fingerprint.update({k: getattr(settings, k) for k in FINGERPRINT_FIELDS})
    out.mkdir(parents=True, exist_ok=True)
    summary_path, resume, tok_dir = out / "pretrain.json", out / "resume.pt", out / "tokenizer"
    if restart:
        for stale in (summary_path, resume):
            stale.unlink(missing_ok=True)
    if summary_path.is_file():
        done = json.loads(summary_path.read_text(encoding="utf-8"))
        if done.get("fingerprint") == fingerprint:
            log.info("%s: pretrained already with these texts and settings", out)
            return {**done, "cached": True}
        raise PretrainError(
            f"{out}: holds an encoder pretrained on other texts or settings; "
            "choose another --out or pass --restart"
        )
    if resume.is_file() and not restart:
        import torch

        saved = torch.load(resume, map_location="cpu", weights_only=False)["fingerprint"]
        if saved != fingerprint:
            changed = sorted(k for k in fingerprint if saved.get(k) != fingerprint[k])
            raise PretrainError(
                f"{resume}: an unfinished pretraining with other {', '.join(changed)}; "
                "rerun with the same texts and settings to resume, or pass --restart"
            )
    start = time.perf_counter()
    if (tok_dir / "tokenizer.json").is_file() and resume.is_file():
        tokenizer = AutoTokenizer.from_pretrained(tok_dir, local_files_only=True)
    else:
        tokenizer = train_tokenizer(texts, settings.vocab_size)
        tokenizer.save_pretrained(tok_dir)
    cache = out / ".cache" / f"tokens-{fingerprint['texts']}-{settings.max_length}.npz"
    if cache.is_file() and resume.is_file():
        encoded = Encoded.load(cache)
    else:
        encoded = encode(tokenizer, texts, settings.max_length)
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp.npz")
        encoded.save(tmp)
        os.replace(tmp, cache)
    prepare = time.perf_counter() - start
    log.info("%d texts, %d tokens, tokenized in %.0f s", len(texts), len(encoded.flat), prepare)
    model, tokenizer, losses, throughput = pretrain_encoder(
        texts, settings, device, tokenizer, encoded, resume, fingerprint
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    info = {
        "kind": "benchforge-mlm-encoder",
        "texts": len(texts),
        "tokens": int(len(encoded.flat)),
        "sources": sources,
        "epoch_loss": losses,
        "device": device,
        "prepare_seconds": round(prepare, 1),
        "train_seconds": throughput["seconds"],
        "throughput": throughput,
        "vocab_size": len(tokenizer),
        "fingerprint": fingerprint,
        "settings": asdict(settings),
    }
    write_json(info, summary_path)
    resume.unlink(missing_ok=True)
    log.info("pretrained on %d texts; MLM loss by epoch %s", len(texts), losses)
    return info
