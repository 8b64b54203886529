"""JGLUE's JSTS and JNLI (Kurihara et al. 2022, 3.2): the ``jsts`` and ``jnli`` task
kinds, on the construction rules of ``pipelines.families.jglue.construct``.

The source corpus is the captions of YJ Captions, recovered per image from the JGLUE
release files the recipe names (``jglue.releases``: each pair's ``yjcaptions_id`` names
its image and captions). Both kinds start with ``captions`` (the captions, those not in
the recipe's language dropped with their script share) and end with ``split`` (the
recipe's split rule, grouped by image so that no image straddles two splits) and
``export`` (JGLUE's layout: ``sentence_pair_id, yjcaptions_id, sentence1, sentence2,
label`` as JSON Lines per split, train / valid / test).

``jsts``: ``captions`` -> ``pairs`` (JSTS-A and JSTS-B) -> (with ``jglue.jsts_c``, the
paper's JSTS: ``writing-items`` -> the ``writing`` round -> ``written`` -> the
``validation`` round -> ``validation``: JSTS-C's contradictions, as for JNLI) -> the
``sts`` round (5 raters, ``jsts.xml``; A, B and C pairs) -> ``sts`` (mean, variance
rule) -> ``split`` -> ``export``.

``jnli``: ``captions`` -> ``pairs`` (one-image pairs in both directions) -> the ``nli``
round (10 annotators, ``jnli_judgement.xml``) -> ``nli`` (6 of 10, entailment or
neutral) -> ``writing-items`` -> the ``writing`` round (four contradictions per caption,
``jnli_contradiction.xml``) -> ``written`` (edit distance rule) -> the ``validation``
round (10 annotators) -> ``validation`` (6 of 10 say contradiction; reverse added) -> the
``sts`` round on the contradictions -> ``sts`` (JSTS-C, the JSTS rule) -> ``split`` ->
``export`` (JNLI, and JSTS-C in the JSTS layout).

Both end, with ``jglue.final_check`` (the paper's), with 3.2.2's last filter before
``split``: ``check-items`` (automatic matching) -> the ``check`` round (a person keeps or
removes each matched pair, ``jglue_check.xml``) -> ``check`` (:mod:`.check`).

Modules: :mod:`.release` reads the JGLUE release files, :mod:`.construct` holds the
construction rules of JGLUE 3.2, :mod:`.section` the ``jglue:`` recipe section,
:mod:`.rounds` the Label Studio rounds, :mod:`.steps` the captions, pairs and STS steps,
:mod:`.nli` JNLI's steps, :mod:`.export` the split and the release, :mod:`.card` with
``card.md.j2`` the card. This module registers the two task kinds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipelines.core.steps import STEPS
from pipelines.evaluation.spec import JGLUE_FILES, classification, regression
from pipelines.export.citations import JGLUE_BIBTEX
from pipelines.families.jglue import section  # noqa: F401 - the recipe section
from pipelines.families.jglue.card import card
from pipelines.families.jglue.check import check_items_step, check_step
from pipelines.families.jglue.export import export_step, split_step
from pipelines.families.jglue.nli import nli_step, validation_step, writing_items_step, written_step
from pipelines.families.jglue.rounds import configs, preflight, rounds, task_rounds
from pipelines.families.jglue.steps import captions_step, pairs_step, sts_step
from pipelines.rebuild.kinds import TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

for _step, _fn in (
    ("captions", captions_step),
    ("pairs", pairs_step),
    ("sts", sts_step),
    ("nli", nli_step),
    ("writing-items", writing_items_step),
    ("written", written_step),
    ("validation", validation_step),
    ("check-items", check_items_step),
    ("check", check_step),
    ("split", split_step),
    ("export", export_step),
):
    for _kind in ("jsts", "jnli"):
        STEPS.add(f"{_kind}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])


# the Hub's card (pipelines.export.hf_card): the task category and the paper's BibTeX
HUB_CATEGORY = {"jsts": "sentence-similarity", "jnli": "text-classification"}
BIBTEX = JGLUE_BIBTEX

# how each release is scored (JGLUE 3.2.3): JSTS by Pearson and Spearman, JNLI by
# accuracy; the release files are JGLUE's train.json/valid.json/test.json
EVALUATIONS = {
    "jsts": regression(
        "sentence_pair_id", "label", "sentence1", "sentence2", ["pearson", "spearman"],
        "JGLUE (Kurihara et al. 2022) 3.2.3", files=dict(JGLUE_FILES),
        prompt="文1: {{sentence1}}\n文2: {{sentence2}}",
    ),
    "jnli": classification(
        "sentence_pair_id", "label", "sentence1", ["accuracy"],
        "JGLUE (Kurihara et al. 2022) 3.2.3", text_pair="sentence2",
        files=dict(JGLUE_FILES), labels=("contradiction", "entailment", "neutral"),
        prompt="前提: {{sentence1}}\n仮説: {{sentence2}}\n関係:",
        harness_choices=("矛盾", "含意", "中立"),
    ),
}  # fmt: skip

# JSTS-C's steps (JGLUE 3.2.2 steps 4 and 5), JNLI's contradictions: written, checked by
# the edit-distance rule, validated one way (the reverse added for JNLI)
CONTRADICTION_STEPS = ["writing-items", LabelStudioRound("writing"), "written",
                       LabelStudioRound("validation"), "validation"]  # fmt: skip


# the last filter (3.2.2): automatic matching, then a person checks what matched
CHECK_STEPS = ["check-items", LabelStudioRound("check"), "check"]
JNLI_STEPS = ["captions", "pairs", LabelStudioRound("nli"), "nli", *CONTRADICTION_STEPS,
              LabelStudioRound("sts"), "sts"]  # fmt: skip


def plan(recipe: Recipe) -> list[PlanEntry]:
    """A rebuild's steps: ``jsts`` with ``jglue.jsts_c`` (the paper's JSTS, 3.2.2) writes
    and validates contradictions before the STS round rates A, B and C; with
    ``jglue.final_check`` the automatic matching and the manual check come before the
    split (:mod:`.check`)."""
    names = task_rounds(recipe)
    check = CHECK_STEPS if "check" in names else []
    if recipe.task == "jnli":
        return [*JNLI_STEPS, *check, "split", "export"]
    extra = CONTRADICTION_STEPS if "validation" in names else []
    return ["captions", "pairs", *extra, LabelStudioRound("sts"), "sts", *check, "split", "export"]


for _kind, _steps, _title in (
    (
        "jsts",
        [
            "captions",
            "pairs",
            *CONTRADICTION_STEPS,
            LabelStudioRound("sts"),
            "sts",
            *CHECK_STEPS,
            "split",
            "export",
        ],  # fmt: skip
        "JGLUE JSTS: semantic textual similarity of image captions (Kurihara et al. 2022, 3.2.2)",
    ),
    (
        "jnli",
        [*JNLI_STEPS, *CHECK_STEPS, "split", "export"],
        "JGLUE JNLI: inference between image captions (Kurihara et al. 2022, 3.2.2)",
    ),
):
    register_task(
        TaskKind(
            name=_kind,
            title=_title,
            layout="jglue",
            steps=_steps,
            rounds=rounds,
            card=card,
            hub={"task_categories": [HUB_CATEGORY[_kind]], "citation": BIBTEX},
            needs=["jglue", "split"],
            simulated=lambda recipe: any(
                getattr(recipe.jglue, f"{n}_round") is not None
                and getattr(recipe.jglue, f"{n}_round").simulate is not None
                for n in task_rounds(recipe)
            ),
            preflight=preflight,
            configs=configs,
            plan=plan,
            evaluation=EVALUATIONS[_kind],
        )
    )
