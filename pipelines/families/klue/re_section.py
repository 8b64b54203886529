"""The ``re:`` section of a recipe (KLUE-RE, KLUE 3.5.1; the task kind in
:mod:`.relations`): the two entity taggers, the knowledge base and the entity-pair
sampling. Registered with :data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, field_validator, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict, rules_field, typed_rules
from pipelines.core.settings import Seed
from pipelines.models.char_tagger import TaggerSettings

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

RE_TYPES = ("PER", "ORG", "LOC", "DAT", "POH", "NOH")  # KLUE 3.5.1's entity types

# a corpus's entity types -> KLUE-RE's: the KMOU 2016 release's (KLUE-NER's names too) and
# the later release's ten (KLUE-RE's six come from these)
KMOU_TO_RE: dict[str, str | None] = {
    "PS": "PER", "LC": "LOC", "OG": "ORG", "DT": "DAT", "TI": "DAT", "QT": "NOH",
    "PER": "PER", "ORG": "ORG", "LOC": "LOC", "POH": "POH", "NOH": "NOH", "DAT": "DAT",
    "TIM": "DAT", "DUR": "NOH", "MNY": "NOH", "PNT": "NOH",
}  # fmt: skip


class ReTaggerSpec(Strict):
    """One entity tagger: trained here on a KMOU-format corpus (``train``, ``dev``), or
    a checkpoint; its corpus's types mapped to KLUE-RE's (``mapping``)."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    train: str | None = None
    dev: str | None = None
    checkpoint: str | None = None
    train_limit: int | None = Field(default=None, ge=1)
    mapping: dict[str, str | None] = Field(default_factory=lambda: dict(KMOU_TO_RE))
    licence: str | None = None
    settings: dict[str, object] = rules_field(TaggerSettings)

    @field_validator("mapping")
    @classmethod
    def _types(cls, mapping: dict[str, str | None]) -> dict[str, str | None]:
        bad = sorted(str(v) for v in mapping.values() if v is not None and v not in RE_TYPES)
        if bad:
            raise ValueError(f"re.taggers.mapping: unknown KLUE-RE types {bad} ({RE_TYPES})")
        return mapping

    @model_validator(mode="after")
    def _source(self) -> ReTaggerSpec:
        if not self.checkpoint and not (self.train and self.dev):
            raise ValueError(f"re.taggers[{self.name}]: give train and dev, or a checkpoint")
        typed_rules(TaggerSettings, dict(self.settings), f"re.taggers[{self.name}].settings")
        return self

    def tagger_settings(self) -> TaggerSettings:
        return typed_rules(TaggerSettings, dict(self.settings), f"re.taggers[{self.name}]")


class ReSpec(Strict):
    """KLUE-RE construction (KLUE 3.5.1; ``pipelines.families.klue.relations``)."""

    # KLUE 3.5.1: entities by two NER models trained on different resources, unioned
    taggers: list[ReTaggerSpec] = Field(min_length=2)
    max_chars: int = Field(default=400, ge=1)
    # the knowledge base: a TSV of subject, relation, object (entity strings)
    kb: str
    pairs: int = Field(default=300, ge=1)  # entity pairs sampled
    kb_share: float = Field(default=0.5, ge=0, le=1)  # of them, KB-based at most
    kb_max_per_pair: int = Field(default=3, ge=1)  # uses of one KB pair, at most
    subject_types: list[str] = Field(default_factory=lambda: ["PER", "ORG"])
    seed: Seed = 0
    relations: str | None = None  # default: pipelines/families/klue/re_relations.json

    @model_validator(mode="after")
    def _names(self) -> ReSpec:
        names = [t.name for t in self.taggers]
        if len(set(names)) != len(names):
            raise ValueError(f"re.taggers: names must be unique ({names})")
        twice = sorted({t for t in self.subject_types if self.subject_types.count(t) > 1})
        if twice or not self.subject_types:
            raise ValueError(f"re.subject_types: {twice or 'none'}; name PER, ORG or both, once")
        bad = sorted(set(self.subject_types) - {"PER", "ORG"})
        if bad:
            raise ValueError(
                f"re.subject_types: KLUE 3.5.1 takes subjects of PER or ORG, not {bad}"
            )
        return self


def _check(recipe: Recipe, spec: ReSpec) -> None:
    for tagger in spec.taggers:
        for name in ("train", "dev", "checkpoint"):
            value = getattr(tagger, name)
            if value and not recipe.resolve(value).exists():
                raise ValueError(f"re.taggers[{tagger.name}].{name}: "
                                 f"{recipe.resolve(value)} not found")  # fmt: skip
    for name in ("kb", "relations"):
        value = getattr(spec, name)
        if value and not recipe.resolve(value).is_file():
            raise ValueError(f"re.{name}: {recipe.resolve(value)} not found")


register_section(RecipeSection("re", ReSpec, "KLUE-RE construction (task klue-re)", _check))
