"""What the Hub's card of a KLUE-style release says of its origin: the paper's BibTeX
(Park et al. 2021) and each task's Hub task category (``pipelines.export.hf_card``)."""

from __future__ import annotations

KLUE_BIBTEX = """@article{park2021klue,
  title = {{KLUE}: Korean Language Understanding Evaluation},
  author = {Park, Sungjoon and Moon, Jihyung and Kim, Sungdong and Cho, Won Ik and
            Han, Jiyoon and Park, Jangwon and Song, Chisung and Kim, Junseong and others},
  journal = {arXiv preprint arXiv:2105.09680},
  year = {2021}
}"""


def hub(category: str) -> dict:
    """The ``TaskKind.hub`` of a KLUE task of Hub task category ``category``."""
    return {"task_categories": [category], "citation": KLUE_BIBTEX}
