"""The rule-based tracker that pre-fills each user turn's state (issue 58, item 3), so
that annotators correct a state rather than start from nothing.

Rules, per user turn, on top of the previous turn's state (states are cumulative):

1. a value of the goal (:class:`~.wos_goals.Goal`, its informable, booking and
   change-of-mind values) written in the user's text enters the state under its slot,
   replacing that slot's earlier value (a change of mind); a value is found as written
   or as the goal's instructions say it, a count only so (``4명``, ``2박``);
2. a yes/no slot of the goal whose facility word (the slot's name without ``유무`` /
   ``가능`` / ``판매``: ``주차``, ``야외석``, ``조식``) the user writes is ``no`` when a
   negation follows the word in its clause (아니요, 없어요, 안 돼요), else ``yes``,
   read for the domain the user last named (the one being talked about);
3. a venue name the system proposed in the turn before that the user accepts (the
   user's text begins with an agreement: 네, 좋아요, 그걸로) enters as the domain's
   ``이름``.

Nothing else is guessed: what the rules miss (a paraphrase, a value said in other
words) the annotators add, and the card reports how much of the pre-fill they kept
(the shared suggestion-acceptance table).
"""

from __future__ import annotations

import re

from pipelines.families.klue.wos_goals import Goal, said
from pipelines.families.klue.wos_ontology import Ontology

AGREEMENT = ("네", "예", "좋아요", "좋습니다", "그걸로", "그곳으로", "거기로")
FACILITY_SUFFIXES = (" 유무", " 가능", " 판매")
COUNTED = ("예약 명수", "예약 기간")  # a bare number is not enough: "4명", "2박"


def facility_word(slot: str) -> str:
    """``주차`` of ``주차 가능``, ``야외석`` of ``야외석 유무``, ``경치 좋은`` as it is."""
    for suffix in FACILITY_SUFFIXES:
        if slot.endswith(suffix):
            return slot[: -len(suffix)]
    return slot


NEGATIONS = ("아니요", "아니", "없", "안 ", "안되", "불가", "필요 없")


def yes_or_no(text: str, word: str) -> str | None:
    """``no`` when ``word`` is in ``text`` with a negation after it in the same clause
    (up to a comma or a stop, 12 characters at most: 아니요, 없어요, 안 돼요, 불가),
    ``yes`` when it is there without one, None when it is not there."""
    at = text.find(word)
    if at < 0:
        return None
    after = re.split(r"[,.?!]", text[at + len(word) : at + len(word) + 12], maxsplit=1)[0]
    return "no" if any(n in after for n in NEGATIONS) else "yes"


def _goal_values(goal: Goal) -> list[tuple[str, str]]:
    """(``domain-slot``, value) the goal can make the user say, change-of-mind first
    values included."""
    out = []
    for part in goal.parts:
        for slot, value in {**part.informable, **part.booking}.items():
            out.append((f"{part.domain}-{slot}", value))
        if part.change:
            slot, first, _ = part.change
            out.append((f"{part.domain}-{slot}", first))
    return out


def track(turns: list[tuple[str, str]], goal: Goal, ontology: Ontology) -> list[list[str]]:
    """The pre-filled state of each user turn of ``turns`` (``(role, text)``, role
    ``user`` or ``sys``), as sorted ``domain-slot-value`` lists."""
    state: dict[str, str] = {}
    out: list[list[str]] = []
    last_sys = ""
    names = {f"{d}-이름": [v for v in ontology.slots.get(f"{d}-이름", ())
                          if v not in ("none", "dontcare")] for d in goal.domains}  # fmt: skip
    current = goal.domains[0] if goal.domains else ""
    for role, text in turns:
        if role != "user":
            last_sys = text
            continue
        named = [d for d in goal.domains if d in text]
        current = named[-1] if named else current
        for key, value in _goal_values(goal):
            domain, slot = key.split("-", 1)
            if value in ("yes", "no"):
                if domain != current:
                    continue  # a facility word is read for the domain being talked about
                said_yes_no = yes_or_no(text, facility_word(slot))
                if said_yes_no:
                    state[key] = said_yes_no
            elif said(slot, value) in text or (slot not in COUNTED and value in text):
                state[key] = value
        if text.lstrip().startswith(AGREEMENT):
            for key, values in names.items():
                proposed = [v for v in values if v in last_sys]
                if proposed and key not in state:
                    state[key] = max(proposed, key=len)
        out.append(sorted(f"{k}-{v}" for k, v in state.items()))
    return out
