"""The ``reading:`` section of a recipe (JSQuAD, JGLUE 3.3; KLUE-MRC, KLUE 3.7; the
family in :mod:`pipelines.families.reading`): where the articles come from, how they
are scored and sampled, the writing and validation rounds and the question checks.
Registered with :data:`pipelines.core.plugins.RECIPE_SECTIONS`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, field_validator, model_validator

from pipelines.annotation.settings import RoundSpec
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import SHARE_TOLERANCE, Seed, Share

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

QUESTION_TYPES = ("paraphrase", "multi_sentence", "unanswerable")  # KLUE 3.7's three
DEFAULT_CHECKS = ["empty_question", "is_question", "answer_span", "unanswerable_answer",
                  "duplicate", "lexical_overlap"]  # fmt: skip


class ReadingSource(Strict):
    """One corpus of the recipe read as articles by a registered reader
    (:data:`pipelines.families.reading.sources.READERS`: ``squad``, ``law``,
    ``kobill``)."""

    corpus: str
    reader: str
    limit: int | None = Field(default=None, ge=1)  # the first N articles of the file


# a round of the family: the writing round (``people`` writers per task, one in JSQuAD
# and KLUE-MRC) or the validation round (``people`` validators per dev/test question:
# JSQuAD's "two additional answers")
ReadingRound = RoundSpec


class ReadingSimulation(Strict):
    """What the simulated writers write (demos and tests only): the source file's own
    questions where it has them (``squad`` sources), else a templated cloze question;
    ``copy_rate`` of the questions copy their answer sentence instead (the lexical
    overlap check's case), ``statement_rate`` forget the question form."""

    copy_rate: float = Field(default=0.1, ge=0, le=1)
    statement_rate: float = Field(default=0.05, ge=0, le=1)
    reference: str | None = None  # a JSON Lines file of hand-written questions

    @model_validator(mode="after")
    def _rates(self) -> ReadingSimulation:
        """The two rates share the questions: together at most all of them."""
        if self.copy_rate + self.statement_rate > 1:
            raise ValueError(
                f"copy_rate {self.copy_rate} + statement_rate {self.statement_rate} > 1: "
                "they are shares of the same questions"
            )
        return self


class ReadingSpec(Strict):
    """Reading-comprehension construction (pipelines.families.reading)."""

    sources: list[ReadingSource] = Field(min_length=1)
    # the article-quality scorer (READERS' sibling registry SCORERS): length,
    # paragraphs, list (a TSV of title and score, ``scores``)
    scorer: str = "length"
    scores: str | None = None
    articles: int = Field(default=10, ge=1)  # articles drawn
    top_share: float = Field(default=0.5, gt=0, le=1)  # drawn at random from this top share
    paragraphs_per_article: int = Field(default=5, ge=1)
    min_chars: int = Field(default=100, ge=1)  # a context shorter is dropped (too_short)
    max_chars: int = Field(default=1000, ge=1)  # units packed up to this; longer dropped
    pack: bool = False  # pack an article's short units (law articles) into contexts
    context_format: str = "{paragraph}"  # JSQuAD: "{title} [SEP] {paragraph}"
    questions_per_paragraph: int = Field(default=2, ge=1)
    # KLUE-MRC: the share of each question type among the writing tasks (shares, each
    # in [0, 1], that sum to 1)
    question_types: dict[str, Share] = Field(default_factory=lambda: {"answerable": 1.0})
    checks: list[str] = Field(default_factory=lambda: list(DEFAULT_CHECKS))
    overlap_max: float = Field(default=0.8, gt=0, le=1)  # lexical overlap flagged at or over
    drop_overlap: bool = False  # KLUE-MRC avoided copying: drop what is flagged
    min_validator_answers: int = Field(default=1, ge=0)
    seed: Seed = 0
    guid_prefix: str | None = None
    writing_round: ReadingRound = Field(default_factory=ReadingRound)
    validation_round: ReadingRound = Field(default_factory=lambda: ReadingRound(people=2))
    simulation: ReadingSimulation = Field(default_factory=ReadingSimulation)

    @field_validator("question_types")
    @classmethod
    def _types(cls, types: dict[str, float]) -> dict[str, float]:
        known = ("answerable", *QUESTION_TYPES)
        bad = sorted(set(types) - set(known))
        if bad:
            raise ValueError(f"reading.question_types: unknown {bad} (known: {list(known)})")
        total = sum(types.values())
        if abs(total - 1) > SHARE_TOLERANCE:  # issue 51: 1.5 was silently normalised
            raise ValueError(
                f"reading.question_types: the shares sum to {total:g}, not 1 (each is the "
                "share of the writing tasks of that type)"
            )
        return types

    @field_validator("context_format")
    @classmethod
    def _format(cls, fmt: str) -> str:
        if "{paragraph}" not in fmt:
            raise ValueError("reading.context_format must hold {paragraph}")
        try:
            fmt.format(title="t", paragraph="p")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"reading.context_format: {exc} (fields: title, paragraph)") from None
        return fmt

    @field_validator("checks")
    @classmethod
    def _once(cls, names: list[str]) -> list[str]:
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"reading.checks: {twice} named twice")
        return names

    @model_validator(mode="after")
    def _bounds(self) -> ReadingSpec:
        if self.min_chars > self.max_chars:
            raise ValueError("reading.min_chars is over reading.max_chars")
        people = self.validation_round.people
        if self.min_validator_answers > people:  # issue 51: dev and test came out empty
            raise ValueError(
                f"reading.min_validator_answers {self.min_validator_answers} > "
                f"reading.validation_round.people {people}: no question could get that "
                "many validators' answers, and dev and test would be empty"
            )
        if self.scorer == "list" and not self.scores:
            raise ValueError("reading.scorer list needs reading.scores (a TSV of title, score)")
        return self


def _check(recipe: Recipe, spec: ReadingSpec) -> None:
    from pipelines.families.reading.checks import CHECKS
    from pipelines.families.reading.sources import READERS, SCORERS

    names = [c.name for c in recipe.corpora]
    for s in spec.sources:
        if s.corpus not in names:
            raise ValueError(f"reading.sources: no corpus named {s.corpus!r} ({names})")
        READERS.get(s.reader)
    SCORERS.get(spec.scorer)
    for name in spec.checks:
        CHECKS.get(name)
    if recipe.task == "jsquad" and set(spec.question_types) - {"answerable"}:
        raise ValueError("reading.question_types: JSQuAD (SQuAD 1.1) has answerable questions only")
    if recipe.task == "klue-mrc" and "answerable" in spec.question_types:
        raise ValueError(
            f"reading.question_types: KLUE-MRC's types are {list(QUESTION_TYPES)}, not answerable"
        )
    if recipe.task == "klue-mrc":
        # KLUE 2.2.1: "We also do not use the article contents from WIKITREE for MRC"
        publishers = {c.name: (c.publisher or "").strip().casefold() for c in recipe.corpora}
        wikitree = [s.corpus for s in spec.sources if publishers[s.corpus] == "wikitree"]
        if wikitree:
            raise ValueError(
                f"reading.sources: KLUE 2.2.1 does not use the article contents from WIKITREE "
                f"for MRC (sensational articles); corpus {', '.join(wikitree)} is published by "
                "WIKITREE"
            )


register_section(RecipeSection(
    "reading", ReadingSpec, "reading comprehension (tasks jsquad, klue-mrc)", _check
))  # fmt: skip
