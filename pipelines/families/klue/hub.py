"""What the Hub's card of a KLUE-style release says of its origin: the paper's BibTeX
(Park et al. 2021) and each task's Hub task category (``pipelines.export.hf_card``)."""

from __future__ import annotations

from pipelines.export.citations import KLUE_BIBTEX


def hub(category: str, fields: dict | None = None) -> dict:
    """The ``TaskKind.hub`` of a KLUE task of Hub task category ``category``, with its
    released fields' origins where they are not the default
    (``pipelines.export.field_origins``)."""
    out: dict = {"task_categories": [category], "citation": KLUE_BIBTEX}
    return {**out, "fields": fields} if fields else out
