"""KorSTS and KorNLI (Ham et al. 2020): a benchmark translated from English, the
``korsts`` and ``kornli`` task kinds.

Steps: ``mt-model`` (train the translator here when the recipe says ``translation.train``)
-> ``translate`` (every English sentence on its own: translation memory first, then the
machine translator, through the SQLite cache) -> ``postedit`` (the items of two
post-editors, each half of the pairs) -> the two post-editing rounds (``postedit-a``,
``postedit-b``) -> ``crosscheck`` (each half goes to the other post-editor) -> the two
cross-check rounds (``crosscheck-a``, ``crosscheck-b``) -> ``qa`` (translation QA and the
label-risk checks, ``pipelines.quality.translation_qa``) -> ``export`` (the KorSTS or
KorNLI layout, Parquet and JSON Lines, and the data card).

Ham et al. 2020, 3.1: the training sets were machine-translated; the dev and test sets
were machine-translated, then post-edited by professional translators; 3.1.1: two
translators, each of whom post-edited half and cross-checked the other half. A recipe's
``translation.mt_only_splits`` (default ``[train]``, the paper's) are the splits whose
pairs are machine translated only: their sentences never go to the post-editing rounds,
and a recipe of such splits alone has no Label Studio round. The labels are the English pairs'
(label carry-over): post-editors never see them. Every pair keeps its row in the English
file, its split, and, per sentence, how it was translated (memory exact/fuzzy with its
score, or the model), who post-edited and who reviewed it.

Each round is a Label Studio project of its own (``<prefix>-postedit-a`` ...), so that
each translator is given exactly their half. Simulated post-editors (demos and tests,
``translation.postedit.simulate``) have the reference corpus's human translation
(``translation.reference``, e.g. the KorSTS release aligned row by row with STS-B) as
their latent target: a draft whose chrF against it is at least ``close_chrf`` is left as
it is with probability ``keep_close_rate``, else replaced by the target; the reviewer
does the same with the post-edit. The card says so.

Modules: :mod:`.section` (the ``translation:`` recipe section), :mod:`.sources` (the
English pairs and the reference), :mod:`.translate` (the rounds and the translation and
post-editing steps), :mod:`.qa` (QA and the relabel round), :mod:`.export` (the release)
and :mod:`.card` with ``card.md.j2`` (the card). This module registers the two task
kinds.
"""

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import classification, regression
from pipelines.families.kornlu import section  # noqa: F401 - the recipe section
from pipelines.families.kornlu.card import card
from pipelines.families.kornlu.export import export_step, kornli_records, korsts_records
from pipelines.families.kornlu.qa import qa_step, relabel_step
from pipelines.families.kornlu.sources import HALVES, LABEL_FIELDS, LABELS, preflight
from pipelines.families.kornlu.translate import (
    configs,
    crosscheck_step,
    mt_model_step,
    plan,
    postedit_step,
    rounds,
    translate_step,
)
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound

# the Hub's card (pipelines.export.hf_card): the task category and the paper's BibTeX
HUB_CATEGORY = {"korsts": "sentence-similarity", "kornli": "text-classification"}
BIBTEX = """@inproceedings{ham2020kornli,
  title = {{KorNLI} and {KorSTS}: New Benchmark Datasets for {K}orean Natural Language
           Understanding},
  author = {Ham, Jiyeon and Choe, Yo Joong and Park, Kyubyong and Choi, Ilji and Soh, Hyungjoon},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2020},
  year = {2020}
}"""

STEP_NAMES = ["mt-model", "translate", "postedit",
              *[LabelStudioRound(f"postedit-{h}") for h in HALVES],
              "crosscheck",
              *[LabelStudioRound(f"crosscheck-{h}") for h in HALVES],
              "qa", "relabel", "export"]  # fmt: skip

# how each release is scored (Ham et al. 2020, 4): KorNLI by accuracy, KorSTS by
# Spearman's correlation x 100; the layouts have no id, so a guid is the line number
EVALUATIONS = {
    "korsts": regression(
        "", "score", "sentence1", "sentence2", ["spearman"], "KorNLI and KorSTS (Ham et al. "
        "2020) 4", prompt="문장 1: {{sentence1}}\n문장 2: {{sentence2}}",
    ),
    "kornli": classification(
        "", "gold_label", "sentence1", ["accuracy"], "KorNLI and KorSTS (Ham et al. 2020) 4",
        text_pair="sentence2", labels=("contradiction", "entailment", "neutral"),
        prompt="전제: {{sentence1}}\n가설: {{sentence2}}\n관계:",
        harness_choices=("모순", "함의", "중립"),
    ),
}  # fmt: skip

for _name, _title, _records_fn in (
    ("korsts", "KorSTS-style translated semantic textual similarity (Ham et al. 2020)",
     korsts_records),
    ("kornli", "KorNLI-style translated natural language inference (Ham et al. 2020)",
     kornli_records),
):  # fmt: skip
    for _step, _fn in (("mt-model", mt_model_step), ("translate", translate_step),
                       ("postedit", postedit_step), ("crosscheck", crosscheck_step),
                       ("qa", qa_step), ("relabel", relabel_step),
                       ("export", export_step)):  # fmt: skip
        STEPS.add(f"{_name}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])
    register_task(TaskKind(
        name=_name, title=_title, layout=_name, steps=STEP_NAMES, rounds=rounds,
        card=card,
        # issue 54: machine translations post-edited in Label Studio; the English
        # pairs' own labels carried over
        hub={"task_categories": [HUB_CATEGORY[_name]], "citation": BIBTEX,
             "fields": {"sentence1": "machine", "sentence2": "machine",
                        "gold_label": "source", "score": "source", "label": "source"}},
        needs=["translation"],
        simulated=lambda recipe: bool(recipe.translation and recipe.translation.postedit.simulate),
        preflight=lambda recipe, n=_name: preflight(recipe, LABELS[n] is None, LABEL_FIELDS[n]),
        configs=configs,
        plan=lambda recipe: plan(recipe, STEP_NAMES),
        evaluation=EVALUATIONS[_name],
    ))  # fmt: skip
