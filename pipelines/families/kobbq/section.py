"""The ``kobbq:`` section of a recipe (KoBBQ, Jin et al. 2024; the family in
``kobbq.py``): templates, survey, survey rules and rounds. Registered with
:data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from pipelines.annotation.settings import SimulateSpec, enough_simulated
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict, rules_field, typed_rules
from pipelines.core.settings import Seed
from pipelines.families.kobbq.survey import SurveySettings

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class KobbqRound(Strict):
    """A KoBBQ Label Studio round: the survey (``annotation_configs/kobbq_survey.xml``:
    ``per_category`` of the release's questions per category, 0 for all; simulated
    respondents answer as the release's did) or the reading-comprehension check
    (``kobbq_check.xml``: of the evaluation example of ``per_category`` templates per
    category, 0 for every template, the counter-biased context with the counter-biased
    question, KoBBQ 3.2.5; simulated readers know the answer). ``respondents``: people
    per task."""

    per_category: int = Field(default=2, ge=0)
    respondents: int = Field(default=10, ge=1)
    # the check round: KoBBQ 3.2.5 drops a template whose samples fewer than half of the
    # readers answered correctly
    min_reader_accuracy: float = Field(default=0.5, ge=0, le=1)
    config: str | None = None  # default: benchforge's annotation_configs/kobbq_survey.xml
    project: str | None = None  # default: "<recipe name>-survey"
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _enough(self) -> KobbqRound:
        enough_simulated(self.simulate, self.respondents, "respondents")
        return self


class KobbqSpec(Strict):
    """A KoBBQ-style bias benchmark (Jin et al. 2024; pipelines.families.kobbq): the template file
    (a corpus of the recipe), the survey (the release's JSON), the survey rules
    (``rules``: pipelines.families.kobbq.survey.SurveySettings, the paper's thresholds by default),
    what the template file is (``templates_stage``: the release's, already through the
    survey, or templates written before it; the survey rules run in KoBBQ 3.2.5's order
    either way), the "unknown" answer, and the evaluation set's seed."""

    templates: str  # the corpus holding the template TSV
    survey: str  # the survey JSON, relative to the recipe
    rules: dict[str, object] = rules_field(SurveySettings)
    # KoBBQ 3.2.5 on the templates: released (the release's, already surveyed): the
    # stereotype rules drop the templates of the questions they drop, the type-1 group
    # roles are only checked (the release chose the fillers); before-survey: the roles
    # choose the fillers too (a slot keeps the groups whose role fits it)
    templates_stage: Literal["released", "before-survey"] = "released"
    targets_from: Literal["release", "round"] = "release"
    unknown: str = "알 수 없음"
    evaluation_seed: Seed = 0
    survey_round: KobbqRound | None = None
    check_round: KobbqRound | None = None

    @model_validator(mode="after")
    def _rules(self) -> KobbqSpec:
        self.survey_settings()
        if self.targets_from == "round" and self.survey_round is None:
            raise ValueError("kobbq: targets_from: round needs a survey_round")
        return self

    def survey_settings(self) -> SurveySettings:
        """The typed survey rules (pipelines.families.kobbq.survey.SurveySettings)."""
        return typed_rules(SurveySettings, self.rules, "kobbq.rules")


def _check(recipe: Recipe, spec: KobbqSpec) -> None:
    names = [c.name for c in recipe.corpora]
    if spec.templates not in names:
        raise ValueError(f"kobbq.templates: no corpus named {spec.templates!r} ({names})")


register_section(RecipeSection(
    "kobbq", KobbqSpec, "A KoBBQ-style bias benchmark (task kobbq)", _check
))  # fmt: skip
