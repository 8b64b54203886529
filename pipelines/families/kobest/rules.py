"""KoBEST's thresholds, from a recipe's ``kobest.rules`` (the paper's values, or ours
where it gives none, by default)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipelines.core.settings import AtLeastOne, Score100, Share

WH_WORDS = (
    "누구",
    "누가",
    "무엇",
    "뭐",
    "무슨",
    "언제",
    "어디",
    "왜",
    "어떻게",
    "어떤",
    "어느",
    "몇",
    "얼마",
)


@dataclass(frozen=True)
class KobestRules:
    """Thresholds of the checks and reviews.

    - ``min_context_sentences``: a HellaSwag context has at least 3 sentences (kss; 2.5);
    - ``wh_words``: a BoolQ question holds none of these (2.2);
    - ``brands`` / ``antonyms``: SentiNeg's lexicons (2.6; None: the shipped ones);
    - ``idioms``: SentiNeg's idioms and their opposites (2.6, the third method; None: the
      shipped ``lexicons/idioms.tsv``);
    - ``slang``: COPA's slang lexicon (2.3, guideline 3; None: the shipped one);
    - ``dictionary``: WiC's dictionary (2.4, guidelines 1, 2 and 4: the headwords, their
      homonym entries and example sentences; None: the shipped one, written for the demo);
    - ``actions``: a check's action when not its default (``drop`` or ``flag``);
    - ``near_duplicate_min``: rapidfuzz ratio (0-100) of two items' normalised text at
      or over which they are near duplicates; ``swap_min``: the ratio of one COPA
      item's premise to the other's answer (both ways) at or over which two items of
      opposite questions are swaps (the linguists' finding, 3.4);
    - ``duplicates``: ``drop`` the later item of each pair, or only ``flag`` it;
    - ``skew_share`` (0.7: "over 70% of COPA questions containing numbers had one
      answer"), ``min_count``: a feature of the partial input is a cue when one label
      takes more than ``skew_share`` of the ``min_count`` or more items carrying it;
    - ``cue_margin``: a cue's share is also this much above its label's share (so that
      an unbalanced split does not make every common feature a cue);
    - ``iterations``: artifact reviews at most (the paper repeated it up to 3 times);
    - ``review_votes``: reviewers who must agree on a decision (1: each item's one
      linguist decides);
    - ``negated_test`` (SentiNeg only, 2.6): build the test set as the paper does, from
      train items whose predicted polarity flips once negated, converted and relabelled
      (``negated_test``); ``negated_test_items``: at most this many converted (None:
      every one that qualifies; the paper gives no number); ``human_conversion`` (2.6:
      "we converted each candidate to a sentence with its opposite meaning"): a person
      converts each selected candidate in the ``conversion`` round (off: the negation
      helper's draft is the conversion, no round)."""

    min_context_sentences: AtLeastOne = 3
    wh_words: tuple[str, ...] = WH_WORDS
    brands: str | None = None
    antonyms: str | None = None
    idioms: str | None = None
    slang: str | None = None
    dictionary: str | None = None
    actions: dict[str, str] = field(default_factory=dict)
    near_duplicate_min: Score100 = 90.0  # issue 51: 150 was a rapidfuzz TypeError
    swap_min: Score100 = 85.0
    duplicates: str = "drop"
    skew_share: float = 0.7
    min_count: AtLeastOne = 5
    cue_margin: Share = 0.15
    iterations: int = 3
    review_votes: AtLeastOne = 1
    negated_test: bool = True
    negated_test_items: int | None = None
    human_conversion: bool = True

    def __post_init__(self) -> None:
        if self.duplicates not in ("drop", "flag"):
            raise ValueError(f"duplicates must be drop or flag, got {self.duplicates!r}")
        bad = {k: v for k, v in self.actions.items() if v not in ("drop", "flag")}
        if bad:
            raise ValueError(f"actions must be drop or flag, got {bad}")
        if not 0.5 <= self.skew_share < 1.0:
            raise ValueError(f"skew_share must be in [0.5, 1), got {self.skew_share}")
        if self.negated_test_items is not None and self.negated_test_items < 0:
            raise ValueError(f"negated_test_items must be 0 or more, got {self.negated_test_items}")
        if self.iterations < 1:
            raise ValueError(f"iterations must be 1 or more, got {self.iterations}")
