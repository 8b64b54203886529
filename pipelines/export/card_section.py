"""A family's part of the data card (``TaskKind.card``), rendered by
:mod:`pipelines.export.data_card`."""

from __future__ import annotations

from dataclasses import dataclass, field


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
