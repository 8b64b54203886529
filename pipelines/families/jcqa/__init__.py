"""JCommonsenseQA (JGLUE 3.4.2, Kurihara et al. 2022): the ``jcqa`` task kind, built by
JGLUE's five steps after CommonsenseQA (Talmor et al. 2019): question sets from concept
triples and a synonym round, a writing round with three question filters, a distractor
round with two filters, an answer round (kept when 2 of 3 are right), and the split and
JGLUE's layout.

Modules: :mod:`.concepts` (triples and question sets), :mod:`.steps`, :mod:`.export`,
:mod:`.card`, :mod:`.section` (the ``jcqa:`` recipe section).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import JGLUE_FILES, multiple_choice
from pipelines.export.citations import JGLUE_BIBTEX
from pipelines.families.jcqa import section  # noqa: F401 - the recipe section
from pipelines.families.jcqa.card import card
from pipelines.families.jcqa.check import check_items_step, check_step
from pipelines.families.jcqa.export import export_step
from pipelines.families.jcqa.steps import (
    answer_items_step,
    answers_step,
    configs,
    distractor_items_step,
    distractors_step,
    preflight,
    question_sets_step,
    questions_step,
    rounds,
    split_step,
    synonyms_step,
    writing_items_step,
)
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

for _step, _fn in (
    ("question-sets", question_sets_step),
    ("synonyms", synonyms_step),
    ("writing-items", writing_items_step),
    ("questions", questions_step),
    ("distractor-items", distractor_items_step),
    ("distractors", distractors_step),
    ("answer-items", answer_items_step),
    ("answers", answers_step),
    ("check-items", check_items_step),
    ("check", check_step),
    ("split", split_step),
    ("export", export_step),
):
    STEPS.add(f"jcqa:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])


# the last filter (3.4.2): automatic pattern matching, then a person checks what matched
CHECK_STEPS = ["check-items", LabelStudioRound("check"), "check"]


def plan(recipe: Recipe) -> list[PlanEntry]:
    """The steps; with ``jcqa.final_check`` (the paper's) the check before the split."""
    steps = list(STEP_NAMES)
    if not recipe.jcqa.final_check:
        steps = [s for s in steps if s not in CHECK_STEPS]
    return steps


STEP_NAMES = ["question-sets", LabelStudioRound("synonyms"), "synonyms",
              "writing-items", LabelStudioRound("writing"), "questions",
              "distractor-items", LabelStudioRound("distractors"), "distractors",
              "answer-items", LabelStudioRound("answers"), "answers",
              *CHECK_STEPS, "split", "export"]  # fmt: skip

register_task(
    TaskKind(
        name="jcqa",
        title="JGLUE JCommonsenseQA: five-choice commonsense questions written on concept "
        "triples (Kurihara et al. 2022, 3.4)",
        layout="jglue-jcqa",
        steps=STEP_NAMES,
        plan=plan,
        rounds=rounds,
        card=card,
        needs=["jcqa", "split"],
        preflight=preflight,
        configs=configs,
        hub={"task_categories": ["multiple-choice"], "citation": JGLUE_BIBTEX},
        # JGLUE 3.4.3: accuracy over the five choices
        evaluation=multiple_choice(
            "q_id",
            "label",
            "question",
            [f"choice{i}" for i in range(5)],
            ["accuracy"],
            "JGLUE (Kurihara et al. 2022) 3.4.3",
            files=dict(JGLUE_FILES),
            prompt="質問: {{question}}\n答え:",
        ),
        simulated=lambda recipe: (
            recipe.jcqa.simulate is not None
            or any(
                getattr(recipe.jcqa, f"{n}_round").simulate is not None
                for n in ("synonyms", "writing", "distractors", "answers")
            )
        ),
    )
)
