"""The ``jcqa:`` section of a recipe (JCommonsenseQA, JGLUE 3.4.2; the family in
:mod:`pipelines.families.jcqa`): the triples, the relations, how question sets are
drawn, the four rounds and the answer rule. Registered with
:data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, field_validator, model_validator

from pipelines.annotation.settings import RoundSpec, SimulateSpec
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import Seed

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

# The 22 ConceptNet relations question sets are drawn over: JGLUE 3.4.2 footnote 5's
# list, in its order. Like CommonsenseQA, JGLUE leaves out the general relations
# (RelatedTo, IsA), but it uses each relation in both directions (3.4.2, step 1; see
# pipelines.families.jcqa.concepts.question_sets). A recipe can name its own.
RELATIONS = (
    "Antonym",
    "AtLocation",
    "CapableOf",
    "Causes",
    "CausesDesire",
    "DefinedAs",
    "DerivedFrom",
    "Desires",
    "DistinctFrom",
    "EtymologicallyDerivedFrom",
    "HasA",
    "HasFirstSubevent",
    "HasLastSubevent",
    "HasPrerequisite",
    "HasProperty",
    "InstanceOf",
    "MadeOf",
    "MotivatedByGoal",
    "NotDesires",
    "PartOf",
    "SymbolOf",
    "UsedFor",
)


class JcqaSpec(Strict):
    """JCommonsenseQA construction (JGLUE 3.4.2, all five steps)."""

    # the recipe corpus (format: txt) holding the triples: a TSV of head, relation, tail,
    # or a ConceptNet assertions CSV export
    triples: str
    language: str = "ja"  # ConceptNet concepts kept: /c/<language>/
    relations: list[str] = Field(default_factory=lambda: list(RELATIONS))
    sets_per_group: int = Field(default=1, ge=1)  # question sets per (source, relation, side)
    max_sets: int | None = Field(default=None, ge=1)
    seed: Seed = 0
    min_correct: int = Field(default=2, ge=1)  # JGLUE 3.4.2: 2 of 3 answerers right
    synonyms_round: RoundSpec = Field(default_factory=lambda: RoundSpec(people=3))
    writing_round: RoundSpec = Field(default_factory=RoundSpec)
    distractors_round: RoundSpec = Field(default_factory=RoundSpec)
    answers_round: RoundSpec = Field(default_factory=lambda: RoundSpec(people=3))
    # the last filter (3.4.2: "automatic pattern matching and manual checking"): the
    # matched questions checked by a person (pipelines.families.jcqa.check); false: none
    final_check: bool = True
    check_round: RoundSpec = Field(default_factory=RoundSpec)
    # simulated writers (demos and tests only): a JSON Lines file of the question and two
    # distractors each target would get (source, relation, target, question, distractors)
    writers: str | None = None
    simulate: SimulateSpec | None = None  # every round's simulated people, when set

    @field_validator("relations")
    @classmethod
    def _relations(cls, names: list[str]) -> list[str]:
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice or not names:
            raise ValueError(f"jcqa.relations: {twice or 'none'}; name each relation once")
        return names

    @model_validator(mode="after")
    def _enough(self) -> JcqaSpec:
        """The section's simulated people serve every round without its own."""
        for name in ("synonyms", "writing", "distractors", "answers", "check"):
            r = getattr(self, f"{name}_round")
            sim = self.simulate
            if r.simulate is None and sim is not None and sim.annotators < r.people:
                raise ValueError(
                    f"jcqa.simulate.annotators {sim.annotators} < jcqa.{name}_round.people "
                    f"{r.people}: no task could get its people, and no rerun either"
                )
        return self


def triples_path(recipe: Recipe) -> object:
    """The triples file: the path of the corpus ``jcqa.triples`` names."""
    corpus = next(c for c in recipe.corpora if c.name == recipe.jcqa.triples)
    return recipe.corpus_path(corpus)


def _check(recipe: Recipe, spec: JcqaSpec) -> None:
    names = [c.name for c in recipe.corpora]
    if spec.triples not in names:
        raise ValueError(f"jcqa.triples: no corpus named {spec.triples!r} ({names})")
    if spec.min_correct > spec.answers_round.people:
        raise ValueError(
            f"jcqa.min_correct {spec.min_correct} is over answers_round.people "
            f"{spec.answers_round.people}"
        )


register_section(RecipeSection("jcqa", JcqaSpec, "JCommonsenseQA construction (task jcqa)", _check))
