"""The character tagger (pipelines/models/char_tagger.py): the constrained BIO decoder
against brute force, spans against seqeval, the scores against seqeval and by hand, and
a tiny model trained on the CPU on real KMOU sentences: saved, loaded, reused and
resumed after an interruption."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import f1_score
from seqeval.metrics.sequence_labeling import get_entities

from pipelines.families.klue.kmou import read_kmou
from pipelines.models import char_tagger
from pipelines.models.char_tagger import (
    TaggerSettings,
    allowed_transitions,
    bio_tags,
    label_names,
    load_tagger,
    scores,
    spans_of_tags,
    train_tagger,
    viterbi_bio,
)

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "data" / "demo" / "kmou-ner"


def _valid(tags: list[str]) -> bool:
    prev = "O"
    for t in tags:
        if t.startswith("I-") and prev[2:] != t[2:]:
            return False
        prev = t
    return True


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_viterbi_finds_the_best_valid_sequence(length, seed):
    """The decoded sequence is valid BIO and no valid sequence scores higher (brute
    force over every sequence of two types' five labels)."""
    labels = label_names(("PS", "LC"))
    logp = np.log(np.random.default_rng(seed).dirichlet(np.ones(len(labels)), size=length))
    got = viterbi_bio(logp, labels)
    assert _valid(got)
    index = {lab: i for i, lab in enumerate(labels)}
    best = max(
        sum(logp[t, index[lab]] for t, lab in enumerate(seq))
        for seq in itertools.product(labels, repeat=length)
        if _valid(list(seq))
    )
    assert sum(logp[t, index[lab]] for t, lab in enumerate(got)) == pytest.approx(best)


def test_an_i_tag_cannot_start_or_follow_another_type():
    labels = label_names()
    trans, start = allowed_transitions(labels)
    i_ps, b_ps, b_lc = labels.index("I-PS"), labels.index("B-PS"), labels.index("B-LC")
    assert not start[i_ps] and start[b_ps]
    assert trans[b_ps, i_ps] and not trans[b_lc, i_ps] and not trans[labels.index("O"), i_ps]
    # argmax would say I-PS first: the decoder starts the span with B-PS instead
    logp = np.full((2, len(labels)), -10.0)
    logp[0, i_ps], logp[0, b_ps], logp[1, i_ps] = -0.1, -1.0, -0.1
    assert viterbi_bio(logp, labels) == ["B-PS", "I-PS"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["O", "B-PS", "I-PS", "B-LC", "I-LC"]), max_size=12))
def test_spans_of_tags_are_seqevals_entities(tags):
    ours = spans_of_tags(tags)
    theirs = sorted((s, e + 1, t) for t, s, e in get_entities(tags))
    assert sorted(ours) == theirs
    if _valid(tags):
        assert bio_tags(len(tags), ours) == tags


def test_scores_entity_f1_is_seqevals_and_char_f1_is_klues_12_class_macro():
    gold = [["B-PS", "I-PS", "O", "B-LC"], ["B-DT", "O"]]
    pred = [["B-PS", "I-PS", "O", "B-OG"], ["B-DT", "I-DT"]]
    s = scores(gold, pred)
    assert s["entity_f1"] == pytest.approx(f1_score(gold, pred), abs=1e-4)
    assert s["entity_f1"] == pytest.approx(1 / 3, abs=1e-4)  # PS right; LC, DT wrong
    # KLUE 3.4.2: the 12 classes B-/I- of the six types, O excluded: B-PS 1, I-PS 1,
    # B-LC 0 (missed), B-OG 0 (false), B-DT 1, I-DT 0 (false); I-LC, I-OG, B-TI, I-TI,
    # B-QT, I-QT on neither side score 1 (KLUE's released script) -> 9 / 12
    assert s["char_macro_f1"] == pytest.approx(9 / 12, abs=1e-4)
    assert s["per_type"]["PS"]["f1"] == 1.0 and s["per_type"]["LC"]["support"] == 1
    # the same figure as the release's metric (benchforge evaluate), on the same tags
    from pipelines.evaluation.metrics import char_macro_f1

    assert 100 * s["char_macro_f1"] == pytest.approx(char_macro_f1(gold, pred), abs=1e-2)
    # a tagger of other types (KLUE-RE's) averages over B-/I- of its own types
    re_scores = scores([["B-PER", "I-PER", "O"]], [["B-PER", "O", "O"]],
                       types=("PER", "ORG"))  # fmt: skip
    assert re_scores["char_macro_f1"] == pytest.approx((1 + 0 + 1 + 1) / 4, abs=1e-4)


def _pairs(frame):
    return [(t, [(e["start"], e["end"], e["label"]) for e in es])
            for t, es in zip(frame["text"], frame["entities"], strict=True)]  # fmt: skip


TINY = TaggerSettings(hidden=32, layers=1, heads=2, intermediate=64, max_length=64,
                      epochs=2, batch_size=16, lr=3e-3)  # fmt: skip


@pytest.fixture(scope="module")
def kmou():
    frame, dropped, _ = read_kmou(DEMO / "ner.dev.head60")
    assert dropped.empty and len(frame) == 60
    data = _pairs(frame)
    return data[:45], data[45:]


def test_a_tiny_tagger_trains_saves_loads_and_is_reused(kmou, tmp_path):
    train, dev = kmou
    metrics = train_tagger(train, dev, TINY, tmp_path / "t", {"train": "head45"})
    assert [r["epoch"] for r in metrics["history"]] == [1, 2]
    assert metrics["dev"]["sentences"] == 15 and 0 <= metrics["dev"]["entity_f1"] <= 1
    card = (tmp_path / "t" / "MODEL_CARD.md").read_text(encoding="utf-8")
    assert f"**F1 {metrics['dev']['entity_f1']}**" in card and "head45" in card
    assert not (tmp_path / "t" / "resume.pt").exists()
    tagger = load_tagger(tmp_path / "t", "cpu")
    texts = [t for t, _ in dev] + ["", "x" * 150]  # empty, and longer than one window
    tags = tagger.tag(texts, progress=True)
    assert [len(t) for t in tags] == [len(t) for t in texts] and all(map(_valid, tags))
    # the same data and settings: reused, not trained again
    before = (tmp_path / "t" / "model.safetensors").stat().st_mtime_ns
    again = train_tagger(train, dev, TINY, tmp_path / "t")
    assert again == metrics
    assert (tmp_path / "t" / "model.safetensors").stat().st_mtime_ns == before


def test_an_interrupted_training_resumes_after_its_last_epoch(kmou, tmp_path, monkeypatch):
    train, dev = kmou
    calls = {"n": 0}
    real = char_tagger.CharTagger.tag

    def interrupted(self, texts, progress=None):
        calls["n"] += 1
        if calls["n"] == 2:  # the dev scores of epoch 2: killed before it ends
            raise KeyboardInterrupt
        return real(self, texts, progress)

    monkeypatch.setattr(char_tagger.CharTagger, "tag", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train_tagger(train, dev, TINY, tmp_path / "t")
    assert (tmp_path / "t" / "resume.pt").is_file()
    monkeypatch.setattr(char_tagger.CharTagger, "tag", real)
    first = json.loads(json.dumps(_history_of(tmp_path / "t")))
    from pipelines.models import precision

    steps = {"n": 0}
    real_step = precision.Stepper.step

    def counted(self, loss):
        steps["n"] += 1
        return real_step(self, loss)

    monkeypatch.setattr(precision.Stepper, "step", counted)
    metrics = train_tagger(train, dev, TINY, tmp_path / "t")
    assert metrics["history"][0] == first[0] and len(metrics["history"]) == 2
    # only epoch 2 was trained: one epoch's batches (windows of 64 characters, batch 16)
    windows = sum(-(-len(t) // 64) for t, _ in train)
    assert steps["n"] == -(-windows // 16)


def _history_of(folder: Path) -> list[dict]:
    import torch

    return torch.load(folder / "resume.pt", weights_only=False)["history"]


def test_a_span_outside_its_text_is_an_error_naming_the_sentence(tmp_path):
    with pytest.raises(char_tagger.TaggerError, match="sentence 2: span 3-9"):
        train_tagger([("abc", []), ("abcd", [(3, 9, "PS")])], [], TINY, tmp_path / "t")
