"""The ``ner:`` section of a recipe (KLUE-NER, KLUE 3.4.1; the task kind in
:mod:`.ner`): the pseudo-labelling tagger, the sentence filter, the linguists' review
round and the PII rule. Registered with :data:`pipelines.core.plugins.RECIPE_SECTIONS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, field_validator, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict, rules_field, typed_rules
from pipelines.families.klue.kmou import KLUE_MAPPING
from pipelines.families.klue.review_section import LinguistReviewSpec
from pipelines.models.char_tagger import TYPES, TaggerSettings

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class NerTaggerSpec(Strict):
    """The pseudo-labeller: a character tagger trained on a KMOU-format corpus
    (``train``, ``dev``: files of the 2016 release layout, ``.gz`` allowed), or a
    checkpoint trained before (``checkpoint``: a folder ``benchforge klue ner-tagger``
    or a rebuild wrote). ``mapping``: the corpus's entity types -> KLUE's six (None:
    left out); KLUE's by default (``pipelines.families.klue.kmou.KLUE_MAPPING``).
    ``settings``: :class:`pipelines.models.char_tagger.TaggerSettings`."""

    train: str | None = None
    dev: str | None = None
    checkpoint: str | None = None
    train_limit: int | None = Field(default=None, ge=1)  # first N training sentences
    mapping: dict[str, str | None] = Field(default_factory=lambda: dict(KLUE_MAPPING))
    licence: str | None = None  # the training corpus's licence, for the model card
    settings: dict[str, object] = rules_field(TaggerSettings)

    @field_validator("mapping")
    @classmethod
    def _types(cls, mapping: dict[str, str | None]) -> dict[str, str | None]:
        bad = sorted(str(v) for v in mapping.values() if v is not None and v not in TYPES)
        if bad:
            raise ValueError(f"ner.tagger.mapping: unknown KLUE types {bad} (KLUE: {TYPES})")
        return mapping

    @model_validator(mode="after")
    def _source(self) -> NerTaggerSpec:
        if not self.checkpoint and not (self.train and self.dev):
            raise ValueError("ner.tagger: give train and dev (a KMOU-format corpus) or a "
                             "checkpoint")  # fmt: skip
        self.tagger_settings()
        return self

    def tagger_settings(self) -> TaggerSettings:
        return typed_rules(TaggerSettings, dict(self.settings), "ner.tagger.settings")


class NerReviewSpec(LinguistReviewSpec):
    """The linguists' review round (KLUE 3.4.1): each sentence's draft (the annotators'
    span vote) pre-loaded; a reviewer accepts it or corrects spans and types."""


class NerSpec(Strict):
    """KLUE-NER construction (KLUE 3.4.1; ``pipelines.families.klue.ner``)."""

    tagger: NerTaggerSpec
    # KLUE 3.4.1: "we remove sentences longer than 400 characters"
    max_chars: int = Field(default=400, ge=1)
    # the corpus field (keep_fields) holding reference spans, the simulated annotators'
    # truth where a corpus has one (demos); others take the pseudo-labels
    truth_field: str | None = "entities"
    review: NerReviewSpec | None = None
    # KLUE 3.4.1: "35 sentences are removed after the inspection by the researchers
    # because all annotations are false positives": a gold sentence left without any
    # entity is dropped as no_entity (false: kept, with no entity)
    drop_without_entity: bool = True
    # KLUE 3.4.1: sentences with a person's name are dropped as PII unless the person is
    # a public figure: one name a line ("#" comments); None: no PII step
    public_figures: str | None = None
    # the entity types whose text drops a sentence (KLUE's six, each once; not empty)
    pii_types: list[str] = Field(default_factory=lambda: ["PS"])
    guid_prefix: str = "klue-ner-v1.1"  # the release's guid and file names

    @field_validator("pii_types")
    @classmethod
    def _pii_types(cls, types: list[str]) -> list[str]:
        """Issue 51: ``[XX]`` matched no entity and silently turned the PII rule off."""
        unknown = sorted(set(types) - set(TYPES))
        if unknown:
            raise ValueError(f"ner.pii_types: unknown types {unknown} (KLUE's: {list(TYPES)})")
        twice = sorted({t for t in types if types.count(t) > 1})
        if twice:
            raise ValueError(f"ner.pii_types: {twice} named twice")
        if not types:
            raise ValueError("ner.pii_types: empty; leave out public_figures for no PII step")
        return types


def _check(recipe: Recipe, spec: NerSpec) -> None:
    for name in ("train", "dev", "checkpoint"):
        value = getattr(spec.tagger, name)
        if value and not recipe.resolve(value).exists():
            raise ValueError(f"ner.tagger.{name}: {recipe.resolve(value)} not found")
    if spec.public_figures and not recipe.resolve(spec.public_figures).is_file():
        raise ValueError(f"ner.public_figures: {recipe.resolve(spec.public_figures)} not found")


register_section(RecipeSection("ner", NerSpec, "KLUE-NER construction (task klue-ner)", _check))
