"""The linguists' review round of a KLUE task that people correct and linguists review
(KLUE-NER's ``ner.review``, KLUE-DP's ``dp.review``): its interface, project, reviewers,
simulated reviewers and waiting; and the chain's rounds and steps both families share
(:func:`correction_rounds`, :data:`REVIEW_STEPS`, :func:`with_review`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from pipelines.annotation.rounds import Round
from pipelines.annotation.settings import SimulateSpec, enough_simulated
from pipelines.core.recipe import Strict
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry, simulation

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.core.steps import RunContext


class LinguistReviewSpec(Strict):
    """A linguists' review round: each item's draft (the annotators' vote) pre-loaded; a
    reviewer accepts it or corrects it. ``config`` None: the family's review interface;
    ``project`` None: "<recipe name>-linguists". Simulated linguists are careful
    (``simulate.careless`` 0) unless ``careless`` is given."""

    config: str | None = None  # default: the family's (ner_review.xml, dp_review.xml)
    project: str | None = None  # default: "<recipe name>-linguists"
    reviewers: int = Field(default=1, ge=1)
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _careful(cls, data: object) -> object:
        """Linguists are the round of last resort: none careless unless the recipe says
        (the crowd's default, 15% careless, sent a random tree to the release for every
        item such a "linguist" reviewed)."""
        if isinstance(data, dict) and isinstance(data.get("simulate"), dict):
            data = {**data, "simulate": {"careless": 0, **data["simulate"]}}
        return data

    @model_validator(mode="after")
    def _enough(self) -> LinguistReviewSpec:
        enough_simulated(self.simulate, self.reviewers, "reviewers")
        return self


# ------------------------------------------------------ the correct-then-review chain

# the linguists' round's steps: their items (each draft pre-loaded), then the round
REVIEW_STEPS: list[PlanEntry] = ["drafts", LabelStudioRound("linguists")]


def with_review(steps: list[PlanEntry], review: LinguistReviewSpec | None) -> list[PlanEntry]:
    """``steps``, without the linguists' round's when the section has no ``review``."""
    return list(steps) if review is not None else [s for s in steps if s not in REVIEW_STEPS]


def review_config(recipe: Recipe, review: LinguistReviewSpec, default: Path) -> Path:
    """The linguists' interface: the section's ``review.config``, else the family's."""
    return recipe.resolve(review.config) if review.config else default


def correction_rounds(
    ctx: RunContext, review: LinguistReviewSpec | None, default_review: Path
) -> dict[str, Round]:
    """The correction round (``""``, the recipe's ``annotation``: the items with the
    model's answer pre-loaded) and, with ``review``, the linguists' round (their items
    in ``OUT/linguists``, project ``<project>-linguists`` unless named)."""
    ann, out = ctx.recipe.annotation, ctx.out
    found = {"": Round(
        out / "items" / "items.parquet", ctx.recipe.resolve(ann.config), ctx.project,
        ann.overlap, simulation(ann.simulate, ctx.simulated, ann.overlap), "annotator",
        out / "annotate" / "annotations.parquet", ann.timeout, ann.poll,
    )}  # fmt: skip
    if review is not None:
        found["linguists"] = Round(
            out / "linguists" / "items.parquet", review_config(ctx.recipe, review, default_review),
            review.project or f"{ctx.project_base}-linguists", review.reviewers,
            simulation(review.simulate, ctx.simulated, review.reviewers), "linguist",
            out / "annotate" / "linguists.parquet", review.timeout, review.poll,
        )  # fmt: skip
    return found
