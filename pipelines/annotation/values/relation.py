"""Relations between two marked spans (``<Relations>``, arrows between the regions of a
``<Labels>`` control): KLUE-RE's relation between a subject and an object entity when
annotators draw it (KLUE 3.5.1; the shipped ``re.xml`` asks the relation of a marked
pair as a ``choice`` instead).

Row: the annotation's relations as one canonical JSON list of {from, to, label}, each
end a [start, end, label] span, sorted (``[]``: none drawn); a relation whose end is not
a span of the annotation is left out. Agreement: relation F1 between every pair of
annotators (both ends and the label equal); rule ``span_vote``. Simulated annotator:
each of the item's ``sim_<field>`` relations ({from, to, label}, the ends as
{start, end, label}) drawn with probability ``accuracy``, else dropped or relabelled;
its ends point at the span regions the ``span_set`` simulation posts (ids from
``spans.span_id``).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import Control
from pipelines.annotation.values import (
    Person,
    ValueType,
    canonical_json,
    keep_rate,
    register_value_type,
)
from pipelines.annotation.values.spans import span_id
from pipelines.measures.set_agreement import pairwise_set_f1


def relations_of(value: str) -> list[tuple]:
    """The (from, to, label) elements of a relation value."""
    return [(tuple(r["from"]), tuple(r["to"]), r["label"]) for r in json.loads(value)]


class Relation(ValueType):
    """Labelled arrows between two spans (``<Relations>``)."""

    name = "relation"
    tags = frozenset({"Relations"})
    result_types = frozenset({"relation"})
    rules = ("span_vote",)

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        ends = {}
        for r in result:
            value = r.get("value", {})
            if r.get("id") is not None and value.get("labels"):
                ends[r["id"]] = [int(value["start"]), int(value["end"]), value["labels"][0]]
        out = []
        for r in regions:
            source, target = ends.get(r.get("from_id")), ends.get(r.get("to_id"))
            if source is None or target is None:
                continue
            for label in r.get("labels") or [""]:
                out.append({"from": source, "to": target, "label": label})
        out.sort(key=lambda x: (x["from"], x["to"], x["label"]))
        return [canonical_json(out)]

    def empty(self, control: Control) -> str | None:
        return "[]"

    def elements(self, value: str) -> list[tuple]:
        return relations_of(value)

    def from_elements(self, elements: list[tuple], values: list[str]) -> str:
        return canonical_json([{"from": list(a), "to": list(b), "label": lab}
                               for a, b, lab in sorted(elements)])  # fmt: skip

    def measures(self, ratings: pd.DataFrame, context: dict | None = None) -> dict:
        return {"relation_f1": pairwise_set_f1(ratings, relations_of)}

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        truth = data.get(f"sim_{control.name}")
        if not isinstance(truth, list):
            return []
        labels = list(control.options) or sorted({str(r["label"]) for r in truth})
        out = []
        for rel in truth:
            label = str(rel["label"])
            if rng.random() >= keep_rate(who):
                if rng.random() < 0.5:
                    continue  # not drawn
                label = labels[int(rng.integers(len(labels)))]
            a, b = rel["from"], rel["to"]
            out.append({
                "from_id": span_id(int(a["start"]), int(a["end"]), str(a["label"])),
                "to_id": span_id(int(b["start"]), int(b["end"]), str(b["label"])),
                "type": "relation", "direction": "right", "labels": [label],
            })  # fmt: skip
        return out


register_value_type(Relation())
