"""The quality stage's recipe section, ``filters:``: KLUE 2.3's noise rules
(:class:`NoiseSettings`, :mod:`pipelines.quality.noise`), the PII filter
(:class:`PiiSettings`, :mod:`pipelines.quality.pii`), exact and near-duplicate removal
(:class:`DedupSettings`, :mod:`pipelines.quality.dedup`) and the toxic-content
detectors (:class:`ClassifierSettings`, :mod:`pipelines.quality.toxic`). Registered
here (:data:`pipelines.core.plugins.RECIPE_SECTIONS`) with a default: a recipe that
leaves ``filters`` out gets every default, the papers' value where a paper gives one
(cited on the field)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import Share


class NoiseSettings(Strict):
    """KLUE 2.3 noise rules; the paper's values are the defaults where it gives one."""

    remove_hashtags: bool = True
    remove_html: bool = True
    remove_invisible: bool = True
    remove_empty_parentheses: bool = True
    collapse_blanks: bool = True
    news_boilerplate: bool = True
    news_domains: list[str] = Field(default_factory=lambda: ["news"])
    # KLUE 2.3: "we filter out sentences with more than 10 Chinese or Japanese characters"
    max_cjk_chars: int = Field(default=10, ge=0)
    # Not in the papers: benchforge's defaults, documented in docs/commands/ingest.md.
    min_hangul_share: float = Field(default=0.5, ge=0.0, le=1.0)
    min_chars: int = Field(default=5, ge=0)
    max_chars: int = Field(default=1000, ge=1)
    # a document longer than this is dropped before sentence splitting (too_long_document):
    # kss on one multi-megabyte line stalls a worker for minutes
    max_document_chars: int = Field(default=100_000, ge=1)

    @model_validator(mode="after")
    def _lengths(self) -> NoiseSettings:
        if self.min_chars > self.max_chars:
            raise ValueError(
                f"min_chars {self.min_chars} > max_chars {self.max_chars}: every sentence "
                "would be dropped"
            )
        return self


PII_KINDS = ("email", "url", "rrn", "card", "phone", "account", "mention")


class PiiSettings(Strict):
    """KLUE 2.3 and the KISA de-identification guideline: kinds of PII that drop a sentence."""

    enabled: bool = True
    kinds: list[str] = Field(default_factory=lambda: list(PII_KINDS))

    @field_validator("kinds")
    @classmethod
    def _known(cls, kinds: list[str]) -> list[str]:
        unknown = sorted(set(kinds) - set(PII_KINDS))
        if unknown:
            raise ValueError(f"unknown PII kinds {unknown}; known: {list(PII_KINDS)}")
        return kinds


class DedupSettings(Strict):
    """Exact (after normalisation) and near-duplicate (MinHash LSH + exact Jaccard) removal."""

    exact: bool = True
    near: bool = True
    threshold: float = Field(default=0.8, gt=0.0, le=1.0)
    shingle_size: int = Field(default=3, ge=1)
    num_perm: int = Field(default=128, ge=16)
    scope: Literal["global", "corpus"] = "global"


# KLUE 2.3: drop sentences a gender-bias detector scores 0.5 or more and a hate-speech
# detector scores 0.9 or more.
DETECTOR_DEFAULTS = {
    "gender_bias": {"threshold": 0.5, "positive": ["True"]},
    "hate": {"threshold": 0.9, "positive": ["hate"]},
}


class DetectorSpec(Strict):
    """One classifier used as a filter: a local sequence-classification checkpoint."""

    model: str  # checkpoint directory, relative to the recipe
    # labels whose probabilities add up to the score (default: KLUE's, see DETECTOR_DEFAULTS)
    positive: list[str] | None = None
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    # rename the checkpoint's id2label names, e.g. {LABEL_2: hate}
    labels: dict[str, str] = Field(default_factory=dict)


class CorpusClassifierOverride(Strict):
    skip: bool = False
    thresholds: dict[str, Share] = Field(default_factory=dict)


class ClassifierSettings(Strict):
    """KLUE 2.3 toxic-content filters, run after the rule filters."""

    detectors: dict[Literal["gender_bias", "hate"], DetectorSpec] = Field(default_factory=dict)
    # batches are cut by a token budget (None: 8192 tokens on a CPU, 65536 on a GPU);
    # batch_size optionally caps the rows of a batch as well
    batch_tokens: int | None = Field(default=None, ge=8)
    batch_size: int | None = Field(default=None, ge=1)
    max_length: int = Field(default=128, ge=8)
    device: str | None = None  # None: cuda when present
    # KLUE 2.3: the detectors were not run on The Korea Economy Daily, ACROFAN and YNA
    # (compared with each corpus's ``publisher``, case-insensitively); every other corpus
    # is scored, formal ones included (Wikitree, policy news, Wikipedia, WikiNews)
    skip_publishers: list[str] = Field(
        default_factory=lambda: ["The Korea Economy Daily", "ACROFAN", "YNA"]
    )
    # styles skipped as well (none by default; ["formal"] skips every formal corpus)
    skip_styles: list[str] = Field(default_factory=list)
    corpora: dict[str, CorpusClassifierOverride] = Field(default_factory=dict)

    def threshold(self, detector: str, corpus: str) -> float:
        override = self.corpora.get(corpus)
        if override and detector in override.thresholds:
            return override.thresholds[detector]
        spec = self.detectors[detector]
        return (
            spec.threshold
            if spec.threshold is not None
            else DETECTOR_DEFAULTS[detector]["threshold"]
        )

    def positive(self, detector: str) -> list[str]:
        spec = self.detectors[detector]
        return spec.positive or list(DETECTOR_DEFAULTS[detector]["positive"])


class FilterSettings(Strict):
    noise: NoiseSettings = Field(default_factory=NoiseSettings)
    pii: PiiSettings = Field(default_factory=PiiSettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    classifiers: ClassifierSettings = Field(default_factory=ClassifierSettings)


register_section(RecipeSection(
    "filters", FilterSettings, "The ingest filters (KLUE 2.3): noise, PII, duplicates, "
    "toxic-content detectors", default=FilterSettings,
))  # fmt: skip
