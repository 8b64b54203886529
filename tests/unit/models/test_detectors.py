"""Issue 22: the collapse guard, early stopping with the best epoch kept, the precision
paths a GPU takes (run here on the CPU), the token-budget filter against a plain
per-text forward pass, and resumable MLM pretraining over every kind of source."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from conftest import TINY_DETECTOR, train
from test_ingest_flow import make_recipe

from pipelines.core.recipe import RecipeError, load_recipe
from pipelines.models.classifier import ClassifierError, SequenceClassifier, batch_probabilities
from pipelines.models.collapse import collapse_report
from pipelines.models.pretrain import PretrainError, pretrain, read_texts
from pipelines.models.token_batches import encode, pad, token_batches
from pipelines.models.train_classifier import (
    DEFAULT_DATA,
    TrainSettings,
    fine_tune,
    load_split,
    model_config,
    train_tokenizer,
)

ROOT = Path(__file__).resolve().parents[3]
UNLABELED = ROOT / "data/demo/korean-hate-speech/unlabeled/unlabeled_comments_5.head3000.txt"
NSMC = ROOT / "data/demo/nsmc/reviews.sample3000.jsonl.gz"


@pytest.fixture(scope="module")
def collapsed(tmp_path_factory):
    """TINY on 600 comments predicts 'False' for every dev comment (measured)."""
    out = tmp_path_factory.mktemp("collapsed") / "gender_bias"
    proc = train(out, "--task", "gender_bias", "--limit", "600", "--epochs", "2", *TINY_DETECTOR,
                 "--json")  # fmt: skip
    return out, proc


def test_a_collapse_is_reported_loudly_and_refused_by_the_filter(collapsed, tmp_path):
    out, proc = collapsed
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "collapsed" in proc.stderr and "'False'" in proc.stderr
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["collapse"]["collapsed"] and metrics["collapse"]["top_share"] >= 0.98
    assert metrics["collapse"]["never_predicted"] == ["True"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("# benchforge gender_bias detector\n\n> **WARNING: THIS DETECTOR")
    with pytest.raises(ClassifierError, match="collapsed in training"):
        SequenceClassifier(out)
    # a recipe naming it fails when it loads, naming the recipe key
    path = make_recipe(tmp_path, limit=20)
    recipe = yaml.safe_load(path.read_text(encoding="utf-8"))
    recipe["filters"]["classifiers"] = {"detectors": {"gender_bias": {"model": str(out)}}}
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    with pytest.raises(RecipeError, match="detectors.gender_bias.model: .*collapsed"):
        load_recipe(path)


def test_collapse_report_thresholds():
    labels = ["none", "offensive", "hate"]
    gold = [0, 1, 2, 0, 1, 2, 0, 0, 0, 0]
    assert collapse_report(np.zeros(10), gold, labels, 0.98)["collapsed"]
    mixed = collapse_report(np.array([0] * 9 + [1]), gold, labels, 0.98)
    assert not mixed["collapsed"] and mixed["never_predicted"] == ["hate"]
    assert mixed["summary"] == "90.0% of dev predictions are 'none'; never predicted: 'hate'"
    assert collapse_report(np.array([0] * 9 + [1]), gold, labels, 0.9)["collapsed"]


def test_early_stopping_keeps_the_best_epoch(tmp_path):
    args = ["--limit", "1500", "--epochs", "4", "--lr", "1e-3", "--layers", "1", "--hidden",
            "64", "--heads", "2", "--vocab-size", "800", "--patience", "1", "--json"]  # fmt: skip
    proc = train(tmp_path / "gb", "--task", "gender_bias", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads(proc.stdout)
    history = metrics["history"]
    scores = [row["dev_macro_f1"] for row in history]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    assert metrics["best_epoch"] == history[best]["epoch"]
    assert [row["best"] for row in history] == [i == best for i in range(len(history))]
    # patience 1: training stopped one epoch after the best, or ran out of epochs
    assert len(history) == min(4, best + 2) == metrics["epochs_run"]
    # the saved weights are the best epoch's: the saved model scores what that epoch did
    assert metrics["dev"]["macro_f1"] == pytest.approx(scores[best], abs=1e-4)
    assert all(set(row["dev_shares"]) == {"False", "True"} for row in history)
    card = (tmp_path / "gb" / "README.md").read_text(encoding="utf-8")
    assert f"the weights of epoch {metrics['best_epoch']} kept" in card


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_the_gpu_precision_paths_train_on_the_cpu(precision):
    """bf16 autocast and fp16 autocast with loss scaling, as a GPU runs them."""
    from transformers import BertForSequenceClassification

    texts, labels = load_split(DEFAULT_DATA / "train.tsv", "gender_bias")
    texts, y = texts[:256], [int(v == "True") for v in labels[:256]]
    settings = TrainSettings(
        vocab_size=500, hidden=32, layers=1, heads=2, intermediate=64, epochs=2,
        lr=1e-3, precision=precision, device="cpu",
    )  # fmt: skip
    tok = train_tokenizer(texts, settings.vocab_size)
    torch.manual_seed(0)
    model = BertForSequenceClassification(model_config(tok, ["False", "True"], settings))
    before = model.bert.embeddings.word_embeddings.weight.detach().clone()
    history = fine_tune(model, tok, texts, y, settings, (texts[:64], y[:64]))
    assert len(history) == 2 and all(np.isfinite(row["train_loss"]) for row in history)
    assert not torch.equal(before, model.bert.embeddings.word_embeddings.weight)
    assert model.bert.embeddings.word_embeddings.weight.dtype == torch.float32  # master weights


def test_token_batches_respect_the_budget_and_cover_every_row():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 129, 5000)
    for budget, rows in ((4096, None), (512, 16), (100, None)):
        batches = token_batches(lengths, budget, rows)
        seen = np.concatenate(batches)
        assert sorted(seen.tolist()) == list(range(5000))
        for b in batches:
            assert len(b) == 1 or len(b) * lengths[b].max() <= budget
            assert rows is None or len(b) <= rows
        # sorted by length: each batch's rows are no shorter than the previous batch's
        pairs = zip(batches, batches[1:], strict=False)
        assert all(lengths[a].max() <= lengths[b].min() for a, b in pairs)
    assert token_batches(np.array([300, 2]), 100)[0].tolist() == [1]  # too long: alone


def test_padding_matches_the_tokenizer(checkpoint):
    clf = SequenceClassifier(checkpoint[0])
    texts, _ = load_split(DEFAULT_DATA / "dev.tsv", "hate")
    encoded = encode(clf.tokenizer, texts[:50], 128, chunk=7)
    rows = np.array([3, 0, 49, 17])
    ids, mask = pad(encoded, rows, clf.tokenizer.pad_token_id)
    ref = clf.tokenizer([texts[i] for i in rows], padding=True, truncation=True, max_length=128)
    assert ids.tolist() == ref["input_ids"] and mask.tolist() == ref["attention_mask"]


def test_the_filter_equals_a_plain_forward_pass_per_text(checkpoint):
    """Token budgets, row caps and chunks change the batches, never the scores."""
    clf = SequenceClassifier(checkpoint[0])
    with gzip.open(NSMC, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["review"] for line in fh][:300]
    texts[5] = ""  # an empty text is scored too ([CLS] [SEP])
    ref = []
    with torch.inference_mode():
        for text in texts:
            enc = clf.tokenizer(text, truncation=True, max_length=128, return_tensors="pt")
            ref.append(torch.softmax(clf.model(**enc).logits, -1)[0].numpy())
    ref = np.array(ref)
    for budget, rows, chunk in ((8192, None, 200_000), (64, None, 7), (2048, 5, 100)):
        got = batch_probabilities(
            clf.model, clf.tokenizer, texts, rows, 128, batch_tokens=budget, chunk=chunk
        )
        np.testing.assert_allclose(got, ref, atol=2e-5)


def test_pretraining_reads_every_source_and_names_bad_lines(tmp_path):
    assert len(read_texts(UNLABELED)) == 3000
    nsmc = read_texts(NSMC)
    assert len(nsmc) > 2900 and all(t.strip() for t in nsmc)
    pd.DataFrame({"text": ["첫 문장입니다.", "두 번째 문장."]}).to_parquet(
        tmp_path / "sentences.parquet"
    )
    assert read_texts(tmp_path) == ["첫 문장입니다.", "두 번째 문장."]  # an ingest folder
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "좋다"}\n{"text": "나쁘\n{"id": 3}\n', encoding="utf-8")
    with pytest.raises(PretrainError, match="bad.jsonl:2: malformed JSON"):
        read_texts(bad)
    bad.write_text('{"text": "좋다"}\n{"id": 3}\n', encoding="utf-8")
    with pytest.raises(PretrainError, match="bad.jsonl:2: no text field"):
        read_texts(bad)
    with pytest.raises(PretrainError, match="without sentences.parquet"):
        read_texts(ROOT / "tests")


def _settings(**extra: object) -> TrainSettings:
    base = dict(vocab_size=600, hidden=32, layers=1, heads=2, intermediate=64, batch_size=32,
                pretrain_epochs=2, limit=1200, device="cpu")  # fmt: skip
    return TrainSettings(**{**base, **extra})


def test_pretraining_resumes_after_an_interrupted_epoch_and_matches_a_whole_run(
    tmp_path, monkeypatch
):
    whole = pretrain([UNLABELED], tmp_path / "whole", _settings())
    assert len(whole["epoch_loss"]) == 2 and whole["epoch_loss"][1] < whole["epoch_loss"][0]
    assert whole["throughput"]["tokens_per_second"] > 0 and whole["tokens"] > 1200
    assert list((tmp_path / "whole" / ".cache").glob("tokens-*.npz"))
    assert not (tmp_path / "whole" / "resume.pt").exists()  # removed when finished

    import pipelines.models.pretrain as module

    real, calls = module.masked_loss, {"n": 0}
    per_epoch = -(-1200 // 32)  # batches of one epoch

    def crash_in_epoch_two(*args: object) -> object:
        calls["n"] += 1
        if calls["n"] > per_epoch + 3:
            raise KeyboardInterrupt("simulated crash in epoch 2")
        return real(*args)

    monkeypatch.setattr(module, "masked_loss", crash_in_epoch_two)
    with pytest.raises(KeyboardInterrupt):
        pretrain([UNLABELED], tmp_path / "resumed", _settings())
    assert (tmp_path / "resumed" / "resume.pt").is_file()
    assert not (tmp_path / "resumed" / "pretrain.json").exists()  # not done: no summary
    with pytest.raises(PretrainError, match="other batch_size"):
        pretrain([UNLABELED], tmp_path / "resumed", _settings(batch_size=16))
    monkeypatch.setattr(module, "masked_loss", real)
    resumed = pretrain([UNLABELED], tmp_path / "resumed", _settings())
    assert resumed["epoch_loss"] == whole["epoch_loss"]  # epoch 1 was not run again
    from safetensors.torch import load_file

    a = load_file(tmp_path / "whole" / "model.safetensors")
    b = load_file(tmp_path / "resumed" / "model.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a)  # bit for bit the uninterrupted run

    again = pretrain([UNLABELED], tmp_path / "whole", _settings())
    assert again["cached"] and again["epoch_loss"] == whole["epoch_loss"]
    with pytest.raises(PretrainError, match="other texts or settings"):
        pretrain([UNLABELED], tmp_path / "whole", _settings(pretrain_epochs=3))
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "classifiers", "pretrain", "--texts", str(UNLABELED),
         "--out", str(tmp_path / "whole"), "--epochs", "3", "--limit", "1200"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 2 and "--restart" in proc.stderr
