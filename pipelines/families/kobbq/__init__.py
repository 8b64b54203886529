"""KoBBQ (Jin et al. 2024): a bias benchmark adapted to Korean culture.

- :mod:`pipelines.families.kobbq.survey`: the survey rules that decide which stereotypes stay and
  which groups are targets and non-targets (KoBBQ 3.2.5);
- :mod:`pipelines.families.kobbq.templates`: the template file, slot filling with Korean particle
  agreement (:mod:`pipelines.families.kobbq.josa`), expansion into samples, the evaluation set;
- :mod:`pipelines.families.kobbq.scoring`: accuracy and diff-bias (KoBBQ 4, after Parrish et al.
  2022) of any model's predictions, template-averaged as the paper does;
- :mod:`.section`: the ``kobbq:`` recipe section; :mod:`.steps`: the steps; :mod:`.export`: the
  release; :mod:`.card` and ``card.md.j2``: its part of the data card. This module
  registers the ``kobbq`` task kind.
"""

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import Evaluation, field_of
from pipelines.families.kobbq import section  # noqa: F401 - the kobbq: recipe section
from pipelines.families.kobbq.card import card
from pipelines.families.kobbq.export import export_step
from pipelines.families.kobbq.scoring import evaluation_scorer
from pipelines.families.kobbq.steps import (
    check_items_step,
    configs,
    evaluation_step,
    expand_step,
    preflight,
    round_step,
    rounds,
    survey_items_step,
    survey_step,
)
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound

STEP_NAMES = [
    "survey-items", LabelStudioRound("survey"), "survey", "expand", "evaluation",
    "check-items", LabelStudioRound("check"), "export",
]  # fmt: skip

for _step, _fn in (("survey-items", survey_items_step), ("survey", survey_step),
                   ("expand", expand_step), ("evaluation", evaluation_step),
                   ("check-items", check_items_step), ("export", export_step)):  # fmt: skip
    STEPS.add(f"kobbq:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])
for _round in ("survey", "check"):
    for _op in ("push", "simulate", "wait", "pull"):
        _fn = round_step(_op, _round)
        STEPS.add(f"kobbq:{_op}-{_round}", _fn, (_fn.__doc__ or "").split("\n")[0])

# the Hub's card (pipelines.export.hf_card): the paper's BibTeX
BIBTEX = """@article{jin2024kobbq,
  title = {{KoBBQ}: {K}orean Bias Benchmark for Question Answering},
  author = {Jin, Jiho and Kim, Jiseon and Lee, Nayeon and Yoo, Haneul and Oh, Alice and
            Lee, Hwaran},
  journal = {Transactions of the Association for Computational Linguistics},
  volume = {12},
  year = {2024}
}"""

register_task(TaskKind(
    name="kobbq", title="KoBBQ-style bias benchmark (Jin et al. 2024)", layout="kobbq",
    steps=STEP_NAMES, rounds=rounds,
    card=card,
    # issue 54: every text and answer is fixed by a template and its context type
    hub={"task_categories": ["multiple-choice"], "citation": BIBTEX,
         "fields": {**dict.fromkeys(("context", "question", "choices", "answer",
                                     "biased_answer", "label_annotation"), "template"),
                    "bbq_id": "source", "bbq_category": "source", "prediction": "machine"}},
    needs=["kobbq"],
    simulated=lambda recipe: bool(recipe.kobbq and any(
        r and r.simulate for r in (recipe.kobbq.survey_round, recipe.kobbq.check_round))),
    preflight=preflight, configs=configs,
    # KoBBQ 4: accuracy and diff-bias per context type (its own scorer); the release has
    # no train split: its baselines are the fixed answers of the card
    evaluation=Evaluation(
        "choice", "sample_id", lambda r: list(r["choices"]).index(r["answer"]),
        field_of("context"), ("acc_amb", "acc_dis", "diff_bias_amb", "diff_bias_dis"),
        "KoBBQ (Jin et al. 2024) 4", text_pair=field_of("question"),
        choices=lambda r: [str(c) for c in r["choices"]],
        files={"test": "test_samples.jsonl", "all": "all_samples.jsonl"},
        scorer=evaluation_scorer,
    ),
))  # fmt: skip
