"""The linguists' review round of a KLUE task that people correct and linguists review
(KLUE-NER's ``ner.review``, KLUE-DP's ``dp.review``): its interface, project, reviewers,
simulated reviewers and waiting."""

from __future__ import annotations

from pydantic import Field, model_validator

from pipelines.annotation.settings import SimulateSpec, enough_simulated
from pipelines.core.recipe import Strict


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
