"""The KLUE-WoS release layout (``wos-v1.1_*.json``; issue 58), read and written, and
the errata checks of any WoS file.

A release file is one JSON list of dialogues, each ``{"guid", "domains", "dialogue"}``;
``dialogue`` is the list of turns ``{"role": "user" | "sys", "text", "state"}``, where
a user turn's ``state`` is the cumulative list of ``domain-slot-value`` strings (a
system turn has none).

Contract: :func:`parse_wos` gives a :class:`WosRelease` whose :func:`write_wos` is the
text read, byte for byte, for a file written as :func:`write_wos` writes (the JSON
indent of the file is detected and kept: none, 2 or 4 spaces; a final newline kept). A
structural fault is a :class:`WosLayoutError` naming the file and the line of the
dialogue: not a list, a dialogue without ``guid`` or ``dialogue``, a guid twice, a
turn whose role is neither ``user`` nor ``sys``, a dialogue with no user turn, a state
that is not a list of ``domain-slot-value`` strings. :func:`errata` lists, without
stopping, what a release can carry unnoticed, against an ontology: a value outside a
closed slot's values or a slot outside the ontology (``value_outside``), a slot that
leaves the cumulative state from one user turn to the next (``state_shrinks``: the
state only grows or changes a value), a slot of a domain the dialogue's ``domains``
does not list (``domain_not_listed``), a domain listed that no state uses
(``domain_unused``, reported only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.families.klue.wos_ontology import Ontology, OntologyError, split_state

ROLES = ("user", "sys")
KINDS = ("value_outside", "state_shrinks", "domain_not_listed", "domain_unused")
FATAL = frozenset(["value_outside", "state_shrinks", "domain_not_listed"])


class WosLayoutError(BenchforgeError, ValueError):
    """A WoS file that cannot be read; the message names the file and the line."""


@dataclass
class WosTurn:
    role: str
    text: str
    state: list[str] | None = None  # a user turn's cumulative state


@dataclass
class WosDialogue:
    guid: str
    domains: list[str]
    turns: list[WosTurn]
    line: int = 0  # where the dialogue starts in its file (1-based; 0 when built here)

    def user_turns(self) -> list[WosTurn]:
        return [t for t in self.turns if t.role == "user"]


@dataclass
class WosRelease:
    dialogues: list[WosDialogue]
    indent: int | None = 2
    final_newline: bool = True
    source: str = ""


@dataclass(frozen=True)
class Problem:
    kind: str
    line: int
    guid: str
    detail: str

    @property
    def fatal(self) -> bool:
        return self.kind in FATAL


def _indent_of(text: str) -> int | None:
    for line in text.splitlines()[1:3]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) < len(line):
            return len(line) - len(stripped)
    return None


def _guid_lines(text: str) -> dict[str, int]:
    lines, found = {}, 0
    for n, line in enumerate(text.splitlines(), start=1):
        at = line.find('"guid"')
        while at >= 0:
            found += 1
            lines.setdefault(found, n)
            at = line.find('"guid"', at + 1)
    return lines


def parse_wos(text: str, where: str) -> WosRelease:
    """The release of ``text`` (module docstring)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WosLayoutError(f"{where}:{exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, list):
        raise WosLayoutError(f"{where}:1: expected a JSON list of dialogues")
    starts = _guid_lines(text)
    dialogues, seen = [], {}
    for i, d in enumerate(data, start=1):
        line = starts.get(i, 1)
        if not isinstance(d, dict) or not isinstance(d.get("guid"), str) or not d["guid"]:
            raise WosLayoutError(f"{where}:{line}: dialogue {i} has no guid")
        guid = d["guid"]
        if guid in seen:
            raise WosLayoutError(f"{where}:{line}: guid {guid!r} is on line {seen[guid]} too")
        seen[guid] = line
        domains = d.get("domains", [])
        if not isinstance(domains, list) or not all(isinstance(x, str) for x in domains):
            raise WosLayoutError(f"{where}:{line}: {guid}: domains must be a list of names")
        turns = d.get("dialogue")
        if not isinstance(turns, list) or not turns:
            raise WosLayoutError(f"{where}:{line}: {guid}: no dialogue (a list of turns)")
        parsed = []
        for t, turn in enumerate(turns, start=1):
            if not isinstance(turn, dict) or turn.get("role") not in ROLES:
                raise WosLayoutError(f"{where}:{line}: {guid}: turn {t}'s role is not "
                                     f"'user' or 'sys'")  # fmt: skip
            if not isinstance(turn.get("text"), str):
                raise WosLayoutError(f"{where}:{line}: {guid}: turn {t} has no text")
            state = turn.get("state")
            if turn["role"] == "user":
                if not isinstance(state, list) or not all(isinstance(s, str) for s in state):
                    raise WosLayoutError(f"{where}:{line}: {guid}: user turn {t}'s state is "
                                         "not a list of 'domain-slot-value' strings")  # fmt: skip
                for s in state:
                    try:
                        split_state(s)
                    except OntologyError:
                        raise WosLayoutError(f"{where}:{line}: {guid}: user turn {t}: {s!r} "
                                             "is not 'domain-slot-value'") from None  # fmt: skip
            parsed.append(WosTurn(turn["role"], turn["text"], list(state)
                                  if turn["role"] == "user" else None))  # fmt: skip
        if not any(t.role == "user" for t in parsed):
            raise WosLayoutError(f"{where}:{line}: {guid}: the dialogue has no user turn")
        dialogues.append(WosDialogue(guid, list(domains), parsed, line))
    return WosRelease(dialogues, _indent_of(text), text.endswith("\n"), where)


def read_wos(path: Path | str) -> WosRelease:
    from pipelines.core.io import TextFileError, read_text

    try:
        text = read_text(Path(path))
    except TextFileError as exc:
        raise WosLayoutError(str(exc)) from None
    return parse_wos(text, str(path))


def records(release: WosRelease) -> list[dict]:
    """The dialogues as the release's JSON objects."""
    out = []
    for d in release.dialogues:
        turns = [{"role": t.role, "text": t.text, **({"state": t.state} if t.role == "user"
                                                      else {})} for t in d.turns]  # fmt: skip
        out.append({"guid": d.guid, "domains": d.domains, "dialogue": turns})
    return out


def write_wos(release: WosRelease) -> str:
    """The release's text (the module docstring's layout, in its indent)."""
    text = json.dumps(records(release), ensure_ascii=False, indent=release.indent)
    return text + ("\n" if release.final_newline else "")


@dataclass
class Errata:
    problems: list[Problem] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for p in self.problems:
            out[p.kind] = out.get(p.kind, 0) + 1
        return out


def errata(release: WosRelease, ontology: Ontology) -> Errata:
    """The release's errata against ``ontology`` (module docstring)."""
    found = Errata()

    def add(kind: str, d: WosDialogue, detail: str) -> None:
        found.problems.append(Problem(kind, d.line, d.guid, detail))

    for d in release.dialogues:
        used: set[str] = set()
        before: dict[str, str] = {}
        for n, turn in enumerate(d.user_turns(), start=1):
            now = dict(split_state(s) for s in turn.state or [])
            for slot, value in now.items():
                why = ontology.value_problem(slot, value)
                if why:
                    add("value_outside", d, f"user turn {n}: {why}")
                domain = slot.split("-", 1)[0]
                used.add(domain)
                if domain not in d.domains:
                    add("domain_not_listed", d, f"user turn {n}: {slot!r} of a domain not in "
                                                f"domains {d.domains}")  # fmt: skip
            for slot in sorted(set(before) - set(now)):
                add("state_shrinks", d, f"user turn {n}: {slot!r} ({before[slot]!r}) left the "
                                        "state")  # fmt: skip
            before = now
        for domain in d.domains:
            if domain not in used:
                add("domain_unused", d, f"domain {domain!r} is listed but no state uses it")
    return found


def to_turns(release: WosRelease) -> str:
    """The release as JSON Lines, one object per turn (``guid``, ``domains``, ``index``
    from 0, ``role``, ``text`` and a user turn's ``state``), after a first line with the
    file's layout (its indent and final newline), so that :func:`from_turns` writes the
    same bytes back."""
    meta = {"klue_wos_layout": {"indent": release.indent,
                                "final_newline": release.final_newline}}  # fmt: skip
    rows: list[dict] = [meta]
    for d in release.dialogues:
        for i, t in enumerate(d.turns):
            row = {"guid": d.guid, "domains": d.domains, "index": i, "role": t.role,
                   "text": t.text}  # fmt: skip
            if t.role == "user":
                row["state"] = t.state
            rows.append(row)
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def from_turns(text: str, where: str = "<turns>") -> WosRelease:
    """The release of a turns file (:func:`to_turns`'s layout; the first line is
    optional), the dialogues in the order their first turn comes; each checked as a
    release file is (errors naming the line of the turn)."""
    layout: dict = {}
    grouped: dict[str, dict] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise WosLayoutError(f"{where}:{n}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise WosLayoutError(f"{where}:{n}: expected an object")
        if "klue_wos_layout" in row:
            layout = row["klue_wos_layout"] or {}
            continue
        guid = row.get("guid")
        if not isinstance(guid, str) or not guid:
            raise WosLayoutError(f"{where}:{n}: a turn without a guid")
        d = grouped.setdefault(guid, {"guid": guid, "domains": row.get("domains", []),
                                      "dialogue": [], "line": n})  # fmt: skip
        if row.get("index") != len(d["dialogue"]):
            raise WosLayoutError(f"{where}:{n}: {guid}: turn index {row.get('index')!r}, "
                                 f"expected {len(d['dialogue'])} (turns in order)")  # fmt: skip
        turn = {"role": row.get("role"), "text": row.get("text")}
        if row.get("role") == "user":
            turn["state"] = row.get("state")
        d["dialogue"].append(turn)
    records_ = [{k: v for k, v in d.items() if k != "line"} for d in grouped.values()]
    indent = layout.get("indent", 2)
    body = json.dumps(records_, ensure_ascii=False, indent=indent)
    try:
        release = parse_wos(body, where)
    except WosLayoutError as exc:  # name the turns file's line of the dialogue
        guid = next((g for g in grouped if f" {g}:" in str(exc)), None)
        line = grouped[guid]["line"] if guid else 1
        raise WosLayoutError(f"{where}:{line}: " + str(exc).split(": ", 1)[-1]) from None
    release.final_newline = bool(layout.get("final_newline", True))
    for d in release.dialogues:
        d.line = grouped[d.guid]["line"]
    return release
