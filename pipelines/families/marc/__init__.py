"""MARC-ja (JGLUE 3.1, Kurihara et al. 2022): the ``marc-ja`` task kind. Reviews with
star ratings become positive or negative by their rating (3 stars not used); train
keeps those labels; dev and test are relabelled by 10 crowdworkers and kept when 7
agree; the card reports how often the crowd's label is not the rating's.

Steps: ``ingest`` (the shared one: the recipe's review corpora, one review a unit, the
noise, dedup and PII filters) -> ``reviews`` -> ``split`` -> ``crowd-items`` -> the
relabelling round (``push`` ... ``pull``: ``annotation_configs/marc_ja.xml``, JGLUE's
guideline) -> ``agree`` (the shared ``majority`` rule, ``min_votes: 7``) -> ``labels``
-> ``export`` (:mod:`.export`). Modules: :mod:`.section` (the ``marc:`` recipe
section), :mod:`.steps`, :mod:`.export`, :mod:`.card`.

MARC was withdrawn by Amazon (the JGLUE README says so), so no Japanese review corpus
ships; the demo runs the same recipe on NSMC's Korean movie reviews (ratings 1-10),
labelled as a stand-in in the recipe and its card.
"""

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import JGLUE_FILES, classification
from pipelines.export.citations import JGLUE_BIBTEX
from pipelines.families.marc import section  # noqa: F401 - the recipe section
from pipelines.families.marc.card import card
from pipelines.families.marc.export import export_step
from pipelines.families.marc.steps import (
    crowd_items_step,
    labels_step,
    reviews_step,
    rounds,
    split_step,
)
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound

for _step, _fn in (
    ("reviews", reviews_step),
    ("split", split_step),
    ("crowd-items", crowd_items_step),
    ("labels", labels_step),
    ("export", export_step),
):
    STEPS.add(f"marc-ja:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])

register_task(
    TaskKind(
        name="marc-ja",
        title="JGLUE MARC-ja: review sentiment from star ratings, dev/test relabelled by the "
        "crowd (Kurihara et al. 2022, 3.1)",
        layout="jglue-marc-ja",
        steps=[
            "ingest",
            "reviews",
            "split",
            "crowd-items",
            LabelStudioRound(),
            "agree",
            "labels",
            "export",
        ],
        # JGLUE 3.1: accuracy
        evaluation=classification(
            "review_id",
            "label",
            "sentence",
            ["accuracy"],
            "JGLUE (Kurihara et al. 2022) 3.1",
            files=dict(JGLUE_FILES),
            labels=("negative", "positive"),
            prompt="レビュー: {{sentence}}\n評価:",
            harness_choices=("ネガティブ", "ポジティブ"),
            # issue 54: the demo's stand-in reviews are Korean (NSMC); so is its prompt
            harness_languages={"ko": ("리뷰: {{sentence}}\n평가:", ("부정", "긍정"))},
        ),
        rounds=rounds,
        card=card,
        needs=["annotation", "agreement", "split", "marc"],
        # issue 54: train's labels are the ratings converted (JGLUE 3.1.1), dev's and
        # test's the raters' (3.1.2)
        hub={
            "task_categories": ["text-classification"],
            "citation": JGLUE_BIBTEX,
            "fields": {
                "label": {"train": "source", "dev": "annotated", "test": "annotated"},
                "rating": "source",
                "rating_label": "derived",
                "crowd_label": "annotated",
                "group": "derived",
            },
        },
    )
)
