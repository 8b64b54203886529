"""The ``kobest:`` section of a recipe (KoBEST, Kim et al. 2022; the family in
``kobest.py``): source, rules, rounds and the demos' simulation. Registered with
:data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from pipelines.annotation.settings import SimulateSpec, enough_simulated
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict, rules_field, typed_rules
from pipelines.core.settings import Seed
from pipelines.families.kobest.rules import KobestRules

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class KobestRound(Strict):
    """A KoBEST Label Studio round: ``writing`` (one writer per prompt,
    ``annotation_configs/kobest_<task>.xml``), ``review`` (the linguists: accept / edit /
    reject, ``kobest_<task>_review.xml``), ``revision`` (the artifact review's items,
    the review config) or, SentiNeg only, ``conversion`` (2.6: a person converts each
    selected train item to a sentence of opposite meaning,
    ``kobest_sentineg_conversion.xml``). ``people``: per item."""

    people: int = Field(default=1, ge=1)
    config: str | None = None  # default: benchforge's annotation_configs/ file above
    project: str | None = None  # default: "<recipe name>-<round>"
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _enough(self) -> KobestRound:
        enough_simulated(self.simulate, self.people)
        return self


class KobestSimulation(Strict):
    """What the simulated people of a KoBEST demo plant (pipelines.families.kobest.simulate):
    the ``seeds`` they write from (a corpus of the recipe: COPA, BoolQ, WiC, HellaSwag),
    COPA ``swaps`` written twice in opposite directions, ``cue`` items whose answer
    carries the task's cue (COPA: a number; SentiNeg: 진짜; BoolQ: 혹시; HellaSwag: 결국);
    SentiNeg writers who hand back ``copies`` of the original or add ``brands``."""

    seeds: str | None = None
    swaps: int = Field(default=4, ge=0)
    cue: int = Field(default=10, ge=0)
    copies: int = Field(default=2, ge=0)
    brands: int = Field(default=2, ge=0)


class KobestSpec(Strict):
    """A KoBEST task (Kim et al. 2022; pipelines.families.kobest): the source corpus of the
    prompts (NSMC reviews for SentiNeg; for BoolQ, WiC and HellaSwag JSON Lines with the
    given field: paragraph, word, topic), how many prompts, the seed, the rules'
    thresholds (``rules``: pipelines.families.kobest.rules.KobestRules), the rounds and,
    for demos, what the simulated people plant."""

    source: str | None = None
    items: int = Field(default=40, ge=1)
    seed: Seed = 0
    rules: dict[str, object] = rules_field(KobestRules)
    writing_round: KobestRound | None = None
    review_round: KobestRound | None = None
    revision_round: KobestRound | None = None
    conversion_round: KobestRound | None = None  # SentiNeg (2.6, rules.human_conversion)
    simulation: KobestSimulation | None = None

    @model_validator(mode="after")
    def _rules(self) -> KobestSpec:
        rules = self.kobest_rules()
        review = self.review_round
        if review is not None and rules.review_votes > review.people:
            raise ValueError(
                f"kobest.rules.review_votes {rules.review_votes} > kobest.review_round.people "
                f"{review.people}: no decision could get that many votes"
            )
        return self

    def kobest_rules(self) -> KobestRules:
        """The typed thresholds (pipelines.families.kobest.rules.KobestRules)."""
        return typed_rules(KobestRules, dict(self.rules), "kobest.rules")


def _check(recipe: Recipe, spec: KobestSpec) -> None:
    names = [c.name for c in recipe.corpora]
    wanted = [spec.source, spec.simulation and spec.simulation.seeds]
    unknown = sorted({w for w in wanted if w} - set(names))
    if unknown:
        raise ValueError(f"kobest: no corpus named {unknown} ({names})")


register_section(RecipeSection(
    "kobest", KobestSpec,
    "A KoBEST task (tasks kobest-boolq, -copa, -wic, -hellaswag, -sentineg)", _check,
))  # fmt: skip
