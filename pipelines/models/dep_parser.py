"""A head-final biaffine dependency parser over words: KLUE-DP's pseudo-parser and its
baseline (issue 57, items 3 and 6; Dozat and Manning 2017's biaffine attention).

Contract:

- **Input**: sentences as lists of words, each word a tuple of feature strings, one per
  slot (the caller's featurizer: KLUE-DP's are the word's POS string, first and last
  tag, last morpheme, content morpheme and form, :func:`pipelines.families.klue.dp_parse.features`),
  with gold heads (1-based, 0 the root) and labels.
- **Head-final**: the language's trees put every head after its word and the root
  last (Korean in KLUE-DP and the Sejong treebank), so word ``i``'s head is chosen
  among words ``i+1..n`` and the last word is the root: every decoded structure is a
  tree, with no spanning-tree search.
- **Model**: one embedding per feature slot (values seen ``min_count`` times in
  training, others ``[UNK]``), summed, then an encoder: ``lstm`` (a bidirectional LSTM)
  or ``transformer`` (a transformers ``BertModel`` from a small config, trained from
  scratch, fed the embeddings as ``inputs_embeds``); a biaffine arc scorer over MLP
  projections of the encoder's states and a label classifier over a word's label
  projection, its head's (the root's: its own) and their product (a full bilinear
  label scorer made a training step of 32 sentences 1.7 s against 0.19 s on one CPU
  thread).
- **Training**: Adam, batches of alike length, gradient clipping, the weights of the
  best dev LAS epoch kept;
  reused when ``folder`` already holds a parser trained on the same data and settings.
- **Scores**: UAS and LAS (:func:`attachment`), over every word.
- **Checkpoint**: ``parser.json`` (settings, vocabularies, labels, metrics) and
  ``model.safetensors``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import write_json
from pipelines.core.settings import AtLeastOne, Seed
from pipelines.models.attachment import attachment
from pipelines.models.attachment import right_branching as _right_branching

log = logging.getLogger(__name__)

PAD, UNK = "[PAD]", "[UNK]"
Sentence = Sequence[Sequence[str]]  # words, each a tuple of feature strings


class ParserError(BenchforgeError, ValueError):
    """Unusable parser input, settings or checkpoint."""


@dataclass
class ParserSettings:
    """The parser's size and training (defaults: trains on a CPU in about a minute on
    UD Korean's 6,000 sentences)."""

    encoder: Literal["lstm", "transformer"] = "lstm"
    embed: AtLeastOne = 128
    hidden: AtLeastOne = 128  # per direction (lstm) or the model's width (transformer)
    layers: AtLeastOne = 2
    heads: AtLeastOne = 4  # transformer only
    arc_dim: AtLeastOne = 192
    label_dim: AtLeastOne = 64
    dropout: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = 0.33
    epochs: AtLeastOne = 12
    batch_size: AtLeastOne = 32
    lr: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] = 2e-3
    min_count: AtLeastOne = 2
    seed: Seed = 0
    device: str | None = None

    def __post_init__(self) -> None:
        from pydantic import ValidationError

        from pipelines.core.recipe import problems
        from pipelines.core.settings import options_model

        try:
            options_model(ParserSettings).model_validate(asdict(self))
        except ValidationError as exc:
            raise ParserError(f"parser settings: {problems(exc)}") from None
        if self.encoder == "transformer" and self.hidden % self.heads:
            raise ParserError(f"hidden {self.hidden} is not a multiple of heads {self.heads}")


def right_branching(sentences: Sequence[Sentence]) -> list[list[int]]:
    """Every word attached to the next, the last the root (the head-final baseline)."""
    return _right_branching(len(s) for s in sentences)


def _fingerprint(data: Sequence, settings: ParserSettings) -> str:
    digest = hashlib.sha256(json.dumps([asdict(settings) | {"device": None}, data],
                                       ensure_ascii=False, default=list).encode())  # fmt: skip
    return digest.hexdigest()[:24]


def _model(settings: ParserSettings, sizes: list[int], labels: int) -> Any:
    import torch
    from torch import nn

    class Biaffine(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embeds = nn.ModuleList(nn.Embedding(n, settings.embed, padding_idx=0)
                                        for n in sizes)  # fmt: skip
            self.drop = nn.Dropout(settings.dropout)
            if settings.encoder == "lstm":
                self.encoder = nn.LSTM(
                    settings.embed,
                    settings.hidden,
                    settings.layers,
                    batch_first=True,
                    bidirectional=True,
                    dropout=settings.dropout if settings.layers > 1 else 0,
                )
                width = 2 * settings.hidden
            else:
                from transformers import BertConfig, BertModel

                self.project = nn.Linear(settings.embed, settings.hidden)
                self.encoder = BertModel(BertConfig(
                    vocab_size=2, hidden_size=settings.hidden, num_hidden_layers=settings.layers,
                    num_attention_heads=settings.heads, intermediate_size=2 * settings.hidden,
                    max_position_embeddings=512, hidden_dropout_prob=settings.dropout,
                    attention_probs_dropout_prob=0.1, type_vocab_size=1,
                ), add_pooling_layer=False)  # fmt: skip
                width = settings.hidden

            def mlp(out: int) -> nn.Module:
                return nn.Sequential(nn.Linear(width, out), nn.LeakyReLU(0.1),
                                     nn.Dropout(settings.dropout))  # fmt: skip

            self.arc_dep, self.arc_head = mlp(settings.arc_dim), mlp(settings.arc_dim)
            self.lab_dep, self.lab_head = mlp(settings.label_dim), mlp(settings.label_dim)
            self.arc_w = nn.Parameter(torch.zeros(settings.arc_dim, settings.arc_dim))
            self.arc_b = nn.Linear(settings.arc_dim, 1, bias=False)
            self.label = nn.Linear(3 * settings.label_dim, labels)

        def forward(self, feats: Any, mask: Any) -> tuple[Any, Any, Any]:
            x = sum(e(feats[..., k]) for k, e in enumerate(self.embeds))
            x = self.drop(x)
            if settings.encoder == "lstm":
                lengths = mask.sum(1).cpu()
                packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                           enforce_sorted=False)  # fmt: skip
                h, _ = self.encoder(packed)
                h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True,
                                                        total_length=x.shape[1])  # fmt: skip
            else:
                h = self.encoder(inputs_embeds=self.project(x),
                                 attention_mask=mask.long()).last_hidden_state  # fmt: skip
            h = self.drop(h)
            dep, head = self.arc_dep(h), self.arc_head(h)
            scores = dep @ self.arc_w @ head.transpose(1, 2) + self.arc_b(head).transpose(1, 2)
            return scores, self.lab_dep(h), self.lab_head(h)

        def label_logits(self, ld: Any, lh: Any, heads: Any) -> Any:
            picked = torch.gather(lh, 1, heads.unsqueeze(-1).expand(-1, -1, lh.shape[-1]))
            return self.label(torch.cat([ld, picked, ld * picked], -1))

    return Biaffine()


class Parser:
    """A trained parser: :meth:`parse` gives heads and labels per sentence."""

    def __init__(self, model: Any, vocab: list[dict[str, int]], labels: list[str],
                 device: str, info: dict) -> None:  # fmt: skip
        self.model, self.vocab, self.labels, self.device, self.info = (
            model, vocab, labels, device, info)  # fmt: skip

    def encode(self, sentences: Sequence[Sentence]) -> tuple[Any, Any]:
        import torch

        width = max((len(s) for s in sentences), default=1) or 1
        feats = torch.zeros(len(sentences), width, len(self.vocab), dtype=torch.long)
        mask = torch.zeros(len(sentences), width, dtype=torch.bool)
        for b, s in enumerate(sentences):
            for i, word in enumerate(s):
                mask[b, i] = True
                for k, value in enumerate(word):
                    feats[b, i, k] = self.vocab[k].get(value, 1)
        return feats.to(self.device), mask.to(self.device)

    @staticmethod
    def arc_mask(mask: Any) -> Any:
        """Allowed (word, head) pairs: heads after the word, inside the sentence; the
        last word's own position stands for the root."""
        import torch

        n = mask.shape[1]
        later = torch.triu(torch.ones(n, n, dtype=torch.bool, device=mask.device), 1)
        allowed = later.unsqueeze(0) & mask.unsqueeze(1) & mask.unsqueeze(2)
        last = mask.sum(1) - 1
        idx = torch.arange(mask.shape[0], device=mask.device)
        allowed[idx, last, last] = True
        return allowed

    def parse(
        self, sentences: Sequence[Sentence], batch_size: int = 64
    ) -> list[tuple[list[int], list[str]]]:
        import torch

        self.model.eval()
        out: list[tuple[list[int], list[str]]] = []
        with torch.no_grad():
            for at in range(0, len(sentences), batch_size):
                chunk = sentences[at : at + batch_size]
                feats, mask = self.encode(chunk)
                scores, ld, lh = self.model(feats, mask)
                scores = scores.masked_fill(~self.arc_mask(mask), float("-inf"))
                best = scores.argmax(-1)
                labels = self.model.label_logits(ld, lh, best).argmax(-1)
                for b, s in enumerate(chunk):
                    n = len(s)
                    heads = [int(best[b, i]) + 1 for i in range(n - 1)] + [0]
                    out.append((heads, [self.labels[int(labels[b, i])] for i in range(n)]))
        return out


def _batches(lengths: Sequence[int], size: int, rng: np.random.Generator) -> list[list[int]]:
    """Batches of sentences of alike length (less padding), in a seeded random order:
    shuffled, sorted by length within pools of 50 batches, cut, the batches shuffled."""
    order = rng.permutation(len(lengths)).tolist()
    pool = 50 * size
    out = []
    for at in range(0, len(order), pool):
        chunk = sorted(order[at : at + pool], key=lambda i: lengths[i])
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    return [out[i] for i in rng.permutation(len(out)).tolist()]


def _targets(heads: Sequence[int]) -> list[int]:
    """0-based head positions; the root points at itself."""
    n = len(heads)
    return [h - 1 if h else i for i, h in enumerate(heads)] if n else []


def train_parser(
    train: Sequence[tuple[Sentence, Sequence[int], Sequence[str]]],
    dev: Sequence[tuple[Sentence, Sequence[int], Sequence[str]]],
    settings: ParserSettings,
    folder: Path,
    sources: dict | None = None,
) -> dict:
    """Train (or reuse) a parser into ``folder``; returns its metrics (``parser.json``)."""
    import torch
    from safetensors.torch import save_file

    from pipelines.models.checkpoints import default_device

    if not train:
        raise ParserError("no training sentences")
    for words, heads, _ in train:
        if any(not (h > i + 1 or (h == 0 and i + 1 == len(words))) for i, h in enumerate(heads)):
            raise ParserError("a training tree is not head-final (every head after its word, "
                              "the root last)")  # fmt: skip
    folder = Path(folder)
    fingerprint = _fingerprint([list(map(list, t[0])) + [list(t[1]), list(t[2])]
                                for t in train], settings)  # fmt: skip
    done = folder / "parser.json"
    if done.is_file() and (folder / "model.safetensors").is_file():
        info = json.loads(done.read_text(encoding="utf-8"))
        if info.get("fingerprint") == fingerprint:
            log.info("parser in %s is trained on these data and settings: reused", folder)
            return info
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    device = settings.device or default_device()
    slots = len(train[0][0][0])
    vocab = []
    for k in range(slots):
        counts = Counter(w[k] for s, _, _ in train for w in s)
        kept = sorted(v for v, c in counts.items() if c >= settings.min_count)
        vocab.append({PAD: 0, UNK: 1} | {v: i + 2 for i, v in enumerate(kept)})
    labels = sorted({lab for _, _, labs in train for lab in labs})
    label_id = {lab: i for i, lab in enumerate(labels)}
    model = _model(settings, [len(v) for v in vocab], len(labels)).to(device)
    parser = Parser(model, vocab, labels, device, {})
    optimizer = torch.optim.Adam(model.parameters(), lr=settings.lr, betas=(0.9, 0.9))
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
    history, best = [], None
    for epoch in range(1, settings.epochs + 1):
        model.train()
        total = words = 0
        for batch_ids in _batches([len(t[0]) for t in train], settings.batch_size, rng):
            batch = [train[i] for i in batch_ids]
            feats, mask = parser.encode([b[0] for b in batch])
            width = mask.shape[1]
            gold = torch.full((len(batch), width), -100, dtype=torch.long)
            gold_lab = torch.full((len(batch), width), -100, dtype=torch.long)
            for b, (_, heads, labs) in enumerate(batch):
                gold[b, : len(heads)] = torch.tensor(_targets(heads))
                gold_lab[b, : len(labs)] = torch.tensor([label_id[x] for x in labs])
            gold, gold_lab = gold.to(device), gold_lab.to(device)
            scores, ld, lh = model(feats, mask)
            scores = scores.masked_fill(~Parser.arc_mask(mask), -1e9)
            loss = loss_fn(scores.reshape(-1, width), gold.reshape(-1))  # -100: padding
            lab_logits = model.label_logits(ld, lh, gold.clamp(min=0))
            loss = loss + loss_fn(lab_logits.reshape(-1, len(labels)), gold_lab.reshape(-1))
            n = int(mask.sum())
            optimizer.zero_grad()
            (loss / n).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            total, words = total + loss.item(), words + n
        if not np.isfinite(total):
            raise ParserError(f"epoch {epoch}: the loss is not finite; lower lr")
        score = evaluate(parser, dev) if dev else {"uas": None, "las": None}
        history.append({"epoch": epoch, "loss": round(total / max(words, 1), 4), **score})
        log.info("parser epoch %d: loss %.4f dev %s", epoch, total / max(words, 1), score)
        if best is None or (score["las"] or 0) > best[0]:
            best = (
                score["las"] or 0,
                epoch,
                {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            )
    model.load_state_dict(best[2])
    dev_scores = evaluate(parser, dev) if dev else None
    baseline = (attachment([h for _, h, _ in dev], [lab for _, _, lab in dev],
                           right_branching([s for s, _, _ in dev]),
                           [lab for _, _, lab in dev]) if dev else None)  # fmt: skip
    info = {
        "fingerprint": fingerprint, "settings": asdict(settings), "slots": slots,
        "vocab": vocab, "labels": labels, "best_epoch": best[1], "history": history,
        "dev": dev_scores, "right_branching_dev_uas": baseline["uas"] if baseline else None,
        "train_sentences": len(train), "dev_sentences": len(dev), "device": device,
        "sources": sources or {},
    }  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in best[2].items()}, str(folder / "model.safetensors"))
    write_json(info, done)
    parser.info = info
    return info


def evaluate(parser: Parser, data: Sequence[tuple[Sentence, Sequence[int], Sequence[str]]]) -> dict:
    """UAS and LAS of ``parser`` on ``data``."""
    parsed = parser.parse([s for s, _, _ in data])
    return attachment([h for _, h, _ in data], [lab for _, _, lab in data],
                      [h for h, _ in parsed], [lab for _, lab in parsed])  # fmt: skip


def load_parser(folder: Path, device: str | None = None) -> Parser:
    """The parser saved in ``folder`` (``parser.json`` and ``model.safetensors``)."""
    from safetensors.torch import load_file

    from pipelines.models.checkpoints import default_device

    folder = Path(folder)
    config = folder / "parser.json"
    if not config.is_file() or not (folder / "model.safetensors").is_file():
        raise ParserError(f"{folder}: not a parser checkpoint (parser.json and "
                          "model.safetensors expected)")  # fmt: skip
    info = json.loads(config.read_text(encoding="utf-8"))
    settings = ParserSettings(**(info["settings"] | {"device": None}))
    device = device or default_device()
    model = _model(settings, [len(v) for v in info["vocab"]], len(info["labels"]))
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    return Parser(model.to(device), info["vocab"], info["labels"], device, info)
