"""The data card's facts, typed: one ``TypedDict`` per section of ``card.json``.

The facts are built once per release (the shared export step's ``_export``, or
``base_facts`` and a family's ``facts_of``, both in :mod:`pipelines.rebuild.export`;
``card_facts.release_facts`` and the guard add the release's own), written as
``OUT/dataset/card.json``, rendered by ``data_card`` and each task kind's ``card``
and checked by ``benchforge card check``. They stay plain dicts (``card.json`` is the
dict as built); these types say which keys a section has and what each holds:

- a key a section always has is required; one that only some releases have is
  ``NotRequired`` (a section whose every key is optional is ``total=False``);
- a family's own facts (``family``, ``jcqa``, ``reading``, ...) are named with a loose
  type (``dict[str, Any]``): their family's card is their only reader;
- a key the types do not name (a round of the shared export recorded under its own
  name, such as ``crosscheck-a``; a ``Label Studio (X round)`` line of the provenance)
  is allowed and not checked.

:func:`problems` validates a facts dict against :class:`CardFacts` (strict types: an
integer is not a string, a string is not a number) and names the key path of each
mismatch; :func:`check_facts` raises when it finds any (``write_release``, before a
release is written); ``benchforge card check`` names each fact of a card.json whose
type is wrong.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, NotRequired, Required

from pydantic import TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads TypedDicts of Python < 3.12 from it

from pipelines.core.errors import BenchforgeError


class Timeframe(TypedDict, total=False):
    """When a round's annotations were made (``card_facts.timeframe``: every key; empty
    for KorNLU's round that nobody annotated, ``MT_ONLY_ROUND``)."""

    first: str | None
    last: str | None
    median_seconds: float | None
    total_hours: float | None


class RoundFacts(TypedDict, total=False):
    """One Label Studio round (``card_facts.annotation_facts``); a family release's
    ``annotation`` has only ``simulated`` and ``overlap``."""

    config: str
    server: str
    project: str | None
    overlap: Required[int]
    annotators: int
    annotations: int
    skipped: int
    simulated: Required[bool]
    simulate: dict[str, Any] | None
    timeframe: Timeframe
    mt_only: bool  # KorNLU: no split is post-edited, nobody annotated


class LicenceFacts(TypedDict):
    """The release licence and its sources (``card_facts.licence_facts``)."""

    release: str
    explain: str
    sources: dict[str, str]
    attribution: list[str]
    notices: dict[str, str]
    scraped: list[str]


class ExportFacts(TypedDict):
    """The release's layout, its files and their records, and its licence."""

    layout: str
    files: dict[str, int]
    licence: LicenceFacts


ProvenanceFacts = TypedDict(
    "ProvenanceFacts",
    {
        "recipe": str,
        "benchforge version": str,
        "git commit": str,
        "exported": str,
        "recipe sha256": str | None,
        "benchforge rebuild": str,
        "inputs (sha256, first 12)": str,
        "models": NotRequired[str],  # the shared export: the models the run used
    },
)
ProvenanceFacts.__doc__ = """Where the release came from (``card_facts.provenance``, plus
one ``Label Studio (X round)`` line per round, not named here)."""


class SplitFacts(TypedDict, total=False):
    """The split: its rule, items per split and settings (the split step's
    ``artifacts.json``, or a family release's files), and the artifact report."""

    rule: Required[str]
    splits: Required[dict[str, int]]
    settings: Required[dict[str, Any]]
    inputs: list[Any]
    warnings: list[Any]
    train: dict[str, Any]
    last_column_only: dict[str, Any]
    report_settings: dict[str, Any]
    rule_figures: dict[str, Any]
    before_revisions: dict[str, Any]
    before_validation: dict[str, Any]
    cues: dict[str, Any] | None


class LabelFacts(TypedDict, total=False):
    """Gold labels per split and per source (``card_facts.label_facts``); empty for a
    family release whose card has its own label tables."""

    numeric: bool
    elements: bool
    order: list[str]
    per_split: dict[str, dict[str, int]]
    per_source: dict[str, dict[str, int]]
    sources_per_split: dict[str, dict[str, int]]


class FunnelEntry(TypedDict):
    """Rows kept after one step (``card_facts.funnel``)."""

    step: str
    unit: str
    count: int


class AgreementFacts(TypedDict, total=False):
    """The agree step's ``agreement.json``; empty for a family release."""

    rule: str
    value_type: str
    input: str
    simulated: bool
    items: int
    gold_items: int
    ratings: int
    annotators: int
    annotators_kept: int
    ratings_kept: int
    ratings_per_item: float
    measures: list[Any]
    warnings: list[Any]
    settings: dict[str, Any]
    dropped_annotators: dict[str, Any]
    dropped_items: dict[str, Any]
    dropped_ratings: dict[str, Any]
    people: dict[str, Any]
    review: dict[str, Any]
    annotators_table: list[Any]
    annotator_label_agreement: list[Any]
    krippendorff_alpha: dict[str, Any]
    krippendorff_alpha_after_screening: dict[str, Any]
    fleiss_kappa: dict[str, Any]
    character_alpha: float
    entity_f1: dict[str, Any]


class PaperAgreement(TypedDict, total=False):
    """The agreement the original paper reports (a task kind's ``paper_agreement``)."""

    level: str
    alpha: float
    source: str
    after_screening: bool


class DuplicateCount(TypedDict):
    records: int
    unique: int


class DuplicateFacts(TypedDict):
    """Duplicate records per release file (``card_facts.duplicate_facts``)."""

    fields: list[str]
    files: dict[str, DuplicateCount]
    in_train: dict[str, int]


class ReleaseConfig(TypedDict):
    """One config of the release as the Hub reads it (``hf_card.release_layout``)."""

    data_files: dict[str, str]
    splits: dict[str, int]
    bytes: dict[str, int]
    features: list[Any] | None
    example: dict[str, Any] | None


class HubFacts(TypedDict, total=False):
    """The task kind's Hub metadata (its ``hub``)."""

    task_categories: list[str]
    citation: str
    # each released field's origin, or its origin per split (export.field_origins)
    fields: dict[str, str | dict[str, str]]


class DegenerateFacts(TypedDict):
    """One degenerate part of the release the recipe allows (``guards.Degenerate``)."""

    guard: str
    what: str
    detail: str


class HumanPerformanceFacts(TypedDict, total=False):
    """The human performance round's figures (issue 35)."""

    kind: str
    items: int
    sampled: int
    people: list[dict[str, Any]]
    combined: dict[str, Any]
    overlap: int
    simulated: bool


class BaselineFile(TypedDict):
    name: str
    sha256: str


class BaselineFacts(TypedDict, total=False):
    """The baseline scored on the released files (``benchforge evaluate``)."""

    task_kind: str
    model: str
    protocol: str
    settings: dict[str, Any]
    device: str
    seconds: float
    train_items: int
    metrics_source: str
    files: dict[str, BaselineFile]
    fingerprint: dict[str, Any]
    splits: dict[str, dict[str, Any]]


class CardFacts(TypedDict, total=False):
    """The whole of ``card.json``: the shared sections every release has (required),
    the shared export's and the people rounds' optional ones, and each family's own."""

    # every release
    task: Required[str]
    task_kind: Required[str]
    paper_agreement: Required[PaperAgreement | None]
    recipe: Required[dict[str, Any]]  # the recipe as loaded (``Recipe.model_dump``)
    labels: Required[LabelFacts]
    funnel: Required[list[FunnelEntry]]
    agreement: Required[AgreementFacts]
    split: Required[SplitFacts]
    annotation: Required[RoundFacts]
    export: Required[ExportFacts]
    provenance: Required[ProvenanceFacts]
    # added by ``write_release`` from the release tables and the guard
    duplicates: Required[DuplicateFacts]
    release: Required[dict[str, ReleaseConfig]]
    hub: Required[HubFacts]
    degenerate: Required[list[DegenerateFacts]]
    # a family's stated totals of a release file: what, file, records (card check)
    totals: list[dict[str, Any]]
    # rows of a public evaluation set, per release file and corpus (export.public_eval)
    public_eval: dict[str, dict[str, Any]]
    # the shared export (the KLUE kinds, KorNLU)
    ingest: dict[str, Any]
    dates: dict[str, str]
    classifier_cards: dict[str, dict[str, Any]]
    items: dict[str, Any]  # the items step's info
    artifacts_md: str  # the split's artifact report; the card reads it, card.json has not
    human_performance: HumanPerformanceFacts
    baseline: BaselineFacts
    pilot: RoundFacts
    human: RoundFacts
    linguists: RoundFacts
    review: RoundFacts | list[Any]  # a review round, or KorNLI's review sample
    # a family release's rounds (``base_facts``), by round name
    rounds: dict[str, RoundFacts]
    # a family's own facts, read by its card
    family: dict[str, Any]
    kobest_task: str
    rules: dict[str, Any]
    reports_md: dict[str, str]
    jcqa: dict[str, Any]
    marc: dict[str, Any]
    reading: dict[str, Any]
    expand: dict[str, Any]
    survey: dict[str, Any]
    scores: dict[str, Any]
    readers: dict[str, Any]
    dropped_stereotypes: list[Any]
    final_splits: dict[str, int]
    per_type_final: dict[str, int]
    top_articles: list[Any]
    paper_sizes: dict[str, Any] | None
    paper_table: list[Any] | dict[str, Any]  # JGLUE's rows, or KorNLU's figures per split
    table_2: list[Any]
    pairs: dict[str, Any] | list[Any]
    ner_entities: dict[str, Any]
    ner_gold: dict[str, Any]
    ner_items: dict[str, Any]
    re_candidates: dict[str, Any]
    re_items: dict[str, Any]
    re_mix: dict[str, Any]
    re_taggers: dict[str, Any]
    tagger: dict[str, Any]
    titles: dict[str, Any]
    premises: dict[str, Any]
    writing: dict[str, Any]
    translation_qa: dict[str, Any]
    relabelling: dict[str, Any]
    mt_model: dict[str, Any]
    qualified: dict[str, Any]


CARD_FACTS: TypeAdapter[CardFacts] = TypeAdapter(CardFacts)


class FactProblem(NamedTuple):
    """One way a facts dict does not match :class:`CardFacts`: the key path
    (``export.files.train.jsonl``), pydantic's message, whether the key is missing, and
    the value found (None when missing)."""

    key: str
    message: str
    missing: bool
    value: object = None

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


def problems(facts: object) -> list[FactProblem]:
    """Each way ``facts`` does not match :class:`CardFacts` (strict types; an empty list
    when it matches), read as card.json holds them: their JSON form (a tuple is a list,
    a float subclass a float). ``facts`` is only read."""
    try:
        CARD_FACTS.validate_python(json.loads(json.dumps(facts)), strict=True)
    except ValidationError as exc:
        return [
            FactProblem(
                ".".join(str(p) for p in e["loc"]) or "(the facts)",
                e["msg"],
                e["type"] == "missing",
                None if e["type"] == "missing" else e.get("input"),
            )  # fmt: skip
            for e in exc.errors()
        ]
    return []


class CardFactsError(BenchforgeError, ValueError):
    """Facts that do not match :class:`CardFacts`; the message names each key path."""


def check_facts(facts: object, where: str = "card facts") -> None:
    """Raise :class:`CardFactsError` naming every key path where ``facts`` does not
    match :class:`CardFacts` (a wrong type or a missing required key)."""
    found = problems(facts)
    if found:
        raise CardFactsError(f"{where}: the card's facts do not match their types "
                             "(pipelines/export/facts.py):\n  "
                             + "\n  ".join(map(str, found)))  # fmt: skip
