"""Dialogues written from goals (issue 58, item 2): the checks every written dialogue
passes before its states are annotated, and the simulated writer of the demo.

One writer writes both roles of a dialogue (the user who has the goal and the system
that sees the database rows that match it), as in Label Studio one task holds a goal,
its rows and one text box: it keeps the two sides consistent (the system answers only
what the rows say) at the cost of the independence two people would give; the card
says so. A dialogue is written as lines ``사용자: ...`` / ``시스템: ...``
(:func:`parse_lines`), starting with the user.

Checks (:func:`dialogue_problems`), each a drop reason: ``not_alternating`` (two turns
of one role in a row, or the system first), ``too_few_turns`` / ``too_many_turns``
(the bounds of the recipe), ``goal_not_covered`` (an informable value of the goal the
user never says, as written, as the instructions say it or in a paraphrase benchforge
knows, :data:`PARAPHRASES`; the tracker reads values only as written, the plainer rule,
so what it misses shows in the correction figures), ``unknown_venue`` (the
system names a venue that is not in the database: a name-like phrase before
``추천``/``있습니다`` that is no venue's name). KLUE 2.3's PII and toxic-content rules
run on the text as on any corpus (the ingest's filters).

The simulated writer (:func:`simulated_dialogue`) writes from templates: the user asks
for the first constraints (the change of mind's first value first), the system answers
from the matching rows, the user adds the rest, asks the requested attributes, books,
and asks for the ride; a careless writer leaves a constraint out and lets the system
propose a venue of its own.
"""

from __future__ import annotations

import re

import numpy as np

from pipelines.families.klue.wos_goals import Goal, Venue, matching, said
from pipelines.families.klue.wos_tracker import facility_word

USER, SYS = "사용자", "시스템"
PROPOSAL = re.compile(
    r"([가-힣A-Za-z0-9&][가-힣A-Za-z0-9& ]{1,30}?)(?:을|를|이|가)? ?(?:추천|있습니다)"
)


def parse_lines(text: str) -> list[tuple[str, str]]:
    """``(role, text)`` per line ``사용자: ...`` (``user``) or ``시스템: ...`` (``sys``);
    a line without a prefix continues the turn before."""
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        for prefix, role in ((USER, "user"), (SYS, "sys")):
            if line.startswith(prefix + ":"):
                turns.append((role, line[len(prefix) + 1 :].strip()))
                break
        else:
            if turns:
                turns[-1] = (turns[-1][0], f"{turns[-1][1]} {line}")
    return turns


def dialogue_problems(
    turns: list[tuple[str, str]],
    goal: Goal,
    venues: list[Venue],
    min_turns: int = 6,
    max_turns: int = 30,
) -> list[str]:
    """The drop reasons of a written dialogue (module docstring), in that order."""
    out = []
    roles = [r for r, _ in turns]
    if (
        not roles
        or roles[0] != "user"
        or any(a == b for a, b in zip(roles, roles[1:], strict=False))
    ):
        out.append("not_alternating")
    if len(turns) < min_turns:
        out.append("too_few_turns")
    if len(turns) > max_turns:
        out.append("too_many_turns")
    said_by_user = " ".join(t for r, t in turns if r == "user")
    for part in goal.parts:
        for slot, value in part.informable.items():
            if value in ("yes", "no"):
                if facility_word(slot) not in said_by_user:
                    out.append("goal_not_covered")
                    break
            elif not any(form in said_by_user for form in
                         (value, said(slot, value), PARAPHRASES.get(value, value))):  # fmt: skip
                out.append("goal_not_covered")
                break
        if "goal_not_covered" in out:
            break
    names = {v.name for v in venues}
    for role, text in turns:
        if role != "sys":
            continue
        for m in PROPOSAL.finditer(text):
            phrase = m.group(1).strip()
            if not any(n in text for n in names) and len(phrase) >= 2 and "죄송" not in text:
                out.append("unknown_venue")
                break
        if "unknown_venue" in out:
            break
    return out


def _batchim(word: str) -> int:
    """The final consonant index of the word's last syllable (0: none); digits read
    as Sino-Korean numbers (영 일 이 삼 사 오 육 칠 팔 구)."""
    last = word.rstrip()[-1:] or "가"
    if last.isdigit():
        return {"0": 21, "1": 8, "3": 16, "6": 1, "7": 8, "8": 8}.get(last, 0)
    code = ord(last) - 0xAC00
    return code % 28 if 0 <= code < 11172 else 0


def josa(word: str, pair: str) -> str:
    """``word`` with the particle of ``pair`` its last sound takes: ``을/를``, ``은/는``,
    ``이/가``, ``으로/로`` (로 after a vowel or ㄹ)."""
    a, b = pair.split("/")
    final = _batchim(word)
    if pair == "으로/로":
        return word + (b if final in (0, 8) else a)
    return word + (a if final else b)


# how people also say a closed value (the tracker reads the value as written, not these)
PARAPHRASES = {
    "서울 중앙": "시내 한가운데", "서울 남쪽": "강남 쪽", "서울 북쪽": "강북 쪽",
    "서울 동쪽": "서울 동부", "서울 서쪽": "서울 서부",
    "저렴": "싼", "비싼": "고급스러운", "적당": "너무 비싸지 않은",
}  # fmt: skip


def simulated_dialogue(
    goal: Goal, venues: list[Venue], rng: np.random.Generator, careless: bool = False
) -> list[tuple[str, str]]:
    """A dialogue for ``goal`` from templates (module docstring)."""
    return written_dialogue(goal, venues, rng, careless)[0]


def written_dialogue(
    goal: Goal,
    venues: list[Venue],
    rng: np.random.Generator,
    careless: bool = False,
    paraphrase_rate: float = 0.3,
) -> tuple[list[tuple[str, str]], list[list[str]]]:
    """The simulated writer's dialogue and, per user turn, the state it expresses (the
    truth the simulated state annotators start from): a closed value is said in other
    words (:data:`PARAPHRASES`) at ``paraphrase_rate``, which the tracker misses."""
    turns: list[tuple[str, str]] = []
    states: list[list[str]] = []
    state: dict[str, str] = {}

    def user(text: str, **items: str) -> None:
        turns.append(("user", text))
        state.update(items)
        states.append(sorted(f"{k}-{v}" for k, v in state.items()))

    def say(slot: str, value: str) -> str:
        if value in PARAPHRASES and rng.random() < paraphrase_rate:
            return PARAPHRASES[value]
        return said(slot, value)

    for part in goal.parts:
        d = part.domain
        asks = dict(part.informable)
        if careless and len(asks) > 1 and rng.random() < 0.5:
            asks.pop(sorted(asks)[int(rng.integers(len(asks)))])  # a constraint forgotten
        if d in ("택시", "지하철"):
            where = ", ".join(f"{josa(s, '은/는')} {v}" for s, v in asks.items())
            user(f"{d}도 필요해요. {where}(으)로 부탁해요.",
                 **{f"{d}-{s}": v for s, v in asks.items()})  # fmt: skip
            turns.append(("sys", f"{josa(d, '을/를')} 준비했습니다. 말씀하신 대로입니다."))
            continue
        first = dict(asks)
        changes = bool(part.change and part.change[0] in first)
        if changes:
            first[part.change[0]] = part.change[1]
        wants = ", ".join(f"{s} {say(s, v)}" for s, v in first.items())
        user(f"{josa(d, '을/를')} 찾고 있어요. {wants}인 곳이요.",
             **{f"{d}-{s}": v for s, v in first.items()})  # fmt: skip
        if changes:
            slot, _, then = part.change
            turns.append(("sys", "죄송합니다. 말씀하신 조건에 맞는 곳이 없습니다."))
            user(f"그럼 {josa(slot, '은/는')} {josa(said(slot, then), '으로/로')} 찾아 주세요.",
                 **{f"{d}-{slot}": then})  # fmt: skip
        rows = matching(venues, d, asks)
        name = rows[int(rng.integers(len(rows)))].name if rows else str(part.target)
        if careless and rng.random() < 0.5:
            name = "행복한 " + d  # a venue of the writer's own
        turns.append(("sys", f"{josa(name, '을/를')} 추천드립니다."))
        venue = next((v for v in venues if v.name == name), None)
        for slot in part.requestable:
            user(f"{josa(slot, '은/는')} 어떤가요?")
            value = venue.attributes.get(slot, "") if venue else ""
            answer = {"yes": "됩니다", "no": "안 됩니다", "": "확인이 어렵습니다"}.get(
                value, f"{said(slot, value)}입니다"
            )
            turns.append(("sys", f"{josa(slot, '은/는')} {answer}."))
        if part.booking:
            booking = ", ".join(said(s, v) for s, v in part.booking.items())
            items = {f"{d}-{s}": v for s, v in part.booking.items()}
            if venue is not None:
                items[f"{d}-이름"] = name  # "네, ..." accepts the venue proposed
            user(f"네, {josa(booking, '으로/로')} 예약해 주세요.", **items)
            turns.append(("sys", "예약되었습니다."))
    user("감사합니다. 그게 전부예요.")
    turns.append(("sys", "이용해 주셔서 감사합니다."))
    return turns, states
