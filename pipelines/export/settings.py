"""The export stage's recipe section, ``card:``: the data card's warning thresholds
(read by :mod:`pipelines.export.warnings`) and the Datasheets/Data Statements answers
only the team can give (:data:`CARD_TEXTS`, rendered by :mod:`pipelines.export.data_card`).
Registered here (:data:`pipelines.core.plugins.RECIPE_SECTIONS`) with a default: a
recipe that leaves ``card`` out gets every threshold's default and placeholders."""

from __future__ import annotations

from pydantic import Field

from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict

CARD_TEXTS = {
    "intended_uses": "Uses: what the dataset is for (tasks, users)",
    "out_of_scope_uses": "Uses: what it must not be used for",
    "distribution": "Distribution: where and how it is published, and when",
    "maintenance": "Maintenance: who maintains it, how errors are reported and fixed",
    "annotator_demographics": "Annotators: age range, gender, language varieties, training",
    "compensation": "Annotators: how they were recruited and paid",
    "ethics_review": "Ethics review: the board or process that reviewed the collection",
    # Data Statements (Bender and Friedman 2018): the people behind the text
    "speaker_demographic": "Speakers: who wrote the source texts (age, gender, language "
    "variety), as far as it is known",
    "consent": "Consent: how the source texts' authors and the annotators agreed to this use",
    "funding": "Funding: who paid for the collection and the annotation",
    "creators_contact": "Creators and contact: who built the dataset and how to reach them",
}


class CardSpec(Strict):
    """The data card: thresholds of its warnings (``pipelines.export.warnings``) and the
    Datasheets/Data Statements answers only the team can give (``CARD_TEXTS``); each one
    left out shows as a placeholder in the card's *To complete before release* box."""

    alpha_ratio_min: float = Field(default=0.5, gt=0)  # alpha below this share of the paper's
    max_label_share: float = Field(default=0.5, gt=0, le=1)  # one gold label's share
    # one label's share of one split (any split; categorical labels)
    max_split_label_share: float = Field(default=0.8, gt=0, le=1)
    max_drop_share: float = Field(default=0.5, gt=0, le=1)  # one filter, one source
    # an annotator choosing the gold label less often (rules that screen no annotator)
    min_annotator_agreement: float = Field(default=0.5, ge=0, le=1)
    # a partial-input model's accuracy above the majority baseline (evaluation items)
    max_partial_input_gain: float = Field(default=0.15, ge=0, le=1)
    # one source's share of one label's items (labels with min_label_items or more)
    max_label_source_share: float = Field(default=0.95, gt=0, le=1)
    min_label_items: int = Field(default=10, ge=1)
    # agreement floors of any round: Krippendorff 2004, 12.2 (alpha .667 for tentative
    # conclusions); Landis and Koch 1977 (kappa .41: "moderate")
    min_alpha: float = Field(default=0.667, ge=-1, le=1)
    min_kappa: float = Field(default=0.41, ge=-1, le=1)
    # a release file's records repeating another's content (0: any repeat is raised)
    max_duplicate_share: float = Field(default=0.0, ge=0, le=1)
    # a translation figure this far from the paper's, relative (0.5: under half or over
    # one and a half times it); reviewers who leave more than max_accept_share unchanged
    max_paper_gap: float = Field(default=0.5, gt=0)
    max_accept_share: float = Field(default=0.95, gt=0, le=1)
    # written answers (JSQuAD, KLUE-MRC): the writer's and the validators' answers agree
    # (exact match) less than this share of what the same measure gives on the source
    # release's own questions, or under min_answer_exact_match without them (benchforge's
    # choices: the papers give no floor)
    min_answer_agreement_ratio: float = Field(default=0.75, gt=0, le=1)
    min_answer_exact_match: float = Field(default=0.5, ge=0, le=1)
    intended_uses: str | None = None
    out_of_scope_uses: str | None = None
    distribution: str | None = None
    maintenance: str | None = None
    annotator_demographics: str | None = None
    compensation: str | None = None
    ethics_review: str | None = None
    speaker_demographic: str | None = None
    consent: str | None = None
    funding: str | None = None
    creators_contact: str | None = None


register_section(RecipeSection(
    "card", CardSpec, "The data card: its warnings' thresholds and the answers only the "
    "team can give", default=CardSpec,
))  # fmt: skip
