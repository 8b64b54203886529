"""A word-level dependency tree: a head and a relation label per word (KLUE-DP, KLUE
3.7: each word's head word, 0 for the root, and its dependency relation).

In Label Studio the words are regions of a ``<Labels name="words" toName="text">``
control with one label ``W`` over the space-joined words (pre-loaded as a prediction,
ids ``w1`` ... ``wN``) and an annotator draws one ``<Relations>`` arrow from each word to its head,
labelled with the relation; a word without an arrow is the root (head 0, label
``ROOT``). Pin it per field in the recipe (``annotation.value_types: {relations:
dependency_tree}``); a ``<Relations>`` control is a ``relation`` otherwise.

Row: the tree as one canonical JSON list of [head, label] per word. Agreement: the
unlabelled and labelled attachment scores (UAS, LAS) between every pair of annotators;
rule ``span_vote`` over (word, head, label) arcs: a word whose arc no K annotators share,
or a voted structure that is not a tree, drops the item; rule ``tree_vote``
(:mod:`pipelines.agreement.tree_vote`) always yields a tree. Simulated annotator: each arc
of the item's ``sim_<field>`` tree (a list of [head, label], or its JSON) kept with
probability ``accuracy``, else attached to another word (a later one when the item's
data says ``head_final``), and its label kept with the same probability, else another of
the interface's labels.
"""

from __future__ import annotations

import json
import re
from itertools import combinations

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
from pipelines.measures.reliability import round_figure

WORD_ID = re.compile(r"^w(\d+)$")


def is_tree(heads: list[int]) -> bool:
    """One root (head 0) and every word reaches it without a cycle."""
    if sum(h == 0 for h in heads) != 1 or any(not 0 <= h <= len(heads) for h in heads):
        return False
    for start in range(1, len(heads) + 1):
        seen, word = set(), start
        while word != 0:
            if word in seen:
                return False
            seen.add(word)
            word = heads[word - 1]
    return True


class DependencyTree(ValueType):
    """A head and a label per word (arrows between word regions)."""

    name = "dependency_tree"
    tags = frozenset({"Relations"})
    result_types = frozenset()
    rules = ("span_vote", "tree_vote")

    def claims(self, control: Control) -> bool:
        return False  # pinned by the recipe: a <Relations> control is a relation otherwise

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        words = [int(m.group(1)) for r in result if (m := WORD_ID.match(str(r.get("id", ""))))]
        tree = [[0, "ROOT"] for _ in range(max(words, default=0))]
        for r in regions:
            dep, head = WORD_ID.match(str(r.get("from_id"))), WORD_ID.match(str(r.get("to_id")))
            if dep and head and int(dep.group(1)) <= len(tree):
                tree[int(dep.group(1)) - 1] = [int(head.group(1)), (r.get("labels") or [""])[0]]
        return [canonical_json(tree)]

    def elements(self, value: str) -> list[tuple]:
        return [(i + 1, head, label) for i, (head, label) in enumerate(json.loads(value))]

    def from_elements(self, elements: list[tuple], values: list[str]) -> str | None:
        words = max(len(json.loads(v)) for v in values)
        arcs = {word: (head, label) for word, head, label in elements}
        if len(arcs) != len(elements) or sorted(arcs) != list(range(1, words + 1)):
            return None  # a word without one voted arc
        tree = [list(arcs[w]) for w in range(1, words + 1)]
        return canonical_json(tree) if is_tree([h for h, _ in tree]) else None

    def conflicts(self, a: object, b: object) -> bool:
        """Two arcs for one word."""
        return a[0] == b[0]

    def measures(self, ratings: pd.DataFrame, context: dict | None = None) -> dict:
        words = heads = both = pairs = 0
        for _, group in ratings.groupby("item_id", sort=True):
            trees = [json.loads(v) for v in group["value"]]
            for a, b in combinations(trees, 2):
                pairs += 1
                for x, y in zip(a, b, strict=False):
                    words += 1
                    heads += x[0] == y[0]
                    both += x == y
        if not words:
            return {"uas": None, "las": None, "pairs": pairs}
        return {
            "uas": round_figure(heads / words),
            "las": round_figure(both / words),
            "pairs": pairs,
        }

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        truth = data.get(f"sim_{control.name}")
        if isinstance(truth, str) and truth.startswith("["):
            truth = json.loads(truth)  # a table column holds the tree as its JSON value
        if not isinstance(truth, list):
            return []
        out, start = [], 0
        for i, word in enumerate(data.get("words") or [], start=1):  # the word regions
            end = start + len(str(word))
            out.append(
                {
                    "id": f"w{i}",
                    "from_name": "words",
                    "to_name": "text",
                    "type": "labels",
                    "value": {"start": start, "end": end, "text": str(word), "labels": ["W"]},
                }
            )
            start = end + 1
        n = len(truth)
        for word, (head, label) in enumerate(truth, start=1):
            if n > 1 and rng.random() >= keep_rate(who):
                # an item marked head_final (KLUE-DP) is re-attached to a later word, as
                # its guideline tells people: their errors keep the convention
                later = range(word + 1, n + 1) if data.get("head_final") else range(1, n + 1)
                others = [h for h in later if h not in (word, head)]
                head = others[int(rng.integers(len(others)))] if others else head
            if head == 0:
                continue  # the root draws no arrow
            labels = [o for o in control.options if o != label]
            if labels and rng.random() >= keep_rate(who):  # the label mistaken on its own
                label = labels[int(rng.integers(len(labels)))]
            out.append({"from_id": f"w{word}", "to_id": f"w{head}", "type": "relation",
                        "direction": "right", "labels": [label]})  # fmt: skip
        return out


register_value_type(DependencyTree())
