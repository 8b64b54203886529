"""Round-trip translation pairs (KLUE 3.2.1: RTT for similar pairs) and their checks.

A Korean sentence goes to the pivot language (English by default, as in KLUE) and back;
the source and its round trip form a candidate pair. A round trip is only worth an
annotator's time when it is a real paraphrase, so each candidate is checked first and
dropped with its reason:

- ``rtt_empty``: the forward or the back translation is empty;
- ``rtt_identical``: the round trip equals the source after normalisation (NFKC, case,
  letters and digits only). KorSTS (Ham et al. 2020, 5) saw pairs scored 4 or more
  collapse into identical ones after translation; such a pair teaches nothing;
- ``rtt_length_ratio``: the round trip's length over the source's is outside
  ``[min_length_ratio, max_length_ratio]`` (a truncated or runaway generation);
- ``rtt_drift``: ROUGE-L F1 on the language's morphemes (MeCab for Korean) between
  source and round trip is below ``min_rouge`` (the meaning drifted away).

The thresholds live in the recipe (``RttSettings``); the papers give no values, the
defaults are benchforge's and are documented in docs/commands/pair.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from rapidfuzz.distance import LCSseq

from pipelines.lang import DEFAULT_LANGUAGE, language
from pipelines.pairing.gsm import rouge_f1
from pipelines.pairing.settings import RttSettings
from pipelines.pairing.translate import Translator
from pipelines.quality.dedup import normalize

RTT_REASONS = ("rtt_empty", "rtt_identical", "rtt_length_ratio", "rtt_drift")


def rouge_l(a: Sequence[str], b: Sequence[str]) -> float:
    """ROUGE-L F1 of two token sequences (2*LCS/(|a|+|b|))."""
    return rouge_f1(LCSseq.similarity(list(a), list(b)), len(a), len(b))


def check_round_trip(
    source: str, pivot: str, back: str, settings: RttSettings, lang: str = DEFAULT_LANGUAGE
) -> tuple[str | None, float]:
    """The reason to drop a round trip (or None to keep it) and its ROUGE-L F1."""
    if not pivot.strip() or not back.strip():
        return "rtt_empty", 0.0
    morphemes = language(lang).morphemes
    score = rouge_l(morphemes(source), morphemes(back))
    if normalize(back) == normalize(source):
        return "rtt_identical", score
    ratio = len(back.strip()) / max(1, len(source.strip()))
    if not settings.min_length_ratio <= ratio <= settings.max_length_ratio:
        return "rtt_length_ratio", score
    if score < settings.min_rouge:
        return "rtt_drift", score
    return None, score


def round_trip(
    sentences: pd.DataFrame,
    forward: Translator,
    backward: Translator,
    settings: RttSettings,
    source_lang: str = DEFAULT_LANGUAGE,
) -> pd.DataFrame:
    """Translate ``sentences.text`` to the pivot language and back, then check each.

    Returns one row per input sentence with ``pivot``, ``back``, ``score`` (ROUGE-L F1
    of source and round trip) and ``reason`` (None for a kept round trip).
    """
    texts = sentences["text"].tolist()
    pivots = forward.translate(texts, source_lang, settings.pivot) if texts else []
    backs = backward.translate(pivots, settings.pivot, source_lang) if texts else []
    checked = [
        check_round_trip(s, p, b, settings, source_lang)
        for s, p, b in zip(texts, pivots, backs, strict=True)
    ]
    out = sentences.reset_index(drop=True).copy()
    out["pivot"] = pivots
    out["back"] = backs
    out["reason"] = [r for r, _ in checked]
    out["score"] = [s for _, s in checked]
    return out
