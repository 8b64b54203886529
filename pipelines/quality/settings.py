"""The quality stage's recipe section, ``filters:``: KLUE 2.3's noise rules
(:class:`NoiseSettings`, :mod:`pipelines.quality.noise`), the PII filter
(:class:`PiiSettings`, :mod:`pipelines.quality.pii`), exact and near-duplicate removal
(:class:`DedupSettings`, :mod:`pipelines.quality.dedup`) and the toxic-content
detectors (:class:`ClassifierSettings`, :mod:`pipelines.quality.toxic`). Registered
here (:data:`pipelines.core.plugins.RECIPE_SECTIONS`) with a default: a recipe that
leaves ``filters`` out gets every default, the papers' value where a paper gives one
(cited on the field)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

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
    """One classifier used as a filter: the built-in detector of its name (no ``model``:
    :mod:`pipelines.models.builtin_detectors`, trained from the shipped Korean
    HateSpeech data on first use), or a local folder: a transformers
    sequence-classification checkpoint (``benchforge classifiers train``) or a
    character n-gram detector (:mod:`pipelines.models.ngram_detector`)."""

    model: str | None = None  # a folder, relative to the recipe; None: the built-in one
    # labels whose probabilities add up to the score (default: KLUE's, see DETECTOR_DEFAULTS)
    positive: list[str] | None = None
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    # rename the checkpoint's id2label names, e.g. {LABEL_2: hate}
    labels: dict[str, str] = Field(default_factory=dict)
    # the language of the detector's training data: a corpus in another language is an
    # error at recipe load, unless that corpus is skipped (the built-in ones: Korean)
    language: str = "ko"


class CorpusClassifierOverride(Strict):
    """One corpus's detector settings: KLUE 2.3 set the thresholds "manually ... for
    each corpus" and did not run the detectors on formal news text (``skip`` with its
    ``reason``, which the data card shows)."""

    skip: bool = False
    reason: str | None = None
    thresholds: dict[str, Share] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _reason(self) -> CorpusClassifierOverride:
        if self.skip and not (self.reason or "").strip():
            raise ValueError("skip: true needs a reason (the data card shows it)")
        return self


def _builtin_detectors() -> dict[str, DetectorSpec]:
    return {name: DetectorSpec() for name in DETECTOR_DEFAULTS}


class ClassifierSettings(Strict):
    """KLUE 2.3 toxic-content filters, run after the rule filters: on by default with
    the built-in gender-bias and hate detectors at the paper's thresholds."""

    enabled: bool = True  # false: no detector runs; ``reason`` says why (the card shows it)
    reason: str | None = None
    detectors: dict[Literal["gender_bias", "hate"], DetectorSpec] = Field(
        default_factory=_builtin_detectors
    )
    # batches are cut by a token budget (None: 8192 tokens on a CPU, 65536 on a GPU);
    # batch_size optionally caps the rows of a batch as well (transformers checkpoints)
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

    @model_validator(mode="after")
    def _reason_when_off(self) -> ClassifierSettings:
        if not self.enabled and not (self.reason or "").strip():
            raise ValueError("enabled: false needs a reason (the data card shows it)")
        return self

    @property
    def active(self) -> dict[str, DetectorSpec]:
        """The detectors that run: none when ``enabled`` is false."""
        return dict(self.detectors) if self.enabled else {}

    @property
    def explicit_detectors(self) -> bool:
        """Whether the recipe named its detectors (else the built-in defaults)."""
        return "detectors" in self.model_fields_set

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


def skip_reasons(settings: ClassifierSettings, recipe: Any) -> dict[str, str]:
    """The corpora of ``recipe`` the detectors do not run on, each with the reason the
    data card gives (see the module docstring for the rules, in their order)."""
    skip = {p.casefold() for p in settings.skip_publishers}
    languages = {spec.language for spec in settings.active.values()}
    out: dict[str, str] = {}
    for corpus in recipe.corpora:
        override = settings.corpora.get(corpus.name)
        lang = recipe.corpus_language(corpus)
        if override and override.skip:
            out[corpus.name] = str(override.reason)
        elif corpus.publisher and corpus.publisher.casefold() in skip:
            out[corpus.name] = (
                f"publisher {corpus.publisher}: KLUE 2.3 did not run the detectors on The "
                "Korea Economy Daily, ACROFAN and YNA (they do not work well on formal news text)"
            )
        elif corpus.style in settings.skip_styles:
            out[corpus.name] = f"style {corpus.style} is in filters.classifiers.skip_styles"
        elif not settings.explicit_detectors and languages and lang not in languages:
            out[corpus.name] = (
                f"the corpus is in {lang!r}: the built-in detectors are trained on Korean "
                "HateSpeech comments (KLUE 2.3 ran them on Korean text only)"
            )
    return out


def detector_language(name: str, spec: DetectorSpec, path: Path) -> str:
    """The language of the detector folder ``path`` (a saved n-gram detector says its
    own; a transformers checkpoint is ``spec.language``), after checking that it is a
    detector: ``ValueError`` naming the setting and the problem otherwise."""
    from pipelines.models.classifier import ClassifierError, check_detector
    from pipelines.models.ngram_detector import NgramDetector, NgramDetectorError, is_ngram_detector

    where = f"filters.classifiers.detectors.{name}.model"
    try:
        if is_ngram_detector(path):
            return NgramDetector(path).language or spec.language
        check_detector(path)
    except (ClassifierError, NgramDetectorError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    return spec.language


def _check_filters(recipe: object, filters: FilterSettings) -> None:
    """What needs the rest of the recipe: a corpus override names a corpus of the
    recipe, a threshold override a detector of it, and a detector the recipe named
    explicitly was trained for the language of every corpus it scores."""
    settings = filters.classifiers
    names = {c.name for c in recipe.corpora}
    unknown = sorted(set(settings.corpora) - names)
    if unknown:
        raise ValueError(
            f"filters.classifiers.corpora: {unknown} are not corpora of this recipe "
            f"({sorted(names)})"
        )
    for corpus, override in settings.corpora.items():
        extra = sorted(set(override.thresholds) - set(settings.detectors))
        if extra:
            raise ValueError(
                f"filters.classifiers.corpora.{corpus}.thresholds: no detector {extra} "
                f"(detectors: {sorted(settings.detectors)})"
            )
    languages = {}
    for name, spec in settings.active.items():
        languages[name] = spec.language
        if spec.model:
            languages[name] = detector_language(name, spec, recipe.resolve(spec.model))
    if not settings.active or not settings.explicit_detectors:
        return
    skipped = skip_reasons(settings, recipe)
    for corpus in recipe.corpora:
        lang = recipe.corpus_language(corpus)
        if corpus.name in skipped:
            continue
        for name, language in languages.items():
            if language != lang:
                raise ValueError(
                    f"filters.classifiers.detectors.{name}: trained for {language!r} "
                    f"text, but corpus {corpus.name!r} is {lang!r}; skip the corpus "
                    f"(filters.classifiers.corpora.{corpus.name}: {{skip: true, reason: ...}}) "
                    "or name a detector for its language"
                )


register_section(RecipeSection(
    "filters", FilterSettings, "The ingest filters (KLUE 2.3): noise, PII, duplicates, "
    "toxic-content detectors", check=_check_filters, default=FilterSettings,
))  # fmt: skip
