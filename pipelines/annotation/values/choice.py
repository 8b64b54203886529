"""Choices: one option (``choice``) or several (``multiple_choice``) of a ``<Choices>``
control, static or dynamic (``value="$options"``).

Rows: the chosen option, several joined with ``|``. Agreement: nominal Krippendorff's
alpha and Fleiss' kappa; when every option is a number (an ordinal scale shown as
choices, KLUE-STS's 0-5) alpha at the ordinal, interval and ratio levels too. Simulated
annotator: the item's latent answer with probability ``accuracy`` (else another option
uniformly), or on a numeric scale the answer plus ``bias + N(0, noise)`` rounded to the
nearest option; careless annotators answer uniformly.
"""

from __future__ import annotations

import numpy as np

from pipelines.annotation.label_config import Control
from pipelines.annotation.values import Person, ValueType, region, register_value_type, seed_of


def ordinal_scale(options: list[str] | tuple[str, ...]) -> list[float] | None:
    """The options as numbers when they all are (an ordinal scale), else None."""
    try:
        return [float(o) for o in options] if options else None
    except ValueError:
        return None


def simulated_choice(
    control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
) -> str | list[str] | None:
    """The simulated option(s) of one choices control for one item (None: leave it)."""
    truth = data.get(f"sim_{control.name}")
    options = list(control.options_for(data))
    if not options:
        return None
    if isinstance(truth, list | tuple) and truth:
        # several latent answers (a survey's respondents; an ambiguous pair): each
        # annotator answers as one of them
        picked = truth[int(rng.integers(len(truth)))]
        if not control.single:
            picked = (list(picked) if isinstance(picked, list | tuple)
                      else str(picked).split("|"))  # fmt: skip
            return [p for p in picked if p in options] or None
        truth = picked
    scale = ordinal_scale(options)
    if truth is None or str(truth) not in options and scale is None:
        item_rng = np.random.default_rng(seed_of(seed, control.name, data.get("item_id")))
        truth = options[int(item_rng.integers(len(options)))]
    if who.careless:
        return options[int(rng.integers(len(options)))]
    if scale is not None:
        value = float(truth) + who.bias + rng.normal(0, who.noise)
        nearest = min(scale, key=lambda s: abs(s - value))
        return options[scale.index(nearest)]
    if rng.random() < who.accuracy:
        return str(truth)
    others = [o for o in options if o != str(truth)]
    return others[int(rng.integers(len(others)))] if others else str(truth)


class Choice(ValueType):
    """One option of a ``<Choices>`` control (KLUE-NLI's label, a topic, an STS score
    shown as choices)."""

    name = "choice"
    tags = frozenset({"Choices"})
    result_types = frozenset({"choices"})
    rules = ("majority", "mean")

    def claims(self, control: Control) -> bool:
        return control.tag == "Choices" and control.single

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        return ["|".join(r.get("value", {}).get("choices", [])) for r in regions]

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        value = simulated_choice(control, data, who, rng, seed)
        if value is None:
            return []
        chosen = value if isinstance(value, list) else [value]
        return [region(control, "choices", {"choices": chosen})]


class MultipleChoice(Choice):
    """Several options of a ``<Choices choice="multiple">`` control (a survey's
    answers), joined with ``|`` in a row."""

    name = "multiple_choice"
    rules = ("majority",)
    priority = 1

    def claims(self, control: Control) -> bool:
        return control.tag == "Choices" and not control.single


register_value_type(Choice())
register_value_type(MultipleChoice())
