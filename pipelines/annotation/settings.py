"""The annotation stage's recipe section, ``annotation:``: the Label Studio round
(:class:`AnnotationSpec`, issue 5) with its simulated annotators, and the rounds around
it (issue 35): the qualification pilot, control items, the NLI writing round, the
review of reported items and the human performance round. :class:`SimulateSpec`,
:class:`RoundSpec` and :func:`enough_simulated` are also the families' (their own
rounds in their own sections). Registered here
(:data:`pipelines.core.plugins.RECIPE_SECTIONS`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from pipelines.core import plugins
from pipelines.core.plugins import RecipeSection, register_section
from pipelines.core.recipe import Strict
from pipelines.core.settings import Seed


class SimulateSpec(Strict):
    """Simulated annotators (demos and tests only; the outputs say so)."""

    annotators: int = Field(default=7, ge=1)
    seed: Seed = 0
    # how many of them answer at random (None: max(1, round(0.15 * annotators)))
    careless: int | None = Field(default=None, ge=0)
    # how many of them cannot do the task: they answer at random in the qualification
    # (pilot) round too, and fail it; their main-round annotations come on top of the
    # overlap (issue 35). The careless ones pass the pilot and turn careless after it.
    unqualified: int = Field(default=0, ge=0)
    # how many of them submit every pre-loaded suggestion (a prediction) unchanged, as a
    # person who trusts the model blindly would (issue 55); outside a pilot only
    accepting: int = Field(default=0, ge=0)


def enough_simulated(simulate: SimulateSpec | None, people: int, name: str = "people") -> None:
    """A round with ``people`` per task and fewer simulated people can never finish:
    ``wait`` would stop at its timeout and every rerun again (issue 51: exit 3 and "run
    the same command again" after a minute). Raises ``ValueError`` naming both
    settings; nothing to check with real people (``simulate`` None)."""
    if simulate is not None and simulate.annotators < people:
        raise ValueError(
            f"simulate.annotators {simulate.annotators} < {name} {people}: no task could "
            f"get its {name}, and no rerun either; simulate at least {people} people"
        )


class RoundSpec(Strict):
    """A family's own Label Studio round (JSQuAD's writing and validation rounds,
    JCommonsenseQA's four): ``people`` per task, the interface (``config``; None: the
    family's file in annotation_configs/), the project (None: "<recipe name>-<round>"),
    simulated people, and how long ``wait`` waits and how often it looks."""

    people: int = Field(default=1, ge=1)
    config: str | None = None
    project: str | None = None
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)

    @model_validator(mode="after")
    def _enough(self) -> RoundSpec:
        enough_simulated(self.simulate, self.people)
        return self


class PassRuleSpec(Strict):
    """A pilot's pass rule (``pipelines.agreement.qualification.PassRule``):
    ``min_correct`` (``threshold`` of ``of`` gold items right; KLUE-RE 3.5.1: 4 of 5),
    ``min_pearson`` (Pearson r with the gold ratings), ``min_majority_share`` (the
    others' majority answer on that share of the items) or ``min_uas`` (a mean UAS
    against gold dependency trees; KLUE-DP)."""

    kind: Literal["min_correct", "min_pearson", "min_majority_share", "min_uas"]
    threshold: float
    of: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _range(self) -> PassRuleSpec:
        """The threshold in its kind's range (``PassRule`` checks the same)."""
        t = self.threshold
        if self.kind == "min_correct" and (t < 1 or t != int(t) or (self.of and t > self.of)):
            raise ValueError(f"threshold: min_correct counts gold items right, a whole number "
                             f"from 1 to of ({self.of or 'the gold items'}), got {t}")  # fmt: skip
        if self.kind == "min_pearson" and not -1 <= t <= 1:
            raise ValueError(f"threshold: min_pearson is a correlation in [-1, 1], got {t}")
        if self.kind in ("min_majority_share", "min_uas") and not 0 < t <= 1:
            raise ValueError(f"threshold: {self.kind} is a share in (0, 1], got {t}")
        return self


class PilotSpec(Strict):
    """A qualification (pilot) round before the main round (issue 35; KLUE 3.1.1-3.5.1
    began every crowdsourced task with one): ``gold``, a JSON Lines file of items with
    their known answer (``item_id``, the interface's data fields, ``value``), shown to
    every applicant (``applicants``; default: the simulated pool), and the pass rule.
    Only those who pass count in the main round: the annotations of everyone else are
    excluded with reason ``not_qualified``."""

    gold: str
    rule: PassRuleSpec
    applicants: int | None = Field(default=None, ge=1)
    project: str | None = None  # default: "<recipe name>-pilot"
    config: str | None = None  # default: the main round's interface


class ControlsSpec(Strict):
    """Control items inside the main round (issue 35): ``items``, a JSON Lines file of
    items with a known answer (``item_id``, the data fields, ``value``), shuffled in as
    ``share`` of the round (at most 0.5) and hidden in the interface; an annotator
    whose accuracy on them is under ``min_accuracy`` over ``min_answered`` or more is
    screened out of the round's agreement (reason ``low_control_accuracy``). On a
    rating, an answer within ``tolerance`` of the known one counts as right."""

    items: str
    share: float = Field(gt=0, le=0.5)
    min_accuracy: float = Field(ge=0, le=1)
    min_answered: int = Field(default=3, ge=1)
    tolerance: float = Field(default=0.0, ge=0)
    seed: Seed = 0


class WritingSpec(Strict):
    """KLUE-NLI's writing round: one writer per premise writes a hypothesis per label
    (``nli_hypothesis.xml``); the validation round (``annotation``) then labels them."""

    config: str
    project: str | None = None  # default: "<recipe name>-writing"
    simulate: SimulateSpec | None = None


class ReviewSpec(Strict):
    """The review round of reported items (``agreement.reports: review``, issue 35): its
    project (default "<project>-review") and simulated reviewers (default: one, when the
    main round is simulated). Each reported item is reviewed once (overlap 1)."""

    project: str | None = None
    simulate: SimulateSpec | None = None


class HumanSpec(Strict):
    """The human performance round (issue 35; KLUE, JGLUE and KoBEST report it): other
    people than the annotators (their own pool) answer ``sample`` items of the test set
    as a model would, ``overlap`` people each; the card scores them against the gold."""

    sample: int = Field(default=50, ge=1)
    overlap: int = Field(default=3, ge=1)
    seed: Seed = 0
    project: str | None = None  # default: "<project>-human"
    simulate: SimulateSpec | None = None  # default: overlap + 1 people when simulated

    @model_validator(mode="after")
    def _enough(self) -> HumanSpec:
        enough_simulated(self.simulate, self.overlap, "overlap")
        return self


class AnnotationSpec(Strict):
    """The Label Studio round (issue 5): interface, overlap, project, and either real
    annotators (wait up to ``timeout`` seconds) or simulated ones. ``writing`` adds the
    NLI hypothesis-writing round before it."""

    config: str  # an annotation_configs/*.xml file, relative to the recipe
    overlap: int = Field(default=1, ge=1)
    project: str | None = None  # default: the recipe's name
    simulate: SimulateSpec | None = None
    timeout: float = Field(default=3600.0, gt=0)
    poll: float = Field(default=5.0, gt=0)
    writing: WritingSpec | None = None
    # the value type of a field when its control's default is not meant (field -> type,
    # e.g. {relations: dependency_tree}; pipelines.annotation.values)
    value_types: dict[str, str] = Field(default_factory=dict)
    pilot: PilotSpec | None = None  # a qualification round before this one (issue 35)
    controls: ControlsSpec | None = None  # control items shuffled into this round
    review: ReviewSpec | None = None  # the review round of reported items (reports: review)
    # a Markdown guideline, shown in Label Studio before labelling (the main round's and
    # the pilot's project instructions)
    guideline: str | None = None
    human: HumanSpec | None = None  # a human performance round on the test set

    @model_validator(mode="after")
    def _known_value_types(self) -> AnnotationSpec:
        """A pinned value type is a registered one (the error names the nearest)."""
        for name in self.value_types.values():
            plugins.VALUE_TYPES.get(name)
        return self

    @model_validator(mode="after")
    def _enough_annotators(self) -> AnnotationSpec:
        """Fewer simulated annotators than the overlap can never finish a task: the wait
        would block for its whole timeout and every rerun again (issue 32)."""
        if self.simulate is not None and self.simulate.annotators < self.overlap:
            raise ValueError(
                f"simulate.annotators {self.simulate.annotators} < overlap {self.overlap}: "
                "no task could get its annotations; simulate at least as many annotators "
                "as the overlap"
            )
        sim = self.simulate
        if sim is not None and sim.unqualified and sim.annotators - sim.unqualified < self.overlap:
            raise ValueError(
                f"simulate.unqualified {sim.unqualified}: the {sim.annotators - sim.unqualified} "
                f"annotators left are fewer than the overlap {self.overlap}"
            )
        if sim is not None and sim.unqualified and self.pilot is None:
            raise ValueError(
                "simulate.unqualified needs a qualification round (annotation.pilot) to fail"
            )
        applicants = self.pilot.applicants if self.pilot else None
        if sim is not None and applicants is not None and applicants > sim.annotators:
            raise ValueError(
                f"pilot.applicants {applicants} > simulate.annotators {sim.annotators}: the "
                "pilot could never get its answers, and no rerun either"
            )
        return self


register_section(RecipeSection(
    "annotation", AnnotationSpec, "The Label Studio round (issue 5) and its pilot, controls, "
    "writing, review and human performance rounds (issue 35)",
))  # fmt: skip
