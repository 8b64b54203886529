"""Exact and near-duplicate removal: keep the first, record what each dropped row repeats."""

import random

import pandas as pd

from pipelines.quality.dedup import deduplicate, jaccard, normalize, shingles
from pipelines.quality.settings import DedupSettings


def frame(texts, corpora=None):
    n = len(texts)
    return pd.DataFrame(
        {"sent_id": [f"s{i}" for i in range(n)], "text": texts, "corpus": corpora or ["a"] * n}
    )


def test_normalize():
    assert normalize("재밌어요!!  ") == normalize("재밌어요") == "재밌어요"
    assert normalize("ＡＢＣ 영화") == "abc영화"


def test_exact_duplicates_keep_first_within_and_across_corpora():
    df = frame(
        ["정말 재밌어요!", "정말 재밌어요", "다른 문장입니다", "정말, 재밌어요."],
        ["a", "b", "a", "b"],
    )
    r = deduplicate(df, DedupSettings(near=False))
    assert r.kept["sent_id"].tolist() == ["s0", "s2"]
    assert r.dropped["duplicate_of"].tolist() == ["s0", "s0"]
    assert set(r.dropped["reason"]) == {"exact_duplicate"}
    per_corpus = deduplicate(df, DedupSettings(near=False, scope="corpus"))
    assert per_corpus.kept["sent_id"].tolist() == ["s0", "s1", "s2"]
    assert per_corpus.dropped["duplicate_of"].tolist() == ["s1"]


def test_near_duplicates_with_threshold():
    base = "오래전에 봤는데 아직도 기억에 남는 영화네요"
    near = "오래전에 봤는데 아직도 기억에 남는 영화네요 ㅎㅎ"
    other = "배우들의 연기가 어색해서 몰입이 안 됐다"
    df = frame([base, other, near])
    sim = jaccard(shingles(normalize(base), 3), shingles(normalize(near), 3))
    assert 0.8 <= sim < 1.0
    r = deduplicate(df, DedupSettings(threshold=0.8))
    assert r.kept["sent_id"].tolist() == ["s0", "s1"]
    row = r.dropped.iloc[0]
    assert (row["reason"], row["duplicate_of"]) == ("near_duplicate", "s0")
    assert abs(row["similarity"] - round(sim, 4)) < 1e-9
    strict = deduplicate(df, DedupSettings(threshold=0.95))
    assert len(strict.kept) == 3


def test_near_dedup_matches_brute_force_on_real_like_data():
    """LSH finds the same drops as comparing every pair (on a small sample)."""
    rng = random.Random(0)
    words = [
        "영화",
        "정말",
        "재밌다",
        "배우",
        "연기",
        "최고",
        "스토리",
        "지루",
        "감동",
        "음악",
        "다시",
        "보고",
        "싶다",
        "별로",
        "추천",
    ]
    texts = []
    for _ in range(300):
        if texts and rng.random() < 0.3:
            w = rng.choice(texts).split()
            w[rng.randrange(len(w))] = rng.choice(words)
            texts.append(" ".join(w))
        else:
            texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(4, 9))))
    s = DedupSettings(threshold=0.7, exact=True)
    got = deduplicate(frame(texts), s)
    # brute force: in order, drop a row if it is an exact or >= threshold match of a kept row
    kept: list[int] = []
    dropped = []
    norms = [normalize(t) for t in texts]
    for i, n in enumerate(norms):
        sh = shingles(n, 3)
        if any(norms[j] == n for j in kept) or any(
            jaccard(sh, shingles(norms[j], 3)) >= 0.7 for j in kept
        ):
            dropped.append(i)
        else:
            kept.append(i)
    got_dropped = sorted(int(x[1:]) for x in got.dropped["sent_id"])
    # MinHash LSH is probabilistic: allow a few misses, never a false drop
    assert set(got_dropped) <= set(dropped) | set(
        i for i in range(len(texts)) if any(norms[i] == norms[j] for j in range(i))
    )
    assert len(set(dropped) - set(got_dropped)) <= max(2, len(dropped) // 20)
    for _, row in got.dropped.iterrows():
        i, j = int(row["sent_id"][1:]), int(row["duplicate_of"][1:])
        assert j < i
        assert jaccard(shingles(norms[i], 3), shingles(norms[j], 3)) >= 0.7


def test_empty_input():
    r = deduplicate(frame([]), DedupSettings())
    assert len(r.kept) == 0 and len(r.dropped) == 0


def test_duplicate_of_always_names_a_kept_row():
    base = "오래전에 봤는데 아직도 기억에 남는 영화네요"
    near = "오래전에 봤는데 아직도 기억에 남는 영화네요 ㅎㅎ"
    r = deduplicate(frame([base, near, near + "!"]), DedupSettings(threshold=0.8))
    assert r.kept["sent_id"].tolist() == ["s0"]
    assert r.dropped["duplicate_of"].tolist() == ["s0", "s0"]
    assert r.dropped["reason"].tolist() == ["near_duplicate", "near_duplicate"]
    assert r.dropped["similarity"].iloc[0] == r.dropped["similarity"].iloc[1] < 1.0
