"""KLUE-WoS's venue database and user goals (issue 58, item 1), both synthetic and
seeded: KLUE 2.4, "DST is built from simulated dialogues by crowdworkers and does not
require access to offline text"; the release's goals and database are not public, so
benchforge makes its own from the ontology's values.

**The database** (:func:`venue_database`): for each domain with named venues (관광,
숙소, 식당), one venue per value of its ``이름`` slot, each closed slot of the domain
given one of its values (a price range, an area, a type, yes/no facilities) drawn with
the seed; ``예약 *`` slots are booking details, not venue attributes. 택시 and 지하철
have no venues: a ride is between places of the database (its 출발지 and 도착지 are
venues' names, or a station for 지하철), at a time of the ontology's.

**A goal** (:func:`sample_goal`): one to three domains (``domains``); per domain with
venues, two or three informable constraints drawn from one venue's attributes (so at
least one venue matches), one or two requested attributes (slots the user asks about
but does not constrain), and for 숙소 and 식당 a booking (days, times, people, nights)
on half the goals; per ride domain a departure and a destination among the goal's
venues or the database's, and a time. With ``change_rate``, a constraint's first value
is one that matches no venue and the user changes to the right one after the system
says there is none (a change of mind). :func:`instruction` writes the goal as the
Korean instructions a worker reads.

Contract: every slot a goal names is a key of the ontology and every closed value one
of its values (:func:`check_goal` raises :class:`GoalError` naming the goal and the
slot); the same seed gives the same database and goals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pipelines.core.errors import BenchforgeError
from pipelines.families.klue.wos_ontology import DONTCARE, NONE, Ontology

VENUE_DOMAINS = ("관광", "숙소", "식당")
RIDE_DOMAINS = ("택시", "지하철")
BOOKING = {
    "숙소": ("예약 요일", "예약 명수", "예약 기간"),
    "식당": ("예약 요일", "예약 시간", "예약 명수"),
}


class GoalError(BenchforgeError, ValueError):
    """A goal that names a slot or a value outside the ontology."""


@dataclass
class Venue:
    domain: str
    name: str
    attributes: dict[str, str]  # slot (without the domain) -> value


@dataclass
class DomainGoal:
    domain: str
    informable: dict[str, str]  # slot -> value the user asks for
    requestable: list[str] = field(default_factory=list)  # slots asked about
    booking: dict[str, str] = field(default_factory=dict)
    change: tuple[str, str, str] | None = None  # (slot, first value, value changed to)
    target: str | None = None  # the venue the constraints were drawn from


@dataclass
class Goal:
    goal_id: str
    parts: list[DomainGoal]

    @property
    def domains(self) -> list[str]:
        return [p.domain for p in self.parts]

    def final_state(self) -> list[str]:
        """The state the dialogue should end in (``domain-slot-value``), sorted."""
        out = []
        for p in self.parts:
            for slot, value in {**p.informable, **p.booking}.items():
                out.append(f"{p.domain}-{slot}-{value}")
        return sorted(out)


def _values(ontology: Ontology, key: str) -> list[str]:
    return [v for v in ontology.slots.get(key, ()) if v not in (NONE, DONTCARE)]


def venue_database(ontology: Ontology, seed: int = 0) -> list[Venue]:
    """One venue per name of each venue domain (module docstring)."""
    rng = np.random.default_rng(seed)
    venues = []
    for domain in VENUE_DOMAINS:
        names = _values(ontology, f"{domain}-이름")
        closed = [k for k in ontology.slots_of(domain) if not ontology.is_open(k)
                  and not k.split("-", 1)[1].startswith("예약")]  # fmt: skip
        for name in names:
            attrs = {}
            for key in closed:
                values = _values(ontology, key)
                if values:
                    attrs[key.split("-", 1)[1]] = values[int(rng.integers(len(values)))]
            venues.append(Venue(domain, name, attrs))
    return venues


def matching(venues: list[Venue], domain: str, constraints: dict[str, str]) -> list[Venue]:
    """The venues of ``domain`` whose attributes meet every constraint (``dontcare``
    meets any value)."""
    return [v for v in venues if v.domain == domain and all(
        value == DONTCARE or v.attributes.get(slot) == value or (slot == "이름" and v.name == value)
        for slot, value in constraints.items())]  # fmt: skip


def sample_goal(
    ontology: Ontology,
    venues: list[Venue],
    rng: np.random.Generator,
    goal_id: str,
    domains: list[str],
    change_rate: float = 0.2,
) -> Goal:
    """A goal over ``domains`` (module docstring)."""
    parts: list[DomainGoal] = []
    places = [v.name for v in venues]
    for domain in domains:
        if domain in VENUE_DOMAINS:
            pool = [v for v in venues if v.domain == domain]
            target = pool[int(rng.integers(len(pool)))]
            slots = sorted(target.attributes)
            k = min(len(slots), int(rng.integers(2, 4)))
            chosen = [slots[i] for i in rng.choice(len(slots), size=k, replace=False)]
            informable = {s: target.attributes[s] for s in chosen}
            rest = [s for s in slots if s not in informable]
            asked = [rest[i] for i in rng.choice(len(rest), size=min(len(rest),
                     int(rng.integers(1, 3))), replace=False)] if rest else []  # fmt: skip
            part = DomainGoal(domain, informable, asked, target=target.name)
            if domain in BOOKING and rng.random() < 0.5:
                for slot in BOOKING[domain]:
                    values = _values(ontology, f"{domain}-{slot}")
                    if values:
                        part.booking[slot] = values[int(rng.integers(len(values)))]
            if rng.random() < change_rate:
                _plan_change(part, ontology, venues)
            parts.append(part)
        else:
            ends = [p.target for p in parts if p.target] or []
            if domain == "지하철":
                stations = _values(ontology, "지하철-출발지")
                start, end = rng.choice(len(stations), size=2, replace=False)
                informable = {"출발지": stations[int(start)], "도착지": stations[int(end)]}
                times = _values(ontology, "지하철-출발 시간")
                informable["출발 시간"] = times[int(rng.integers(len(times)))]
            else:
                there = ends[-1] if ends else places[int(rng.integers(len(places)))]
                here = places[int(rng.integers(len(places)))]
                while here == there:
                    here = places[int(rng.integers(len(places)))]
                times = _values(ontology, "택시-출발 시간")
                informable = {"출발지": here, "도착지": there,
                              "출발 시간": times[int(rng.integers(len(times)))]}  # fmt: skip
                kinds = _values(ontology, "택시-종류")
                if kinds and rng.random() < 0.5:
                    informable["종류"] = kinds[int(rng.integers(len(kinds)))]
            parts.append(DomainGoal(domain, informable))
    goal = Goal(goal_id, parts)
    check_goal(goal, ontology)
    return goal


def _plan_change(part: DomainGoal, ontology: Ontology, venues: list[Venue]) -> None:
    """A constraint whose first value matches no venue with the others: the user asks
    for it first and changes to the target's value when told there is none."""
    for slot in sorted(part.informable):
        if slot == "이름":
            continue
        others = {s: v for s, v in part.informable.items() if s != slot}
        for value in _values(ontology, f"{part.domain}-{slot}"):
            if value != part.informable[slot] and not matching(
                venues, part.domain, {**others, slot: value}
            ):
                part.change = (slot, value, part.informable[slot])
                return


def check_goal(goal: Goal, ontology: Ontology) -> None:
    """Every slot of the goal in the ontology, every closed value one of its values."""
    for part in goal.parts:
        named = {**part.informable, **part.booking}
        for slot in [*named, *part.requestable]:
            key = f"{part.domain}-{slot}"
            if key not in ontology.slots:
                raise GoalError(f"goal {goal.goal_id}: slot {key!r} is not in the ontology")
        for slot, value in named.items():
            why = ontology.value_problem(f"{part.domain}-{slot}", value)
            if why:
                raise GoalError(f"goal {goal.goal_id}: {why}")


def sample_goals(
    ontology: Ontology,
    venues: list[Venue],
    n: int,
    seed: int = 0,
    multi_share: float = 0.6,
    change_rate: float = 0.2,
) -> list[Goal]:
    """``n`` goals: ``multi_share`` of them over two or three domains (a venue domain
    first, a ride to it last when there is one), the rest over one."""
    rng = np.random.default_rng(seed)
    goals = []
    for i in range(n):
        first = VENUE_DOMAINS[int(rng.integers(len(VENUE_DOMAINS)))]
        domains = [first]
        if rng.random() < multi_share:
            other = [d for d in VENUE_DOMAINS if d != first]
            if rng.random() < 0.5:
                domains.append(other[int(rng.integers(len(other)))])
            domains.append(RIDE_DOMAINS[int(rng.integers(len(RIDE_DOMAINS)))])
        goals.append(sample_goal(ontology, venues, rng, f"goal-{i + 1:05d}", domains, change_rate))
    return goals


def said(slot: str, value: str) -> str:
    """A value as the instructions say it: yes/no as 예/아니요, people and nights
    counted (``4명``, ``2박``), the rest as the ontology writes it."""
    if value in ("yes", "no"):
        return "예" if value == "yes" else "아니요"
    if slot == "예약 명수":
        return f"{value}명"
    if slot == "예약 기간":
        return f"{value}박"
    return value


def instruction(goal: Goal) -> str:
    """The goal as the Korean instructions a dialogue writer reads."""
    lines = []
    for n, part in enumerate(goal.parts, start=1):
        wants = ", ".join(f"{s}: {said(s, v)}" for s, v in part.informable.items())
        line = f"{n}. [{part.domain}] 조건 — {wants}."
        if part.change:
            slot, first, then = part.change
            line += (f" 처음에는 {slot}을(를) '{said(slot, first)}'(으)로 찾다가, 없다고 "
                     f"하면 '{said(slot, then)}'(으)로 바꾸세요.")  # fmt: skip
        if part.requestable:
            line += f" 물어볼 것 — {', '.join(part.requestable)}."
        if part.booking:
            booked = ", ".join(f"{s}: {said(s, v)}" for s, v in part.booking.items())
            line += f" 예약 — {booked}."
        lines.append(line)
    return "\n".join(lines)
