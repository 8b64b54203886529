"""KLUE's item section, ``items:``: which built items of the ``klue-sts``, ``klue-nli``
and ``klue-ynat`` rebuilds go to annotators (:class:`ItemsSpec`), and KLUE-NLI's
premise rules (:class:`PremiseRules`, applied by :mod:`.nli_premises`). Registered here
(:data:`pipelines.core.plugins.RECIPE_SECTIONS`) with a default: a recipe that leaves
``items`` out samples every item, stratified by pairing method."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import Seed


class PremiseRules(Strict):
    """KLUE 3.3.1's premise rules (see pipelines.families.klue.nli_premises): a declarative
    sentence (its final ending, MeCab tag EF, ends with one of ``endings``; no question mark) with a
    predicate (a morpheme tagged with one of ``predicate_tags``), ``min_chars`` to
    ``max_chars`` characters long."""

    min_chars: int = Field(default=20, ge=1)
    max_chars: int = Field(default=90, ge=1)
    endings: list[str] = Field(default_factory=lambda: ["다"], min_length=1)
    predicate_tags: list[str] = Field(
        default_factory=lambda: ["VV", "VA", "VX", "VCP", "VCN", "XSV", "XSA"], min_length=1
    )

    @model_validator(mode="after")
    def _check(self) -> PremiseRules:
        if self.min_chars > self.max_chars:
            raise ValueError(f"premises: min_chars {self.min_chars} > max_chars {self.max_chars}")
        return self


class ItemsSpec(Strict):
    """Which built items go to annotators (``benchforge rebuild``): a seeded sample of
    ``sample`` items (all when null), drawn evenly over ``stratify`` (e.g. the pairing
    method, or the corpus), with ``simulate_truth`` naming how the simulated annotators'
    latent answer is set (``sts-pairs``: from the pairing method and score, see
    pipelines.families.klue.sts; ``nli-templates``: templated hypotheses, see
    pipelines.families.klue.nli; ``topic-keywords``: a keyword lexicon, see
    pipelines.families.klue.ynat). ``premises`` (NLI recipes) selects premise sentences by
    KLUE's rules instead of sampling pairs."""

    sample: int | None = Field(default=None, ge=1)
    stratify: str | None = "method"
    seed: Seed = 0
    simulate_truth: Literal["sts-pairs", "nli-templates", "topic-keywords"] | None = "sts-pairs"
    premises: PremiseRules | None = None


register_section(RecipeSection(
    "items", ItemsSpec, "The items sent to annotators (KLUE-STS, -NLI, -YNAT rebuilds)",
    default=ItemsSpec,
))  # fmt: skip
