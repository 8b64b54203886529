"""Build tiny Marian and M2M100 translation checkpoints (model + sentencepiece vocabulary) locally.

No model hub is reachable here, so the tests make their own checkpoints: a sentencepiece
model trained on the sentences at hand, a Marian vocabulary over its pieces, and a small
Marian model trained for a few seconds until it reproduces the given translations. It is
saved as an ordinary transformers checkpoint directory, which ``TransformersTranslator``
loads and runs with the same code as a real opus-mt checkpoint.
"""

from __future__ import annotations

import json
from pathlib import Path

KO_EN = [
    ("오늘 날씨가 정말 좋네요.", "The weather is really nice today."),
    ("이 영화는 배우들의 연기가 훌륭했다.", "The actors in this movie were excellent."),
    ("불 좀 꺼 줄래?", "Could you turn off the light?"),
    ("내일 아침 일곱 시에 알람 맞춰 줘.", "Set an alarm for seven tomorrow morning."),
    ("배송이 너무 늦어서 화가 났어요.", "I was angry because the delivery was so late."),
]

# Back translations chosen to exercise every RTT check: a paraphrase (kept), the source
# itself (identical), a different sentence (drift), a runaway repetition (length ratio),
# and another paraphrase (kept).
EN_KO = [
    ("The weather is really nice today.", "오늘은 날씨가 참 좋네요."),
    ("The actors in this movie were excellent.", "이 영화는 배우들의 연기가 훌륭했다."),
    ("Could you turn off the light?", "고양이가 지붕 위에서 잠을 잔다."),
    (
        "Set an alarm for seven tomorrow morning.",
        "내일 아침 일곱 시에 알람 맞춰 줘. 내일 아침 일곱 시에 알람 맞춰 줘. "
        "내일 아침 일곱 시에 알람.",
    ),
    ("I was angry because the delivery was so late.", "배송이 너무 늦어서 정말 화가 났어요."),
]


# The shape of every tiny model (Marian and M2M100 configs share these field names).
TINY_SIZE = {
    "d_model": 64,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 4,
    "decoder_attention_heads": 4,
    "encoder_ffn_dim": 128,
    "decoder_ffn_dim": 128,
    "max_position_embeddings": 128,
}


def build_tiny_marian(out: Path, pairs: list[tuple[str, str]], steps: int = 400) -> Path:
    """Train and save a tiny Marian checkpoint that translates ``pairs`` (source, target)."""
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    out.mkdir(parents=True, exist_ok=True)
    vocab = _sentencepiece(out, "spm", [s for pair in pairs for s in pair], ["</s>", "<unk>"])
    vocab["<pad>"] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(
        source_spm=str(out / "spm.model"),
        target_spm=str(out / "spm.model"),
        vocab=str(out / "vocab.json"),
    )
    config = MarianConfig(
        vocab_size=len(vocab),
        **TINY_SIZE,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=vocab["</s>"],
    )
    torch.manual_seed(0)
    model = MarianMTModel(config)
    batch = tokenizer(
        [s for s, _ in pairs], text_target=[t for _, t in pairs], return_tensors="pt", padding=True
    )
    batch["labels"][batch["labels"] == tokenizer.pad_token_id] = -100
    _train(model, [dict(batch)], steps)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for name in ("spm.model", "spm.vocab"):
        (out / name).unlink(missing_ok=True)
    return out


SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]


def _sentencepiece(
    out: Path, prefix: str, sentences: list[str], specials: list[str]
) -> dict[str, int]:
    """A small sentencepiece vocabulary (the MT trainer's, 150 pieces)."""
    from pipelines.models.train_mt import train_sentencepiece

    return train_sentencepiece(out, prefix, sentences, specials, 150)


def _train(model, batches: list[dict], steps: int) -> None:
    """Fit ``model`` to the batches until it reproduces them: every target token is the
    most likely one given the right prefix (what greedy decoding then writes), checked
    every 10 steps without dropout; or until the loss is below 0.02."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        total = 0.0
        for batch in batches:
            loss = model(**batch).loss
            loss.backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        if total / len(batches) < 0.02 or (step % 10 == 9 and _reproduces(model, batches)):
            break
    model.eval()


def _reproduces(model, batches: list[dict]) -> bool:
    import torch

    model.eval()
    with torch.no_grad():
        ok = all(
            bool((model(**b).logits.argmax(-1) == b["labels"])[b["labels"] != -100].all())
            for b in batches
        )
    model.train()
    return ok


def build_tiny_multilingual(
    out: Path,
    ko_en: list[tuple[str, str]],
    en_ko: list[tuple[str, str]],
    flavor: str = "m2m100",
) -> Path:
    """Train and save a tiny multilingual checkpoint (``m2m100`` or ``nllb``) that
    translates both ways.

    As in the real M2M100 and NLLB, the source language is a token of the encoder input
    and the target language is forced as the first generated token;
    ``TransformersTranslator`` must set both for the translations to come out right.
    """
    import torch
    from transformers import (
        M2M100Config,
        M2M100ForConditionalGeneration,
        M2M100Tokenizer,
        NllbTokenizer,
    )

    out.mkdir(parents=True, exist_ok=True)
    sentences = [s for pair in ko_en + en_ko for s in pair]
    if flavor == "m2m100":
        vocab = _sentencepiece(out, "sentencepiece.bpe", sentences, SPECIALS)
        (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
        tokenizer = M2M100Tokenizer(
            vocab_file=str(out / "vocab.json"), spm_file=str(out / "sentencepiece.bpe.model")
        )
        codes = {"ko": "ko", "en": "en"}
        # the language tokens follow the vocabulary (len(tokenizer) leaves them out)
        size = max(tokenizer.lang_code_to_id.values()) + 1 + tokenizer.num_madeup_words
    else:  # NLLB: a byte-pair tokenizer, here with single characters and no merges
        vocab = {tok: i for i, tok in enumerate(SPECIALS)}
        for ch in sorted({c for s in sentences for c in s.replace(" ", "\u2581")} | {"\u2581"}):
            vocab.setdefault(ch, len(vocab))
        tokenizer = NllbTokenizer(vocab=vocab, merges=[])
        codes = {"ko": "kor_Hang", "en": "eng_Latn"}
        size = len(tokenizer)
    config = M2M100Config(
        vocab_size=size,
        **TINY_SIZE,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=0,
        decoder_start_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = M2M100ForConditionalGeneration(config)
    batches = []
    for (src, tgt), pairs in ((("ko", "en"), ko_en), (("en", "ko"), en_ko)):
        tokenizer.src_lang, tokenizer.tgt_lang = codes[src], codes[tgt]
        enc = tokenizer(
            [s for s, _ in pairs],
            text_target=[t for _, t in pairs],
            return_tensors="pt",
            padding=True,
        )
        enc["labels"][enc["labels"] == tokenizer.pad_token_id] = -100
        batches.append(dict(enc))
    _train(model, batches, steps=600)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
