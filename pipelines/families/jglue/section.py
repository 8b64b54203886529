"""The ``jglue:`` section of a recipe (JSTS / JNLI, Kurihara et al. 2022, 3.2; the
family in ``jglue.py``): releases, pair drawing, rules and rounds. Registered with
:data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from pipelines.annotation.settings import SimulateSpec, enough_simulated
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict, rules_field, typed_rules
from pipelines.core.settings import Seed
from pipelines.families.jglue.construct import JglueRules

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


# JGLUE 3.2.2's people per item: "We ask five workers" (STS), "answers from 10 workers"
# (NLI), "a one-way NLI task with 10 workers" (validation), one writer per caption
PAPER_RATERS = {"sts": 5, "nli": 10, "validation": 10, "writing": 1, "check": 1}


class JglueRound(Strict):
    """A JGLUE Label Studio round (``raters`` people per item): ``sts`` (the 0-5 rating,
    ``annotation_configs/jsts.xml``), ``nli`` (JNLI step 1) and ``validation`` (the
    contradictions' check; both ``jnli_judgement.xml``), ``writing`` (four contradictions
    per caption, ``jnli_contradiction.xml``), ``check`` (the last filter's manual check of
    the automatically matched pairs, ``jglue_check.xml``). The configs carry JGLUE's
    Japanese guidelines."""

    raters: int = Field(default=5, ge=1)
    config: str | None = None  # default: benchforge's annotation_configs/ file above
    project: str | None = None  # default: "<recipe name>-<round>"
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _enough(self) -> JglueRound:
        enough_simulated(self.simulate, self.raters, "raters")
        return self


class JglueSpec(Strict):
    """JSTS / JNLI construction (Kurihara et al. 2022, 3.2; pipelines.families.jglue): the release
    files the captions are recovered from (corpora of the recipe), how many pairs of one
    image (JSTS-A, JNLI) and of two images (JSTS-B) are drawn, the writing round's
    captions, the rules' thresholds (``rules``: pipelines.families.jglue.construct.JglueRules,
    the paper's by default) and the rounds."""

    releases: list[str] = Field(min_length=1)  # corpora holding JSTS / JNLI JSON Lines
    same_image: int = Field(default=60, ge=0)  # 0: every pair
    other_image: int = Field(default=20, ge=0)
    other_image_method: Literal["random", "gsm"] = "random"
    seed: Seed = 0
    writing_captions: int = Field(default=20, ge=0)
    # jsts: JSTS is JSTS-A, B and C (JGLUE 3.2.2): contradictions written for captions,
    # validated as for JNLI-C (steps 4) and rated with the A and B pairs (step 5); needs
    # writing_round and validation_round. false: JSTS-A and B only (a departure)
    jsts_c: bool = True
    # the last filter (3.2.2: "automatic matching and manual checking"): matched pairs
    # checked by a person in check_round (pipelines.families.jglue.check); false: none
    final_check: bool = True
    # "release": draw only one-image pairs the release has and captions it wrote
    # contradictions for (demos: simulated people then answer as the release did)
    draw_from: Literal["any", "release"] = "any"
    rules: dict[str, object] = rules_field(JglueRules)
    sts_round: JglueRound | None = None
    nli_round: JglueRound | None = None
    writing_round: JglueRound | None = None
    validation_round: JglueRound | None = None
    check_round: JglueRound | None = None  # the final check (jglue_check.xml)

    @model_validator(mode="before")
    @classmethod
    def _paper_people(cls, data: object) -> object:
        """A round that names no ``raters`` gets the paper's number (JGLUE 3.2.2): 5 STS
        raters, 10 NLI and validation annotators, one writer per caption."""
        if isinstance(data, dict):
            data = dict(data)
            for name, raters in PAPER_RATERS.items():
                spec = data.get(f"{name}_round")
                if isinstance(spec, dict) and "raters" not in spec:
                    data[f"{name}_round"] = {**spec, "raters": raters}
        return data

    @model_validator(mode="after")
    def _rules(self) -> JglueSpec:
        rules = self.construction_rules()
        for votes, round_name in (("nli_min_votes", "nli_round"),
                                  ("contradiction_min_votes", "validation_round")):  # fmt: skip
            need, spec = getattr(rules, votes), getattr(self, round_name)
            if spec is not None and need > spec.raters:
                raise ValueError(
                    f"jglue.rules.{votes} {need} > jglue.{round_name}.raters {spec.raters}: "
                    "no item could get that many votes"
                )
        return self

    def construction_rules(self) -> JglueRules:
        """The typed thresholds (pipelines.families.jglue.construct.JglueRules)."""
        return typed_rules(JglueRules, dict(self.rules), "jglue.rules")


def _check(recipe: Recipe, spec: JglueSpec) -> None:
    names = [c.name for c in recipe.corpora]
    unknown = sorted(set(spec.releases) - set(names))
    if unknown:
        raise ValueError(f"jglue.releases: no corpus named {unknown} ({names})")


register_section(RecipeSection(
    "jglue", JglueSpec, "JSTS / JNLI construction (tasks jsts, jnli)", _check
))  # fmt: skip
