"""KLUE-WoS's gold dialogues (issue 58): the per-turn votes made cumulative and the
dialogues assembled in the release layout.

A turn's state is voted on its own (``span_vote`` over ``dialogue_state``), so a slot
the annotators of one turn left out can vanish where the turn before had it, which the
release's errata check calls ``state_shrinks``: KLUE-WoS's states only grow or change a
value. :func:`cumulative` carries such a slot forward (the turn before's value) and
counts every carried item; a slot whose value the vote changed keeps the new value.
"""

from __future__ import annotations

from pipelines.annotation.values.dialogue_state import slot_of
from pipelines.families.klue.wos_layout import WosDialogue, WosRelease, WosTurn


def cumulative(states: list[list[str]]) -> tuple[list[list[str]], int]:
    """The turns' states with every slot of the turn before that a turn lost carried
    forward, and how many items were carried."""
    out: list[list[str]] = []
    carried = 0
    before: dict[str, str] = {}
    for state in states:
        now = {slot_of(i): i for i in state}
        for slot, item in before.items():
            if slot not in now:
                now[slot] = item
                carried += 1
        out.append(sorted(now.values()))
        before = now
    return out, carried


def release(
    dialogues: list[tuple[str, list[str], list[tuple[str, str]], list[list[str]]]],
    split: str,
    prefix: str = "wos-v1",
) -> WosRelease:
    """The release of one split from ``(dialogue_id, domains, turns, user-turn
    states)`` in order, guids ``<prefix>_<split>_<nnnnn>``."""
    out = []
    for n, (_, domains, turns, states) in enumerate(dialogues, start=1):
        it = iter(states)
        parsed = [WosTurn(r, t, list(next(it)) if r == "user" else None) for r, t in turns]
        out.append(WosDialogue(f"{prefix}_{split}_{n:05d}", list(domains), parsed))
    return WosRelease(out, indent=2, final_newline=True)
