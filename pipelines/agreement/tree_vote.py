"""The ``tree_vote`` agreement rule: one dependency tree per sentence from its
annotators' trees, always a tree (issue 57, item 4).

``span_vote`` keeps only the arcs ``min_votes`` annotators share and drops a sentence
with one word left without: with every word voted on, a sentence of 15 words and two
annotators at 90% per arc has about a 4% chance to survive, and KLUE-DP's annotation
(every word gets a head) cannot leave a word out. Here, per sentence:

1. Each word's head is the one most of its annotators gave (ties: the pre-loaded
   suggestion's head when it is among them, else the nearest head), its label the
   most given among those who chose that head (ties: the suggestion's, else the first
   in order). With ``head_final`` only heads after the word count, and the last word
   is the root (KLUE-DP, the Sejong treebank); a word nobody attached so is attached
   to the next word (``forced``).
2. When those choices do not make one tree (a cycle, two roots), the tree is the
   maximum spanning arborescence of the vote counts with one root (Edmonds' algorithm,
   networkx), so the vote is always a tree.
3. An arc chosen by fewer than ``min_votes`` annotators is *weak*: the sentence keeps
   it (a linguist's review corrects it) and the gold row counts its weak arcs; with
   ``max_weak_share`` a sentence whose share of weak arcs is above it is dropped
   (``weak_tree``).

Annotators are screened first as ``span_vote`` screens them (``element_f1_min``: the
mean F1 of one's arcs against the others' majority arcs). Every sentence with
annotations of different lengths is dropped (``word_count_mismatch``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from pipelines.agreement.settings import AgreementError, _Answers, agreement_rule
from pipelines.annotation.values import VALUE_TYPES, canonical_json
from pipelines.annotation.values.tree import is_tree

ROOT = "ROOT"


@dataclass
class TreeVoteSettings(_Answers):
    """One tree per sentence (module docstring)."""

    rule: str = "tree_vote"
    min_votes: int = 2
    head_final: bool = False
    max_weak_share: float | None = None
    value_type: str = "dependency_tree"
    element_f1_min: float | None = None
    min_screened_items: int = 3

    summary: ClassVar[tuple[str, ...]] = ("min_votes", "head_final")

    def __post_init__(self) -> None:
        self.check_values()
        if self.min_votes < 1:
            raise AgreementError(f"min_votes must be >= 1, got {self.min_votes}")
        if self.max_weak_share is not None and not 0 <= self.max_weak_share <= 1:
            raise AgreementError(f"max_weak_share must be in [0, 1], got {self.max_weak_share}")
        if self.element_f1_min is not None and not 0 < self.element_f1_min <= 1:
            raise AgreementError(f"element_f1_min must be in (0, 1], got {self.element_f1_min}")
        if self.min_screened_items < 1:
            raise AgreementError(f"min_screened_items must be >= 1, got {self.min_screened_items}")
        if self.value_type != "dependency_tree":
            raise AgreementError("tree_vote votes on dependency trees (value_type "
                                 f"dependency_tree), not {self.value_type!r}")  # fmt: skip


def _allowed(word: int, head: int, n: int, head_final: bool) -> bool:
    if head == word or not 0 <= head <= n:
        return False
    return not head_final or (head > word if word < n else head == 0)


def _arborescence(n: int, votes: list[Counter], head_final: bool) -> list[int]:
    """The one-rooted tree of most votes (rule 2)."""
    import networkx as nx

    graph = nx.DiGraph()
    big = float(n + 1) * 10
    for d in range(1, n + 1):
        for h in range(0, n + 1):
            if _allowed(d, h, n, head_final):
                weight = votes[d - 1][h] + 1e-3  # every allowed arc, so a tree exists
                graph.add_edge(h, d, weight=weight - (big if h == 0 else 0))
    tree = nx.maximum_spanning_arborescence(graph, attr="weight", preserve_attrs=True)
    heads = [0] * n
    for h, d in tree.edges():
        heads[d - 1] = h
    return heads


def vote_tree(trees: list[list[list]], suggested: list[list] | None, head_final: bool
              ) -> tuple[list[list], list[int], int]:  # fmt: skip
    """(the voted tree as [head, label] per word, each word's votes for its chosen head,
    words forced onto the next word)."""
    n = len(trees[0])
    votes = [Counter() for _ in range(n)]
    labels: list[dict[int, Counter]] = [{} for _ in range(n)]
    for tree in trees:
        for d, (h, lab) in enumerate(tree, start=1):
            votes[d - 1][int(h)] += 1
            labels[d - 1].setdefault(int(h), Counter())[str(lab)] += 1
    heads, forced = [], 0
    for d in range(1, n + 1):
        options = {h: c for h, c in votes[d - 1].items() if _allowed(d, h, n, head_final)}
        if not options:
            heads.append(0 if d == n or not head_final else d + 1)
            forced += 1
            continue
        hint = int(suggested[d - 1][0]) if suggested and len(suggested) == n else None
        heads.append(max(options, key=lambda h: (options[h], h == hint, -abs(h - d))))
    if not is_tree(heads):
        heads = _arborescence(n, votes, head_final)
    out = []
    for d, h in enumerate(heads, start=1):
        if h == 0:
            out.append([0, ROOT])
            continue
        given = labels[d - 1].get(h, Counter())
        hint = str(suggested[d - 1][1]) if suggested and len(suggested) == n else None
        label = max(given, key=lambda lab: (given[lab], lab == hint)) if given else (hint or "")
        out.append([h, label])
    return out, [votes[d - 1][h] for d, h in enumerate(heads, start=1)], forced


@agreement_rule("tree_vote", TreeVoteSettings)
def tree_vote_rule(ratings: pd.DataFrame, settings: TreeVoteSettings
                   ) -> tuple[pd.DataFrame, list[dict], None]:  # fmt: skip
    """One dependency tree per sentence from its annotators' trees, always a tree:
    plurality per word, the maximum spanning arborescence when that is not a tree;
    weak arcs (under ``min_votes``) counted (module docstring)."""
    from pipelines.agreement.rules import screen_by_elements

    kind = VALUE_TYPES.get("dependency_tree")
    ratings, dropped = screen_by_elements(ratings, settings, kind)
    rows = []
    for item, group in ratings.groupby("item_id", sort=True):
        trees = [json.loads(str(v)) for v in group["value"]]
        if len({len(t) for t in trees}) != 1 or not trees[0]:
            dropped.append(
                {
                    "kind": "item",
                    "id": str(item),
                    "reason": "word_count_mismatch",
                    "detail": f"trees of {sorted({len(t) for t in trees})} words",
                }
            )
            continue
        hint = None
        if "suggested" in group.columns:
            first = group["suggested"].dropna()
            hint = json.loads(str(first.iloc[0])) if len(first) else None
        tree, support, forced = vote_tree(trees, hint, settings.head_final)
        weak = sum(s < settings.min_votes for s in support)
        if settings.max_weak_share is not None and weak / len(tree) > settings.max_weak_share:
            dropped.append({"kind": "item", "id": str(item), "reason": "weak_tree",
                            "detail": f"{weak} of {len(tree)} arcs with fewer than "
                                      f"{settings.min_votes} votes"})  # fmt: skip
            continue
        rows.append({"item_id": str(item), "label": canonical_json(tree),
                     "n_annotations": len(trees), "elements": len(tree), "weak_arcs": weak,
                     "forced_arcs": forced})  # fmt: skip
    gold = pd.DataFrame(rows, columns=["item_id", "label", "n_annotations", "elements",
                                       "weak_arcs", "forced_arcs"])  # fmt: skip
    return gold, dropped, None
