"""A dialogue state (KLUE-WoS, issue 58): the cumulative set of ``domain-slot-value``
items a user turn has established, as the WoS release writes it.

In Label Studio a turn's state is two controls over the dialogue (``<Paragraphs>``): a
``<Taxonomy name="state" pathSeparator="-" leafsOnly="true">`` whose leaves are
domain -> slot -> value of the ontology's closed slots (and ``dontcare``), and a
``<TextArea name="state_typed">`` where the values of open slots (names, places, times)
are typed as written, one ``domain-slot-value`` line each. Pin it in the recipe
(``annotation.value_types: {state: dialogue_state}``); it claims a ``<Taxonomy>``
otherwise too.

Row: the state as one canonical JSON list of ``domain-slot-value`` strings, sorted,
each once (``[]``: nothing established yet, itself an answer); the typed lines are read
from the annotation's ``<name>_typed`` regions. Agreement between every pair of
annotators of a turn: the joint goal agreement (the share of pairs whose states are
identical: joint goal accuracy with one annotator as the reference), the slot F1 (micro
F1 over the items, ``pipelines.measures.set_agreement``), and per slot the share of
pairs, among those where one of them filled it, that gave it the same value. Rule
``span_vote``: per turn, the items at least ``min_votes`` annotators gave; two values
of one slot conflict (the one with more votes stays).

Simulated annotator, against the item's ``sim_<field>`` state (a list, or its JSON),
``p`` their accuracy: with a pre-loaded state (the tracker's) they read it item by
item, keep a right one but for a slip (``(1 - p) / 10``), drop a wrong one and add a
missing one with probability ``p``; without one each true item is kept with
probability ``p``. An item they get wrong is missed or given another value of its slot
(a closed slot's: another leaf; an open one's: the value cut short). A careless one
keeps each true item at even odds and adds a random leaf.
"""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import Control
from pipelines.annotation.values import (
    Person,
    ValueType,
    canonical_json,
    keep_rate,
    reads_suggested,
    region,
    register_value_type,
    sim_truth,
)
from pipelines.measures.reliability import round_figure
from pipelines.measures.set_agreement import pairwise_set_f1

TYPED = "_typed"  # the suffix of the text box of typed values


def slot_of(item: str) -> str:
    """``domain-slot`` of ``domain-slot-value`` (the value may hold ``-``)."""
    domain, _, rest = item.partition("-")
    return f"{domain}-{rest.partition('-')[0]}"


def state_items(value: str) -> list[str]:
    items = json.loads(value) if isinstance(value, str) else value
    return [str(i) for i in items or []]


def typed_lines(regions: list[dict]) -> list[str]:
    """The non-empty lines of text box regions (``value.text``: a list of texts)."""
    out = []
    for r in regions:
        for text in (r.get("value") or {}).get("text") or []:
            out.extend(line.strip() for line in str(text).splitlines() if line.strip())
    return out


class DialogueState(ValueType):
    """The cumulative state of a user turn (``<Taxonomy>`` plus typed values)."""

    name = "dialogue_state"
    tags = frozenset({"Taxonomy"})
    result_types = frozenset({"taxonomy"})
    rules = ("span_vote",)
    corrects_suggestion = True
    reads_result = True

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        paths = [path for r in regions for path in (r.get("value") or {}).get("taxonomy") or []]
        items = ["-".join(str(p) for p in path) for path in paths]  # domain, slot, value
        name = control.name if control else "state"
        items += typed_lines([r for r in result if r.get("from_name") == name + TYPED])
        return [canonical_json(sorted(set(items)))]

    def companions(self, control: Control) -> frozenset[str]:
        return frozenset({control.name + TYPED})

    def empty(self, control: Control) -> str | None:
        return "[]"

    def elements(self, value: str) -> list[tuple]:
        return [(slot_of(i), i) for i in state_items(value)]

    def from_elements(self, elements: list[tuple], values: list[str]) -> str:
        return canonical_json(sorted({item for _, item in elements}))

    def conflicts(self, a: object, b: object) -> bool:
        """Two values of one slot."""
        return a[0] == b[0]

    def measures(self, ratings: pd.DataFrame, context: dict | None = None) -> dict:
        same = pairs = 0
        per_slot: dict[str, list[int]] = {}
        for _, group in ratings.groupby("item_id", sort=True):
            states = [dict((slot_of(i), i) for i in state_items(v)) for v in group["value"]]
            for a, b in combinations(states, 2):
                pairs += 1
                same += a == b
                for slot in set(a) | set(b):
                    agreed = per_slot.setdefault(slot, [0, 0])
                    agreed[0] += a.get(slot) == b.get(slot)
                    agreed[1] += 1
        f1 = pairwise_set_f1(ratings, lambda v: state_items(v))
        return {
            "joint_goal_agreement": round_figure(same / pairs) if pairs else None,
            "slot_f1": f1,
            "pairs": pairs,
            "per_slot": {
                s: {"pairs": n, "agreement": round_figure(k / n)}
                for s, (k, n) in sorted(per_slot.items())
            },  # fmt: skip
        }

    def simulate(
        self,
        control: Control,
        data: dict,
        who: Person,
        rng: np.random.Generator,
        seed: int,
        suggestion: list[dict] | None = None,
    ) -> list[dict]:
        truth = sim_truth(data, control)
        if truth is None:
            return []
        leaves = list(control.options)
        by_slot: dict[str, list[str]] = {}
        for leaf in leaves:
            by_slot.setdefault(slot_of(leaf), []).append(leaf)
        p = keep_rate(who)
        shown = None
        if suggestion is not None and not who.careless:
            shown = set(json.loads(self.flatten(control, [r for r in suggestion if r.get(
                "from_name") == control.name], suggestion)[0]))  # fmt: skip
        answer = set()
        for item in truth:
            # a right pre-loaded item kept but for a slip; a missing one added, or one
            # known without a pre-load, with probability p
            if reads_suggested(rng, shown is not None and item in shown, p):
                answer.add(item)
            elif rng.random() < 0.5:  # a wrong value of the slot (else missed)
                others = [o for o in by_slot.get(slot_of(item), []) if o != item]
                if others:
                    answer.add(others[int(rng.integers(len(others)))])
                elif len(item) > len(slot_of(item)) + 2:
                    answer.add(item[:-1])  # a typed value cut short
        if shown is not None:  # a wrong pre-loaded item left in
            answer |= {i for i in shown - set(truth) if rng.random() >= p}
        if who.careless and leaves:
            answer.add(leaves[int(rng.integers(len(leaves)))])
        chosen = sorted(i for i in answer if i in set(leaves))
        typed = sorted(i for i in answer if i not in set(leaves))
        out = []
        if chosen:
            out.append(region(control, "taxonomy",
                              {"taxonomy": [i.split("-", 2) for i in chosen]}))  # fmt: skip
        if typed:
            out.append({"from_name": control.name + TYPED, "to_name": control.to_name,
                        "type": "textarea", "value": {"text": typed}})  # fmt: skip
        return out


register_value_type(DialogueState())
