"""The ``marc:`` section of a recipe (MARC-ja, JGLUE 3.1; the family in
:mod:`pipelines.families.marc`): where a review's rating is, its scale, which ratings
make which label, and what the simulated people read. Registered with
:data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import Count, NonNegative

# a star rating: a whole number or not, 0 or more, kept as written
Rating = Count | NonNegative

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class MarcSimulation(Strict):
    """The simulated raters' truth (demos and tests only): with ``text_model``, a
    classifier trained here on the train split's rating labels (TF-IDF over character
    1-3 grams, logistic regression; scikit-learn) reads each dev/test review, and of
    the ten latent answers ``round(10 p)`` are positive; without it every rater's truth
    is the rating's label."""

    text_model: bool = True


class MarcSpec(Strict):
    """MARC-ja's labels from star ratings (JGLUE 3.1: 1-2 stars negative, 4-5
    positive, 3 not used) and its crowd-relabelled evaluation sets."""

    rating_field: str = "rating"  # a keep_fields field of the corpora
    scale: tuple[Rating, Rating] = (1, 5)  # the lowest and highest rating
    # rating -> label; a rating on the scale that no label takes is dropped
    # (neutral_rating: MARC-ja's 3 stars)
    labels: dict[str, list[Rating]] = Field(
        default_factory=lambda: {"negative": [1, 2], "positive": [4, 5]}
    )
    group_field: str | None = None  # a keep_fields field that groups reviews (a product)
    # JGLUE's conversion script: --max-char-length 500; a longer review is dropped
    max_chars: int | None = Field(default=500, ge=1)
    stand_in: str | None = None  # what the card says when the corpus stands in for MARC
    simulation: MarcSimulation = Field(default_factory=MarcSimulation)

    @model_validator(mode="after")
    def _labels(self) -> MarcSpec:
        low, high = self.scale
        if low >= high:
            raise ValueError(f"marc.scale: {self.scale} is not (lowest, highest)")
        seen: dict[float, str] = {}
        folded: dict[str, str] = {}
        for label, ratings in self.labels.items():
            if not label.strip():
                raise ValueError("marc.labels: a label name is empty")
            other = folded.setdefault(label.casefold(), label)
            if other != label:  # issue 51: Negative beside negative made two classes
                raise ValueError(f"marc.labels: {other!r} and {label!r} differ only in case")
            if not ratings:  # issue 51: a class no review could take; one-class splits
                raise ValueError(
                    f"marc.labels.{label}: no rating; every label takes one rating or more"
                )
            for r in ratings:
                if not low <= r <= high:
                    raise ValueError(
                        f"marc.labels.{label}: rating {r} is off the scale {self.scale}"
                    )
                if r in seen:
                    raise ValueError(f"marc.labels: rating {r} is both {seen[r]} and {label}")
                seen[r] = label
        if len(self.labels) < 2:
            raise ValueError("marc.labels: two labels at least")
        return self


def _check(recipe: Recipe, spec: MarcSpec) -> None:
    for corpus in recipe.corpora:
        needed = [spec.rating_field, *([spec.group_field] if spec.group_field else [])]
        missing = [f for f in needed if f not in corpus.keep_fields]
        if missing:
            raise ValueError(
                f"corpora[{corpus.name}].keep_fields lacks {missing} (marc needs them)"
            )


register_section(
    RecipeSection(
        "marc",
        MarcSpec,
        "MARC-ja: labels from ratings, relabelled evaluation sets (task marc-ja)",
        _check,
    )
)
