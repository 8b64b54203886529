"""Recipes: one YAML file describes a dataset build (sources, filters, runner).

A recipe that names only its corpora works: every filter setting has a default, the
papers' value where a paper gives one (cited on the field). Paths are relative to the
recipe file. Invalid recipes raise :class:`RecipeError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from pipelines.core.errors import BenchforgeError


class RecipeError(BenchforgeError, ValueError):
    """A recipe that cannot be used; the message names the file and the problem."""


class _Strict(BaseModel):
    """A recipe section: unknown keys are errors, and a value of the wrong kind is not
    coerced (issue 32): ``true`` is not a number, a number is not text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_coercion(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        for name, value in data.items():
            field = cls.model_fields.get(name)
            if field is None or value is None:
                continue
            kinds = _plain_kinds(field.annotation)
            if isinstance(value, bool) and kinds and bool not in kinds and kinds & {int, float}:
                raise ValueError(f"{name}: expected a number, got {value!r}")
            if (isinstance(value, int | float) and not isinstance(value, bool) and kinds
                    and kinds <= {str}):  # fmt: skip
                raise ValueError(f"{name}: expected text, got the number {value!r}; quote it")
        return data


def _plain_kinds(annotation: object) -> set[type]:
    """The plain types (bool, int, float, str) a field's annotation admits; empty when it
    admits anything else (a model, a list, a Literal) and no check applies."""
    import types
    import typing

    args = typing.get_args(annotation) if isinstance(
        annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union else (
        annotation,)  # fmt: skip
    kinds = {a for a in args if a is not type(None)}
    return kinds if kinds and all(k in (bool, int, float, str) for k in kinds) else set()


class CorpusSpec(_Strict):
    """One source corpus and its provenance."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    path: str
    format: Literal["jsonl", "csv", "tsv", "txt"]
    text_field: str | None = None
    id_field: str | None = None
    date_field: str | None = None
    date_format: str | None = None
    license: str  # SPDX identifier (CC0-1.0, CC-BY-SA-4.0, ...): pipelines.export.licenses
    # the attribution line the release carries: title, authors, where it came from
    attribution: str | None = None
    domain: str
    style: Literal["formal", "colloquial"]
    unit: Literal["sentence", "document"] = "sentence"
    language: str | None = None  # a registered language (pipelines.lang); None: the recipe's
    encoding: str = "utf-8"
    has_header: bool = True
    columns: list[str] | None = None
    keep_fields: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)
    # a corpus that may be empty (no documents): otherwise an empty file is an error, so
    # that a truncated export never silently replaces good outputs with empty ones
    allow_empty: bool = False

    @model_validator(mode="after")
    def _check(self) -> CorpusSpec:
        if self.format != "txt" and not self.text_field:
            raise ValueError(f"corpus {self.name!r}: format {self.format} needs text_field")
        if self.date_field and not self.date_format:
            raise ValueError(f"corpus {self.name!r}: date_field needs date_format")
        if self.columns is not None and self.format not in ("csv", "tsv"):
            raise ValueError(f"corpus {self.name!r}: columns only apply to csv and tsv")
        if self.format in ("csv", "tsv") and not self.has_header and not self.columns:
            raise ValueError(f"corpus {self.name!r}: a file without header needs columns")
        return self


class NoiseSettings(_Strict):
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
    # Not in the papers: benchforge's defaults, documented in README.
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


class PiiSettings(_Strict):
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


class DedupSettings(_Strict):
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


class DetectorSpec(_Strict):
    """One classifier used as a filter: a local sequence-classification checkpoint."""

    model: str  # checkpoint directory, relative to the recipe
    # labels whose probabilities add up to the score (default: KLUE's, see DETECTOR_DEFAULTS)
    positive: list[str] | None = None
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    # rename the checkpoint's id2label names, e.g. {LABEL_2: hate}
    labels: dict[str, str] = Field(default_factory=dict)


class CorpusClassifierOverride(_Strict):
    skip: bool = False
    thresholds: dict[str, float] = Field(default_factory=dict)


class ClassifierSettings(_Strict):
    """KLUE 2.3 toxic-content filters, run after the rule filters."""

    detectors: dict[Literal["gender_bias", "hate"], DetectorSpec] = Field(default_factory=dict)
    # batches are cut by a token budget (None: 8192 tokens on a CPU, 65536 on a GPU);
    # batch_size optionally caps the rows of a batch as well
    batch_tokens: int | None = Field(default=None, ge=8)
    batch_size: int | None = Field(default=None, ge=1)
    max_length: int = Field(default=128, ge=8)
    device: str | None = None  # None: cuda when present
    # KLUE 2.3 did not run the detectors on formal news text
    skip_styles: list[str] = Field(default_factory=lambda: ["formal"])
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


class FilterSettings(_Strict):
    noise: NoiseSettings = Field(default_factory=NoiseSettings)
    pii: PiiSettings = Field(default_factory=PiiSettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    classifiers: ClassifierSettings = Field(default_factory=ClassifierSettings)


class RunnerSettings(_Strict):
    """Where the work runs: local Dask workers (all cores by default) or a scheduler."""

    workers: int | None = Field(default=None, ge=1)
    dask_address: str | None = None
    shard_size: int = Field(default=20000, ge=1)


class TranslatorSpec(_Strict):
    """One translation backend (pipelines.pairing.translate): a local checkpoint or an HTTP API."""

    backend: Literal["transformers", "http"]
    # transformers: a local checkpoint directory (relative to the recipe)
    model: str | None = None
    device: str | None = None
    batch_size: int = Field(default=32, ge=1)
    num_beams: int = Field(default=1, ge=1)
    max_new_tokens: int = Field(default=256, ge=1)
    # http: Papago-style defaults; keys are read from the named environment variables
    endpoint: str | None = None
    key_env: str | None = None
    key_id_env: str | None = None
    key_header: str = "X-NCP-APIGW-API-KEY"
    key_id_header: str = "X-NCP-APIGW-API-KEY-ID"
    response_path: str = "message.result.translatedText"
    honorific: bool | None = None
    requests_per_second: float = Field(default=5.0, ge=0)
    max_retries: int = Field(default=5, ge=0)
    backoff_s: float = Field(default=1.0, ge=0)

    @model_validator(mode="after")
    def _check(self) -> TranslatorSpec:
        if self.backend == "transformers" and not self.model:
            raise ValueError("a transformers translator needs model (a checkpoint directory)")
        if self.backend == "http" and not self.endpoint:
            raise ValueError("an http translator needs endpoint")
        return self


class RttSettings(_Strict):
    """Round-trip translation (KLUE 3.2.1) and the checks a round trip must pass."""

    # KLUE 3.2.1 translated through English
    pivot: str = "en"
    forward: TranslatorSpec | None = None
    # default: the forward translator (a multilingual checkpoint such as M2M100 or NLLB)
    backward: TranslatorSpec | None = None
    # SQLite translation cache (relative to the recipe); default OUT/.cache/translations.sqlite
    cache: str | None = None
    # Not in the papers: benchforge's defaults, documented in README.
    min_length_ratio: float = Field(default=0.5, gt=0)
    max_length_ratio: float = Field(default=2.0, gt=0)
    # unrelated Korean sentences share particles and endings: ROUGE-L ~0.2 between them
    min_rouge: float = Field(default=0.3, ge=0, le=1)


class GsmSpec(_Strict):
    """Greedy sentence matching over a seeded sample of ``pool`` sentences; ``pairs`` of
    the resulting pairs are kept, evenly spread over the draw order so that the whole
    range of scores survives (default: all)."""

    pool: int | None = Field(default=None, ge=2)
    pairs: int | None = Field(default=None, ge=1)


class RttSpec(_Strict):
    sentences: int = Field(ge=1)


class MetadataSpec(_Strict):
    """Pairs from metadata (KLUE 3.2.1 on ParaKQC): same group (intent) is similar,
    different group within the same topic is less similar. ``group_field`` and
    ``topic_field`` name document columns or ``keep_fields``; with ``group_block: K`` the
    group is the K-record block of a line number (ParaKQC: 10 paraphrases per intent)."""

    group_field: str
    group_block: int | None = Field(default=None, ge=1)
    topic_field: str | None = None
    similar_per_group: int = Field(default=1, ge=0)
    dissimilar_per_group: int = Field(default=1, ge=0)


class CorpusPairing(_Strict):
    corpus: str
    gsm: GsmSpec | None = None
    rtt: RttSpec | None = None
    metadata: MetadataSpec | None = None


class PairingSettings(_Strict):
    """Which pairs to build from which corpus (``benchforge pair``)."""

    # an ingest output folder (relative to the recipe); default: ingest into OUT/ingest
    input: str | None = None
    seed: int = 0
    metric: Literal["rouge1", "rouge2", "rougeL"] = "rougeL"
    rtt: RttSettings = Field(default_factory=RttSettings)
    corpora: list[CorpusPairing] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> PairingSettings:
        if any(c.rtt for c in self.corpora) and self.rtt.forward is None:
            raise ValueError("rtt pairs are asked for but pairing.rtt.forward is not set")
        return self


class PremiseRules(_Strict):
    """KLUE 3.3.1's premise rules (see pipelines.tasks.nli_premises): a declarative sentence (its
    final ending, MeCab tag EF, ends with one of ``endings``; no question mark) with a
    predicate (a morpheme tagged with one of ``predicate_tags``), ``min_chars`` to
    ``max_chars`` characters long."""

    min_chars: int = Field(default=20, ge=1)
    max_chars: int = Field(default=90, ge=1)
    endings: list[str] = Field(default_factory=lambda: ["다"], min_length=1)
    predicate_tags: list[str] = Field(
        default_factory=lambda: ["VV", "VA", "VX", "VCP", "VCN", "XSV", "XSA"], min_length=1
    )

    @model_validator(mode="after")
    def _check(self) -> PremiseRules:
        if self.min_chars > self.max_chars:
            raise ValueError(f"premises: min_chars {self.min_chars} > max_chars {self.max_chars}")
        return self


class ItemsSpec(_Strict):
    """Which built items go to annotators (``benchforge rebuild``): a seeded sample of
    ``sample`` items (all when null), drawn evenly over ``stratify`` (e.g. the pairing
    method, or the corpus), with ``simulate_truth`` naming how the simulated annotators'
    latent answer is set (``sts-pairs``: from the pairing method and score, see
    pipelines.tasks.sts; ``nli-templates``: templated hypotheses, see pipelines.tasks.nli;
    ``topic-keywords``: a keyword lexicon, see pipelines.tasks.ynat).
    ``premises`` (NLI recipes) selects premise sentences by KLUE's rules instead of
    sampling pairs."""

    sample: int | None = Field(default=None, ge=1)
    stratify: str | None = "method"
    seed: int = 0
    simulate_truth: Literal["sts-pairs", "nli-templates", "topic-keywords"] | None = "sts-pairs"
    premises: PremiseRules | None = None


class SimulateSpec(_Strict):
    """Simulated annotators (demos and tests only; the outputs say so)."""

    annotators: int = Field(default=7, ge=1)
    seed: int = 0
    # how many of them answer at random (None: max(1, round(0.15 * annotators)))
    careless: int | None = Field(default=None, ge=0)


class WritingSpec(_Strict):
    """KLUE-NLI's writing round: one writer per premise writes a hypothesis per label
    (``nli_hypothesis.xml``); the validation round (``annotation``) then labels them."""

    config: str
    project: str | None = None  # default: "<recipe name>-writing"
    simulate: SimulateSpec | None = None


class AnnotationSpec(_Strict):
    """The Label Studio round (issue 5): interface, overlap, project, and either real
    annotators (wait up to ``timeout`` seconds) or simulated ones. ``writing`` adds the
    NLI hypothesis-writing round before it."""

    config: str  # an annotation_configs/*.xml file, relative to the recipe
    overlap: int = Field(default=1, ge=1)
    project: str | None = None  # default: the recipe's name
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)
    writing: WritingSpec | None = None

    @model_validator(mode="after")
    def _enough_annotators(self) -> AnnotationSpec:
        """Fewer simulated annotators than the overlap can never finish a task: the wait
        would block for its whole timeout and every rerun again (issue 32)."""
        if self.simulate is not None and self.simulate.annotators < self.overlap:
            raise ValueError(
                f"simulate.annotators {self.simulate.annotators} < overlap {self.overlap}: "
                "no task could get its annotations; simulate at least as many annotators "
                "as the overlap"
            )
        return self


class MemorySpec(_Strict):
    """A translation memory (pipelines.pairing.memory): a TSV or CSV of source -> target."""

    path: str  # relative to the recipe
    source_column: str = "source"
    target_column: str = "target"
    # rapidfuzz fuzz.ratio (0-100) a fuzzy match needs; 100: exact matches only
    fuzzy_threshold: float = Field(default=90.0, ge=0, le=100)


class MtTrainSpec(_Strict):
    """Train the machine translator here (pipelines.models.train_mt), into OUT/mt-model."""

    parallel: str  # a TSV/CSV of source and target sentences, relative to the recipe
    source_column: str = "source"
    target_column: str = "target"
    vocab_size: int = Field(default=2000, ge=50)
    d_model: int = Field(default=128, ge=8)
    layers: int = Field(default=2, ge=1)
    heads: int = Field(default=4, ge=1)
    ffn_dim: int = Field(default=512, ge=8)
    epochs: int = Field(default=20, ge=1)
    batch_size: int = Field(default=32, ge=1)
    lr: float = Field(default=1e-3, gt=0)
    heldout: int = Field(default=100, ge=0)
    seed: int = 0
    limit: int | None = Field(default=None, ge=2)
    device: str | None = None  # None: cuda when present
    # decoding of the trained model
    batch_size_translate: int = Field(default=64, ge=1)
    num_beams: int = Field(default=1, ge=1)


class PostEditSimulation(_Strict):
    """Simulated post-editors (demos and tests): their latent target is the reference
    corpus's human translation; a draft close to it (chrF at least ``close_chrf``) is
    left unchanged with probability ``keep_close_rate``."""

    seed: int = 0
    keep_close_rate: float = Field(default=0.5, ge=0, le=1)
    close_chrf: float = Field(default=60.0, ge=0, le=100)


class PostEditSpec(_Strict):
    """The post-editing round and its cross-check (KorSTS/KorNLI: two translators each
    post-edit half and review the other's half)."""

    # None: benchforge's annotation_configs/mt_postedit.xml and mt_crosscheck.xml
    config: str | None = None
    crosscheck_config: str | None = None
    project: str | None = None  # prefix of the four projects; default: the recipe's name
    simulate: PostEditSimulation | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class RelabelSpec(_Strict):
    """The relabel round of flagged translated pairs: annotators label the Korean pair
    (STS: 0-5, ``sts.xml``; NLI: ``nli_validation.xml``) and their mean (STS) or
    majority (NLI) replaces the English label."""

    config: str | None = None  # None: annotation_configs/sts.xml or nli_validation.xml
    overlap: int = Field(default=3, ge=1)
    project: str | None = None  # default: "<recipe name>-relabel"
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class TranslationQaSpec(_Strict):
    """Translation QA (pipelines.quality.translation_qa): which label-risk checks run,
    their thresholds, and what happens to a flagged pair."""

    checks: list[str] | None = None  # None: the task kind's default checks
    near_identical: float = Field(default=0.95, gt=0, le=1)
    latin_min_words: int = Field(default=2, ge=1)
    length_ratio_z: float = Field(default=3.5, gt=0)
    # drop: flagged pairs leave the release; keep: they stay, listed for review;
    # relabel: they go to a relabel round in Label Studio (``relabel``) for a new label
    on_flag: Literal["drop", "keep", "relabel"] = "drop"
    relabel: RelabelSpec = Field(default_factory=RelabelSpec)

    @field_validator("checks")
    @classmethod
    def _known(cls, names: list[str] | None) -> list[str] | None:
        from pipelines.quality.translation_qa import TRANSLATION_CHECKS

        for name in names or []:
            TRANSLATION_CHECKS.get(name)
        return names


class TranslationSpec(_Strict):
    """Translate an English dataset (KorSTS/KorNLI, Ham et al. 2020): ``source`` names
    the corpus holding the English pairs; ``reference`` (optional) an aligned corpus of
    the same rows (the KorSTS release): its metadata columns are exported and its
    translations are the simulated post-editors' latent target."""

    source: str
    reference: str | None = None
    split: str = "dev"
    source_lang: str = "en"
    target_lang: str = "ko"
    memory: MemorySpec | None = None
    translator: TranslatorSpec | None = None
    train: MtTrainSpec | None = None
    cache: str | None = None  # SQLite translation cache; default OUT/translate/cache.sqlite
    postedit: PostEditSpec = Field(default_factory=PostEditSpec)
    qa: TranslationQaSpec = Field(default_factory=TranslationQaSpec)

    @model_validator(mode="after")
    def _one_translator(self) -> TranslationSpec:
        if self.translator and self.train:
            raise ValueError("translation: give translator (an existing model) or train, not both")
        if not (self.translator or self.train or self.memory):
            raise ValueError("translation: needs translator, train or memory")
        return self


def typed_rules(cls: type, options: dict, where: str) -> object:
    """A family's rules dataclass from a recipe's mapping; an unknown key is an error
    naming ``where`` and the known ones."""
    from dataclasses import fields

    known = {f.name for f in fields(cls)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"{where}: unknown settings {unknown} (known: {sorted(known)})")
    return cls(**options)


class KobbqRound(_Strict):
    """A KoBBQ Label Studio round: the survey (``annotation_configs/kobbq_survey.xml``:
    ``per_category`` of the release's questions per category, 0 for all; simulated
    respondents answer as the release's did) or the reading-comprehension check
    (``kobbq_check.xml``: the evaluation samples of ``per_category`` templates per
    category; simulated readers know the answer). ``respondents``: people per task."""

    per_category: int = Field(default=2, ge=0)
    respondents: int = Field(default=10, ge=1)
    config: str | None = None  # default: benchforge's annotation_configs/kobbq_survey.xml
    project: str | None = None  # default: "<recipe name>-survey"
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class KobbqSpec(_Strict):
    """A KoBBQ-style bias benchmark (Jin et al. 2024; pipelines.bias): the template file
    (a corpus of the recipe), the survey (the release's JSON), the survey rules
    (``rules``: pipelines.bias.survey.SurveySettings, the paper's thresholds by default),
    whether the survey's roles limit the fillers (``use_targets``), the "unknown" answer,
    and the evaluation set's seed."""

    templates: str  # the corpus holding the template TSV
    survey: str  # the survey JSON, relative to the recipe
    rules: dict[str, object] = Field(default_factory=dict)
    use_targets: bool = False
    targets_from: Literal["release", "round"] = "release"
    unknown: str = "알 수 없음"
    evaluation_seed: int = 0
    survey_round: KobbqRound | None = None
    check_round: KobbqRound | None = None

    @model_validator(mode="after")
    def _rules(self) -> KobbqSpec:
        self.survey_settings()
        if self.targets_from == "round" and self.survey_round is None:
            raise ValueError("kobbq: targets_from: round needs a survey_round")
        return self

    def survey_settings(self) -> object:
        """The typed survey rules (pipelines.bias.survey.SurveySettings)."""
        from pipelines.bias.survey import SurveySettings

        return typed_rules(SurveySettings, self.rules, "kobbq.rules")


class JglueRound(_Strict):
    """A JGLUE Label Studio round (``raters`` people per item): ``sts`` (the 0-5 rating,
    ``annotation_configs/jsts.xml``), ``nli`` (JNLI step 1) and ``validation`` (the
    contradictions' check; both ``jnli_judgement.xml``), ``writing`` (four contradictions
    per caption, ``jnli_contradiction.xml``). The configs carry JGLUE's Japanese
    guidelines."""

    raters: int = Field(default=5, ge=1)
    config: str | None = None  # default: benchforge's annotation_configs/ file above
    project: str | None = None  # default: "<recipe name>-<round>"
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class JglueSpec(_Strict):
    """JSTS / JNLI construction (Kurihara et al. 2022, 3.2; pipelines.jglue): the release
    files the captions are recovered from (corpora of the recipe), how many pairs of one
    image (JSTS-A, JNLI) and of two images (JSTS-B) are drawn, the writing round's
    captions, the rules' thresholds (``rules``: pipelines.jglue.construct.JglueRules,
    the paper's by default) and the rounds."""

    releases: list[str] = Field(min_length=1)  # corpora holding JSTS / JNLI JSON Lines
    same_image: int = Field(default=60, ge=0)  # 0: every pair
    other_image: int = Field(default=20, ge=0)
    other_image_method: Literal["random", "gsm"] = "random"
    seed: int = 0
    writing_captions: int = Field(default=20, ge=0)
    # "release": draw only one-image pairs the release has and captions it wrote
    # contradictions for (demos: simulated people then answer as the release did)
    draw_from: Literal["any", "release"] = "any"
    rules: dict[str, object] = Field(default_factory=dict)
    sts_round: JglueRound | None = None
    nli_round: JglueRound | None = None
    writing_round: JglueRound | None = None
    validation_round: JglueRound | None = None

    @model_validator(mode="after")
    def _rules(self) -> JglueSpec:
        self.construction_rules()
        return self

    def construction_rules(self) -> object:
        """The typed thresholds (pipelines.jglue.construct.JglueRules)."""
        from pipelines.jglue.construct import JglueRules

        options = dict(self.rules)
        if "nli_gold" in options:
            options["nli_gold"] = tuple(options["nli_gold"])
        return typed_rules(JglueRules, options, "jglue.rules")


class KobestRound(_Strict):
    """A KoBEST Label Studio round: ``writing`` (one writer per prompt,
    ``annotation_configs/kobest_<task>.xml``), ``review`` (the linguists: accept / edit /
    reject, ``kobest_<task>_review.xml``) or ``revision`` (the artifact review's items,
    the review config). ``people``: per item."""

    people: int = Field(default=1, ge=1)
    config: str | None = None  # default: benchforge's annotation_configs/ file above
    project: str | None = None  # default: "<recipe name>-<round>"
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)


class KobestSimulation(_Strict):
    """What the simulated people of a KoBEST demo plant (pipelines.kobest.simulate):
    COPA ``seeds`` (a corpus of the recipe), ``swaps`` written twice in opposite
    directions, ``cue`` items whose answer carries a number (COPA) or 진짜 (SentiNeg);
    SentiNeg writers who hand back ``copies`` of the original or add ``brands``."""

    seeds: str | None = None
    swaps: int = Field(default=4, ge=0)
    cue: int = Field(default=10, ge=0)
    copies: int = Field(default=2, ge=0)
    brands: int = Field(default=2, ge=0)


class KobestSpec(_Strict):
    """A KoBEST task (Kim et al. 2022; pipelines.kobest, pipelines/tasks/kobest.py): the
    source corpus of the prompts (NSMC reviews for SentiNeg; for BoolQ, WiC and
    HellaSwag JSON Lines with the given field: paragraph, word, topic), how many prompts,
    the seed, the rules' thresholds (``rules``: pipelines.kobest.rules.KobestRules), the
    rounds and, for demos, what the simulated people plant."""

    source: str | None = None
    items: int = Field(default=40, ge=1)
    seed: int = 0
    rules: dict[str, object] = Field(default_factory=dict)
    writing_round: KobestRound | None = None
    review_round: KobestRound | None = None
    revision_round: KobestRound | None = None
    simulation: KobestSimulation | None = None

    @model_validator(mode="after")
    def _rules(self) -> KobestSpec:
        self.kobest_rules()
        return self

    def kobest_rules(self) -> object:
        """The typed thresholds (pipelines.kobest.rules.KobestRules)."""
        from pipelines.kobest.rules import KobestRules

        options = dict(self.rules)
        if "wh_words" in options:
            options["wh_words"] = tuple(options["wh_words"])
        return typed_rules(KobestRules, options, "kobest.rules")


class StageOptions(_Strict):
    """Settings passed through to a stage's settings class (agreement, split); checked
    against that class's fields and types by ``load_recipe`` (``check_stage_options``)."""

    model_config = ConfigDict(extra="allow")
    rule: str


class ExportSpec(_Strict):
    """The released dataset (its layout is the task kind's, named by the recipe's
    ``task``)."""

    guid_prefix: str | None = None  # default: "<recipe name>_<split>"
    # the release licence; None: derived from the sources (pipelines.export.licenses)
    license: str | None = None
    # TSV cells a spreadsheet would run as a formula (=, +, -, @) get a leading ' (issue
    # 32, pipelines.core.spreadsheet); JSON Lines and Parquet keep the exact text
    spreadsheet_safe: bool = True


CARD_TEXTS = {
    "intended_uses": "Uses: what the dataset is for (tasks, users)",
    "out_of_scope_uses": "Uses: what it must not be used for",
    "distribution": "Distribution: where and how it is published, and when",
    "maintenance": "Maintenance: who maintains it, how errors are reported and fixed",
    "annotator_demographics": "Annotators: age range, gender, language varieties, training",
    "compensation": "Annotators: how they were recruited and paid",
    "ethics_review": "Ethics review: the board or process that reviewed the collection",
}


class CardSpec(_Strict):
    """The data card: thresholds of its warnings (``pipelines.export.warnings``) and the
    Datasheets/Data Statements answers only the team can give (``CARD_TEXTS``); each one
    left out shows as a placeholder in the card's *To complete before release* box."""

    alpha_ratio_min: float = Field(default=0.5, gt=0)  # alpha below this share of the paper's
    max_label_share: float = Field(default=0.5, gt=0, le=1)  # one gold label's share
    max_drop_share: float = Field(default=0.5, gt=0, le=1)  # one filter, one source
    # an annotator choosing the gold label less often (rules that screen no annotator)
    min_annotator_agreement: float = Field(default=0.5, ge=0, le=1)
    intended_uses: str | None = None
    out_of_scope_uses: str | None = None
    distribution: str | None = None
    maintenance: str | None = None
    annotator_demographics: str | None = None
    compensation: str | None = None
    ethics_review: str | None = None


class Recipe(_Strict):
    name: str
    description: str = ""
    # benchforge rebuild: the dataset family (a registered task kind, pipelines.tasks)
    task: str | None = None
    language: str = "ko"  # a registered language (pipelines.lang): the corpora's default
    corpora: list[CorpusSpec] = Field(min_length=1)
    filters: FilterSettings = Field(default_factory=FilterSettings)
    runner: RunnerSettings = Field(default_factory=RunnerSettings)
    pairing: PairingSettings | None = None
    # benchforge rebuild: items -> Label Studio -> agreement -> split -> export -> card
    items: ItemsSpec = Field(default_factory=ItemsSpec)
    annotation: AnnotationSpec | None = None
    agreement: StageOptions | None = None
    split: StageOptions | None = None
    export: ExportSpec = Field(default_factory=ExportSpec)
    # benchforge rebuild of a translated dataset (korsts, kornli)
    translation: TranslationSpec | None = None
    # benchforge rebuild of a KoBBQ-style bias benchmark (task kobbq)
    kobbq: KobbqSpec | None = None
    # benchforge rebuild of JSTS / JNLI (tasks jsts, jnli)
    jglue: JglueSpec | None = None
    # benchforge rebuild of a KoBEST task (tasks kobest-boolq, -copa, -wic, -hellaswag,
    # -sentineg)
    kobest: KobestSpec | None = None
    card: CardSpec = Field(default_factory=CardSpec)
    # set by load_recipe: the folder relative paths are resolved against
    base_dir: str = ""

    @model_validator(mode="before")
    @classmethod
    def _no_layout(cls, data: object) -> object:
        export = data.get("export") if isinstance(data, dict) else None
        if isinstance(export, dict) and "layout" in export:
            raise ValueError(
                f"export.layout was replaced by the recipe's task (task: {export['layout']}); "
                "the task kind knows its layout"
            )
        return data

    @field_validator("task")
    @classmethod
    def _known_task(cls, name: str | None) -> str | None:
        from pipelines.tasks import TASK_KINDS

        if name is not None:
            TASK_KINDS.get(name)  # UnknownName (a KeyError) names the nearest kind
        return name

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str) -> str:
        from pipelines.lang import LANGUAGES

        LANGUAGES.get(code)
        return code

    def corpus_language(self, corpus: CorpusSpec) -> str:
        """The language of ``corpus``: its own, else the recipe's."""
        return corpus.language or self.language

    def agreement_settings(self, values: list[str] | None = None) -> object:
        """The typed settings of the recipe's agreement rule (``values``: the interface's
        answers, when the recipe gives none)."""
        from pipelines.agreement.rules import AgreementSettings

        options = self.agreement.model_dump()
        if options.get("values") is None and values is not None:
            options["values"] = values
        return AgreementSettings(**options)

    def split_settings(self, seed: int | None = None) -> object:
        """The typed settings of the recipe's split rule (``seed`` overrides the recipe's)."""
        from pipelines.splits.base import SplitSettings

        options = self.split.model_dump()
        if seed is not None:
            options["seed"] = seed
        return SplitSettings(**options)

    @model_validator(mode="after")
    def _licences(self) -> Recipe:
        """The sources' licences allow a release (the recipe's ``export.license`` when
        named): checked at load, before any work."""
        self.release_licence()
        return self

    def release_licence(self) -> object:
        """The release licence (:class:`pipelines.export.licenses.Resolution`)."""
        from pipelines.export.licenses import resolve

        return resolve({c.name: c.license for c in self.corpora}, self.export.license)

    @model_validator(mode="after")
    def _unique_names(self) -> Recipe:
        names = [c.name for c in self.corpora]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"corpus names must be unique; repeated: {dupes}")
        if self.translation:
            for field in ("source", "reference"):
                name = getattr(self.translation, field)
                if name is not None and name not in names:
                    raise ValueError(f"translation.{field}: no corpus named {name!r} ({names})")
        if self.kobbq and self.kobbq.templates not in names:
            raise ValueError(f"kobbq.templates: no corpus named {self.kobbq.templates!r} ({names})")
        if self.jglue:
            unknown = sorted(set(self.jglue.releases) - set(names))
            if unknown:
                raise ValueError(f"jglue.releases: no corpus named {unknown} ({names})")
        if self.kobest:
            wanted = [self.kobest.source, self.kobest.simulation and self.kobest.simulation.seeds]
            unknown = sorted({w for w in wanted if w} - set(names))
            if unknown:
                raise ValueError(f"kobest: no corpus named {unknown} ({names})")
        if self.pairing and self.pairing.input is None:
            unknown = sorted({p.corpus for p in self.pairing.corpora} - set(names))
            if unknown:
                raise ValueError(f"pairing names corpora the recipe does not have: {unknown}")
        return self

    @model_validator(mode="after")
    def _votes_within_overlap(self) -> Recipe:
        """``agreement.min_votes`` above the overlap keeps no item (issue 32): known at load,
        not after the annotation round."""
        votes = self.agreement.model_dump().get("min_votes") if self.agreement else None
        if self.annotation is not None and isinstance(votes, int) and not isinstance(
                votes, bool) and votes > self.annotation.overlap:  # fmt: skip
            raise ValueError(
                f"agreement.min_votes {votes} > annotation.overlap {self.annotation.overlap}: "
                "no item could reach it"
            )
        return self

    def corpus_path(self, corpus: CorpusSpec) -> Path:
        return self.resolve(corpus.path)

    def resolve(self, path: str) -> Path:
        """A path of the recipe, relative to the recipe file."""
        return (Path(self.base_dir) / path).expanduser().resolve()


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, but a key given twice in one mapping is an error (YAML says
    keys are unique; PyYAML would silently keep the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"key {key!r} appears twice (first on line {seen[key] + 1})",
                    key_node.start_mark,
                )  # fmt: skip
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_recipe(path: str | Path, overrides: dict | None = None) -> Recipe:
    """Read and validate a recipe; ``overrides`` is merged over the YAML (for the CLI)."""
    path = Path(path)
    if not path.is_file():
        raise RecipeError(f"{path}: recipe file not found")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a mapping with at least 'name' and 'corpora'")
    for key, value in (overrides or {}).items():
        section = data.setdefault(key, {})
        section.update({k: v for k, v in value.items() if v is not None})
    data["base_dir"] = str(path.parent.resolve())
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise RecipeError(f"{path}: {_problems(exc)}") from exc
    check_stage_options(recipe, path)
    return recipe


def _problems(exc: ValidationError, prefix: str = "") -> str:
    out = []
    for err in exc.errors():
        where = ".".join([prefix, *map(str, err["loc"])] if prefix else map(str, err["loc"]))
        msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
        out.append(f"{where or '(top)'}: {msg}")
    return "; ".join(out)


def check_stage_options(recipe: Recipe, path: str | Path) -> None:
    """The ``agreement`` and ``split`` sections against their rule's settings class, at
    load time (a union tagged by ``rule``): an unknown key (with the nearest valid name),
    a value of the wrong type or a rule's own check fails here, naming the file and the
    key, before any work (not after the annotation rounds)."""
    from pipelines.agreement.rules import AGREEMENT_RULES
    from pipelines.core.settings import options_model, settings_class
    from pipelines.splits.base import SPLIT_RULES

    def error(message: str) -> RecipeError:
        return RecipeError(f"{path}: {message}")

    for section, registry in (("agreement", AGREEMENT_RULES), ("split", SPLIT_RULES)):
        options = getattr(recipe, section)
        if options is None:
            continue
        data = options.model_dump()
        cls = settings_class(registry, data, error, section, data["rule"])
        try:
            options_model(cls).model_validate(data)
        except ValidationError as exc:
            raise RecipeError(f"{path}: {_problems(exc, section)}") from None
        try:
            cls(**data)
        except ValueError as exc:
            raise RecipeError(f"{path}: {section}: {exc}") from None


def settings_key(*parts: object) -> str:
    """A stable hash of settings (pydantic models, dicts, strings) for cache keys."""

    def plain(obj: object) -> object:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        return obj

    blob = json.dumps([plain(p) for p in parts], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]
