"""Free text: a ``<TextArea>`` (a written hypothesis, a post-edited translation, a
written question).

Rows: the text as written (several lines joined with a newline). Agreement: free text
is not voted on; the figures are exact agreement (nominal alpha over the texts) and
Fleiss' kappa, for what they are worth, and the families' own review rounds decide.
Simulated annotator: the item's ``sim_<field>`` text (one of them at random when it is a
list of variants), else the first data field with a simulated-edit marker.
"""

from __future__ import annotations

import numpy as np

from pipelines.annotation.label_config import Control
from pipelines.annotation.values import Person, ValueType, region, register_value_type


class FreeText(ValueType):
    """Text an annotator writes (``<TextArea>``)."""

    name = "free_text"
    tags = frozenset({"TextArea"})
    result_types = frozenset({"textarea"})
    rules = ("majority",)

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        return ["\n".join(r.get("value", {}).get("text", [])) for r in regions]

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        truth = data.get(f"sim_{control.name}")
        if isinstance(truth, list | tuple) and truth:
            value = str(truth[int(rng.integers(len(truth)))])  # one of the item's variants
        elif truth is not None:
            value = str(truth)
        else:
            first = next((v for v in data.values() if isinstance(v, str)), "")
            value = f"{first} (simulated edit)"
        return [region(control, "textarea", {"text": [value]})]


register_value_type(FreeText())
