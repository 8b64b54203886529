"""Recipes: one YAML file describes a dataset build (sources, filters, runner).

A recipe that names only its corpora works: every filter setting has a default, the
papers' value where a paper gives one (cited on the field). Paths are relative to the
recipe file. Invalid recipes raise :class:`RecipeError` naming the file and the field.

This module holds the recipe's shell: name, task, language, corpora, filters, runner,
pairing, items, annotation, export and card. A section a stage or a family owns
(``agreement``, ``split``, ``translation``, ``kobbq``, ``jglue``, ``kobest``, ...) is
registered by its owner (:data:`pipelines.core.plugins.RECIPE_SECTIONS`) with its model
and checks; :func:`recipe_model` joins the shell and every registered section into one
model, so a recipe is still validated whole at load, before any work, and the whole
schema is one JSON Schema (:func:`recipe_schema`). Core imports nothing above it.
"""

from __future__ import annotations

import hashlib
import json
import re
import typing
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from pipelines.core import plugins
from pipelines.core.errors import BenchforgeError
from pipelines.core.licenses import Resolution, resolve
from pipelines.core.settings import Seed, Share


class RecipeError(BenchforgeError, ValueError):
    """A recipe that cannot be used; the message names the file and the problem."""


class Strict(BaseModel):
    """A recipe section: unknown keys are errors, and a value of the wrong kind is not
    coerced (issue 32): ``true`` is not a number, a number is not text; no number is
    NaN or infinite (issue 51: ``.inf`` and ``.nan`` are YAML floats)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

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

    args = typing.get_args(annotation) if isinstance(
        annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union else (
        annotation,)  # fmt: skip
    kinds = {a for a in args if a is not type(None)}
    return kinds if kinds and all(k in (bool, int, float, str) for k in kinds) else set()


class CorpusSpec(Strict):
    """One source corpus and its provenance."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    path: str
    format: Literal["jsonl", "csv", "tsv", "txt"]
    text_field: str | None = None
    id_field: str | None = None
    date_field: str | None = None
    date_format: str | None = None
    license: str  # SPDX identifier (CC0-1.0, CC-BY-SA-4.0, ...): pipelines.core.licenses
    # the attribution line the release carries: title, authors, where it came from
    attribution: str | None = None
    # the licence's text as the corpus ships it: its notice is reproduced in the card of
    # every release built from the corpus (MIT: "The above copyright notice and this
    # permission notice shall be included in all copies or substantial portions")
    license_file: str | None = None
    # text its authors posted on a website (reviews, comments) and a third party scraped:
    # the card says that the licence is the collector's, not the authors'
    scraped_user_text: bool = False
    domain: str
    style: Literal["formal", "colloquial"]
    # who published the text (a news corpus's publisher): KLUE 2.3 skips the toxic-content
    # filter for three publishers by name (ClassifierSettings.skip_publishers)
    publisher: str | None = None
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


class RunnerSettings(Strict):
    """Where the work runs: local Dask workers (all cores by default) or a scheduler."""

    workers: int | None = Field(default=None, ge=1)
    dask_address: str | None = None
    shard_size: int = Field(default=20000, ge=1)


class TranslatorSpec(Strict):
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


class RttSettings(Strict):
    """Round-trip translation (KLUE 3.2.1) and the checks a round trip must pass."""

    # KLUE 3.2.1 translated through English
    pivot: str = "en"
    forward: TranslatorSpec | None = None
    # default: the forward translator (a multilingual checkpoint such as M2M100 or NLLB)
    backward: TranslatorSpec | None = None
    # SQLite translation cache (relative to the recipe); default OUT/.cache/translations.sqlite
    cache: str | None = None
    # Not in the papers: benchforge's defaults, documented in docs/commands/pair.md.
    min_length_ratio: float = Field(default=0.5, gt=0)
    max_length_ratio: float = Field(default=2.0, gt=0)
    # unrelated Korean sentences share particles and endings: ROUGE-L ~0.2 between them
    min_rouge: float = Field(default=0.3, ge=0, le=1)


class GsmSpec(Strict):
    """Greedy sentence matching over a seeded sample of ``pool`` sentences; ``pairs`` of
    the resulting pairs are kept, evenly spread over the draw order so that the whole
    range of scores survives (default: all)."""

    pool: int | None = Field(default=None, ge=2)
    pairs: int | None = Field(default=None, ge=1)


class RttSpec(Strict):
    sentences: int = Field(ge=1)


class MetadataSpec(Strict):
    """Pairs from metadata (KLUE 3.2.1 on ParaKQC): same group (intent) is similar,
    different group within the same topic is less similar. ``group_field`` and
    ``topic_field`` name document columns or ``keep_fields``; with ``group_block: K`` the
    group is the K-record block of a line number (ParaKQC: 10 paraphrases per intent)."""

    group_field: str
    group_block: int | None = Field(default=None, ge=1)
    topic_field: str | None = None
    similar_per_group: int = Field(default=1, ge=0)
    dissimilar_per_group: int = Field(default=1, ge=0)


class CorpusPairing(Strict):
    corpus: str
    gsm: GsmSpec | None = None
    rtt: RttSpec | None = None
    metadata: MetadataSpec | None = None


class PairingSettings(Strict):
    """Which pairs to build from which corpus (``benchforge pair``)."""

    # an ingest output folder (relative to the recipe); default: ingest into OUT/ingest
    input: str | None = None
    seed: Seed = 0
    metric: Literal["rouge1", "rouge2", "rougeL"] = "rougeL"
    rtt: RttSettings = Field(default_factory=RttSettings)
    corpora: list[CorpusPairing] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> PairingSettings:
        if any(c.rtt for c in self.corpora) and self.rtt.forward is None:
            raise ValueError("rtt pairs are asked for but pairing.rtt.forward is not set")
        return self


class PremiseRules(Strict):
    """KLUE 3.3.1's premise rules (see pipelines.families.klue.nli_premises): a declarative
    sentence (its final ending, MeCab tag EF, ends with one of ``endings``; no question mark) with a
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


class ItemsSpec(Strict):
    """Which built items go to annotators (``benchforge rebuild``): a seeded sample of
    ``sample`` items (all when null), drawn evenly over ``stratify`` (e.g. the pairing
    method, or the corpus), with ``simulate_truth`` naming how the simulated annotators'
    latent answer is set (``sts-pairs``: from the pairing method and score, see
    pipelines.families.klue.sts; ``nli-templates``: templated hypotheses, see
    pipelines.families.klue.nli; ``topic-keywords``: a keyword lexicon, see
    pipelines.families.klue.ynat). ``premises`` (NLI recipes) selects premise sentences by
    KLUE's rules instead of sampling pairs."""

    sample: int | None = Field(default=None, ge=1)
    stratify: str | None = "method"
    seed: Seed = 0
    simulate_truth: Literal["sts-pairs", "nli-templates", "topic-keywords"] | None = "sts-pairs"
    premises: PremiseRules | None = None


class SimulateSpec(Strict):
    """Simulated annotators (demos and tests only; the outputs say so)."""

    annotators: int = Field(default=7, ge=1)
    seed: Seed = 0
    # how many of them answer at random (None: max(1, round(0.15 * annotators)))
    careless: int | None = Field(default=None, ge=0)
    # how many of them cannot do the task: they answer at random in the qualification
    # (pilot) round too, and fail it; their main-round annotations come on top of the
    # overlap (issue 35). The careless ones pass the pilot and turn careless after it.
    unqualified: int = Field(default=0, ge=0)


def enough_simulated(simulate: SimulateSpec | None, people: int, name: str = "people") -> None:
    """A round with ``people`` per task and fewer simulated people can never finish:
    ``wait`` would stop at its timeout and every rerun again (issue 51: exit 3 and "run
    the same command again" after a minute). Raises ``ValueError`` naming both
    settings; nothing to check with real people (``simulate`` None)."""
    if simulate is not None and simulate.annotators < people:
        raise ValueError(
            f"simulate.annotators {simulate.annotators} < {name} {people}: no task could "
            f"get its {name}, and no rerun either; simulate at least {people} people"
        )


class RoundSpec(Strict):
    """A family's own Label Studio round (JSQuAD's writing and validation rounds,
    JCommonsenseQA's four): ``people`` per task, the interface (``config``; None: the
    family's file in annotation_configs/), the project (None: "<recipe name>-<round>"),
    simulated people, and how long ``wait`` waits and how often it looks."""

    people: int = Field(default=1, ge=1)
    config: str | None = None
    project: str | None = None
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _enough(self) -> RoundSpec:
        enough_simulated(self.simulate, self.people)
        return self


class PassRuleSpec(Strict):
    """A pilot's pass rule (``pipelines.agreement.qualification.PassRule``):
    ``min_correct`` (``threshold`` of ``of`` gold items right; KLUE-RE 3.5.1: 4 of 5),
    ``min_pearson`` (Pearson r with the gold ratings) or ``min_majority_share`` (the
    others' majority answer on that share of the items)."""

    kind: Literal["min_correct", "min_pearson", "min_majority_share"]
    threshold: float
    of: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _range(self) -> PassRuleSpec:
        """The threshold in its kind's range (``PassRule`` checks the same)."""
        t = self.threshold
        if self.kind == "min_correct" and (t < 1 or t != int(t) or (self.of and t > self.of)):
            raise ValueError(f"threshold: min_correct counts gold items right, a whole number "
                             f"from 1 to of ({self.of or 'the gold items'}), got {t}")  # fmt: skip
        if self.kind == "min_pearson" and not -1 <= t <= 1:
            raise ValueError(f"threshold: min_pearson is a correlation in [-1, 1], got {t}")
        if self.kind == "min_majority_share" and not 0 < t <= 1:
            raise ValueError(f"threshold: min_majority_share is a share in (0, 1], got {t}")
        return self


class PilotSpec(Strict):
    """A qualification (pilot) round before the main round (issue 35; KLUE 3.1.1-3.5.1
    began every crowdsourced task with one): ``gold``, a JSON Lines file of items with
    their known answer (``item_id``, the interface's data fields, ``value``), shown to
    every applicant (``applicants``; default: the simulated pool), and the pass rule.
    Only those who pass count in the main round: the annotations of everyone else are
    excluded with reason ``not_qualified``."""

    gold: str
    rule: PassRuleSpec
    applicants: int | None = Field(default=None, ge=1)
    project: str | None = None  # default: "<recipe name>-pilot"
    config: str | None = None  # default: the main round's interface


class ControlsSpec(Strict):
    """Control items inside the main round (issue 35): ``items``, a JSON Lines file of
    items with a known answer (``item_id``, the data fields, ``value``), shuffled in as
    ``share`` of the round (at most 0.5) and hidden in the interface; an annotator
    whose accuracy on them is under ``min_accuracy`` over ``min_answered`` or more is
    screened out of the round's agreement (reason ``low_control_accuracy``). On a
    rating, an answer within ``tolerance`` of the known one counts as right."""

    items: str
    share: float = Field(gt=0, le=0.5)
    min_accuracy: float = Field(ge=0, le=1)
    min_answered: int = Field(default=3, ge=1)
    tolerance: float = Field(default=0.0, ge=0)
    seed: Seed = 0


class WritingSpec(Strict):
    """KLUE-NLI's writing round: one writer per premise writes a hypothesis per label
    (``nli_hypothesis.xml``); the validation round (``annotation``) then labels them."""

    config: str
    project: str | None = None  # default: "<recipe name>-writing"
    simulate: SimulateSpec | None = None


class ReviewSpec(Strict):
    """The review round of reported items (``agreement.reports: review``, issue 35): its
    project (default "<project>-review") and simulated reviewers (default: one, when the
    main round is simulated). Each reported item is reviewed once (overlap 1)."""

    project: str | None = None
    simulate: SimulateSpec | None = None


class HumanSpec(Strict):
    """The human performance round (issue 35; KLUE, JGLUE and KoBEST report it): other
    people than the annotators (their own pool) answer ``sample`` items of the test set
    as a model would, ``overlap`` people each; the card scores them against the gold."""

    sample: int = Field(default=50, ge=1)
    overlap: int = Field(default=3, ge=1)
    seed: Seed = 0
    project: str | None = None  # default: "<project>-human"
    simulate: SimulateSpec | None = None  # default: overlap + 1 people when simulated

    @model_validator(mode="after")
    def _enough(self) -> HumanSpec:
        enough_simulated(self.simulate, self.overlap, "overlap")
        return self


class AnnotationSpec(Strict):
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
    # the value type of a field when its control's default is not meant (field -> type,
    # e.g. {relations: dependency_tree}; pipelines.annotation.values)
    value_types: dict[str, str] = Field(default_factory=dict)
    pilot: PilotSpec | None = None  # a qualification round before this one (issue 35)
    controls: ControlsSpec | None = None  # control items shuffled into this round
    review: ReviewSpec | None = None  # the review round of reported items (reports: review)
    # a Markdown guideline, shown in Label Studio before labelling (the main round's and
    # the pilot's project instructions)
    guideline: str | None = None
    human: HumanSpec | None = None  # a human performance round on the test set

    @model_validator(mode="after")
    def _known_value_types(self) -> AnnotationSpec:
        """A pinned value type is a registered one (the error names the nearest)."""
        for name in self.value_types.values():
            plugins.VALUE_TYPES.get(name)
        return self

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
        sim = self.simulate
        if sim is not None and sim.unqualified and sim.annotators - sim.unqualified < self.overlap:
            raise ValueError(
                f"simulate.unqualified {sim.unqualified}: the {sim.annotators - sim.unqualified} "
                f"annotators left are fewer than the overlap {self.overlap}"
            )
        if sim is not None and sim.unqualified and self.pilot is None:
            raise ValueError(
                "simulate.unqualified needs a qualification round (annotation.pilot) to fail"
            )
        applicants = self.pilot.applicants if self.pilot else None
        if sim is not None and applicants is not None and applicants > sim.annotators:
            raise ValueError(
                f"pilot.applicants {applicants} > simulate.annotators {sim.annotators}: the "
                "pilot could never get its answers, and no rerun either"
            )
        return self


def rules_field(cls: type) -> typing.Any:
    """The field of a section that holds a rules dataclass's settings as a mapping
    (``ner.tagger.settings``, ``jglue.rules``, ...), checked by :func:`typed_rules`; its
    JSON Schema names the class (``x-settings``), which the docs and the range tests
    read."""
    return Field(
        default_factory=dict,
        json_schema_extra={"x-settings": f"{cls.__module__}.{cls.__qualname__}"},
    )


def typed_rules(cls: type, options: dict, where: str) -> object:
    """A family's rules dataclass from a recipe's mapping; an unknown key is an error
    naming ``where`` and the known ones. A YAML list given for a tuple-typed field
    becomes a tuple (the dataclass stays hashable and equal to its defaults). Every
    value is checked against its field's type and range (``options_model``: no
    coercion, no NaN where the field is a :data:`pipelines.core.settings.Finite` kind)
    and then by the class's own checks; each problem raises ``ValueError`` naming
    ``where.setting`` (issue 51: ``epochs: "twelve"`` was a traceback in training)."""
    from dataclasses import fields

    from pipelines.core.settings import named, options_model

    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown settings {unknown} (known: {sorted(known)})")
    hints = typing.get_type_hints(cls)
    options = {
        name: tuple(value)
        if isinstance(value, list) and typing.get_origin(hints.get(name)) is tuple
        else value
        for name, value in options.items()
    }
    try:
        options_model(cls).model_validate(options)
    except ValidationError as exc:
        raise ValueError(problems(exc, where)) from None
    try:
        return cls(**options)
    except (ValueError, TypeError) as exc:
        raise ValueError(named(where, str(exc), cls)) from None


class StageOptions(Strict):
    """Settings passed through to a stage's settings class (agreement, split); checked
    against that class's fields and types by ``load_recipe`` (``check_stage_options``)."""

    model_config = ConfigDict(extra="allow")
    rule: str


class ExportSpec(Strict):
    """The released dataset (its layout is the task kind's, named by the recipe's
    ``task``)."""

    guid_prefix: str | None = None  # default: "<recipe name>_<split>"
    # the release licence; None: derived from the sources (pipelines.core.licenses)
    license: str | None = None
    # TSV cells a spreadsheet would run as a formula (=, +, -, @) get a leading ' (issue
    # 32, pipelines.core.spreadsheet); JSON Lines and Parquet keep the exact text
    spreadsheet_safe: bool = True
    # issue 51 (pipelines.export.guards): the release is refused when a split is empty,
    # its labels take one class, or a model whose labels it carries is degenerate, unless
    # the guard is listed here; the card then warns of it
    allow_degenerate: list[Literal["empty_split", "single_class", "degenerate_model"]] = []
    # a trained tagger is degenerate when its dev score beats the trivial model's (entity
    # F1 0: the all-O tagger) by less than this (no paper figure; the demos' taggers
    # reach 0.33-0.41)
    min_model_gain: float = Field(0.05, ge=0.0, le=1.0, allow_inf_nan=False)


CARD_TEXTS = {
    "intended_uses": "Uses: what the dataset is for (tasks, users)",
    "out_of_scope_uses": "Uses: what it must not be used for",
    "distribution": "Distribution: where and how it is published, and when",
    "maintenance": "Maintenance: who maintains it, how errors are reported and fixed",
    "annotator_demographics": "Annotators: age range, gender, language varieties, training",
    "compensation": "Annotators: how they were recruited and paid",
    "ethics_review": "Ethics review: the board or process that reviewed the collection",
    # Data Statements (Bender and Friedman 2018): the people behind the text
    "speaker_demographic": "Speakers: who wrote the source texts (age, gender, language "
    "variety), as far as it is known",
    "consent": "Consent: how the source texts' authors and the annotators agreed to this use",
    "funding": "Funding: who paid for the collection and the annotation",
    "creators_contact": "Creators and contact: who built the dataset and how to reach them",
}


class CardSpec(Strict):
    """The data card: thresholds of its warnings (``pipelines.export.warnings``) and the
    Datasheets/Data Statements answers only the team can give (``CARD_TEXTS``); each one
    left out shows as a placeholder in the card's *To complete before release* box."""

    alpha_ratio_min: float = Field(default=0.5, gt=0)  # alpha below this share of the paper's
    max_label_share: float = Field(default=0.5, gt=0, le=1)  # one gold label's share
    # one label's share of one split (any split; categorical labels)
    max_split_label_share: float = Field(default=0.8, gt=0, le=1)
    max_drop_share: float = Field(default=0.5, gt=0, le=1)  # one filter, one source
    # an annotator choosing the gold label less often (rules that screen no annotator)
    min_annotator_agreement: float = Field(default=0.5, ge=0, le=1)
    # a partial-input model's accuracy above the majority baseline (evaluation items)
    max_partial_input_gain: float = Field(default=0.15, ge=0, le=1)
    # one source's share of one label's items (labels with min_label_items or more)
    max_label_source_share: float = Field(default=0.95, gt=0, le=1)
    min_label_items: int = Field(default=10, ge=1)
    # agreement floors of any round: Krippendorff 2004, 12.2 (alpha .667 for tentative
    # conclusions); Landis and Koch 1977 (kappa .41: "moderate")
    min_alpha: float = Field(default=0.667, ge=-1, le=1)
    min_kappa: float = Field(default=0.41, ge=-1, le=1)
    # a release file's records repeating another's content (0: any repeat is raised)
    max_duplicate_share: float = Field(default=0.0, ge=0, le=1)
    # a translation figure this far from the paper's, relative (0.5: under half or over
    # one and a half times it); reviewers who leave more than max_accept_share unchanged
    max_paper_gap: float = Field(default=0.5, gt=0)
    max_accept_share: float = Field(default=0.95, gt=0, le=1)
    intended_uses: str | None = None
    out_of_scope_uses: str | None = None
    distribution: str | None = None
    maintenance: str | None = None
    annotator_demographics: str | None = None
    compensation: str | None = None
    ethics_review: str | None = None
    speaker_demographic: str | None = None
    consent: str | None = None
    funding: str | None = None
    creators_contact: str | None = None


class Recipe(Strict):
    name: str
    description: str = ""
    # benchforge rebuild: the dataset family (a registered task kind, pipelines.families)
    task: str | None = None
    language: str = "ko"  # a registered language (pipelines.lang): the corpora's default
    corpora: list[CorpusSpec] = Field(min_length=1)
    filters: FilterSettings = Field(default_factory=FilterSettings)
    runner: RunnerSettings = Field(default_factory=RunnerSettings)
    pairing: PairingSettings | None = None
    # benchforge rebuild: items -> Label Studio -> agreement -> split -> export -> card
    items: ItemsSpec = Field(default_factory=ItemsSpec)
    annotation: AnnotationSpec | None = None
    export: ExportSpec = Field(default_factory=ExportSpec)
    # the sections owned by stages and families (agreement, split, translation, kobbq,
    # jglue, kobest, ...) are added by recipe_model() from plugins.RECIPE_SECTIONS
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
        if name is not None:
            plugins.TASK_KINDS.get(name)  # UnknownName (a KeyError) names the nearest kind
        return name

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str) -> str:
        plugins.LANGUAGES.get(code)
        return code

    def corpus_language(self, corpus: CorpusSpec) -> str:
        """The language of ``corpus``: its own, else the recipe's."""
        return corpus.language or self.language

    @model_validator(mode="after")
    def _licences(self) -> Recipe:
        """The sources' licences allow a release (the recipe's ``export.license`` when
        named): checked at load, before any work."""
        self.release_licence()
        return self

    def release_licence(self) -> Resolution:
        """The release licence (:class:`pipelines.core.licenses.Resolution`)."""
        return resolve({c.name: c.license for c in self.corpora}, self.export.license)

    @model_validator(mode="after")
    def _unique_names(self) -> Recipe:
        names = [c.name for c in self.corpora]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"corpus names must be unique; repeated: {dupes}")
        if self.pairing and self.pairing.input is None:
            unknown = sorted({p.corpus for p in self.pairing.corpora} - set(names))
            if unknown:
                raise ValueError(f"pairing names corpora the recipe does not have: {unknown}")
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
    return validate_recipe(data, path, path.parent)


def validate_recipe(data: dict, where: str | Path, base_dir: str | Path) -> Recipe:
    """A recipe from its parsed YAML ``data``, its relative paths resolved against
    ``base_dir``: the whole model, then each section's check against the rest. Every
    problem raises :class:`RecipeError` starting with ``where`` (the file)."""
    data = {**data, "base_dir": str(Path(base_dir).resolve())}
    try:
        recipe = recipe_model().model_validate(data)
    except ValidationError as exc:
        raise RecipeError(f"{where}: {problems(exc)}") from exc
    for name, section in plugins.RECIPE_SECTIONS.items():
        value = getattr(recipe, name)
        if value is not None and section.check is not None:
            try:
                section.check(recipe, value)
            except ValueError as exc:
                raise RecipeError(f"{where}: {exc}") from None
    return recipe


_MODELS: dict[tuple, type[Recipe]] = {}


def recipe_model() -> type[Recipe]:
    """The whole recipe model: the shell (:class:`Recipe`) with every registered section
    (``plugins.RECIPE_SECTIONS``) as an optional field of the section's model. Its class
    is ``LoadedRecipe`` of this module (found again by that name when a recipe is
    pickled to a Dask worker)."""
    sections = list(plugins.RECIPE_SECTIONS.items())
    key = tuple((name, section.model) for name, section in sections)
    if key not in _MODELS:
        clash = sorted(name for name, _ in sections if name in Recipe.model_fields)
        if clash:
            raise RecipeError(f"recipe sections {clash} are fields of the recipe's shell")
        fields = {
            name: (section.model | None, Field(default=None, description=section.doc))
            for name, section in sections
        }
        model = create_model("LoadedRecipe", __base__=Recipe, __module__=__name__, **fields)
        model.__doc__ = Recipe.__doc__
        _MODELS.clear()
        _MODELS[key] = model
    return _MODELS[key]


def __getattr__(name: str) -> object:
    if name == "LoadedRecipe":
        return recipe_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def recipe_schema() -> dict:
    """The JSON Schema of a whole recipe (the shell and every registered section)."""
    schema = recipe_model().model_json_schema()
    schema["properties"].pop("base_dir", None)  # set by load_recipe, not written
    schema["title"] = "benchforge recipe"
    return schema


def problems(exc: ValidationError, prefix: str = "") -> str:
    """pydantic's errors as ``where: problem; ...`` (``prefix``: the section's name)."""
    out = []
    for err in exc.errors():
        where = ".".join([prefix, *map(str, err["loc"])] if prefix else map(str, err["loc"]))
        msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
        if err["type"] == "value_error" and "error" in err.get("ctx", {}):
            msg = str(err["ctx"]["error"])  # a check's own words, without "Value error, "
            if where and _relative(where, msg):
                out.append(f"{where}.{msg}")
                continue
        out.append(f"{where or '(top)'}: {msg}")
    return "; ".join(out)


def _relative(where: str, message: str) -> bool:
    """Whether a model check's ``message`` starts with a setting of the model at
    ``where`` (``min_chars: expected a number``, ``simulate.annotators 2 < overlap 3``),
    so that ``where.message`` names it by its dotted path; a message that starts with
    the section's own name (``ner.tagger.settings.lr: ...``) or with a word is not."""
    match = re.match(r"[A-Za-z_][\w.]*", message)
    if not match:
        return False
    token, rest = match.group(), message[match.end() :]
    if token.split(".")[0] == where.split(".")[0]:
        return False
    return rest.startswith(":") or (rest.startswith(" ") and ("_" in token or "." in token))


def check_stage_options(options: StageOptions, registry: object, section: str) -> None:
    """A stage's section (``agreement``, ``split``) against its rule's settings class, at
    load time (a union tagged by ``rule``, the classes in ``registry``): an unknown key
    (with the nearest valid name), a value of the wrong type or a rule's own check raises
    ``ValueError`` naming the key, before any work (not after the annotation rounds)."""
    from pipelines.core.settings import named, options_model, settings_class

    data = options.model_dump()
    cls = settings_class(registry, data, ValueError, section, data["rule"])
    try:
        options_model(cls).model_validate(data)
    except ValidationError as exc:
        raise ValueError(problems(exc, section)) from None
    try:
        cls(**data)
    except (ValueError, TypeError) as exc:
        raise ValueError(named(section, str(exc), cls)) from None


def settings_key(*parts: object) -> str:
    """A stable hash of settings (pydantic models, dicts, strings) for cache keys."""

    def plain(obj: object) -> object:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        return obj

    blob = json.dumps([plain(p) for p in parts], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]
