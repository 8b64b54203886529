"""Translation QA of a translated benchmark (KorSTS/KorNLI, Ham et al. 2020, 3.1.1 and 5).

Two kinds of figures:

- **Post-editing figures** (:func:`edit_figures`), per split and per post-editor, as the
  paper reports them: BLEU, chrF and TER between the machine translation and its
  post-edit (sacrebleu, the MT as hypothesis and the post-edit as reference; the paper:
  BLEU 63.30 for KorNLI and 73.26 for KorSTS), the share of sentences left unchanged
  (47% and 53%), and the distribution of the normalised edit distance (rapidfuzz's
  Levenshtein, 0 = unchanged, 1 = rewritten).
- **Label-risk checks** (``TRANSLATION_CHECKS``, one registration each): pairs whose
  English label may not hold for the translation. Each check is
  ``check(pairs, settings) -> list[Flag]`` over a table with ``pair_id``, ``en1``,
  ``en2``, ``ko1``, ``ko2`` (the final translations) and ``label``:

  - ``identical_translation`` (Ham et al. 3: near-identical STS pairs became identical):
    the two translations are the same after normalisation (NFKC, case, letters and
    digits) while the English sentences differ and the score is below 5;
  - ``near_identical_translation``: the translations' similarity (rapidfuzz ratio on the
    normalised text) is at least ``near_identical`` while the English pair's is below
    it and the score is below 5;
  - ``gender_mismatch`` (Ham et al. 4: *sir* -> 선생님 lost the gender an NLI label rested
    on): an English sentence with a gendered word (``GENDERED_EN``) whose translation
    has no gendered morpheme (``GENDERED_KO``, MeCab nouns and the pronoun 그/NP), or
    the reverse;
  - ``untranslated_latin``: a translation that keeps a run of at least
    ``latin_min_words`` Latin-script words holding a lower-case letter (a phrase left
    in English; acronyms and single brand names pass);
  - ``length_ratio``: a sentence whose log length ratio (translation over source, in
    characters without blanks) is an outlier: modified z-score over the dataset (median
    and MAD, Iglewicz and Hoaglin) beyond ``length_ratio_z``.

The thresholds are the recipe's (``translation.qa``); the paper gives none, the
defaults are benchforge's and documented in docs/families/korsts-kornli.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from pipelines.core.registry import Registry
from pipelines.quality.dedup import normalize

# English words that carry a referent's gender (lower case; a small documented lexicon)
GENDERED_EN = frozenset(
    """
    he him his himself she her hers herself man men woman women
    boy boys girl girls gentleman gentlemen lady ladies sir madam ma'am mr
    mrs ms miss father fathers mother mothers dad mom mum son sons
    daughter daughters brother brothers sister sisters husband wife king queen prince princess
    uncle aunt nephew niece grandfather grandmother grandpa grandma boyfriend girlfriend male female
    bride groom actress waitress policeman policewoman businessman businesswoman
    fireman spokesman chairman guy guys
    """.split()  # noqa: SIM905 - a word list to read, not to format
)
# Korean nouns that carry a referent's gender (MeCab surfaces), and the pronoun 그/NP
GENDERED_KO = frozenset(
    """
    그녀 남자 여자 남성 여성 소년 소녀 신사 숙녀 아저씨 아줌마 아주머니 할머니 할아버지
    아버지 어머니 아빠 엄마 아들 딸 누나 오빠 언니 형 남동생 여동생 남편 아내
    부인 왕 여왕 왕자 공주 삼촌 이모 고모 신부 신랑 여배우 남배우 웨이트리스 숙모
    조카딸 남자친구 여자친구 남친 여친 양반 마님
    """.split()  # noqa: SIM905 - a word list to read, not to format
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LATIN_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[\s,]+[A-Za-z][A-Za-z'’-]*)+")


@dataclass(frozen=True)
class QaSettings:
    """The checks' thresholds (``translation.qa`` in a recipe)."""

    near_identical: float = 0.95
    latin_min_words: int = 2
    length_ratio_z: float = 3.5
    max_score: float = 5.0  # STS pairs at this score are meant to be identical


@dataclass(frozen=True)
class Flag:
    pair_id: str
    check: str
    detail: str


Check = Callable[[pd.DataFrame, QaSettings], list[Flag]]
TRANSLATION_CHECKS: Registry[Check] = Registry("translation check", None, "translation QA")


def _numeric(label: object) -> float | None:
    try:
        value = float(label)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


@TRANSLATION_CHECKS.register("identical_translation")
def identical_translation(pairs: pd.DataFrame, s: QaSettings) -> list[Flag]:
    """STS pairs whose translations became identical (see the module docstring)."""
    out = []
    for r in pairs.itertuples(index=False):
        score = _numeric(r.label)
        if score is None or score >= s.max_score:
            continue
        if normalize(r.ko1) == normalize(r.ko2) and normalize(r.en1) != normalize(r.en2):
            out.append(
                Flag(
                    r.pair_id,
                    "identical_translation",
                    f"both sentences translate to {r.ko1!r}; English score {score}",
                )
            )
    return out


@TRANSLATION_CHECKS.register("near_identical_translation")
def near_identical_translation(pairs: pd.DataFrame, s: QaSettings) -> list[Flag]:
    """STS pairs whose translations are closer than the English (module docstring)."""
    out = []
    limit = 100 * s.near_identical
    for r in pairs.itertuples(index=False):
        score = _numeric(r.label)
        if score is None or score >= s.max_score:
            continue
        a, b = normalize(r.ko1), normalize(r.ko2)
        if a == b:
            continue  # identical_translation's
        sim_ko = fuzz.ratio(a, b)
        sim_en = fuzz.ratio(normalize(r.en1), normalize(r.en2))
        if sim_ko >= limit > sim_en:
            out.append(Flag(r.pair_id, "near_identical_translation",
                            f"translations {sim_ko:.0f}% alike, English {sim_en:.0f}%; "
                            f"English score {score}"))  # fmt: skip
    return out


def gendered_english(text: str) -> list[str]:
    """The gendered English words of ``text`` (``GENDERED_EN``)."""
    return [w for w in _WORD.findall(text.lower()) if w in GENDERED_EN]


def gendered_korean(text: str, lang: str = "ko") -> list[str]:
    """The gendered Korean morphemes of ``text``: nouns in ``GENDERED_KO`` and 그 as a
    pronoun (NP; as a determiner, MM, it is "that"; 그들, "they", is not gendered)."""
    from pipelines.lang import language

    out = []
    morphs = language(lang).tagged(text)
    for i, (surface, tag) in enumerate(morphs):
        plural = i + 1 < len(morphs) and morphs[i + 1][0] == "들"  # 그들: they
        if (tag.startswith("NN") and surface in GENDERED_KO) or (
            surface == "그" and tag == "NP" and not plural
        ):
            out.append(surface)
    return out


@TRANSLATION_CHECKS.register("gender_mismatch")
def gender_mismatch(pairs: pd.DataFrame, s: QaSettings) -> list[Flag]:
    """A sentence whose gender marking was lost or added in translation."""
    out = []
    for r in pairs.itertuples(index=False):
        for k, en, ko in ((1, r.en1, r.ko1), (2, r.en2, r.ko2)):
            words, morphs = gendered_english(en), gendered_korean(ko)
            if bool(words) != bool(morphs):
                detail = (f"sentence{k}: {', '.join(words)} -> no gendered Korean word"
                          if words else f"sentence{k}: {', '.join(morphs)} with no gendered "
                          "English word")  # fmt: skip
                out.append(Flag(r.pair_id, "gender_mismatch", detail))
    return out


@TRANSLATION_CHECKS.register("untranslated_latin")
def untranslated_latin(pairs: pd.DataFrame, s: QaSettings) -> list[Flag]:
    """A translation keeping an English phrase (module docstring)."""
    out = []
    for r in pairs.itertuples(index=False):
        for k, ko in ((1, r.ko1), (2, r.ko2)):
            for run in _LATIN_RUN.findall(ko):
                words = [w for w in _WORD.findall(run) if any(c.islower() for c in w)]
                if len(words) >= s.latin_min_words:
                    out.append(Flag(r.pair_id, "untranslated_latin", f"sentence{k}: {run!r}"))
                    break
    return out


def _length(text: str) -> int:
    return len(re.sub(r"\s+", "", text))


@TRANSLATION_CHECKS.register("length_ratio")
def length_ratio(pairs: pd.DataFrame, s: QaSettings) -> list[Flag]:
    """Length-ratio outliers (modified z-score of the log ratio over the dataset)."""
    rows = [(r.pair_id, k, math.log((_length(ko) + 1) / (_length(en) + 1)))
            for r in pairs.itertuples(index=False)
            for k, en, ko in ((1, r.en1, r.ko1), (2, r.en2, r.ko2))]  # fmt: skip
    if len(rows) < 3:
        return []
    logs = np.array([x for _, _, x in rows])
    median = float(np.median(logs))
    mad = float(np.median(np.abs(logs - median))) or 1e-9
    out = []
    for pair_id, k, x in rows:
        z = 0.6745 * (x - median) / mad
        if abs(z) > s.length_ratio_z:
            out.append(
                Flag(
                    pair_id,
                    "length_ratio",
                    f"sentence{k}: length ratio "
                    f"{math.exp(x):.2f} (median {math.exp(median):.2f}, z {z:.1f})",
                )
            )
    return out


def run_checks(pairs: pd.DataFrame, names: list[str], settings: QaSettings) -> pd.DataFrame:
    """Every flag of the named checks: ``pair_id``, ``check``, ``detail``."""
    flags = [f for name in names for f in TRANSLATION_CHECKS.get(name)(pairs, settings)]
    return pd.DataFrame([f.__dict__ for f in flags], columns=["pair_id", "check", "detail"])


def edit_distance(a: str, b: str) -> float:
    """Normalised Levenshtein distance (0 = the same, 1 = nothing in common)."""
    return float(Levenshtein.normalized_distance(a, b))


def edit_figures(drafts: list[str], finals: list[str]) -> dict:
    """Post-editing figures of sentences (see the module docstring)."""
    from pipelines.models.train_mt import score

    n = len(drafts)
    if not n:
        return {"sentences": 0}
    dist = np.array([edit_distance(d, f) for d, f in zip(drafts, finals, strict=True)])
    unchanged = int(sum(d.strip() == f.strip() for d, f in zip(drafts, finals, strict=True)))
    bins = np.linspace(0, 1, 11)
    hist, _ = np.histogram(dist, bins=bins)
    return {
        "sentences": n,
        **score(drafts, finals),
        "unchanged": unchanged,
        "unchanged_share": round(unchanged / n, 4),
        "edit_distance": {
            "mean": round(float(dist.mean()), 4),
            **{f"p{q}": round(float(np.percentile(dist, q)), 4) for q in (10, 25, 50, 75, 90)},
            "histogram": {f"{bins[i]:.1f}-{bins[i + 1]:.1f}": int(hist[i]) for i in range(10)},
        },
    }
