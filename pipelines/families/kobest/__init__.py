"""KoBEST (Kim et al. 2022): the five task kinds ``kobest-boolq``, ``kobest-copa``,
``kobest-wic``, ``kobest-hellaswag`` and ``kobest-sentineg``, one registration each
over the same steps (``pipelines.families.kobest`` holds the task definitions, checks and
reviews):

``prompts`` (the writing round's items: given fields and the assigned label) -> the
``writing`` round (one writer per prompt) -> ``written`` (bad input dropped; the
guideline checks and the toxic-content detectors on every written item) -> the
``review`` round (linguists: accept / edit / reject with a reason) -> ``reviewed``
(decisions, edits kept as versions and checked again) -> ``duplicates`` (COPA swaps
and near duplicates: the review table, the later item of each pair dropped) ->
``split`` (the recipe's rule) -> ``artifacts-1`` (the model-driven review on the
partial input: cues, partial-input accuracy, the items that follow a cue) ->
``revision-1`` (those items to the revision round, the revisions checked and kept as
versions) -> ``artifacts-2`` -> ... up to ``rules.iterations`` revisions, a last review
after the last one; a revision round is skipped when its review found nothing ->
(SentiNeg) ``negated`` (2.6: the test set from train items whose predicted polarity
flips once negated, converted and relabelled) -> ``export`` (KoBEST's layout, JSON
Lines per split, and the data card).

Modules:

- ``tasks``: the five tasks' fields, labels, release layout and partial inputs;
- ``checks``: the guideline checks run on every written item (registered);
- ``negation``: SentiNeg's negation-suggestion helper and negation test (MeCab);
- ``duplicates``: the near-duplicate review (COPA swaps, rapidfuzz near duplicates);
- ``review``: the linguist review's decisions and versions, and the model-driven
  artifact review on the split step's artifact report;
- ``negated_set``: SentiNeg's test set (2.6): the sentiment model and the conversion;
- ``simulate``: the simulated writers, reviewers and revisers of the demos.
- ``section``: the ``kobest:`` recipe section; ``rounds``: the rounds and the planned
  steps; ``writing`` and ``revision``: the steps; ``export``: the release; ``card`` with
  ``card.md.j2``: the card.

This module registers the five task kinds.
"""

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import classification, multiple_choice
from pipelines.families.kobest import section  # noqa: F401 - the recipe section
from pipelines.families.kobest.card import card
from pipelines.families.kobest.export import export_step
from pipelines.families.kobest.revision import (
    artifacts_step,
    candidates_step,
    duplicates_step,
    negated_test_step,
    revision_step,
    split_step,
)
from pipelines.families.kobest.rounds import configs, plan, preflight, rounds
from pipelines.families.kobest.tasks import KOBEST_TASKS, kobest_task
from pipelines.families.kobest.writing import prompts_step, reviewed_step, written_step
from pipelines.rebuild.kinds import TaskKind, register_task

# SentiNeg's test set (2.6): its own steps, registered for that task only
STEPS.add("kobest-sentineg:candidates", candidates_step,
          (candidates_step.__doc__ or "").split("\n")[0])  # fmt: skip
STEPS.add("kobest-sentineg:negated", negated_test_step,
          (negated_test_step.__doc__ or "").split("\n")[0])  # fmt: skip
for _step, _fn in (
    ("prompts", prompts_step),
    ("written", written_step),
    ("reviewed", reviewed_step),
    ("duplicates", duplicates_step),
    ("split", split_step),
    ("artifacts", artifacts_step),
    ("revision", revision_step),
    ("export", export_step),
):
    for _name in KOBEST_TASKS.names():
        STEPS.add(f"kobest-{_name}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])

# the Hub's card (pipelines.export.hf_card): the paper's BibTeX
BIBTEX = """@inproceedings{kim2022kobest,
  title = {{KoBEST}: {K}orean Balanced Evaluation of Significant Tasks},
  author = {Kim, Dohyeong and Jang, Myeongjun and Kwon, Deuk Sin and Davis, Eric},
  booktitle = {Proceedings of the 29th International Conference on Computational Linguistics},
  year = {2022}
}"""

# how each release is scored: F1 for all five tasks (KoBEST 2.7, Table 1, Table 4; macro-F1
# as KoBEST's lm-eval tasks compute it), with the prompts of Table 7. The layout has no
# id, so a guid is the item's line in its split's file; the two multiple-choice tasks
# are scored as choices, the three others as classes "0"/"1"
_SOURCE = "KoBEST (Kim et al. 2022) 2.7, Table 4; prompts Table 7"
EVALUATIONS = {
    "boolq": classification(
        "", "label", "paragraph", ["macro_f1"], _SOURCE, text_pair="question",
        # the harness's own kobest_boolq prompt, its trailing space included
        labels=("0", "1"), prompt="{{paragraph}} 질문: {{question}} 답변: ",
        harness_choices=("아니오", "예"),
    ),
    "copa": multiple_choice(
        "", "label", lambda r: f"{r['premise']} ({r['question']})",
        ["alternative_1", "alternative_2"], ["macro_f1"], _SOURCE,
        prompt="{{premise}} {% if question == '원인' %}왜냐하면{% else %}그래서{% endif %}",
    ),
    "wic": classification(
        "", "label", "context_1", ["macro_f1"], _SOURCE, text_pair="context_2",
        labels=("0", "1"), prompt="문장1: {{context_1}} 문장2: {{context_2}} 두 문장에서 "
        "{{word}}가 같은 뜻으로 쓰였나?", harness_choices=("아니오", "예"),
    ),
    "hellaswag": multiple_choice(
        "", "label", "context", [f"ending_{i}" for i in range(1, 5)], ["macro_f1"], _SOURCE,
        prompt="문장: {{context}}", harness_metrics=("acc_norm",),
    ),
    "sentineg": classification(
        "", "label", "sentence", ["macro_f1"], _SOURCE, labels=("0", "1"),
        prompt="문장: {{sentence}} 긍부정:", harness_choices=("부정", "긍정"),
    ),
}  # fmt: skip

for _name in KOBEST_TASKS.names():
    _t = kobest_task(_name)
    register_task(
        TaskKind(
            name=f"kobest-{_name}",
            title=f"KoBEST {_t.title} (Kim et al. 2022, {_t.section})",
            layout="kobest",
            steps=[],
            plan=plan,
            rounds=rounds,
            card=card,
            # issue 54: the prompt fixes the label; the rounds write the texts
            hub={
                "task_categories": [_t.hub_category],
                "citation": BIBTEX,
                "fields": {"label": "template", "version": "derived", "converted_from": "derived"},
            },
            needs=["kobest", "split"],
            simulated=lambda recipe: any(
                getattr(recipe.kobest, f"{n}_round") is not None
                and getattr(recipe.kobest, f"{n}_round").simulate is not None
                for n in ("writing", "review", "revision")
            ),
            preflight=preflight,
            configs=configs,
            evaluation=EVALUATIONS.get(_name),
        )
    )
