"""Detectors: `benchforge classifiers train` on the shipped Korean HateSpeech data (tiny
settings), the scorer, the toxic-content filter stage, and the ingest flow running it."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import train
from test_ingest_flow import ingest, make_recipe

from pipelines.models.classifier import ClassifierError, SequenceClassifier
from pipelines.quality.settings import ClassifierSettings
from pipelines.quality.toxic import filter_toxic, skip_reasons

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--epochs", "2", "--layers", "1", "--hidden", "32", "--heads", "2", "--vocab-size", "800"]


def test_training_writes_a_checkpoint_with_its_model_card(checkpoint):
    out, metrics = checkpoint
    for name in ("config.json", "model.safetensors", "tokenizer.json", "README.md", "metrics.json"):
        assert (out / name).is_file()
    config = json.loads((out / "config.json").read_text())
    assert config["id2label"] == {"0": "False", "1": "True"}
    assert metrics["dev"]["examples"] == 471 and metrics["train"]["examples"] == 2000
    assert metrics["dev"]["macro_f1"] > 0.6 and not metrics["collapse"]["collapsed"]
    assert set(metrics["dev"]["per_class_f1"]) == {"False", "True"}
    assert sum(metrics["dev"]["positive_score_histogram"].values()) == 471
    card = (out / "README.md").read_text()
    assert str(metrics["dev"]["macro_f1"]) in card and "Korean HateSpeech" in card


def test_bad_training_data_names_file_and_row(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    header = "comments\tcontain_gender_bias\tbias\thate\n"
    (data / "train.tsv").write_text(header + "좋은 글이네요\tFalse\tnone\tnone\n", "utf-8")
    (data / "dev.tsv").write_text(header + "좋아요\tmaybe\tnone\tnone\n", "utf-8")
    proc = train(tmp_path / "o", "--task", "gender_bias", "--data", str(data), *TINY)
    assert proc.returncode == 2
    assert "dev.tsv:2: label 'maybe'" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_scores_come_back_in_input_order(checkpoint):
    texts = [
        "정말 좋은 영화",
        "여자는 집에서 밥이나 해라",
        "ㅋㅋ",
        "이 배우 연기 최고다 진짜로 대박",
        "ok",
    ]
    one = SequenceClassifier(checkpoint[0], batch_size=1).predict_proba(texts)
    many = SequenceClassifier(checkpoint[0], batch_size=3).predict_proba(texts)
    np.testing.assert_allclose(one, many, atol=1e-5)
    np.testing.assert_allclose(one.sum(axis=1), 1.0, atol=1e-5)


def _sentences() -> pd.DataFrame:
    texts = [
        "여자는 집에서 밥이나 해라",
        "정말 좋은 영화였다",
        "남자들이란 다 똑같지",
        "배우 연기 최고",
    ]
    return pd.DataFrame(
        {
            "sent_id": [f"s{i}" for i in range(6)],
            "corpus": ["c1", "c1", "c2", "c2", "news", "news"],
            "style": ["colloquial"] * 4 + ["formal"] * 2,
            "text": texts + ["대통령 오늘 담화 발표", "국회 본회의 개최"],
        }
    )


def test_filter_drops_over_threshold_and_skips_formal(checkpoint):
    path = checkpoint[0]
    sentences = _sentences()
    base = {"detectors": {"gender_bias": {"model": str(path)}}}
    scores = SequenceClassifier(path).predict_proba(sentences["text"].tolist()[:4])[:, 1]
    cut = float(np.sort(scores)[2])  # two of the four colloquial sentences reach it
    settings = ClassifierSettings.model_validate(
        {**base, "detectors": {"gender_bias": {"model": str(path), "threshold": cut}}}
    )
    result = filter_toxic(sentences, settings, {"gender_bias": SequenceClassifier(path)},
                          skips={"news": "publisher YNA"})  # fmt: skip
    assert set(result.dropped["sent_id"]) == set(sentences["sent_id"][:4][scores >= cut])
    assert (result.dropped["reason"] == "gender_bias").all()
    assert result.dropped["detail"].str.startswith("gender_bias 0.").all()
    kept = result.kept.set_index("sent_id")
    assert kept.loc[["s4", "s5"], "score_gender_bias"].isna().all()  # YNA: not scored

    # per-corpus override: c2 skipped, c1 with a threshold of 0 drops everything
    settings = ClassifierSettings.model_validate(
        {
            **base,
            "corpora": {"c1": {"thresholds": {"gender_bias": 0.0}},
                        "c2": {"skip": True, "reason": "test"}},
        }
    )  # fmt: skip
    result = filter_toxic(sentences, settings, {"gender_bias": SequenceClassifier(path)},
                          skips={"c2": "test"})  # fmt: skip
    assert sorted(result.dropped["sent_id"]) == ["s0", "s1"]
    assert result.rows_in == 6 and len(result.kept) == 4


def test_toxic_filter_skips_klue_2_3s_three_publishers_not_every_formal_corpus(checkpoint):
    """KLUE 2.3 did not run the detectors on The Korea Economy Daily, ACROFAN and YNA;
    the other formal corpora (Wikitree, policy news, Wikipedia, WikiNews) were filtered.
    A corpus is skipped by its ``publisher`` (case-insensitively), not by its style."""
    path = checkpoint[0]
    settings = ClassifierSettings.model_validate(
        {"detectors": {"gender_bias": {"model": str(path), "threshold": 0.0}}}
    )
    assert settings.skip_publishers == ["The Korea Economy Daily", "ACROFAN", "YNA"]
    assert settings.skip_styles == []
    sentences = _sentences().assign(
        corpus=["c1", "c1", "c2", "c2", "wikitree", "acrofan"]
    )  # s4 Wikitree (formal), s5 ACROFAN (formal)
    recipe = SimpleNamespace(
        corpora=[SimpleNamespace(name=n, publisher=p, style=st) for n, p, st in (
            ("c1", None, "colloquial"), ("c2", None, "colloquial"),
            ("wikitree", "Wikitree", "formal"), ("acrofan", "acrofan", "formal"))],
        corpus_language=lambda corpus: "ko",
    )  # fmt: skip
    skips = skip_reasons(settings, recipe)
    assert list(skips) == ["acrofan"] and "KLUE 2.3" in skips["acrofan"]
    result = filter_toxic(sentences, settings, {"gender_bias": SequenceClassifier(path)},
                          skips=skips)  # fmt: skip
    # threshold 0: every scored sentence is dropped; ACROFAN's is kept unscored
    assert sorted(result.dropped["sent_id"]) == ["s0", "s1", "s2", "s3", "s4"]
    assert result.kept["sent_id"].tolist() == ["s5"]
    assert result.kept["score_gender_bias"].isna().all()
    # skip_styles still skips a style when a recipe asks for it
    formal = settings.model_copy(update={"skip_styles": ["formal"]})
    assert skip_reasons(formal, recipe).keys() == {"wikitree", "acrofan"}
    result = filter_toxic(sentences, formal, {"gender_bias": SequenceClassifier(path)},
                          skips=skips)  # fmt: skip
    assert sorted(result.kept["sent_id"]) == ["s4", "s5"]


def test_label_mapping_and_unknown_labels(checkpoint):
    path = checkpoint[0]
    mapped = SequenceClassifier(path, label_map={"True": "biased", "False": "fine"})
    assert mapped.labels == ["fine", "biased"]
    with pytest.raises(ClassifierError, match="no label \\['hate'\\]"):
        SequenceClassifier(path).label_index(["hate"])
    with pytest.raises(ClassifierError, match="not a checkpoint directory"):
        SequenceClassifier(path.parent / "missing")


def test_ingest_flow_runs_the_filter_after_the_rule_filters(checkpoint, tmp_path):
    recipe_path = make_recipe(tmp_path, limit=60)
    recipe = yaml.safe_load(recipe_path.read_text(encoding="utf-8"))
    recipe["filters"]["classifiers"] = {
        "detectors": {"gender_bias": {"model": str(checkpoint[0]), "threshold": 0.0}},
        "corpora": {"nsmc": {"skip": True, "reason": "a test"}},
    }
    recipe_path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    proc = ingest(recipe_path, tmp_path / "out", tmp_path / "prefect")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    stages = {s["stage"]: s for s in report["stats"]["stages"]}
    assert stages["classify"]["in"] == stages["dedup"]["kept"]
    dropped = stages["classify"]["corpora"]
    # threshold 0 drops every scored sentence: every corpus but nsmc (skipped)
    for corpus in ("parakqc", "khs-comments", "khs-news-titles"):
        assert dropped[corpus]["kept"] == 0 and dropped[corpus]["dropped"] == {
            "gender_bias": dropped[corpus]["in"]
        }
    assert dropped["nsmc"]["kept"] == dropped["nsmc"]["in"]
    # khs-news-titles is formal, with no publisher of KLUE 2.3's skip list: filtered too
    sentences = pd.read_parquet(tmp_path / "out" / "sentences.parquet")
    assert "score_gender_bias" in sentences and sentences["score_gender_bias"].isna().all()
    rejects = pd.read_parquet(tmp_path / "out" / "rejects.parquet")
    assert (rejects["reason"] == "gender_bias").sum() == sum(
        d["dropped"].get("gender_bias", 0) for d in dropped.values()
    )
    assert report["tasks"]["classify"] == {"cached": 0, "computed": 1}

    # the recipe's publisher reaches the filter: a corpus published by one of KLUE 2.3's
    # three (here the comments, relabelled for the test) is no longer scored, and the
    # changed publisher changes the step's cache key (computed again, not reused)
    for corpus in recipe["corpora"]:
        if corpus["name"] == "khs-comments":
            corpus["publisher"] = "YNA"
    recipe_path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    proc = ingest(recipe_path, tmp_path / "out", tmp_path / "prefect")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    stages = {s["stage"]: s for s in report["stats"]["stages"]}
    comments = stages["classify"]["corpora"]["khs-comments"]
    assert comments["kept"] == comments["in"] > 0
    assert report["tasks"]["classify"] == {"cached": 0, "computed": 1}


def test_mlm_pretraining_on_unlabeled_comments(tmp_path):
    unlabeled = ROOT / "data/demo/korean-hate-speech/unlabeled/unlabeled_comments_5.head3000.txt"
    proc = train(
        tmp_path / "hate",
        "--task",
        "hate",
        "--limit",
        "300",
        *TINY,
        "--pretrain-texts",
        str(unlabeled),
        "--pretrain-epochs",
        "1",
        "--json",
    )
    # 300 comments and one epoch are too few to learn hate: a collapse (status 3) is fine
    assert proc.returncode in (0, 3), proc.stderr[-3000:]
    metrics = json.loads(proc.stdout)
    assert metrics["settings"]["pretrain_epochs"] == 1
    assert metrics["settings"]["pretrain_texts"] == [str(unlabeled)]
    assert set(metrics["dev"]["per_class_f1"]) == {"none", "offensive", "hate"}
    card = (tmp_path / "hate" / "README.md").read_text(encoding="utf-8")
    assert "MLM pretraining epochs: 1" in card and "unlabeled_comments_5" in card


def test_missing_detector_checkpoint_fails_before_any_work(tmp_path):
    recipe_path = make_recipe(tmp_path, limit=20)
    recipe = yaml.safe_load(recipe_path.read_text(encoding="utf-8"))
    recipe["filters"]["classifiers"] = {"detectors": {"hate": {"model": str(tmp_path / "nope")}}}
    recipe_path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    proc = ingest(recipe_path, tmp_path / "out", tmp_path / "prefect")
    assert proc.returncode == 2
    assert "detectors.hate.model" in proc.stderr and "not a checkpoint directory" in proc.stderr
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_pretrained_encoder_is_reused_by_train(tmp_path):
    unlabeled = ROOT / "data/demo/korean-hate-speech/unlabeled/unlabeled_comments_5.txt.gz"
    cmd = [sys.executable, "-m", "flows.cli", "classifiers", "pretrain", "--texts"]
    size = ["--layers", "1", "--hidden", "32", "--heads", "2", "--vocab-size", "800"]
    proc = subprocess.run(
        [*cmd, str(unlabeled), "--out", str(tmp_path / "enc"), "--epochs", "2", "--limit",
         "1500", *size, "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout)
    assert info["texts"] == 1500 and len(info["epoch_loss"]) == 2
    assert info["epoch_loss"][1] < info["epoch_loss"][0]  # the MLM loss goes down
    encoder = json.loads((tmp_path / "enc" / "config.json").read_text())
    proc = train(
        tmp_path / "hate", "--task", "hate", "--limit", "300", "--epochs", "1",
        "--lr", "1e-12", "--encoder", str(tmp_path / "enc"), "--json",
    )  # fmt: skip
    assert proc.returncode in (0, 3), proc.stderr[-3000:]  # lr 1e-12 may well collapse
    metrics = json.loads(proc.stdout)
    config = json.loads((tmp_path / "hate" / "config.json").read_text())
    assert config["hidden_size"] == encoder["hidden_size"] == 32
    assert config["id2label"] == {"0": "none", "1": "offensive", "2": "hate"}
    assert metrics["settings"]["encoder"] == str(tmp_path / "enc")
    # the encoder's weights were loaded, not re-initialised (lr 1e-12: they stay put)
    import torch
    from safetensors.torch import load_file

    enc = load_file(tmp_path / "enc" / "model.safetensors")
    tuned = load_file(tmp_path / "hate" / "model.safetensors")
    for name in (
        "bert.embeddings.word_embeddings.weight",
        "bert.encoder.layer.0.output.dense.weight",
    ):
        assert torch.allclose(enc[name], tuned[name], atol=1e-6), name
    missing = train(tmp_path / "x", "--task", "hate", "--encoder", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "nope" in missing.stderr
    _baseline_takes_the_projects_encoder(tmp_path, tmp_path / "enc")


def _baseline_takes_the_projects_encoder(tmp_path: Path, folder: Path) -> None:
    """Issue 39: ``benchforge baseline`` fine-tunes the project's pretrained encoder when
    one is present ($BENCHFORGE_HOME/models/encoder-<language>) instead of training one."""
    import os
    import shutil

    from pipelines.evaluation.baseline import BaselineSettings, baseline

    home = tmp_path / "home"
    shutil.copytree(folder, home / "models" / "encoder-ko")
    run = tmp_path / "release"
    (run / "dataset").mkdir(parents=True)
    card = {"task_kind": "kobest-sentineg", "recipe": {"language": "ko"}}
    (run / "dataset" / "card.json").write_text(json.dumps(card), encoding="utf-8")
    texts = ["정말 좋은 영화였다", "최악의 영화였다", "배우 연기가 훌륭하다", "지루하고 별로다"]
    for split, n in (("train", 24), ("dev", 8), ("test", 8)):
        rows = [{"sentence": texts[i % 4], "label": int(i % 2 == 0)} for i in range(n)]
        (run / "dataset" / f"{split}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    saved = os.environ.get("BENCHFORGE_HOME")
    os.environ["BENCHFORGE_HOME"] = str(home)
    try:
        result = baseline(run, BaselineSettings(epochs=1), write_card=False)
    finally:
        if saved is None:
            os.environ.pop("BENCHFORGE_HOME")
        else:
            os.environ["BENCHFORGE_HOME"] = saved
    assert result["model"].endswith("encoder encoder-ko")
    assert result["settings"]["encoder"] == str(home / "models" / "encoder-ko")
    assert set(result["splits"]) == {"dev", "test"}
    assert result["splits"]["test"]["metrics"]["macro_f1"] is not None


def test_tokenizer_is_identical_on_every_run():
    """tokenizers' WordPiece trainer is not (huggingface/tokenizers#1794); ours must be,
    or a seeded training is not reproducible."""
    from pipelines.models.train_classifier import DEFAULT_DATA, load_split, train_tokenizer

    texts, _ = load_split(DEFAULT_DATA / "train.tsv", "hate")
    vocabs, encodings = [], []
    for _ in range(3):
        tok = train_tokenizer(texts[:3000], 3000)
        vocabs.append(tok.get_vocab())
        encodings.append([tok(t)["input_ids"] for t in texts[3000:3200]])
    assert vocabs[0] == vocabs[1] == vocabs[2] and len(vocabs[0]) == 3000
    assert encodings[0] == encodings[1] == encodings[2]
    # word boundaries survive: decoding gives the normalised text back
    sample = texts[3000]
    ids = tok(sample, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == unicodedata.normalize("NFKC", " ".join(sample.split()))


def test_the_demo_ingest_runs_the_built_in_detectors_by_default(tmp_path):
    """No detector named, no manual step: the built-in detectors (trained on first use
    into the data folder) drop toxic comments with reasons and scores, and the news
    headlines the recipe skips stay unscored with the recipe's reason in the stats."""
    recipe_path = make_recipe(tmp_path, limit=300)
    proc = ingest(recipe_path, tmp_path / "out", tmp_path / "prefect")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    stages = {s["stage"]: s for s in report["stats"]["stages"]}
    classify = stages["classify"]
    assert classify["in"] == classify["kept"] + classify["dropped_total"]
    comments = classify["corpora"]["khs-comments"]["dropped"]
    assert comments.get("gender_bias", 0) + comments.get("hate", 0) > 0  # hate-speech comments
    ran = report["stats"]["classify"]
    assert sorted(ran["detectors"]) == ["gender_bias", "hate"]
    assert list(ran["skipped_corpora"]) == ["khs-news-titles"]
    assert "KLUE 2.3" in ran["skipped_corpora"]["khs-news-titles"]
    rejects = pd.read_parquet(tmp_path / "out" / "rejects.parquet")
    toxic = rejects[rejects["stage"] == "classify"]
    assert (
        set(toxic["reason"]) <= {"gender_bias", "hate"} and len(toxic) == classify["dropped_total"]
    )
    assert toxic["detail"].str.fullmatch(r"(gender_bias|hate) \d\.\d{3}(; hate \d\.\d{3})?").all()
    sentences = pd.read_parquet(tmp_path / "out" / "sentences.parquet")
    news = sentences[sentences["corpus"] == "khs-news-titles"]
    assert len(news) and news["score_hate"].isna().all()
    scored = sentences[sentences["corpus"] != "khs-news-titles"]
    assert (scored["score_gender_bias"] < 0.5).all() and (scored["score_hate"] < 0.9).all()
