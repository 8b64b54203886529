"""A family's part of the data card (``TaskKind.card``), rendered by
:mod:`pipelines.export.data_card`, and the card templates families write it in.

A family keeps its card prose in a template file beside its code
(``pipelines/families/<family>/card.md.j2``), not in Python strings. The file holds one
Jinja block per part of :class:`CardSection` (``item``, ``construction``,
``annotation``, ``limitations``: one ``- `` line each, and any other block as a card
section of that name); the family's ``card(facts)`` computes the tables and passes them
with the facts to :func:`from_template`.

The template is written as Markdown is read: a line break inside a paragraph is a space
(the card gets one line per paragraph), while a blank line, a list item (``- ``), a
table row (``|``) or a line that is only a Jinja tag (``{% ... %}``, dropped with its
line break) starts a new line; a line that ends with a tag loses its line break too
(Jinja's ``trim_blocks``), so end such a line with text. ``facts.x`` is the key ``x`` of
a dict before any attribute (``facts.items`` is the fact, not the method). Values are
inserted as they are (Markdown the family computed); a value that is data (a corpus's
name, a file name, corpus text) goes through the ``text`` filter (shown as the characters
it holds, even in a table row: ``pipelines.core.markdown.escape``) or ``code`` (a code
span that its backquotes cannot close: ``pipelines.core.markdown.code``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from pipelines.core.markdown import code, escape

PARTS = ("item", "construction", "annotation", "limitations")
_TAG_LINE = re.compile(r"^\s*\{%.*%\}\s*$")
_BREAKS = ("- ", "|", "#", ">")


@dataclass
class CardSection:
    """A family's part of the data card: what one item is, how items were built, its
    annotation rounds' text and its own limitations."""

    item: str
    construction: str
    annotation: str
    limitations: list[str] = field(default_factory=list)
    # the card's sections the family writes itself (template placeholder -> Markdown),
    # e.g. "agreement" for a translated dataset, whose labels carry over
    sections: dict[str, str] = field(default_factory=dict)


def unwrap(source: str) -> str:
    """The template source with each paragraph's soft line breaks made spaces (see the
    module docstring): a line joins the one before it when both are text."""
    out: list[str] = []
    for line in source.split("\n"):
        text = line.strip()
        prev = out[-1] if out else ""
        joins = (
            text
            and prev.strip()
            and not _TAG_LINE.match(line)
            and not _TAG_LINE.match(prev)
            and not text.startswith(_BREAKS)
            and not prev.lstrip().startswith(("|", "#"))
        )
        if joins:
            out[-1] = prev.rstrip() + " " + text
        else:
            out.append(line.rstrip() if _TAG_LINE.match(line) else text)
    return "\n".join(out)


class _Loader(jinja2.BaseLoader):
    def get_source(self, environment: jinja2.Environment, template: str) -> tuple:
        path = Path(template)
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        mtime = path.stat().st_mtime
        return (
            unwrap(path.read_text(encoding="utf-8")),
            str(path),
            lambda: path.stat().st_mtime == mtime,
        )


def pairs(counts: dict, sep: str = ", ") -> str:
    """``{a: 1, b: 2}`` -> ``a 1, b 2`` (the ``pairs`` filter)."""
    return sep.join(f"{k} {v}" for k, v in counts.items())


class _Environment(jinja2.Environment):
    """``facts.items`` is the fact called ``items``, not the dict's method: a key of a
    dict comes before its attributes."""

    def getattr(self, obj: object, attribute: str) -> object:
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)


@functools.cache
def _environment() -> jinja2.Environment:
    env = _Environment(
        loader=_Loader(),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,  # a missing fact is an error, not an empty string
        autoescape=False,  # Markdown, escaped when the card is rendered as HTML
    )
    env.filters["pairs"] = pairs
    env.filters["text"] = escape
    env.filters["code"] = code
    env.filters["thousands"] = lambda n: f"{n:,}"
    return env


def render_blocks(template: Path, context: dict) -> dict[str, str]:
    """Every block of ``template`` rendered with ``context``, less the line break
    before its ``{% endblock %}`` (a blank line there ends the text with a line break)."""
    tmpl = _environment().get_template(str(template))
    ctx = tmpl.new_context(context)
    return {name: "".join(block(ctx)).removesuffix("\n") for name, block in tmpl.blocks.items()}


def from_template(template: Path, context: dict) -> CardSection:
    """The family's :class:`CardSection` from its card template (module docstring)."""
    blocks = render_blocks(template, context)
    limitations = [line[2:] for line in blocks.pop("limitations", "").split("\n")
                   if line.startswith("- ")]  # fmt: skip
    return CardSection(
        item=blocks.pop("item"),
        construction=blocks.pop("construction", ""),
        annotation=blocks.pop("annotation", ""),
        limitations=limitations,
        sections=blocks,
    )
