"""A tiny causal language model made here (no model hub), for running exported
lm-evaluation-harness tasks: a BPE tokenizer trained on the release's texts and a
one-layer GPT-2 with random weights. Its answers are noise; what the tests check is that
``lm_eval`` loads the task, builds every request and scores it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def tiny_lm(folder: Path, texts: list[str]) -> Path:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from pipelines.models.classifier_data import train_tokenizer

    tok = train_tokenizer(texts, 800)
    tok.eos_token, tok.bos_token = "[SEP]", "[CLS]"
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(
        vocab_size=len(tok), n_positions=1024, n_embd=32, n_layer=1, n_head=2,
        eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id,
        pad_token_id=tok.pad_token_id,
    ))  # fmt: skip
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def release_texts(dataset: Path) -> list[str]:
    """Every string value of the release's JSON Lines files (the tokenizer's texts)."""
    out: list[str] = []
    for path in sorted(dataset.glob("*.json*")):
        if path.name in ("card.json", "manifest.json", "release_manifest.json"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip().startswith("{"):
                out += [v for v in json.loads(line).values() if isinstance(v, str)]
    return out


def run_lm_eval(model: Path, task: str, include: Path, out: Path) -> dict:
    """``lm_eval --model hf ... --tasks TASK --include_path INCLUDE``; its results."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}  # fmt: skip
    got = subprocess.run(
        [str(Path(sys.executable).with_name("lm_eval")), "--model", "hf", "--model_args",
         f"pretrained={model}", "--tasks", task, "--include_path", str(include), "--device",
         "cpu", "--batch_size", "8", "--output_path", str(out)],
        capture_output=True, text=True, timeout=600, env=env, cwd=out.parent,
    )  # fmt: skip
    assert got.returncode == 0, got.stdout[-3000:] + got.stderr[-3000:]
    results = sorted(out.rglob("results_*.json"))
    assert results, got.stdout[-2000:]
    return json.loads(results[-1].read_text(encoding="utf-8"))
