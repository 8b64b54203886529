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
(:mod:`pipelines.agreement.tree_vote`) always yields a tree.

Simulated annotator, against the item's ``sim_<field>`` tree (a list of [head, label],
or its JSON), ``p`` their accuracy:

- with a pre-loaded tree (a correction or a review round; ``corrects_suggestion``), they
  read it arc by arc: a suggested arc that is right is kept, but for a slip with
  probability ``(1 - p) / 10``; a wrong one is fixed to the truth with probability ``p``,
  else left as it is; a careless one ignores the suggestion (below, with ``p`` = 0.5);
- without one (a pilot), each true arc is kept with probability ``p``.

An arc they get wrong goes to a near miss: another word (a later one when the item's
data says ``head_final``, as its guideline tells people) that crosses no other true arc,
the nearer the true head the likelier (weight ``1 / distance``); the right head when
none is left (no plausible mistake); a careless annotator's go anywhere. A label is
kept with the same probability, else another of the interface's. Errors of that kind
keep the trees about as projective as their truth (uniform re-attachment, the model
before, made 88 of the KLUE-DP demo's 254 gold trees non-projective, where 4 of the 265
truths were).
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
    reads_suggested,
    register_value_type,
    sim_truth,
)
from pipelines.measures.reliability import round_figure
from pipelines.models.attachment import attachment_counts

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
        trees = [[json.loads(v) for v in group["value"]]
                 for _, group in ratings.groupby("item_id", sort=True)]  # fmt: skip
        pairs = [pair for item in trees for pair in combinations(item, 2)]
        words, heads, both = attachment_counts(pairs, strict=False)
        pairs = len(pairs)
        if not words:
            return {"uas": None, "las": None, "pairs": pairs}
        return {
            "uas": round_figure(heads / words),
            "las": round_figure(both / words),
            "pairs": pairs,
        }

    corrects_suggestion = True

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
        n, p = len(truth), keep_rate(who)
        heads = [int(h) for h, _ in truth]  # the answer so far, the truth after ``word``
        shown = None if who.careless or suggestion is None else suggested_arcs(suggestion, n)
        for word, (head, label) in enumerate(truth, start=1):
            head = int(head)
            if shown is not None and word in shown:
                s_head, s_label = shown[word]
                if not reads_suggested(rng, s_head == head, p):  # ends wrong: the shown error kept,
                    head = s_head if s_head != head else near_miss(  # or a slip
                        word, head, heads, bool(data.get("head_final")), rng)  # fmt: skip
                if not reads_suggested(rng, s_label == label, p):
                    label = s_label if s_label != label else None
            else:
                if n > 1 and rng.random() >= p:
                    head = near_miss(word, head, heads, bool(data.get("head_final")), rng,
                                     anywhere=who.careless)  # fmt: skip
                label = label if rng.random() < p else None
            heads[word - 1] = head
            if head == 0:
                continue  # the root draws no arrow
            if label is None:  # the label mistaken on its own
                labels = [o for o in control.options if o != truth[word - 1][1]]
                label = labels[int(rng.integers(len(labels)))] if labels else truth[word - 1][1]
            out.append({"from_id": f"w{word}", "to_id": f"w{head}", "type": "relation",
                        "direction": "right", "labels": [label]})  # fmt: skip
        return out


def suggested_arcs(suggestion: list[dict], n: int) -> dict[int, tuple[int, str]]:
    """The pre-loaded tree's arcs by word (1-based): the word's head and label; a word
    without an arrow is the root (head 0, ``ROOT``)."""
    arcs = {w: (0, "ROOT") for w in range(1, n + 1)}
    for r in suggestion:
        if r.get("type") != "relation":
            continue
        a, b = WORD_ID.match(str(r.get("from_id", ""))), WORD_ID.match(str(r.get("to_id", "")))
        if a and b and 1 <= int(a.group(1)) <= n:
            arcs[int(a.group(1))] = (int(b.group(1)), str((r.get("labels") or ["ROOT"])[0]))
    return arcs


def _crosses(d: int, h: int, a: int, b: int) -> bool:
    lo, hi = sorted((d, h))
    x, y = sorted((a, b))
    return lo < x < hi < y or x < lo < y < hi


def near_miss(
    word: int,
    head: int,
    heads: list[int],
    head_final: bool,
    rng: np.random.Generator,
    anywhere: bool = False,
) -> int:
    """A wrong head for ``word`` (true head ``head``): a word that crosses no arc of
    ``heads`` (the answer so far: the annotator's before ``word``, the truth after it),
    weighted by ``1 / distance`` from the true head; ``head`` when no such word is
    left (no plausible mistake); uniformly any other word when ``anywhere`` (a
    careless annotator); ``head`` itself when there is no other word."""
    n = len(heads)
    pool = range(word + 1, n + 1) if head_final else range(1, n + 1)
    others = [h for h in pool if h not in (word, head)]
    if not others:
        return head
    if anywhere:
        return others[int(rng.integers(len(others)))]
    arcs = [(d, h) for d, h in enumerate(heads, start=1) if h and d != word]
    choice = [h for h in others if not any(_crosses(word, h, d, g) for d, g in arcs)]
    if not choice:
        return head  # no plausible wrong head: the right one
    anchor = head if head else n + 1
    weights = np.array([1.0 / max(1, abs(h - anchor)) for h in choice])
    return choice[int(rng.choice(len(choice), p=weights / weights.sum()))]


register_value_type(DependencyTree())
