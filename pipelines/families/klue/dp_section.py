"""The ``dp:`` section of a recipe (KLUE-DP, issue 57; the task kind in :mod:`.dp`): the
pseudo-parser, the sentence selection and the linguists' review round. Registered with
:data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, model_validator

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict, rules_field, typed_rules
from pipelines.families.klue.review_section import LinguistReviewSpec
from pipelines.models.dep_parser import ParserSettings

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe


class DpParserSpec(Strict):
    """The pseudo-parser: trained on UD treebanks (``train``: CoNLL-U files, ``.gz``
    allowed, converted to KLUE's conventions by :mod:`.dp_convert`; every ``holdout``-th
    sentence of each held out to score it), or a checkpoint trained before
    (``checkpoint``: a folder ``benchforge klue dp-parser`` or a rebuild wrote).
    ``settings``: :class:`pipelines.models.dep_parser.ParserSettings`."""

    train: list[str] = Field(default_factory=list)
    checkpoint: str | None = None
    holdout: int = Field(default=10, ge=2)
    licence: str | None = None  # the treebanks' licence, for the model card
    settings: dict[str, object] = rules_field(ParserSettings)

    @model_validator(mode="after")
    def _source(self) -> DpParserSpec:
        if not self.checkpoint and not self.train:
            raise ValueError("dp.parser: give train (UD CoNLL-U files) or a checkpoint")
        self.parser_settings()
        return self

    def parser_settings(self) -> ParserSettings:
        return typed_rules(ParserSettings, dict(self.settings), "dp.parser.settings")


class DpReviewSpec(LinguistReviewSpec):
    """The linguists' review round: each sentence's voted tree pre-loaded; a reviewer
    accepts it or corrects heads and labels (default interface ``dp_review.xml``)."""


class DpSpec(Strict):
    """KLUE-DP construction (issue 57; ``pipelines.families.klue.dp``). The length
    bounds are benchforge's (the paper gives none): a sentence of ``min_words`` to
    ``max_words`` words, ending in a final ending (KLUE 2.4: "ensuring most of
    sentences from selected corpora are complete")."""

    parser: DpParserSpec
    min_words: int = Field(default=3, ge=2)
    max_words: int = Field(default=40, ge=2)
    # the endings that make a sentence complete: its last morpheme that is not a
    # symbol carries one of these tags (EF: a final ending)
    final_tags: list[str] = Field(default_factory=lambda: ["EF"], min_length=1)
    # the corpus field (keep_fields) holding a reference tree (UD tokens, as
    # ``pipelines.families.klue.ud.to_record`` writes them), the simulated annotators'
    # truth where a corpus has one (demos); others take the pseudo-parse
    truth_field: str | None = "tokens"
    review: DpReviewSpec | None = None
    guid_prefix: str = "klue-dp-v1.1"  # the release's guid and file names

    @model_validator(mode="after")
    def _bounds(self) -> DpSpec:
        if self.min_words > self.max_words:
            raise ValueError(f"dp.min_words {self.min_words} is above dp.max_words "
                             f"{self.max_words}")  # fmt: skip
        return self


def _check(recipe: Recipe, spec: DpSpec) -> None:
    for value in spec.parser.train:
        if not recipe.resolve(value).is_file():
            raise ValueError(f"dp.parser.train: {recipe.resolve(value)} not found")
    if spec.parser.checkpoint and not recipe.resolve(spec.parser.checkpoint).is_dir():
        raise ValueError(f"dp.parser.checkpoint: {recipe.resolve(spec.parser.checkpoint)} "
                         "is not a folder")  # fmt: skip


register_section(RecipeSection("dp", DpSpec, "KLUE-DP construction (task klue-dp)", _check))
