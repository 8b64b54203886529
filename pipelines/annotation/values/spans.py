"""Character spans over a text: a set of labelled spans (``span_set``: KLUE-NER's
entities, KLUE 3.4.1) and one answer span of a context or no answer (``answer_span``:
JSQuAD, JGLUE 3.3; KLUE-MRC, KLUE 3.7).

``span_set``: a ``<Labels>`` control over a ``<Text>``. Row: the annotation's spans as
one canonical JSON list of {start, end, label, text}, sorted (``[]``: the annotator
marked none, itself an answer). Agreement: entity-level F1 between every pair of
annotators (a span agrees when start, end and label are equal, as seqeval's entity F1
counts it) and Krippendorff's alpha (nominal) over character tags, each character's
label or ``O``; rule ``span_vote``. Simulated annotator: each of the item's
``sim_<field>`` spans kept with probability ``accuracy``, else dropped, shortened by a
character or relabelled; careless annotators keep half and relabel at random.

``answer_span``: a ``<Labels>`` control named ``answer`` (or ``*_answer``) over the
context. Row: {start, end, text} of the first span in text order, or ``no_answer`` when
the annotator marked none. Agreement: exact match and character F1 between every pair
of annotators (SQuAD's overlap F1 over characters, the measure JGLUE 3.3 reports for
JSQuAD; no answer against no answer is a match); rule ``majority`` over the rows.
Simulated annotator: the item's ``sim_<field>`` truth (``{start, end}``, JSON text of
it, or a list of the answers several people gave, one drawn per annotator, ``null``
for one who found none) cut short by a character or two at the annotator's accuracy;
a careless one marks nothing or a random short span.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import Control
from pipelines.annotation.values import (
    Person,
    ValueType,
    canonical_json,
    keep_rate,
    region,
    register_value_type,
    spans_of,
)
from pipelines.measures.reliability import alpha, round_figure
from pipelines.measures.set_agreement import pairwise_set_f1

NO_ANSWER = "no_answer"


def span_id(start: int, end: int, label: str) -> str:
    """A region id that names the span, so a relation can point at it."""
    return f"s{start}-{end}-{label}"


def spans_in(regions: list[dict]) -> list[dict]:
    """{start, end, label, text} per label of each region, sorted."""
    out = []
    for r in regions:
        value = r.get("value", {})
        for label in value.get("labels", []):
            out.append({"start": int(value.get("start", 0)), "end": int(value.get("end", 0)),
                        "label": str(label), "text": value.get("text", "")})  # fmt: skip
    return sorted(out, key=lambda s: (s["start"], s["end"], s["label"]))


def character_tags(spans: list[tuple], length: int) -> list[str]:
    """Each character's label (the last span covering it) or ``O``."""
    tags = ["O"] * length
    for start, end, label in sorted(spans):
        for i in range(max(0, start), min(length, end)):
            tags[i] = label
    return tags


def character_alpha(ratings: pd.DataFrame, lengths: dict[str, int] | None = None) -> float | None:
    """Nominal Krippendorff's alpha over character tags: units are the characters of
    every item (its text's length from ``lengths``, else up to its last marked span),
    values the tag each annotator gave them."""
    columns, codes = [], {"O": 0}
    annotators = sorted(ratings["annotator_id"].unique())
    row_of = {a: i for i, a in enumerate(annotators)}
    for item, group in ratings.groupby("item_id", sort=True):
        spans = {who: list(spans_of(v)) for who, v in zip(group["annotator_id"], group["value"],
                                                        strict=True)}  # fmt: skip
        length = (lengths or {}).get(item) or max(
            (end for s in spans.values() for _, end, _ in s), default=0)  # fmt: skip
        if not length:
            continue
        block = np.full((len(annotators), length), np.nan)
        for who, marked in spans.items():
            tags = character_tags(marked, length)
            block[row_of[who]] = [codes.setdefault(t, len(codes)) for t in tags]
        columns.append(block)
    if not columns:
        return None
    return round_figure(alpha(np.hstack(columns), "nominal"))


class SpanSet(ValueType):
    """Labelled character spans (``<Labels>``): named entities."""

    name = "span_set"
    tags = frozenset({"Labels"})
    result_types = frozenset({"labels"})
    rules = ("span_vote",)

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        return [canonical_json(spans_in(regions))]

    def empty(self, control: Control) -> str | None:
        return "[]"

    def elements(self, value: str) -> list[tuple]:
        """The votable elements of a value: (start, end, label) per span."""
        return list(spans_of(value))

    def from_elements(self, elements: list[tuple], values: list[str]) -> str:
        """The gold value of the voted ``elements`` (texts taken from ``values``)."""
        text = {(s["start"], s["end"], s["label"]): s.get("text", "")
                for v in values for s in json.loads(v)}  # fmt: skip
        spans = [{"start": s, "end": e, "label": lab, "text": text.get((s, e, lab), "")}
                 for s, e, lab in sorted(elements)]  # fmt: skip
        return canonical_json(spans)

    def conflicts(self, a: object, b: object) -> bool:
        """Flat entities (KLUE-NER has no nested ones): overlapping spans conflict."""
        return a[0] < b[1] and b[0] < a[1]

    def measures(self, ratings: pd.DataFrame, context: dict | None = None) -> dict:
        lengths = (context or {}).get("lengths")
        return {
            "entity_f1": pairwise_set_f1(ratings, spans_of),
            "character_alpha": character_alpha(ratings, lengths),
        }

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        truth = data.get(f"sim_{control.name}")
        if not isinstance(truth, list):
            return []
        text = str(data.get(control.to_name, ""))
        labels = list(control.options) or sorted({str(s["label"]) for s in truth})
        out = []
        for span in truth:
            start, end, label = int(span["start"]), int(span["end"]), str(span["label"])
            if rng.random() >= keep_rate(who):
                slip = int(rng.integers(3))
                if slip == 0:
                    continue  # missed
                if slip == 1 and end - start > 1:
                    end -= 1  # a boundary a character short
                else:
                    label = labels[int(rng.integers(len(labels)))]
            value = {"start": start, "end": end, "text": text[start:end], "labels": [label]}
            out.append(region(control, "labels", value, id=span_id(start, end, label)))
        return out


class AnswerSpan(ValueType):
    """One span of a context that answers a question, or no answer (``<Labels
    name="answer">``)."""

    name = "answer_span"
    tags = frozenset({"Labels"})
    result_types = frozenset()
    rules = ("majority",)
    priority = 1

    def claims(self, control: Control) -> bool:
        return control.tag == "Labels" and (
            control.name == "answer" or control.name.endswith("_answer"))  # fmt: skip

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        spans = spans_in(regions)
        if not spans:
            return [NO_ANSWER]
        first = spans[0]
        return [canonical_json({k: first[k] for k in ("start", "end", "text")})]

    def empty(self, control: Control) -> str | None:
        return NO_ANSWER

    def measures(self, ratings: pd.DataFrame, context: dict | None = None) -> dict:
        exact = f1 = pairs = 0.0
        for _, group in ratings.groupby("item_id", sort=True):
            for a, b in combinations(list(group["value"]), 2):
                pairs += 1
                exact += a == b
                f1 += answer_f1(a, b)
        if not pairs:
            return {"exact_match": None, "character_f1": None, "pairs": 0}
        return {"exact_match": round_figure(exact / pairs),
                "character_f1": round_figure(f1 / pairs), "pairs": int(pairs)}  # fmt: skip

    def simulate(
        self, control: Control, data: dict, who: Person, rng: np.random.Generator, seed: int
    ) -> list[dict]:
        truth = data.get(f"sim_{control.name}")
        if isinstance(truth, str):
            truth = json.loads(truth) if truth.strip() else None
        if isinstance(truth, list):  # the answers people gave: one drawn (None: none)
            truth = truth[int(rng.integers(len(truth)))] if truth else None
        text = str(data.get(control.to_name, ""))
        if who.careless and text:
            if rng.random() < 0.5:
                return []
            start = int(rng.integers(len(text)))
            truth = {"start": start, "end": min(len(text), start + int(rng.integers(1, 8)))}
        if not isinstance(truth, dict):
            return []  # no answer
        start, end = int(truth["start"]), int(truth["end"])
        if not who.careless and rng.random() >= who.accuracy and end - start > 1:
            end -= int(rng.integers(1, min(3, end - start)))  # an answer cut short
        label = control.options[0] if control.options else "answer"
        value = {"start": start, "end": end, "text": text[start:end], "labels": [label]}
        return [region(control, "labels", value)]


def answer_f1(a: str, b: str) -> float:
    """Character-overlap F1 between two answer rows (SQuAD's F1 over characters);
    ``no_answer`` agrees only with itself."""
    if NO_ANSWER in (a, b):
        return float(a == b)
    x, y = json.loads(a)["text"], json.loads(b)["text"]
    common = sum((Counter(x) & Counter(y)).values())
    if not common:
        return 0.0
    precision, recall = common / len(x), common / len(y)
    return 2 * precision * recall / (precision + recall)


register_value_type(SpanSet())
register_value_type(AnswerSpan())
