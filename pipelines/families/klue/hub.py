"""What the Hub's card of a KLUE-style release says of its origin: the paper's BibTeX
(Park et al. 2021) and each task's Hub task category (``pipelines.export.hf_card``)."""

from __future__ import annotations

from pipelines.export.citations import KLUE_BIBTEX


def hub(category: str) -> dict:
    """The ``TaskKind.hub`` of a KLUE task of Hub task category ``category``."""
    return {"task_categories": [category], "citation": KLUE_BIBTEX}
