"""The baseline of an extractive QA release (JSQuAD, KLUE-MRC): a reader.

A small BERT with a start/end head (``BertForQuestionAnswering``) reads ``[CLS]
question [SEP] paragraph [SEP]`` (the paragraph cut at ``max_length`` tokens) and is
trained to point at the first accepted answer's tokens, found from its character offset
(``answers.answer_start``); an unanswerable question, or an answer cut off, points at
``[CLS]``. A prediction is the best span of at most ``MAX_ANSWER`` tokens inside the
paragraph, or the empty answer when ``[CLS]`` scores higher (SQuAD 2.0's null answer,
KLUE-MRC's unanswerable questions). The epoch with the best dev figure is kept.
"""

from __future__ import annotations

import logging

import numpy as np

from pipelines.evaluation.fitters import BaselineSettings, register_fitter
from pipelines.evaluation.spec import Evaluation

log = logging.getLogger(__name__)

MAX_ANSWER = 30  # tokens
QA_LENGTH = 384  # question and paragraph, in tokens (SQuAD's usual window)


def _target(record: dict, offsets: list, sequence_ids: list) -> tuple[int, int]:
    """The answer's first and last token (0, 0: no answer in the window)."""
    answers = record.get("answers") or {}
    texts, starts = answers.get("text") or [], answers.get("answer_start") or []
    if record.get("is_impossible") or not texts or not starts:
        return 0, 0
    a, b = int(starts[0]), int(starts[0]) + len(str(texts[0]))
    first = last = None
    for i, ((s, e), seq) in enumerate(zip(offsets, sequence_ids, strict=True)):
        if seq != 1:
            continue
        if first is None and s <= a < e:
            first = i
        if s < b <= e:
            last = i
    if first is None or last is None or last < first:
        return 0, 0
    return first, last


def _encode(tokenizer: object, records: list[dict], ev: Evaluation) -> dict:
    enc = tokenizer(  # type: ignore[operator]
        [str(ev.text(r)) for r in records], [str(ev.text_pair(r)) for r in records],
        truncation="only_second", max_length=QA_LENGTH, return_offsets_mapping=True,
        padding=True,
    )  # fmt: skip
    seq_ids = [enc.sequence_ids(i) for i in range(len(records))]
    return {"enc": enc, "seq": seq_ids}


def _predict(model: object, data: dict, records: list[dict], ev: Evaluation) -> list[str]:
    import torch

    enc, seq = data["enc"], data["seq"]
    out: list[str] = []
    model.eval()  # type: ignore[attr-defined]
    with torch.inference_mode():
        for at in range(0, len(records), 16):
            ids = torch.tensor(enc["input_ids"][at : at + 16], device=model.device)  # type: ignore[attr-defined]
            mask = torch.tensor(enc["attention_mask"][at : at + 16], device=model.device)  # type: ignore[attr-defined]
            res = model(input_ids=ids, attention_mask=mask)  # type: ignore[operator]
            starts, ends = (
                res.start_logits.float().cpu().numpy(),
                res.end_logits.float().cpu().numpy(),
            )
            for k in range(len(ids)):
                i = at + k
                ctx = [j for j, s in enumerate(seq[i]) if s == 1]
                best, span = starts[k, 0] + ends[k, 0], None  # the null answer
                for s in ctx:
                    for e in ctx:
                        if s <= e < s + MAX_ANSWER and starts[k, s] + ends[k, e] > best:
                            best, span = starts[k, s] + ends[k, e], (s, e)
                if span is None:
                    out.append("")
                    continue
                offsets = enc["offset_mapping"][i]
                context = str(ev.text_pair(records[i]))
                out.append(context[offsets[span[0]][0] : offsets[span[1]][1]].strip())
    return out


@register_fitter("answer")
def fit_answers(ev: Evaluation, data: dict[str, list[dict]], settings: BaselineSettings
                ) -> tuple[dict, list[dict]]:  # fmt: skip
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForQuestionAnswering

    from pipelines.evaluation.evaluate import score
    from pipelines.models.checkpoints import default_device
    from pipelines.models.train_classifier import train_tokenizer

    device = settings.device or default_device()
    torch.manual_seed(settings.seed)
    train = data["train"]
    if settings.encoder:
        tokenizer = AutoTokenizer.from_pretrained(settings.encoder, local_files_only=True)
        model = BertForQuestionAnswering.from_pretrained(settings.encoder,
                                                         local_files_only=True)  # fmt: skip
    else:
        texts = [str(ev.text(r)) for r in train] + [str(ev.text_pair(r)) for r in train]
        tokenizer = train_tokenizer(texts, settings.vocab_size)
        model = BertForQuestionAnswering(BertConfig(
            vocab_size=len(tokenizer), hidden_size=settings.hidden,
            num_hidden_layers=settings.layers, num_attention_heads=settings.heads,
            intermediate_size=settings.intermediate, max_position_embeddings=QA_LENGTH,
            pad_token_id=tokenizer.pad_token_id,
        ))  # fmt: skip
    model.to(device)
    encoded = {s: _encode(tokenizer, data[s], ev) for s in ("train", "dev", "test") if data[s]}
    tr = encoded["train"]
    targets = np.asarray([_target(r, tr["enc"]["offset_mapping"][i], tr["seq"][i])
                          for i, r in enumerate(train)])  # fmt: skip
    ids = torch.tensor(tr["enc"]["input_ids"])
    mask = torch.tensor(tr["enc"]["attention_mask"])
    optim = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=0.01)
    rng = np.random.default_rng(settings.seed)
    history, best = [], None
    first = ev.metrics[0]
    for epoch in range(1, settings.epochs + 1):
        model.train()
        total = 0.0
        order = rng.permutation(len(train))
        for at in range(0, len(order), settings.batch_size):
            rows = order[at : at + settings.batch_size]
            res = model(input_ids=ids[rows].to(device), attention_mask=mask[rows].to(device),
                        start_positions=torch.tensor(targets[rows, 0], device=device),
                        end_positions=torch.tensor(targets[rows, 1], device=device))  # fmt: skip
            optim.zero_grad()
            res.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            total += float(res.loss) * len(rows)
        row = {"epoch": epoch, "train_loss": round(total / max(1, len(train)), 4)}
        if data["dev"]:
            pred = _predict(model, encoded["dev"], data["dev"], ev)
            figure = score(ev, [ev.gold(r) for r in data["dev"]], pred)[first] or 0.0
            row[f"dev_{first}"] = figure
            if best is None or figure > best[0]:
                best = (
                    figure,
                    epoch,
                    {k: v.detach().clone() for k, v in model.state_dict().items()},
                )
        history.append(row)
        log.info("reader epoch %d: %s", epoch, row)
        if best and settings.patience and epoch - best[1] >= settings.patience:
            break
    if best is not None:
        model.load_state_dict(best[2])
    out = {s: [{"prediction": p} for p in _predict(model, encoded[s], data[s], ev)]
           if data[s] else [] for s in ("dev", "test")}  # fmt: skip
    return out, history
