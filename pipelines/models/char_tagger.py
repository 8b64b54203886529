"""A character-level named-entity tagger: the pseudo-labeller of KLUE-NER (KLUE 3.4.1,
"we pseudo-label the sentences with a NER model trained on the existing corpora", there
the KMOU corpus; issue 36, item 2).

Contract:

- **Input**: sentences as ``(text, spans)`` with spans ``(start, end exclusive,
  TYPE)`` over characters (:func:`pipelines.families.klue.kmou.read_kmou` gives them).
  Every character is a token (spaces included), tagged BIO: ``B-TYPE`` on an entity's
  first character, ``I-TYPE`` on the others, ``O`` elsewhere.
- **Model**: a transformers token classifier (``BertForTokenClassification``) built from
  a small config and trained here from scratch (nothing is downloaded), over a
  character vocabulary of the training texts (``[PAD]``, ``[UNK]``, then every character
  seen ``min_char_count`` times). Texts longer than ``max_length`` are tagged in
  windows.
- **Decoder**: a constrained BIO Viterbi over the per-character log-probabilities:
  ``I-X`` may follow only ``B-X`` or ``I-X`` and cannot start a text, so every decoded
  sequence is a valid span set (:func:`viterbi_bio`).
- **Scores** on the dev set: entity-level precision, recall and F1 (micro, with
  seqeval), per type, and KLUE 3.4.2's character-level macro F1: the average of the
  class-wise F1 over the classes ``B-X`` and ``I-X`` of every type the tagger tags (12
  for KLUE's six), ``O`` excluded (:func:`char_macro_f1`, the same figure as the
  release's ``char_macro_f1`` metric; :func:`scores`).
- **Training**: AdamW with warm-up and cosine decay, gradient clipping, bf16 autocast
  on a GPU that has it (``pipelines.models.precision``), length-bucketed batches, a
  progress bar. Resumable by epoch: after each epoch ``resume.pt`` holds the model,
  optimiser and random state; a rerun with the same data and settings continues after
  the last finished epoch. The weights of the best dev epoch are saved.
- **Checkpoint**: ``save_pretrained`` output, ``chars.json`` (the vocabulary),
  ``metrics.json`` (settings, history, dev scores) and ``MODEL_CARD.md``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field
from tqdm.auto import tqdm

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import write_json, write_text
from pipelines.core.settings import AtLeastOne, Seed, Share

log = logging.getLogger(__name__)

TYPES = ("PS", "LC", "OG", "DT", "TI", "QT")  # KLUE 3.4.1's six entity types
PAD, UNK = "[PAD]", "[UNK]"
Span = tuple[int, int, str]


class TaggerError(BenchforgeError, ValueError):
    """Unusable tagger input or checkpoint; the message names the file and the problem."""


@dataclass
class TaggerSettings:
    """The tagger's size and training (defaults: a small model that trains on a CPU in
    minutes; a GPU run can afford more layers and epochs). Each number has its range
    (checked by ``typed_rules`` at recipe load, issue 51: ``epochs: -1`` or ``lr: .nan``
    trained a degenerate tagger), and ``hidden`` is a multiple of ``heads`` (the
    attention splits it evenly)."""

    hidden: AtLeastOne = 128
    layers: AtLeastOne = 2
    heads: AtLeastOne = 4
    intermediate: AtLeastOne = 256
    max_length: Annotated[int, Field(ge=8)] = 256  # characters per window
    epochs: AtLeastOne = 4
    batch_size: AtLeastOne = 32
    lr: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)] = 1e-3
    weight_decay: Share = 0.01
    warmup: Share = 0.1
    dropout: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = 0.1
    min_char_count: AtLeastOne = 1
    seed: Seed = 0
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"  # precision.PRECISIONS
    device: str | None = None  # None: cuda when present

    def __post_init__(self) -> None:
        """The ranges hold however the settings are made (a recipe, the CLI's options):
        ``TaggerError`` names the setting."""
        from pydantic import ValidationError

        from pipelines.core.recipe import problems
        from pipelines.core.settings import options_model

        try:
            options_model(TaggerSettings).model_validate(asdict(self))
        except ValidationError as exc:
            raise TaggerError(f"tagger settings: {problems(exc)}") from None
        if self.hidden % self.heads:
            raise TaggerError(
                f"hidden {self.hidden} is not a multiple of heads {self.heads}: the "
                "attention splits the hidden size evenly over the heads"
            )


def label_names(types: Sequence[str] = TYPES) -> list[str]:
    return ["O"] + [f"{p}-{t}" for t in types for p in ("B", "I")]


def bio_tags(length: int, spans: Sequence[Span]) -> list[str]:
    """One BIO tag per character of a text of ``length`` characters."""
    tags = ["O"] * length
    for start, end, label in spans:
        tags[start] = f"B-{label}"
        for i in range(start + 1, end):
            tags[i] = f"I-{label}"
    return tags


def spans_of_tags(tags: Sequence[str]) -> list[Span]:
    """The spans of a BIO sequence (an ``I-X`` that does not continue an ``X`` span
    starts one, as seqeval's default mode reads it)."""
    out: list[Span] = []
    start, label = None, None
    for i, tag in enumerate([*tags, "O"]):
        kind, _, typ = tag.partition("-")
        if kind == "I" and label == typ:
            continue
        if label is not None:
            out.append((start, i, label))
            start, label = None, None
        if kind in ("B", "I"):
            start, label = i, typ
    return out


def allowed_transitions(labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(from x to -> allowed, start -> allowed) of the BIO scheme over ``labels``."""
    n = len(labels)
    trans = np.ones((n, n), dtype=bool)
    start = np.ones(n, dtype=bool)
    for j, to in enumerate(labels):
        if to.startswith("I-"):
            typ = to[2:]
            start[j] = False
            for i, frm in enumerate(labels):
                trans[i, j] = frm in (f"B-{typ}", f"I-{typ}")
    return trans, start


def viterbi_bio(logp: np.ndarray, labels: Sequence[str]) -> list[str]:
    """The most probable tag sequence under the BIO constraints (see the module)."""
    trans, start = allowed_transitions(labels)
    penalty = np.where(trans, 0.0, -np.inf)
    length = logp.shape[0]
    if length == 0:
        return []
    score = np.where(start, logp[0], -np.inf)
    back = np.zeros((length, len(labels)), dtype=np.int64)
    for t in range(1, length):
        cand = score[:, None] + penalty  # from x to
        back[t] = cand.argmax(axis=0)
        score = cand.max(axis=0) + logp[t]
    best = [int(score.argmax())]
    for t in range(length - 1, 0, -1):
        best.append(int(back[t, best[-1]]))
    return [labels[i] for i in reversed(best)]


def char_classes(types: Sequence[str] = TYPES) -> list[str]:
    """KLUE 3.4.2's character-level classes: ``B-X`` and ``I-X`` of every type, ``O``
    left out ("the classes are B-PS, I-PS, B-LC, I-LC, B-OG, I-OG, B-DT, I-DT, B-TI,
    I-TI, B-QT, and I-QT. We exclude the majority negative entity class (O)")."""
    return [f"{p}-{t}" for t in types for p in ("B", "I")]


def char_f1_by_class(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], types: Sequence[str] = TYPES
) -> dict[str, float]:
    """Each class's F1 over every character (:func:`char_classes`; ``2 tp / (2 tp + fp
    + fn)``). A class neither the gold nor the prediction has scores 1, as KLUE's
    released scoring script scores it (scikit-learn's ``zero_division=1``)."""
    g = [t for s in gold for t in s]
    p = [t for s in pred for t in s]
    if len(g) != len(p):
        raise ValueError(f"{len(g)} gold tags against {len(p)} predicted")
    out = {}
    for name in char_classes(types):
        tp = sum(a == name and b == name for a, b in zip(g, p, strict=True))
        fp = sum(a != name and b == name for a, b in zip(g, p, strict=True))
        fn = sum(a == name and b != name for a, b in zip(g, p, strict=True))
        out[name] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0
    return out


def char_macro_f1(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], types: Sequence[str] = TYPES
) -> float:
    """KLUE 3.4.2's character-level macro F1 (0-1): "an average of class-wise
    F1-scores" over the ``B-``/``I-`` classes of ``types``, ``O`` excluded."""
    return float(np.mean(list(char_f1_by_class(gold, pred, types).values())))


def scores(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], types: Sequence[str] = TYPES
) -> dict:
    """Entity-level micro P/R/F1 and per type (seqeval), and KLUE 3.4.2's
    character-level macro F1 over the ``B-``/``I-`` classes of ``types``
    (:func:`char_macro_f1`, ``O`` excluded)."""
    from seqeval.metrics import classification_report, f1_score, precision_score, recall_score

    gold, pred = [list(g) for g in gold], [list(p) for p in pred]
    report = classification_report(gold, pred, output_dict=True, zero_division=0)
    per_type = {
        k: {"precision": round(v["precision"], 4), "recall": round(v["recall"], 4),
            "f1": round(v["f1-score"], 4), "support": int(v["support"])}
        for k, v in sorted(report.items()) if not k.endswith(" avg")
    }  # fmt: skip
    return {
        "entity_precision": round(float(precision_score(gold, pred, zero_division=0)), 4),
        "entity_recall": round(float(recall_score(gold, pred, zero_division=0)), 4),
        "entity_f1": round(float(f1_score(gold, pred, zero_division=0)), 4),
        "char_macro_f1": round(char_macro_f1(gold, pred, types), 4) if gold else None,
        "per_type": per_type,
        "sentences": len(gold),
    }


def _fingerprint(
    train: Sequence[tuple[str, Sequence[Span]]], settings: TaggerSettings, types: Sequence[str]
) -> str:
    h = hashlib.sha256(json.dumps(list(types)).encode())
    for text, spans in train:
        h.update(json.dumps([text, sorted(map(list, spans))], ensure_ascii=False).encode())
    fields = {k: v for k, v in asdict(settings).items() if k not in ("device", "precision")}
    h.update(json.dumps(fields, sort_keys=True).encode())
    return h.hexdigest()


class CharTagger:
    """A trained tagger: model, character vocabulary, labels and device."""

    def __init__(self, model: Any, chars: dict[str, int], device: str) -> None:
        self.model, self.chars, self.device = model, chars, device
        self.labels = [model.config.id2label[i] for i in range(model.config.num_labels)]
        self.max_length = int(model.config.max_position_embeddings)

    def ids(self, text: str) -> list[int]:
        unk = self.chars[UNK]
        return [self.chars.get(c, unk) for c in text]

    def log_probs(self, texts: Sequence[str], batch_size: int = 64) -> list[np.ndarray]:
        """Per-character log-probabilities of every text (windows of ``max_length``)."""
        import torch

        windows = [(i, s) for i, t in enumerate(texts)
                   for s in range(0, max(1, len(t)), self.max_length)]  # fmt: skip
        parts: dict[tuple[int, int], np.ndarray] = {}
        order = sorted(range(len(windows)), key=lambda k: -len(texts[windows[k][0]]))
        self.model.eval()
        with torch.inference_mode():
            for at in range(0, len(order), batch_size):
                chunk = [windows[k] for k in order[at : at + batch_size]]
                seqs = [self.ids(texts[i][s : s + self.max_length]) for i, s in chunk]
                width = max(1, max(len(x) for x in seqs))
                ids = np.zeros((len(seqs), width), dtype=np.int64)
                mask = np.zeros((len(seqs), width), dtype=np.int64)
                for r, x in enumerate(seqs):
                    ids[r, : len(x)], mask[r, : len(x)] = x, 1
                logits = self.model(
                    input_ids=torch.from_numpy(ids).to(self.device),
                    attention_mask=torch.from_numpy(mask).to(self.device),
                ).logits
                logp = torch.log_softmax(logits.float(), dim=-1).cpu().numpy()
                for r, (key, x) in enumerate(zip(chunk, seqs, strict=True)):
                    parts[key] = logp[r, : len(x)]
        out = []
        for i, text in enumerate(texts):
            blocks = [parts[(i, s)] for s in range(0, max(1, len(text)), self.max_length)]
            out.append(np.concatenate(blocks)[: len(text)])
        return out

    def tag(self, texts: Sequence[str], progress: bool | None = None) -> list[list[str]]:
        """Constrained-BIO tags of every text."""
        out = []
        step = 512
        bar = tqdm(total=len(texts), desc="pseudo-label", unit="sentence", disable=progress)
        for at in range(0, len(texts), step):
            chunk = list(texts[at : at + step])
            out.extend(viterbi_bio(lp, self.labels) for lp in self.log_probs(chunk))
            bar.update(len(chunk))
        bar.close()
        return out

    def spans(self, texts: Sequence[str], progress: bool | None = None) -> list[list[Span]]:
        return [spans_of_tags(t) for t in self.tag(texts, progress)]

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(folder)
        write_json(self.chars, folder / "chars.json")


def saved_metrics(folder: Path) -> dict:
    """The metrics a trained tagger's folder holds (``{"dev": None}`` for a checkpoint
    saved without them)."""
    path = Path(folder) / "metrics.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"dev": None}


def load_tagger(folder: Path, device: str | None = None) -> CharTagger:
    """A tagger saved by :func:`train_tagger` (its folder)."""
    from transformers import BertForTokenClassification

    from pipelines.models.checkpoints import default_device

    folder = Path(folder)
    if not (folder / "config.json").is_file() or not (folder / "chars.json").is_file():
        raise TaggerError(f"{folder}: not a character tagger (needs config.json and chars.json)")
    device = device or default_device()
    model = BertForTokenClassification.from_pretrained(folder, local_files_only=True).to(device)
    chars = json.loads((folder / "chars.json").read_text(encoding="utf-8"))
    return CharTagger(model, chars, device)


def _vocabulary(texts: Sequence[str], min_count: int) -> dict[str, int]:
    counts = Counter(c for t in texts for c in t)
    chars = {PAD: 0, UNK: 1}
    for c, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if n >= min_count:
            chars[c] = len(chars)
    return chars


def _examples(
    tagger: CharTagger, data: Sequence[tuple[str, Sequence[Span]]], where: str
) -> list[tuple[list[int], list[int]]]:
    """(char ids, label ids) per window of every sentence."""
    index = {lab: i for i, lab in enumerate(tagger.labels)}
    types = {lab[2:] for lab in tagger.labels if lab != "O"}
    out = []
    for n, (text, spans) in enumerate(data, start=1):
        for start, end, label in spans:
            if label not in types or not 0 <= start < end <= len(text):
                raise TaggerError(f"{where}: sentence {n}: span {start}-{end} {label!r} "
                                  f"is outside the text or of an unknown type")  # fmt: skip
        tags = [index[t] for t in bio_tags(len(text), spans)]
        ids = tagger.ids(text)
        for s in range(0, len(text), tagger.max_length):
            out.append((ids[s : s + tagger.max_length], tags[s : s + tagger.max_length]))
    return out


def train_tagger(
    train: Sequence[tuple[str, Sequence[Span]]],
    dev: Sequence[tuple[str, Sequence[Span]]],
    settings: TaggerSettings,
    folder: Path,
    sources: dict | None = None,
    types: Sequence[str] = TYPES,
) -> dict:
    """Train (or resume, or reuse when finished) a tagger into ``folder``; returns its
    metrics (also ``folder/metrics.json``). ``types``: the entity types it tags (KLUE's
    six by default; KLUE-RE's schema for its taggers)."""
    import torch
    from transformers import BertConfig, BertForTokenClassification

    from pipelines.models.checkpoints import default_device
    from pipelines.models.classifier_data import shuffled_length_batches
    from pipelines.models.precision import Stepper, resolve_precision

    if not train:
        raise TaggerError("no training sentences")
    folder = Path(folder)
    fingerprint = _fingerprint(train, settings, types)
    done = folder / "metrics.json"
    if done.is_file():
        metrics = json.loads(done.read_text(encoding="utf-8"))
        if metrics.get("fingerprint") == fingerprint:
            log.info("tagger in %s is trained on these data and settings: reused", folder)
            return metrics
    torch.manual_seed(settings.seed)
    device = settings.device or default_device()
    labels = label_names(types)
    chars = _vocabulary([t for t, _ in train], settings.min_char_count)
    config = BertConfig(
        vocab_size=len(chars), hidden_size=settings.hidden, num_hidden_layers=settings.layers,
        num_attention_heads=settings.heads, intermediate_size=settings.intermediate,
        max_position_embeddings=settings.max_length, hidden_dropout_prob=settings.dropout,
        attention_probs_dropout_prob=settings.dropout, pad_token_id=0, type_vocab_size=1,
        num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={lab: i for i, lab in enumerate(labels)},
    )  # fmt: skip
    model = BertForTokenClassification(config).to(device)
    tagger = CharTagger(model, chars, device)
    examples = _examples(tagger, train, "train")
    lengths = [len(x) for x, _ in examples]
    steps = math.ceil(len(examples) / settings.batch_size) * settings.epochs
    precision = resolve_precision(settings.precision, device)
    stepper = Stepper(model, settings.lr, settings.weight_decay, steps, settings.warmup,
                      device, precision)  # fmt: skip
    rng = np.random.default_rng(settings.seed)
    history: list[dict] = []
    best: tuple[float, int, dict] | None = None
    resume = folder / "resume.pt"
    first = 1
    if resume.is_file():
        state = torch.load(resume, map_location=device, weights_only=False)
        if state.get("fingerprint") == fingerprint:
            model.load_state_dict(state["model"])
            stepper.load_state_dict(state["stepper"])
            rng.bit_generator.state = state["rng"]
            history, first = state["history"], state["epoch"] + 1
            if state.get("best") is not None:
                best = state["best"]
            log.info("tagger: resuming after epoch %d", state["epoch"])
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    gold_dev = [bio_tags(len(t), s) for t, s in dev]
    for epoch in range(first, settings.epochs + 1):
        model.train()
        batches = shuffled_length_batches(lengths, settings.batch_size, rng)
        bar = tqdm(batches, desc=f"tagger epoch {epoch}/{settings.epochs}", unit="batch",
                   disable=None)  # fmt: skip
        total = torch.zeros((), device=device)
        for step, rows in enumerate(bar, start=1):
            width = max(lengths[r] for r in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            tags = np.full((len(rows), width), -100, dtype=np.int64)
            for k, r in enumerate(rows):
                x, y = examples[r]
                ids[k, : len(x)], tags[k, : len(y)] = x, y
            ids_t = torch.from_numpy(ids).to(device)
            with stepper.autocast():
                logits = model(input_ids=ids_t, attention_mask=(ids_t != 0).long()).logits
            loss = loss_fn(logits.float().reshape(-1, len(labels)),
                           torch.from_numpy(tags).to(device).reshape(-1))  # fmt: skip
            total += stepper.step(loss)
            if step % 20 == 0:
                bar.set_postfix(loss=f"{total.item() / step:.3f}")
        row: dict = {"epoch": epoch, "train_loss": round(total.item() / max(1, len(batches)), 4)}
        if dev:
            pred = tagger.tag([t for t, _ in dev], progress=True)
            dev_scores = scores(gold_dev, pred, types)
            row.update(dev_entity_f1=dev_scores["entity_f1"],
                       dev_char_macro_f1=dev_scores["char_macro_f1"])  # fmt: skip
            if best is None or dev_scores["entity_f1"] > best[0]:
                weights = {k: v.detach().to("cpu", copy=True)
                           for k, v in model.state_dict().items()}  # fmt: skip
                best = (dev_scores["entity_f1"], epoch, weights)
        history.append(row)
        log.info("tagger epoch %d: %s", epoch, row)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = resume.with_suffix(".tmp")
        torch.save({"fingerprint": fingerprint, "model": model.state_dict(), "epoch": epoch,
                    "stepper": stepper.state_dict(), "rng": rng.bit_generator.state,
                    "history": history, "best": best}, tmp)  # fmt: skip
        tmp.replace(resume)
    if best is not None:
        model.load_state_dict(best[2])
    final = scores(gold_dev, tagger.tag([t for t, _ in dev], progress=True), types) if dev else None
    tagger.save(folder)
    metrics = {
        "fingerprint": fingerprint,
        "settings": asdict(settings),
        "device": device,
        "precision": precision,
        "labels": labels,
        "types": list(types),
        "characters": len(chars),
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "train_sentences": len(train),
        "train_entities": int(sum(len(s) for _, s in train)),
        "dev_sentences": len(dev),
        "dev_entities": int(sum(len(s) for _, s in dev)),
        "history": [{k: v for k, v in r.items()} for r in history],
        "best_epoch": best[1] if best else settings.epochs,
        "dev": final,
        "sources": sources or {},
    }
    write_text(model_card(metrics), folder / "MODEL_CARD.md")
    write_json(metrics, done)
    resume.unlink(missing_ok=True)
    return metrics


def model_card(m: dict) -> str:
    """The tagger's model card: what it was trained on, how, and its dev scores."""
    s, dev = m["settings"], m.get("dev") or {}
    src = m.get("sources") or {}
    lines = [
        "# Character-level NER tagger (KLUE-NER pseudo-labeller)",
        "",
        "A `BertForTokenClassification` over characters, trained from scratch by benchforge "
        "(`pipelines/models/char_tagger.py`), decoded with a constrained BIO Viterbi. It "
        "pseudo-labels sentences for the KLUE-NER correction round (KLUE 3.4.1).",
        "",
        "## Training data",
        "",
        f"- train: {m['train_sentences']:,} sentences, {m['train_entities']:,} entities"
        + (f" ({src['train']})" if src.get("train") else ""),
        f"- dev: {m['dev_sentences']:,} sentences, {m['dev_entities']:,} entities"
        + (f" ({src['dev']})" if src.get("dev") else ""),
    ]
    if src.get("licence"):
        lines.append(f"- licence of the training data: {src['licence']}")
    if src.get("mapping"):
        lines.append(f"- type mapping: {src['mapping']}")
    lines += [
        "",
        "## Model and training",
        "",
        f"- {s['layers']} layers, hidden {s['hidden']}, {s['heads']} heads, "
        f"{m['parameters']:,} parameters, {m['characters']:,} characters in the vocabulary",
        f"- {s['epochs']} epochs, batch {s['batch_size']}, lr {s['lr']}, seed {s['seed']}, "
        f"on {m['device']} ({m['precision']}); best dev epoch {m['best_epoch']}",
        "",
        "| epoch | train loss | dev entity F1 | dev char macro F1 |",
        "|---|---|---|---|",
    ]
    for r in m["history"]:
        lines.append(f"| {r['epoch']} | {r['train_loss']} | {r.get('dev_entity_f1', '-')} | "
                     f"{r.get('dev_char_macro_f1', '-')} |")  # fmt: skip
    if dev:
        lines += [
            "",
            "## Dev scores (best epoch)",
            "",
            f"Entity-level (seqeval, micro): precision {dev['entity_precision']}, recall "
            f"{dev['entity_recall']}, **F1 {dev['entity_f1']}**; character-level macro F1 "
            f"**{dev['char_macro_f1']}** (KLUE 3.4.2: the class-wise F1 of every B- and I- "
            "class averaged, O excluded).",
            "",
            "| type | precision | recall | F1 | support |",
            "|---|---|---|---|---|",
        ]
        for typ, v in dev["per_type"].items():
            lines.append(f"| {typ} | {v['precision']} | {v['recall']} | {v['f1']} | "
                         f"{v['support']} |")  # fmt: skip
    lines += ["", "A pseudo-label is a draft for annotators to correct, never a gold label.", ""]
    return "\n".join(lines)
