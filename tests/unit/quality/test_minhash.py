"""The batch MinHash equals datasketch, and the dedup built on it equals a datasketch
MinHash + MinHashLSH reference on real reviews."""

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
from datasketch import MinHash, MinHashLSH

from pipelines.quality.dedup import deduplicate, jaccard, normalize, shingles
from pipelines.quality.minhash import BatchMinHash, lsh_bands, shingle_hash32, shingle_hashes
from pipelines.quality.settings import DedupSettings

ROOT = Path(__file__).resolve().parents[3]
NSMC = ROOT / "data" / "demo" / "nsmc" / "reviews.sample3000.jsonl.gz"


def _hashfunc(b: bytes) -> int:
    return shingle_hash32(b.decode("utf-8"))


def reference_near_dedup(
    texts: list[str], settings: DedupSettings, hashfunc=_hashfunc
) -> dict[int, int]:
    """datasketch, one MinHash per text: {dropped row: the kept row it duplicates}.

    With ``hashfunc=None`` datasketch hashes shingles with its default (SHA-1)."""
    extra = {"hashfunc": hashfunc} if hashfunc else {}
    proto = MinHash(num_perm=settings.num_perm, seed=1)  # permutations made once
    extra.update(permutations=proto.permutations, scheme=proto.scheme)
    lsh = MinHashLSH(threshold=settings.threshold, num_perm=settings.num_perm)
    norms = [normalize(t) for t in texts]
    dropped = {}
    for i, norm in enumerate(norms):
        sh = shingles(norm, settings.shingle_size)
        mh = MinHash(num_perm=settings.num_perm, seed=1, **extra)
        mh.update_batch([s.encode("utf-8") for s in sh])
        best, best_sim = None, -1.0
        for j in sorted(lsh.query(mh)):
            sim = jaccard(sh, shingles(norms[j], settings.shingle_size))
            if sim >= settings.threshold and sim > best_sim:
                best, best_sim = j, sim
        if best is None:
            lsh.insert(i, mh, check_duplication=False)
        else:
            dropped[i] = best
    return dropped


def random_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    alphabet = "가나다라마바사아자차카타파하영화정말재밌ㅋㅎ abc123!"
    out = []
    for _ in range(n):
        if out and rng.random() < 0.3:
            t = list(rng.choice(out))
            if t:
                t[rng.randrange(len(t))] = rng.choice(alphabet)
            out.append("".join(t))
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 25))))
    return out


def test_shingle_hashes_match_the_scalar_hash():
    texts = [
        "",
        "가",
        "최고",
        "최고다",
        "오래전에봤는데",
        "abc영화abc",
        "ㅋㅋㅋㅋㅋ",
        *random_texts(200),
    ]
    for size in (1, 3, 5):
        hashes, offsets = shingle_hashes(texts, size)
        for i, text in enumerate(texts):
            expected = sorted(shingle_hash32(s) for s in shingles(text, size))
            assert sorted(set(hashes[offsets[i] : offsets[i + 1]].tolist())) == expected


def test_signatures_equal_datasketch():
    texts = [normalize(t) for t in random_texts(300, seed=1)]
    for num_perm in (16, 128):
        hashes, offsets = shingle_hashes(texts, 3)
        sig = BatchMinHash(num_perm).signatures(hashes, offsets, chunk=64)
        for i, text in enumerate(texts):
            mh = MinHash(num_perm=num_perm, seed=1, hashfunc=_hashfunc)
            mh.update_batch([s.encode("utf-8") for s in shingles(text, 3)])
            np.testing.assert_array_equal(sig[i], mh.hashvalues)


def test_bands_are_datasketch_bands():
    lsh = MinHashLSH(threshold=0.8, num_perm=128)
    assert lsh_bands(0.8, 128) == list(lsh.hashranges)
    assert len(lsh_bands(0.8, 128)) == lsh.b


def test_dedup_equals_the_datasketch_reference_on_real_reviews():
    with gzip.open(NSMC, "rt", encoding="utf-8") as fh:
        reviews = [json.loads(line)["review"] for line in fh]
    rng = random.Random(3)
    # add edited copies so that there are many near duplicates
    texts = reviews + [r + rng.choice(["!", " ㅋㅋ", "..", " 최고"]) for r in reviews[:800]]
    rng.shuffle(texts)
    for threshold in (0.6, 0.8):
        settings = DedupSettings(threshold=threshold, exact=False)
        df = pd.DataFrame(
            {"sent_id": [str(i) for i in range(len(texts))], "text": texts, "corpus": "nsmc"}
        )
        got = deduplicate(df, settings)
        mine = dict(
            zip(
                got.dropped["sent_id"].astype(int),
                got.dropped["duplicate_of"].astype(int),
                strict=True,
            )
        )
        ref = reference_near_dedup(texts, settings)
        assert len(ref) > 500
        assert mine == ref
