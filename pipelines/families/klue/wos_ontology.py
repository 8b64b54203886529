"""The KLUE-WoS ontology (issue 58): the 45 ``domain-slot`` keys of Wizard of Seoul over
5 domains (관광, 숙소, 식당, 택시, 지하철), each with its values, ``none`` and
``dontcare`` (``ontology.json`` of the v1.1 release, CC BY-SA 4.0), and the state
strings of the release (``domain-slot-value``).

Contract: :func:`read_ontology` gives an :class:`Ontology` or an :class:`OntologyError`
naming the file and the line of the fault, before any work: a file that is not a JSON
object, a key that is not ``domain-slot`` (a domain and a slot, neither empty nor
holding ``-``), a value list that is not a list of distinct non-empty strings, a slot
whose list lacks ``none`` or ``dontcare``. A slot is *open* when people type its value
(a name, a place, a time: :data:`OPEN_SLOTS` by default, the ontology's list then
records the values seen) and *closed* otherwise (yes/no, a type, an area, a price
range, a day, a count): a closed slot's value must be one of its list. ``none`` means
"not mentioned" and is never written in a state; ``dontcare`` is a value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipelines.core.errors import BenchforgeError

NONE, DONTCARE = "none", "dontcare"
# the slots whose values people type (names, places, times): open in KLUE-WoS's
# ontology, which lists only the values its dialogues used
OPEN_KINDS = ("이름", "출발지", "도착지", "시간")


class OntologyError(BenchforgeError, ValueError):
    """An ontology, or a state string, that cannot be used; the message names where."""


@dataclass(frozen=True)
class Ontology:
    """The slots (``domain-slot`` -> its values, ``none`` and ``dontcare`` first kept as
    given) and which of them are open."""

    slots: dict[str, tuple[str, ...]]
    open_slots: frozenset[str]
    source: str = ""

    @property
    def domains(self) -> list[str]:
        """The domains in the order the ontology first names them."""
        return list(dict.fromkeys(k.split("-", 1)[0] for k in self.slots))

    def slots_of(self, domain: str) -> list[str]:
        return [k for k in self.slots if k.split("-", 1)[0] == domain]

    def is_open(self, slot: str) -> bool:
        return slot in self.open_slots

    def value_problem(self, slot: str, value: str) -> str | None:
        """Why ``slot`` cannot hold ``value`` in a state (None when it can)."""
        if slot not in self.slots:
            return f"slot {slot!r} is not in the ontology"
        if not value.strip():
            return f"slot {slot!r} has an empty value"
        if value == NONE:
            return f"slot {slot!r} is 'none' (a state lists only the slots it fills)"
        if value != DONTCARE and not self.is_open(slot) and value not in self.slots[slot]:
            return f"value {value!r} is not one of closed slot {slot!r}'s values"
        return None


def default_open(slot: str) -> bool:
    """Whether a slot is open by its name (:data:`OPEN_KINDS`: 이름, 출발지, 도착지, 시간)."""
    name = slot.split("-", 1)[1]
    return any(kind in name for kind in OPEN_KINDS)


def _line_of(text: str, key: str) -> int:
    at = text.find(json.dumps(key, ensure_ascii=False))
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def parse_ontology(text: str, where: str, open_slots: list[str] | None = None) -> Ontology:
    """The ontology of ``text`` (module docstring); ``open_slots`` None: by name."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OntologyError(f"{where}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not data:
        raise OntologyError(f"{where}:1: expected a JSON object of 'domain-slot': [values]")
    slots: dict[str, tuple[str, ...]] = {}
    for key, values in data.items():
        line = _line_of(text, key)
        domain, dash, slot = str(key).partition("-")
        if not dash or not domain.strip() or not slot.strip() or "-" in slot:
            raise OntologyError(f"{where}:{line}: key {key!r} is not 'domain-slot'")
        if (not isinstance(values, list) or not all(isinstance(v, str) and v.strip()
                                                    for v in values)):  # fmt: skip
            raise OntologyError(f"{where}:{line}: {key!r}: values must be a list of strings")
        if len(set(values)) != len(values):
            twice = sorted({v for v in values if values.count(v) > 1})
            raise OntologyError(f"{where}:{line}: {key!r}: values listed twice: {twice}")
        missing = [v for v in (NONE, DONTCARE) if v not in values]
        if missing:
            raise OntologyError(f"{where}:{line}: {key!r}: the values lack {missing}")
        slots[key] = tuple(values)
    if open_slots is None:
        chosen = frozenset(k for k in slots if default_open(k))
    else:
        unknown = sorted(set(open_slots) - set(slots))
        if unknown:
            raise OntologyError(f"{where}: open slots {unknown} are not in the ontology")
        chosen = frozenset(open_slots)
    return Ontology(slots, chosen, where)


def read_ontology(path: Path | str, open_slots: list[str] | None = None) -> Ontology:
    """The ontology file at ``path`` (module docstring)."""
    from pipelines.core.io import TextFileError, read_text

    try:
        text = read_text(Path(path))
    except TextFileError as exc:
        raise OntologyError(str(exc)) from None
    return parse_ontology(text, str(path), open_slots)


def split_state(item: str, where: str = "state") -> tuple[str, str]:
    """``("domain-slot", value)`` of a state string ``domain-slot-value`` (the value
    may itself hold ``-``); an :class:`OntologyError` naming ``where`` otherwise."""
    domain, _, rest = str(item).partition("-")
    slot, dash, value = rest.partition("-")
    if not domain or not slot or not dash or not value:
        raise OntologyError(f"{where}: {item!r} is not 'domain-slot-value'")
    return f"{domain}-{slot}", value


def state_string(slot: str, value: str) -> str:
    return f"{slot}-{value}"
