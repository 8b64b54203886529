"""Ratings: a ``<Rating>`` (stars, 1 to ``maxRating``) or a ``<Number>`` (``min`` to
``max``) control.

Rows: the number as text. Agreement: Krippendorff's alpha at the nominal, ordinal,
interval and ratio levels and Fleiss' kappa; rules ``mean`` (KLUE 3.2.1) and
``majority``. Simulated annotator: the item's ``sim_<field>`` (else a seeded draw on the
scale) plus ``bias + N(0, noise)``, rounded and clipped to the scale; careless
annotators answer uniformly.
"""

from __future__ import annotations

import numpy as np

from pipelines.annotation.label_config import Control
from pipelines.annotation.values import Person, ValueType, region, register_value_type, seed_of


def scale_of(control: Control) -> tuple[float, float, float]:
    """(low, high, step) of the control: Rating 1..maxRating (5), Number min..max."""
    if control.tag == "Rating":
        return 1.0, float(control.attr("maxRating", "5")), 1.0
    return (float(control.attr("min", "0")), float(control.attr("max", "5")),
            float(control.attr("step", "1")))  # fmt: skip


class Rating(ValueType):
    """A number on a scale (``<Rating>`` stars or a ``<Number>``)."""

    name = "rating"
    tags = frozenset({"Rating", "Number"})
    result_types = frozenset({"rating", "number"})
    rules = ("mean", "majority")
    numeric = True

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        values = [r.get("value", {}) for r in regions]
        return [str(v["rating"] if "rating" in v else v.get("number")) for v in values]

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        low, high, step = scale_of(control)
        points = np.arange(low, high + step / 2, step)
        truth = data.get(f"sim_{control.name}")
        if truth is None:
            item_rng = np.random.default_rng(seed_of(seed, control.name, data.get("item_id")))
            truth = points[int(item_rng.integers(len(points)))]
        if who.careless:
            value = points[int(rng.integers(len(points)))]
        else:
            noisy = float(truth) + who.bias + rng.normal(0, who.noise)
            value = points[int(np.abs(points - noisy).argmin())]
        number = int(value) if float(value).is_integer() else float(value)
        if control.tag == "Rating":
            return [region(control, "rating", {"rating": number})]
        return [region(control, "number", {"number": number})]


register_value_type(Rating())
