"""Stage ``pair``: sentence pairs for STS by three methods (KLUE 3.2.1).

Input: the ``sentences.parquet`` and ``documents.parquet`` of an ingest run. Per corpus,
the recipe's ``pairing`` section asks for any of:

- ``gsm``: greedy sentence matching (pipelines.pairing.gsm) over a seeded sample of sentences,
  for less similar pairs;
- ``rtt``: round-trip translation (pipelines.pairing.rtt) of a seeded sample, for similar
  pairs, each round trip checked before it is kept;
- ``metadata``: intent and topic pairs (pipelines.pairing.metapairs).

GSM and RTT draw disjoint samples of a corpus (a sentence is in at most one of them),
from one seeded shuffle: RTT takes the first ``rtt.sentences``, GSM the next
``gsm.pool``. Output columns are :data:`PAIR_COLUMNS`; ``pair_id`` is a hash of the
method and the two sides, so it is stable across reruns (Label Studio task ids).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.registry import Registry
from pipelines.core.stage import REJECT_COLUMNS, value_counts
from pipelines.lang import DEFAULT_LANGUAGE, language
from pipelines.pairing.gsm import greedy_sentence_matching
from pipelines.pairing.metapairs import metadata_pairs
from pipelines.pairing.rtt import rouge_l, round_trip
from pipelines.pairing.settings import CorpusPairing, GsmSpec, MetadataSpec, RttSettings
from pipelines.pairing.translate import Translator


class PairingError(BenchforgeError, ValueError):
    """Input or settings that pairing cannot use; the message names the file and problem."""


PAIR_COLUMNS = [
    "pair_id",
    "method",
    "corpus",
    "sentence1",
    "sentence2",
    "sent_id1",
    "sent_id2",
    "doc_id1",
    "doc_id2",
    "score",
    "score_metric",
    "draw",
    "license",
    "lineage",
]


# a pairing method is one registration: a function (pool or corpus, its spec, seed, lang)
# -> (pairs, rejects, stats); the recipe's pairing.corpora[*] names the methods it uses
PAIRING_METHODS: Registry = Registry("pairing method", "pipelines.pairing", "KLUE 3.2.1")


def with_metadata(sentences: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """Sentences joined with their document's ``line`` and ``meta`` (keep_fields JSON)."""
    docs = documents[["doc_id", "line", "meta"]]
    return sentences.merge(docs, on="doc_id", how="left", validate="many_to_one")


def sample_pools(
    corpus: pd.DataFrame, spec: CorpusPairing, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The RTT sample and the GSM pool of one corpus: disjoint, from one seeded shuffle."""
    order = np.random.default_rng(seed).permutation(len(corpus))
    shuffled = corpus.iloc[order].reset_index(drop=True)
    n_rtt = spec.rtt.sentences if spec.rtt else 0
    rtt = shuffled.iloc[:n_rtt]
    rest = shuffled.iloc[n_rtt:]
    pool = spec.gsm.pool if spec.gsm and spec.gsm.pool else len(rest)
    return rtt.reset_index(drop=True), rest.iloc[:pool].reset_index(drop=True)


def _pair_id(method: str, left: str, right: str) -> str:
    digest = hashlib.sha1(f"{method}\x1f{left}\x1f{right}".encode()).hexdigest()[:16]
    return f"{method}-{digest}"


def _frame(
    method: str,
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    sentence2: list[str],
    scores: list[float],
    metric: str,
    lineage: list[dict],
) -> pd.DataFrame:
    """The shared pair table layout for ``left[k]`` paired with ``sentence2[k]``, which is
    the text of ``right[k]`` or, with no ``right`` (RTT), a generated sentence."""
    left = left.reset_index(drop=True)
    none = pd.Series([None] * len(left), dtype="object")
    sid2 = none if right is None else right["sent_id"].reset_index(drop=True)
    did2 = none if right is None else right["doc_id"].reset_index(drop=True)
    out = pd.DataFrame(
        {
            "pair_id": [
                _pair_id(method, a, b if b is not None else s)
                for a, b, s in zip(left["sent_id"], sid2, sentence2, strict=True)
            ],
            "method": method,
            "corpus": left["corpus"],
            "sentence1": left["text"],
            "sentence2": sentence2,
            "sent_id1": left["sent_id"],
            "sent_id2": sid2,
            "doc_id1": left["doc_id"],
            "doc_id2": did2,
            "score": pd.Series(scores, dtype="float64"),
            "score_metric": metric,
            "draw": np.arange(len(left), dtype=np.int64),
            "license": left["license"],
            "lineage": [json.dumps(x, ensure_ascii=False, sort_keys=True) for x in lineage],
        }
    )
    return out[PAIR_COLUMNS]


@PAIRING_METHODS.register("gsm")
def gsm_pairs(
    pool: pd.DataFrame, spec: GsmSpec, metric: str, seed: int, lang: str = DEFAULT_LANGUAGE
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """GSM over ``pool``; keeps ``spec.pairs`` pairs spread evenly over the draw order.
    The drawn pairs that thinning leaves out are returned as rejects with reason
    ``gsm_thinned`` (drawn == kept + thinned)."""
    tokens = [language(lang).morphemes(t) for t in pool["text"]]
    result = greedy_sentence_matching(tokens, metric=metric, seed=seed, progress=True)
    drawn = len(result.first)
    keep = np.arange(drawn)
    if spec.pairs is not None and spec.pairs < drawn:
        keep = np.unique(np.linspace(0, drawn - 1, spec.pairs).round().astype(np.int64))

    def frame(draws: np.ndarray) -> pd.DataFrame:
        left = pool.iloc[result.first[draws]]
        right = pool.iloc[result.second[draws]]
        lineage = [{"gsm_draw": int(k), "pool": len(pool), "seed": seed} for k in draws]
        out = _frame(
            "gsm", left, right, right["text"].tolist(), result.score[draws].tolist(), metric,
            lineage,
        )  # fmt: skip
        out["draw"] = draws
        return out

    pairs = frame(keep)
    thinned = frame(np.setdiff1d(np.arange(drawn), keep))
    rejects = pair_rejects(thinned, "gsm", "gsm_thinned")
    stats = {
        "pool": len(pool),
        "drawn": drawn,
        "kept": len(pairs),
        "dropped": value_counts(rejects["reason"]),
        "leftover": None if result.leftover is None else pool["sent_id"].iloc[result.leftover],
        "score_first_quarter": _mean(result.score[: max(1, drawn // 4)]),
        "score_last_quarter": _mean(result.score[-max(1, drawn // 4) :]),
    }
    return pairs, rejects, stats


def _mean(values: np.ndarray) -> float | None:
    return round(float(values.mean()), 4) if len(values) else None


def _field(frame: pd.DataFrame, name: str) -> pd.Series:
    """A document column, or a keep_fields value from ``meta``."""
    if name in frame.columns:
        return frame[name]
    meta = frame["meta"].map(lambda m: json.loads(m) if isinstance(m, str) and m else {})
    if not meta.map(lambda m: name in m).all():
        raise PairingError(
            f"metadata field {name!r} is neither a document column nor in the corpus's keep_fields"
        )
    return meta.map(lambda m: m[name])


@PAIRING_METHODS.register("metadata")
def metadata_pairs_for(
    corpus: pd.DataFrame, spec: MetadataSpec, seed: int, lang: str = DEFAULT_LANGUAGE
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Intent and topic pairs of one corpus (see pipelines.pairing.metapairs); nothing is
    drawn and then dropped, so its rejects are empty."""
    morphemes = language(lang).morphemes
    corpus = corpus.reset_index(drop=True)
    groups = _field(corpus, spec.group_field)
    if spec.group_block:
        groups = (groups.astype("int64") - 1) // spec.group_block
    topics = _field(corpus, spec.topic_field) if spec.topic_field else None
    drawn = metadata_pairs(groups, topics, spec.similar_per_group, spec.dissimilar_per_group, seed)
    frames = []
    for method, part in drawn.groupby("method", sort=True):
        left = corpus.iloc[part["i"].to_numpy()]
        right = corpus.iloc[part["j"].to_numpy()]
        scores = [
            rouge_l(morphemes(a), morphemes(b))
            for a, b in zip(left["text"], right["text"], strict=True)
        ]
        lineage = [
            {"group1": str(g1), "group2": str(g2), "topic": None if topics is None else str(t)}
            for g1, g2, t in zip(
                groups.iloc[part["i"]],
                groups.iloc[part["j"]],
                topics.iloc[part["i"]] if topics is not None else [None] * len(part),
                strict=True,
            )
        ]
        frames.append(
            _frame(str(method), left, right, right["text"].tolist(), scores, "rougeL", lineage)
        )
    pairs = pd.concat(frames, ignore_index=True) if frames else _frame("intent", *_empty(corpus))
    stats = {
        "groups": int(groups.nunique()),
        "intent": int((pairs["method"] == "intent").sum()),
        "topic": int((pairs["method"] == "topic").sum()),
    }
    return pairs, pd.DataFrame(columns=REJECT_COLUMNS), stats


def pair_rejects(pairs: pd.DataFrame, stage: str, reason: str) -> pd.DataFrame:
    """Pairs left out, in the ``rejects`` layout: ``row_id`` the pair id, ``text`` and
    ``sent_id`` its first sentence, ``detail`` the second sentence and the draw (JSON),
    ``similarity`` its score."""
    return pd.DataFrame(
        {
            "stage": stage,
            "unit": "pair",
            "reason": reason,
            "detail": [
                json.dumps({"sentence2": s, "sent_id2": i, "draw": int(d)}, ensure_ascii=False)
                for s, i, d in zip(
                    pairs["sentence2"], pairs["sent_id2"], pairs["draw"], strict=True
                )
            ],
            "row_id": pairs["pair_id"],
            "doc_id": pairs["doc_id1"],
            "sent_id": pairs["sent_id1"],
            "corpus": pairs["corpus"],
            "text": pairs["sentence1"],
            "duplicate_of": None,
            "similarity": pairs["score"].astype("float64"),
            "flags": reason,
        },
        columns=REJECT_COLUMNS,
    )


def _empty(corpus: pd.DataFrame) -> tuple:
    none = corpus.iloc[0:0]
    return none, None, [], [], "rougeL", []


@PAIRING_METHODS.register("rtt")
def rtt_pairs(
    sample: pd.DataFrame,
    forward: Translator,
    backward: Translator,
    settings: RttSettings,
    lang: str = DEFAULT_LANGUAGE,
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Round-trip ``sample``; return kept pairs, dropped round trips and counts."""
    checked = round_trip(sample, forward, backward, settings, lang)
    kept = checked[checked["reason"].isna()].reset_index(drop=True)
    dropped = checked[checked["reason"].notna()].reset_index(drop=True)
    sides = {
        "forward": f"{forward.backend}:{forward.model}",
        "backward": f"{backward.backend}:{backward.model}",
        "pivot_lang": settings.pivot,
    }
    lineage = [{**sides, "pivot": p} for p in kept["pivot"]]
    pairs = _frame(
        "rtt", kept, None, kept["back"].tolist(), kept["score"].tolist(), "rougeL", lineage
    )
    rejects = pd.DataFrame(
        {
            "stage": "rtt",
            "unit": "sentence",
            "reason": dropped["reason"],
            "detail": [
                json.dumps({"pivot": p, "back": b}, ensure_ascii=False)
                for p, b in zip(dropped["pivot"], dropped["back"], strict=True)
            ],
            "row_id": dropped["sent_id"],
            "doc_id": dropped["doc_id"],
            "sent_id": dropped["sent_id"],
            "corpus": dropped["corpus"],
            "text": dropped["text"],
            "duplicate_of": None,
            "similarity": dropped["score"].astype("float64"),
            "flags": dropped["reason"],
        }
    )[REJECT_COLUMNS]
    stats = {
        "in": len(checked),
        "kept": len(pairs),
        "dropped": value_counts(dropped["reason"]),
    }
    return pairs, rejects, stats
