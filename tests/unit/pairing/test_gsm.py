"""GSM (KLUE Algorithm 1) against a naive GSM scored by rouge-score and a brute force."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from rouge_score import rouge_scorer

from pipelines.lang.ko import morphemes
from pipelines.pairing.gsm import greedy_sentence_matching

ROOT = Path(__file__).resolve().parents[3]
SEP = "\x1f"


class _Pretokenized:
    """rouge-score tokenizer for text that is already morphemes joined by SEP."""

    def tokenize(self, text: str) -> list[str]:
        return text.split(SEP) if text else []


def _draws(count: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).permutation(count)


def reference_gsm(tokens, metric, seed):
    """Algorithm 1 as written, scored with rouge-score: N^2/4 calls."""
    scorer = rouge_scorer.RougeScorer([metric], tokenizer=_Pretokenized())
    texts = [SEP.join(t) for t in tokens]
    alive = set(range(len(tokens)))
    pairs = []
    for s in _draws(len(tokens), seed):
        s = int(s)
        if s not in alive or len(alive) < 2:
            continue
        alive.discard(s)
        best, best_t = None, None
        for t in sorted(alive):
            f = scorer.score(texts[s], texts[t])[metric].fmeasure
            key = round(f, 10)  # rouge-score's 2PR/(P+R) can be an ulp off for equal ratios
            if best is None or key > best:
                best, best_t, best_f = key, t, f
        alive.discard(best_t)
        pairs.append((s, best_t, best_f))
    return pairs, (next(iter(alive)) if alive else None)


def _lcs(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            up, left = table[i][j + 1], table[i + 1][j]
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(up, left)
    return table[-1][-1]


def _exact_score(a, b, metric):
    if metric == "rougeL":
        overlap, sa, sb = _lcs(a, b), len(a), len(b)
    else:
        n = int(metric[-1])
        ga = Counter(tuple(a[k : k + n]) for k in range(len(a) - n + 1))
        gb = Counter(tuple(b[k : k + n]) for k in range(len(b) - n + 1))
        overlap, sa, sb = sum((ga & gb).values()), sum(ga.values()), sum(gb.values())
    return Fraction(2 * overlap, sa + sb) if overlap else Fraction(0)


def brute_force_gsm(tokens, metric, seed):
    """Algorithm 1 with exact rational scores from a textbook LCS / n-gram count."""
    alive = set(range(len(tokens)))
    pairs = []
    for s in _draws(len(tokens), seed):
        s = int(s)
        if s not in alive or len(alive) < 2:
            continue
        alive.discard(s)
        best_t = max(sorted(alive), key=lambda t: (_exact_score(tokens[s], tokens[t], metric), -t))
        alive.discard(best_t)
        pairs.append((s, best_t, float(_exact_score(tokens[s], tokens[best_t], metric))))
    return pairs, (next(iter(alive)) if alive else None)


def _as_pairs(result):
    return [
        (int(a), int(b), float(f))
        for a, b, f in zip(result.first, result.second, result.score, strict=True)
    ]


def _assert_same(result, expected):
    pairs, leftover = expected
    got = _as_pairs(result)
    assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in pairs]
    np.testing.assert_allclose([f for *_, f in got], [f for *_, f in pairs], rtol=0, atol=1e-12)
    assert result.leftover == leftover


def _random_tokens(rng, count, vocab=12, max_len=10):
    words = [f"w{k}" for k in range(vocab)]
    out = []
    for _ in range(count):
        out.append([words[k] for k in rng.integers(0, vocab, rng.integers(0, max_len + 1))])
    # duplicates and one-token sentences on purpose
    out[count // 2] = list(out[0])
    out[count // 3] = ["w1"]
    return out


@pytest.mark.parametrize("metric", ["rougeL", "rouge1", "rouge2"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_rouge_score_reference_on_random_inputs(metric, seed):
    rng = np.random.default_rng(100 + seed)
    tokens = _random_tokens(rng, 61 + seed)  # odd and even counts
    expected = reference_gsm(tokens, metric, seed)
    for batch_size in (1, 4, 256):
        _assert_same(
            greedy_sentence_matching(tokens, metric, seed, batch_size=batch_size, workers=1),
            expected,
        )


@pytest.mark.parametrize("metric", ["rougeL", "rouge1", "rouge2"])
def test_equal_to_brute_force_on_small_inputs(metric):
    rng = np.random.default_rng(7)
    for trial in range(20):
        tokens = _random_tokens(rng, int(rng.integers(3, 14)), vocab=5, max_len=6)
        expected = brute_force_gsm(tokens, metric, trial)
        _assert_same(greedy_sentence_matching(tokens, metric, trial, batch_size=3), expected)


def _nsmc_morphemes(count):
    path = ROOT / "data" / "demo" / "nsmc" / "reviews.sample3000.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["review"] for line in fh]
    return [morphemes(t) for t in texts if t.strip()][:count]


def test_real_korean_reviews_match_reference_and_scores_decline():
    tokens = _nsmc_morphemes(160)
    expected = reference_gsm(tokens, "rougeL", 3)
    result = greedy_sentence_matching(tokens, "rougeL", 3, batch_size=16)
    _assert_same(result, expected)
    half = len(result.score) // 2
    assert result.score[:half].mean() > result.score[half:].mean()


def test_edge_cases():
    empty = greedy_sentence_matching([], "rougeL", 0)
    assert len(empty.first) == 0 and empty.leftover is None
    one = greedy_sentence_matching([["가"]], "rougeL", 0)
    assert len(one.first) == 0 and one.leftover == 0
    dup = greedy_sentence_matching([["a", "b"], ["c"], ["a", "b"]], "rougeL", 0)
    pairs = {frozenset((int(a), int(b))) for a, b in zip(dup.first, dup.second, strict=True)}
    assert len(pairs) == 1 and dup.leftover is not None
    if frozenset((0, 2)) in pairs:
        assert dup.score[0] == 1.0
    blanks = greedy_sentence_matching([[], [], []], "rouge2", 1)
    assert list(blanks.score) == [0.0] and blanks.leftover is not None
    with pytest.raises(ValueError, match="unknown ROUGE metric"):
        greedy_sentence_matching([["a"], ["b"]], "rouge3")


def test_seed_changes_draws_but_same_seed_repeats():
    tokens = _nsmc_morphemes(200)
    a = greedy_sentence_matching(tokens, seed=5)
    b = greedy_sentence_matching(tokens, seed=5, batch_size=7)
    c = greedy_sentence_matching(tokens, seed=6)
    assert _as_pairs(a) == _as_pairs(b)
    assert _as_pairs(a) != _as_pairs(c)
    used = np.concatenate([a.first, a.second])
    assert sorted(used.tolist()) == list(range(200))
