"""Reading comprehension: JSQuAD (JGLUE 3.3, Kurihara et al. 2022) and KLUE-MRC (KLUE
3.6, Park et al. 2021) as two task kinds, ``jsquad`` and ``klue-mrc``, on the same
steps (:mod:`.steps`).

``paragraphs`` -> ``writing-items`` -> the ``writing`` round (a writer reads a
paragraph, writes a question and marks its answer span; KLUE-MRC's question type set
per task) -> ``questions`` (the checks of :mod:`.checks`) -> ``split`` (grouped by
article) -> ``validation-items`` -> the ``validation`` round (two more people answer
each dev/test question by marking a span) -> ``answers`` (exact match and character
F1; the validator rule) -> ``export`` (the SQuAD v1.1 layout and the Hub's fields,
:mod:`.export`).

Modules: :mod:`.sources` (article readers and scorers, paragraph drawing),
:mod:`.checks` (question checks), :mod:`.simulate` (the demos' simulated writers),
:mod:`.squad` (the SQuAD layout's reader and writer), :mod:`.section` (the
``reading:`` recipe section), :mod:`.export` and :mod:`.card`.
"""

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import extractive_qa
from pipelines.export.citations import JGLUE_BIBTEX, KLUE_BIBTEX
from pipelines.families.reading import section  # noqa: F401 - the recipe section
from pipelines.families.reading.card import card
from pipelines.families.reading.export import export_step
from pipelines.families.reading.steps import (
    answers_step,
    configs,
    paragraphs_step,
    preflight,
    questions_step,
    rounds,
    split_step,
    validation_items_step,
    writing_items_step,
)
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound

KINDS = ("jsquad", "klue-mrc")
for _step, _fn in (
    ("paragraphs", paragraphs_step),
    ("writing-items", writing_items_step),
    ("questions", questions_step),
    ("split", split_step),
    ("validation-items", validation_items_step),
    ("answers", answers_step),
    ("export", export_step),
):
    for _kind in KINDS:
        STEPS.add(f"{_kind}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])


STEP_NAMES = ["paragraphs", "writing-items", LabelStudioRound("writing"), "questions", "split",
              "validation-items", LabelStudioRound("validation"), "answers", "export"]  # fmt: skip

# how each release is scored: JSQuAD by exact match and character F1 (JGLUE
# 3.3.1), KLUE-MRC by exact match and character ROUGE-W (KLUE 3.7.2)
EVALUATIONS = {
    "jsquad": extractive_qa(
        "id",
        ["exact_match", "char_f1"],
        "JGLUE (Kurihara et al. 2022) 3.3.1",
        files={"train": "train.jsonl", "dev": "valid.jsonl", "test": "test.jsonl"},
        prompt="文章: {{context}}\n質問: {{question}}\n答え:",
    ),
    "klue-mrc": extractive_qa(
        "guid",
        ["exact_match", "rouge_w"],
        "KLUE (Park et al. 2021) 3.7.2",
        prompt="지문: {{context}}\n질문: {{question}}\n답:",
    ),
}

for _kind, _title, _bib in (
    ("jsquad", "JGLUE JSQuAD: questions written on Wikipedia paragraphs, answers as spans "
     "(Kurihara et al. 2022, 3.3)", JGLUE_BIBTEX),
    ("klue-mrc", "KLUE-MRC: paraphrase, multi-sentence and unanswerable questions on "
     "paragraphs (Park et al. 2021, 3.6)", KLUE_BIBTEX),
):  # fmt: skip
    register_task(TaskKind(
        name=_kind, title=_title, layout="squad", steps=list(STEP_NAMES), rounds=rounds,
        card=card, needs=["reading", "split"], preflight=preflight, configs=configs,
        hub={"task_categories": ["question-answering"], "citation": _bib,
             "fields": {"question": "annotated", "answers": "annotated",
                        "question_type": "annotated", "is_impossible": "annotated",
                        "source": "derived"}},
        simulated=lambda recipe: any(getattr(recipe.reading, f"{n}_round").simulate is not None
                                     for n in ("writing", "validation")),
        evaluation=EVALUATIONS[_kind],
    ))  # fmt: skip
