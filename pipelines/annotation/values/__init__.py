"""Annotation value types: what one annotator's answer to one control is, as a
registration.

A :class:`ValueType` knows four things about one kind of answer:

- its **Label Studio controls** (:meth:`ValueType.claims`: the tags, and for the
  structured types the control's name, that carry it) and the result regions they
  export;
- how a pulled result becomes **long rows** (:meth:`ValueType.flatten`: one value text
  per row of ``annotate pull``'s table; structured values as canonical JSON, so equal
  answers are equal strings);
- its **agreement measures** (:meth:`ValueType.measures`: nominal alpha and Fleiss for
  choices, every alpha level for ratings, exact match and character F1 for answer spans,
  entity-level F1 and character-tag alpha for span sets, relation F1, attachment scores
  for trees) and the agreement rules that can aggregate it (``rules``);
- its **simulated annotator** (:meth:`ValueType.simulate`: the regions a simulated
  account posts, from the item's ``sim_<field>`` truth and the annotator's noise).

``annotate pull``, ``simulate`` and ``agree`` go through :func:`value_type_of` and never
name a tag themselves, so a family that needs a new kind of answer registers one more
type (``register_value_type``, in its own package) and edits nothing else. The types
shipped here: ``choice``, ``multiple_choice``, ``rating``, ``free_text``, ``span_set``,
``relation``, ``answer_span`` and ``dependency_tree``.

Which type a control carries: the registered types that claim it, the most specific
first (``priority``); a recipe can pin one per field (``annotation.value_types``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import Control
from pipelines.core import plugins
from pipelines.core.registry import Registry
from pipelines.measures.reliability import alphas, fleiss


class Person(Protocol):
    """A simulated annotator's noise (``pipelines.annotation.simulate.Annotator``)."""

    email: str
    bias: float
    noise: float
    accuracy: float
    careless: bool


def seed_of(*parts: object) -> int:
    """A 64-bit seed from ``parts`` (SHA-256): the same parts, the same draws."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def keep_rate(who: Person) -> float:
    """The chance a simulated annotator gets one element of a structured answer right
    (a span, an arc): their accuracy, a coin for a careless one."""
    return 0.5 if who.careless else who.accuracy


def sim_truth(data: dict, control: Control) -> list | None:
    """An item's simulated truth for ``control`` (``sim_<name>``) when it is a list (a
    structure such as a tree or a state; a table column holds it as its JSON text)."""
    truth = data.get(f"sim_{control.name}")
    if isinstance(truth, str) and truth.startswith("["):
        truth = json.loads(truth)
    return truth if isinstance(truth, list) else None


def reads_suggested(rng: np.random.Generator, right: bool, p: float) -> bool:
    """Whether a reader of a pre-loaded element ends with the right answer: a right one
    is kept but for a slip (``(1 - p) / 10``), a wrong one fixed with probability ``p``
    (``p``: their accuracy, :func:`keep_rate`)."""
    return rng.random() >= (1 - p) / 10 if right else rng.random() < p


def canonical_json(value: object) -> str:
    """The one text of a structured value: sorted keys, no ASCII escaping."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def region(control: Control, kind: str, value: dict, **extra: Any) -> dict:
    """One Label Studio result region of ``control``."""
    return {"from_name": control.name, "to_name": control.to_name, "type": kind,
            "value": value, **extra}  # fmt: skip


class ValueType:
    """One kind of answer. Subclasses set ``name``, ``tags`` (the Label Studio control
    tags that carry it), ``result_types`` (the region types Label Studio exports) and
    ``rules`` (the agreement rules that can aggregate it), and override what differs."""

    name: ClassVar[str] = ""
    tags: ClassVar[frozenset[str]] = frozenset()
    result_types: ClassVar[frozenset[str]] = frozenset()
    rules: ClassVar[tuple[str, ...]] = ("majority",)
    priority: ClassVar[int] = 0  # the most specific claim wins
    numeric: ClassVar[bool] = False
    # whether :meth:`simulate` takes the task's pre-loaded regions (``suggestion=``) and
    # corrects them, as a person shown a model's answer does
    corrects_suggestion: ClassVar[bool] = False
    # whether :meth:`flatten` reads other controls' regions of the annotation too (its
    # ``result``), so that a control left empty is still flattened from them
    reads_result: ClassVar[bool] = False

    def claims(self, control: Control) -> bool:
        """Whether ``control`` carries this type (by default: its tag)."""
        return control.tag in self.tags

    def flatten(
        self, control: Control | None, regions: list[dict], result: list[dict] = ()
    ) -> list[str]:
        """The value texts of one annotation's regions of ``control`` (one row each);
        ``result``: the whole annotation, for a value that points at other regions."""
        return [canonical_json(r.get("value", {})) for r in regions]

    def companions(self, control: Control) -> frozenset[str]:
        """The names of other controls whose regions this value reads and whose answer
        its :meth:`simulate` gives too (none by default; a dialogue state's typed box)."""
        return frozenset()

    def empty(self, control: Control) -> str | None:
        """The value of an answered annotation with no region of ``control`` (None: no
        row; an answer span's ``no_answer``)."""
        return None

    def simulate(
        self,
        control: Control,
        data: dict,
        who: Person,
        rng: np.random.Generator,
        seed: int,
    ) -> list[dict]:
        """The regions a simulated annotator posts for ``control`` (none by default)."""
        return []

    def elements(self, value: str) -> list:
        """The votable elements of a set-valued answer (``span_vote``)."""
        raise NotImplementedError(f"{self.name} answers are not voted element by element")

    def from_elements(self, elements: list, values: list[str]) -> str | None:
        """The value made of the voted ``elements`` (None: they make no valid value)."""
        raise NotImplementedError(f"{self.name} answers are not voted element by element")

    def conflicts(self, a: object, b: object) -> bool:
        """Whether two voted elements cannot both stand (overlapping spans)."""
        return False

    def measures(self, ratings: pd.DataFrame, context: dict | None = None) -> dict:
        """Agreement figures over ``ratings`` (item_id, annotator_id, value); by
        default Krippendorff's alpha at every level the values allow and Fleiss' kappa
        (``context``: what a structured type needs, e.g. the texts' lengths)."""
        return {"krippendorff_alpha": alphas(ratings), "fleiss_kappa": fleiss(ratings)}


VALUE_TYPES: Registry[ValueType] = plugins.VALUE_TYPES  # filled by discovery


def register_value_type(kind: ValueType) -> ValueType:
    """Register ``kind`` under its name (a family's own type: one call in its package)."""
    VALUE_TYPES.add(kind.name, kind, (type(kind).__doc__ or "").strip())
    return kind


def value_type_of(control: Control, pinned: str | None = None) -> ValueType:
    """The value type ``control`` carries: ``pinned`` (a recipe's
    ``annotation.value_types``) when given, else the most specific registered type that
    claims it."""
    if pinned:
        return VALUE_TYPES.get(pinned)
    found = [kind for _, kind in VALUE_TYPES.items() if kind.claims(control)]
    if not found:
        raise ValueError(
            f"no value type claims the {control.tag} control {control.name!r} "
            f"(registered: {VALUE_TYPES.names()})"
        )
    return max(found, key=lambda kind: kind.priority)


def value_type_for_region(result_type: str) -> ValueType | None:
    """The type that exports regions of ``result_type`` when no config says which
    control they belong to (the least specific one: a plain reading)."""
    found = [kind for _, kind in VALUE_TYPES.items() if result_type in kind.result_types]
    return min(found, key=lambda kind: kind.priority) if found else None


def spans_of(value: str) -> Iterable[tuple]:
    """The (start, end, label) elements of a span-set value (its canonical JSON)."""
    return [(s["start"], s["end"], s.get("label", "")) for s in json.loads(value)]
