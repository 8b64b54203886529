"""KLUE-WoS's Label Studio interfaces (issue 58): the dialogue-writing round's
(``annotation_configs/wos_write.xml``, its goal and database rows as task data) and the
state round's, made from the ontology (:func:`state_config`): the dialogue up to the
turn, a ``<Taxonomy name="state">`` of domain -> slot -> value over the closed slots'
values with ``dontcare`` for every slot, and ``state_typed`` for the open slots' values
typed as written (the ``dialogue_state`` value type reads both).

Contract: :func:`rows_html` escapes every value it renders (the database's names come
from the ontology's data and are text, never markup); :func:`state_config` is
deterministic in the ontology, and the committed ``annotation_configs/wos_state.xml`` is
what it makes of the shipped ontology (a test says so).
"""

from __future__ import annotations

from html import escape

from pipelines.families.klue.wos_goals import Goal, Venue, matching, said
from pipelines.families.klue.wos_ontology import DONTCARE, NONE, Ontology

HEADER = """<!-- KLUE-WoS (issue 58): the state round, made from the ontology by
     pipelines/families/klue/wos_interfaces.py (do not edit by hand). The dialogue up to
     the user turn ($dialogue: author, text); the turn's cumulative state: closed slots'
     values (and dontcare) in the taxonomy, open slots' values (names, places, times)
     typed one 'domain-slot-value' a line. Value type: dialogue_state. -->
"""


INSTRUCTION = (
    "마지막 사용자 발화까지의 대화 상태를 고르세요. 정해진 값은 목록에서, 이름·장소·시간은 "
    "아래 칸에 한 줄에 하나씩 '영역-슬롯-값'으로 적습니다. 미리 채워진 값을 확인하고 고치세요."
)


def _attr(text: str) -> str:
    return escape(text, quote=True)


def state_config(ontology: Ontology) -> str:
    """The state round's labeling config for ``ontology`` (module docstring)."""
    domains = []
    for domain in ontology.domains:
        slots = []
        for key in ontology.slots_of(domain):
            slot = key.split("-", 1)[1]
            values = [DONTCARE] if ontology.is_open(key) else [
                v for v in ontology.slots[key] if v != NONE]  # fmt: skip
            leaves = "".join(f'<Choice value="{_attr(v)}"/>' for v in values)
            slots.append(f'      <Choice value="{_attr(slot)}">{leaves}</Choice>')
        domains.append(
            f'    <Choice value="{_attr(domain)}">\n' + "\n".join(slots) + "\n    </Choice>"
        )
    return (
        HEADER
        + "<View>\n"
        + '  <Paragraphs name="dialogue" value="$dialogue" layout="dialogue" nameKey="author"'
        + ' textKey="text"/>\n'
        + f'  <Header size="6" value="{_attr(INSTRUCTION)}"/>\n'
        + '  <Taxonomy name="state" toName="dialogue" leafsOnly="true" showFullPath="true"'
        + ' pathSeparator="-">\n'
        + "\n".join(domains)
        + "\n  </Taxonomy>\n"
        + '  <TextArea name="state_typed" toName="dialogue" rows="4"'
        + ' placeholder="식당-이름-뽀식이네 감자탕"/>\n'
        + '  <Choices name="report" toName="dialogue" choice="multiple">\n'
        + '    <Choice value="대화가 이상함" alias="broken_dialogue" hotkey="q"'
        + ' hint="대화가 이상함: the dialogue does not make sense"/>\n'
        + "  </Choices>\n"
        + "</View>\n"
    )


def rows_html(goal: Goal, venues: list[Venue]) -> str:
    """The rows a writer sees for ``goal``: per venue domain, the venues meeting its
    constraints (the change of mind's first value meets none), as an escaped HTML
    table of name and attributes."""
    out = []
    for part in goal.parts:
        if not part.target:
            continue
        rows = matching(venues, part.domain, part.informable)
        if not rows:
            out.append(f"<p>{escape(part.domain)}: 조건에 맞는 곳이 없습니다.</p>")
            continue
        slots = sorted({s for v in rows for s in v.attributes})
        head = "".join(f"<th>{escape(s)}</th>" for s in ["이름", *slots])
        body = ""
        for v in rows:
            cells = [v.name, *(said(s, v.attributes.get(s, "")) for s in slots)]
            body += "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>"
        out.append(f"<p>{escape(part.domain)}</p><table><tr>{head}</tr>{body}</table>")
    return "".join(out) or "<p>데이터베이스에서 찾을 것이 없습니다.</p>"
