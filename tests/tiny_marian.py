"""Build a tiny Marian translation checkpoint (model + sentencepiece vocabulary) locally.

No model hub is reachable here, so the tests make their own checkpoint: a sentencepiece
model trained on a few Korean and English sentences, a Marian vocabulary over its pieces,
and a randomly initialised two-layer Marian model, saved as an ordinary transformers
checkpoint directory that ``TransformersTranslator`` loads like a real one.
"""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = [
    "오늘 날씨가 정말 좋네요.",
    "이 영화는 배우들의 연기가 훌륭했다.",
    "불 좀 꺼 줄래?",
    "내일 아침 일곱 시에 알람 맞춰 줘.",
    "The weather is really nice today.",
    "The actors in this movie were excellent.",
    "Could you turn off the light?",
    "Set an alarm for seven tomorrow morning.",
]


def build_tiny_marian(out: Path, seed: int = 0) -> Path:
    """Write a tiny Marian checkpoint directory to ``out`` and return it."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    out.mkdir(parents=True, exist_ok=True)
    text = out / "spm_corpus.txt"
    text.write_text("\n".join(CORPUS * 4) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text),
        model_prefix=str(out / "spm"),
        vocab_size=80,
        character_coverage=1.0,
        model_type="unigram",
        bos_id=-1,
        eos_id=-1,
        unk_id=0,
        minloglevel=2,
    )
    text.unlink()
    proc = spm.SentencePieceProcessor(model_file=str(out / "spm.model"))
    pieces = [proc.id_to_piece(i) for i in range(proc.get_piece_size())]
    vocab = {"</s>": 0, "<unk>": 1}
    for piece in pieces:
        vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    tokenizer = MarianTokenizer(
        source_spm=str(out / "spm.model"),
        target_spm=str(out / "spm.model"),
        vocab=str(out / "vocab.json"),
        source_lang="ko",
        target_lang="en",
    )
    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=128,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["</s>"],
        decoder_start_token_id=vocab["<pad>"],
        forced_eos_token_id=vocab["</s>"],
    )
    torch.manual_seed(seed)
    model = MarianMTModel(config)
    model.generation_config.max_length = 32
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for name in ("spm.model", "spm.vocab", "vocab.json"):
        if name != "vocab.json" and (out / name).exists():
            (out / name).unlink()
    return out
