"""Train a small machine-translation model here (``benchforge translators train``).

KorSTS and KorNLI (Ham et al. 2020, 3.1) machine-translated their English sources, then had
the evaluation sets post-edited. No model hub can be reached here, so benchforge trains
its own translator from parallel sentences (a TSV or CSV with ``source`` and ``target``
columns, e.g. STS-B train English with KorSTS train Korean): a joint sentencepiece
vocabulary over both sides, and a Marian encoder-decoder trained from scratch with label
smoothing, warmup then cosine decay, gradient clipping, bf16 autocast on GPUs that have
it, and the best epoch kept by held-out loss. The held-out sentences (a seeded sample of
distinct sources, never trained on) are translated greedily and scored with sacrebleu:
chrF, BLEU (its default ``13a`` tokenizer: Korean words are split at spaces and
punctuation) and TER.

The result is an ordinary transformers checkpoint directory that
:class:`pipelines.pairing.translate.TransformersTranslator` loads, plus ``README.md`` (a
model card: data, size, training, scores, examples, limitations) and ``metrics.json``.
A model trained on a few thousand sentences is weak; that is what post-editing is for,
and the card says so.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import write_json, write_text
from pipelines.core.progress import progress as show_progress
from pipelines.models.checkpoints import default_device
from pipelines.models.precision import schedule as _schedule
from pipelines.models.train_classifier import shuffled_length_batches as _batches

log = logging.getLogger(__name__)


class ParallelDataError(BenchforgeError, ValueError):
    """Parallel data that cannot be used; the message names the file and the row."""


@dataclass
class MtSettings:
    """Model size and optimisation; the defaults train in about a minute on a 2-core CPU
    over 2,000 sentence pairs (larger settings suit a GPU)."""

    vocab_size: int = 2000
    d_model: int = 128
    layers: int = 2
    heads: int = 4
    ffn_dim: int = 512
    dropout: float = 0.1
    max_length: int = 64
    epochs: int = 20
    batch_size: int = 32
    lr: float = 1e-3
    warmup: float = 0.05
    label_smoothing: float = 0.1
    heldout: int = 100
    seed: int = 0
    limit: int | None = None  # the first N pairs only (tests)
    device: str | None = None


def read_parallel(path: Path, source: str = "source", target: str = "target") -> pd.DataFrame:
    """``line``, ``source``, ``target`` sentence pairs of a TSV (no quoting) or CSV file
    with a header (``pipelines.core.line_files.iter_rows``); a missing column or an empty
    cell names the line, a wrong number of fields is the reader's error."""
    from pipelines.core.line_files import delimited_format, iter_rows

    out = []
    for line, record in iter_rows(path, delimited_format(path)):
        if record is None:
            continue
        for col in (source, target):
            if col not in record:
                raise ParallelDataError(f"{path}: line 1: no column {col!r} "
                                        f"(columns: {list(record)})")  # fmt: skip
        src, tgt = record[source].strip(), record[target].strip()
        if not src or not tgt:
            raise ParallelDataError(f"{path}: line {line}: empty {source if not src else target}")
        out.append((line, src, tgt))
    if not out:
        raise ParallelDataError(f"{path}: no sentence pairs")
    return pd.DataFrame(out, columns=["line", "source", "target"])


def train_sentencepiece(
    out: Path, prefix: str, sentences: list[str], specials: list[str], vocab_size: int
) -> dict[str, int]:
    """Train ``out/prefix.model`` on ``sentences``; return a vocabulary: ``specials``
    first, then the sentencepiece pieces (the Marian tokenizer's ``vocab.json``)."""
    import sentencepiece as spm

    # every character needs a piece of its own (Korean has hundreds of syllables)
    vocab_size = max(vocab_size, len(set("".join(sentences))) + len(specials) + 8)
    text = out / f"{prefix}_corpus.txt"
    text.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(out / prefix),
        vocab_size=vocab_size,
        hard_vocab_limit=False,
        character_coverage=1.0,
        bos_id=-1,
        eos_id=-1,
        unk_id=0,
        minloglevel=2,
    )
    text.unlink()
    proc = spm.SentencePieceProcessor(model_file=str(out / f"{prefix}.model"))
    vocab = {tok: i for i, tok in enumerate(specials)}
    for i in range(proc.get_piece_size()):
        vocab.setdefault(proc.id_to_piece(i), len(vocab))
    return vocab


def split_heldout(pairs: pd.DataFrame, n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, held-out): ``n`` distinct source sentences, seeded; every pair whose source
    is held out leaves train, so no held-out sentence is ever trained on."""
    sources = sorted(pairs["source"].unique())
    rng = np.random.default_rng(seed)
    n = min(n, max(0, len(sources) - 1))
    held = {sources[i] for i in rng.choice(len(sources), size=n, replace=False)} if n else set()
    mask = pairs["source"].isin(held)
    heldout = pairs[mask].drop_duplicates("source").reset_index(drop=True)
    return pairs[~mask].reset_index(drop=True), heldout


def score(hypotheses: list[str], references: list[str]) -> dict[str, float]:
    """Corpus chrF, BLEU (``13a`` tokenizer) and TER of ``hypotheses`` against
    ``references`` (sacrebleu)."""
    import sacrebleu

    refs = [references]
    return {
        "chrf": round(sacrebleu.corpus_chrf(hypotheses, refs).score, 2),
        "bleu": round(sacrebleu.corpus_bleu(hypotheses, refs).score, 2),
        "ter": round(sacrebleu.corpus_ter(hypotheses, refs).score, 2),
    }


def _model(vocab: dict[str, int], s: MtSettings):  # noqa: ANN202
    from transformers import MarianConfig, MarianMTModel

    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=s.d_model,
        encoder_layers=s.layers,
        decoder_layers=s.layers,
        encoder_attention_heads=s.heads,
        decoder_attention_heads=s.heads,
        encoder_ffn_dim=s.ffn_dim,
        decoder_ffn_dim=s.ffn_dim,
        dropout=s.dropout,
        max_position_embeddings=max(64, s.max_length * 2),
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=vocab["</s>"],
        share_encoder_decoder_embeddings=True,
        scale_embedding=True,  # token embeddings * sqrt(d_model), as opus-mt: the sinusoidal
        # positions would otherwise drown the tokens and the decoder ignore the source
    )
    return MarianMTModel(config)


def _encode(tokenizer, sources: list[str], targets: list[str], max_length: int) -> dict:  # noqa: ANN001
    enc = tokenizer(sources, text_target=targets, truncation=True, max_length=max_length)
    return {"input_ids": enc["input_ids"], "labels": enc["labels"]}


def _pad(rows: list[list[int]], value: int):  # noqa: ANN202
    import torch

    width = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (width - len(r)) for r in rows])


def _loss(model, enc: dict, idx: np.ndarray, pad: int, smoothing: float, device: str):  # noqa: ANN001, ANN202
    import torch

    ids = _pad([enc["input_ids"][i] for i in idx], pad).to(device)
    labels = _pad([enc["labels"][i] for i in idx], -100).to(device)
    logits = model(input_ids=ids, attention_mask=ids.ne(pad), labels=labels).logits
    return torch.nn.functional.cross_entropy(
        logits.float().view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100,
        label_smoothing=smoothing,
    )  # fmt: skip


def translate_greedy(model, tokenizer, texts: list[str], device: str, max_length: int,
                     batch_size: int = 64) -> list[str]:  # noqa: ANN001  # fmt: skip
    """Greedy translations of ``texts`` (the held-out evaluation)."""
    import torch

    from pipelines.models.checkpoints import length_batches

    out = [""] * len(texts)
    model.eval()
    bar = show_progress(total=len(texts), desc="translate held-out", unit="sentence",
                        logger=log)  # fmt: skip
    for idx in length_batches(texts, batch_size):
        enc = tokenizer([texts[i] for i in idx], return_tensors="pt", padding=True,
                        truncation=True, max_length=max_length).to(device)  # fmt: skip
        with torch.inference_mode():
            gen = model.generate(**enc, max_new_tokens=max_length * 2, num_beams=1,
                                 do_sample=False)  # fmt: skip
        for i, text in zip(idx, tokenizer.batch_decode(gen, skip_special_tokens=True),
                           strict=True):  # fmt: skip
            out[i] = text.strip()
        bar.update(len(idx))
    bar.close()
    return out


def train_mt(parallel: Path, out: Path, settings: MtSettings | None = None,
             source: str = "source", target: str = "target", langs: tuple[str, str] = ("en", "ko"),
             progress: bool | None = None) -> dict:  # fmt: skip
    """Train on ``parallel`` and save the checkpoint, its model card and metrics into
    ``out`` (written last: a folder without ``metrics.json`` is an interrupted run).
    Returns the metrics."""
    import torch
    from transformers import MarianTokenizer

    s = settings or MtSettings()
    started = time.perf_counter()
    pairs = read_parallel(parallel, source, target)
    if s.limit:
        pairs = pairs.head(s.limit)
    train, heldout = split_heldout(pairs, s.heldout, s.seed)
    if train.empty:
        raise ParallelDataError(f"{parallel}: no pairs left to train on after the held-out set")
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").unlink(missing_ok=True)
    sentences = train["source"].tolist() + train["target"].tolist()
    vocab = train_sentencepiece(out, "spm", sentences, ["</s>", "<unk>"], s.vocab_size)
    vocab["<pad>"] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(source_spm=str(out / "spm.model"),
                                target_spm=str(out / "spm.model"), vocab=str(out / "vocab.json"),
                                source_lang=langs[0], target_lang=langs[1])  # fmt: skip
    device = s.device or default_device()
    torch.manual_seed(s.seed)
    model = _model(vocab, s).to(device)
    enc = _encode(tokenizer, train["source"].tolist(), train["target"].tolist(), s.max_length)
    held = _encode(tokenizer, heldout["source"].tolist(), heldout["target"].tolist(),
                   s.max_length)  # fmt: skip
    rng = np.random.default_rng(s.seed)
    lengths = [len(x) for x in enc["input_ids"]]
    steps_per_epoch = math.ceil(len(lengths) / s.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=0.01)
    scheduler = _schedule(optimizer, steps_per_epoch * s.epochs, s.warmup)
    bf16 = device.startswith("cuda") and torch.cuda.is_bf16_supported()
    pad = vocab["<pad>"]
    history, best, best_state = [], math.inf, None
    bar = show_progress(total=steps_per_epoch * s.epochs, desc="train mt", unit="step",
                        show=progress, logger=log)  # fmt: skip
    for epoch in range(1, s.epochs + 1):
        model.train()
        total = 0.0
        for idx in _batches(lengths, s.batch_size, rng):
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                loss = _loss(model, enc, idx, pad, s.label_smoothing, device)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            total += loss.item()
            bar.update(1)
        held_loss = None
        if len(heldout):
            model.eval()
            with torch.inference_mode():
                batches = [np.arange(k, min(k + 64, len(heldout))) for k in
                           range(0, len(heldout), 64)]  # fmt: skip
                held_loss = float(np.mean([_loss(model, held, b, pad, 0.0, device).item()
                                           for b in batches]))  # fmt: skip
        history.append(
            {
                "epoch": epoch,
                "train_loss": round(total / steps_per_epoch, 4),
                "heldout_loss": None if held_loss is None else round(held_loss, 4),
            }
        )
        bar.set_postfix(epoch=f"{epoch}/{s.epochs}", loss=f"{total / steps_per_epoch:.3f}",
                        heldout=f"{held_loss or 0:.3f}")  # fmt: skip
        if held_loss is None or held_loss < best:
            best = held_loss if held_loss is not None else best
            best_state = copy.deepcopy(model.state_dict())
    bar.close()
    model.load_state_dict(best_state)
    best_epoch = min(history, key=lambda h: h["heldout_loss"] if h["heldout_loss"] is not None
                     else -h["epoch"])["epoch"]  # fmt: skip
    hyps = translate_greedy(model, tokenizer, heldout["source"].tolist(), device, s.max_length)
    refs = heldout["target"].tolist()
    metrics = {
        "task": f"translation {langs[0]}->{langs[1]}",
        "heldout": {**(score(hyps, refs) if refs else {}), "sentences": len(refs)},
        "data": {"file": str(parallel), "sha256": hashlib.sha256(parallel.read_bytes())
                 .hexdigest(), "pairs": len(pairs), "train_pairs": len(train),
                 "heldout_sentences": len(heldout)},  # fmt: skip
        "settings": asdict(s),
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "vocab": len(vocab),
        "device": device,
        "bf16": bf16,
        "epochs": history,
        "best_epoch": best_epoch,
        "seconds": round(time.perf_counter() - started, 1),
        "examples": [{"source": a, "reference": b, "translation": c}
                     for a, b, c in list(zip(heldout["source"], refs, hyps, strict=True))[:8]],
    }  # fmt: skip
    model.to("cpu").save_pretrained(out)
    tokenizer.save_pretrained(out)
    for name in ("spm.model", "spm.vocab"):
        (out / name).unlink(missing_ok=True)
    write_text(model_card(metrics), out / "README.md")
    write_json(metrics, out / "metrics.json")
    return metrics


def model_card(m: dict) -> str:
    """The model card (Markdown) of a trained translator."""
    from pipelines.core.markdown import settings_table, table

    h = m["heldout"]
    return "\n".join([
        f"# benchforge MT model ({m['task']})",
        "",
        "A small Marian encoder-decoder trained from scratch by `benchforge translators "
        "train` (pipelines/models/train_mt.py) on the parallel sentences below. It is a "
        "**weak** translator: its drafts are meant to be post-edited (KorSTS/KorNLI dev and "
        "test, Ham et al. 2020, 3.1); a machine-translated-only train split releases them.",
        "",
        "## Data",
        "",
        table(["", ""], [["file", m["data"]["file"]], ["sha256", m["data"]["sha256"][:16]],
                         ["sentence pairs", m["data"]["pairs"]],
                         ["trained on", m["data"]["train_pairs"]],
                         ["held out (distinct sources, never trained on)",
                          m["data"]["heldout_sentences"]]]),
        "",
        "## Held-out scores (sacrebleu; greedy decoding)",
        "",
        table(["chrF", "BLEU (13a)", "TER", "sentences"],
              [[h.get("chrf"), h.get("bleu"), h.get("ter"), h["sentences"]]]),
        "",
        "## Model and training",
        "",
        f"{m['parameters']:,} parameters, vocabulary {m['vocab']:,} (joint sentencepiece); "
        f"trained on `{m['device']}`{' with bf16' if m['bf16'] else ''} in {m['seconds']} s; "
        f"best epoch by held-out loss: {m['best_epoch']}.",
        "",
        settings_table(m["settings"]),
        "",
        table(["epoch", "train loss", "held-out loss"],
              [[e["epoch"], e["train_loss"], e["heldout_loss"]] for e in m["epochs"]]),
        "",
        "## Examples (held out)",
        "",
        table(["source", "reference", "translation"],
              [[e["source"], e["reference"], e["translation"]] for e in m["examples"]]),
        "",
        "## Limitations",
        "",
        "- Trained on a few thousand sentences of one domain: expect dropped words, "
        "repetitions and wrong content words outside it.",
        "- The reference translations may themselves be machine translations (KorSTS train "
        "is), so the scores measure agreement with them, not translation quality.",
        "",
    ])  # fmt: skip
