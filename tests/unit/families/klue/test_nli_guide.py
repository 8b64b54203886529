"""KLUE 3.3.1: "We prepare guidelines with specific Dos and Don'ts, and rigorously train
the workers in advance." The NLI demo shows a guideline before both rounds (writing and
validation) with the paper's label criteria and its instructions for writing."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pipelines.annotation.guidelines import round_guideline
from pipelines.core.recipe import load_recipe
from pipelines.families.klue.nli import rounds
from pipelines.rebuild.people import with_people_rounds

ROOT = Path(__file__).resolve().parents[4]


def test_both_nli_rounds_show_the_guideline(tmp_path):
    recipe = load_recipe(ROOT / "recipes" / "nli-demo.yaml")
    ctx = SimpleNamespace(recipe=recipe, out=tmp_path, simulated=True,
                          project=recipe.name, project_base=recipe.name)  # fmt: skip
    shown = with_people_rounds(ctx, rounds(ctx))
    guides = ROOT / "annotation_configs" / "guidelines"
    shows = {name: round_guideline(r.config, r.guideline).path for name, r in shown.items()}
    assert shows["writing"] == guides / "nli_hypothesis.md"  # the writers'
    assert shows[""] == shows["pilot"] == guides / "nli_validation.md"  # the validators'


def test_the_guideline_gives_klues_criteria_dos_and_donts():
    text = " ".join((ROOT / "annotation_configs/guidelines/nli_hypothesis.md").read_text(
        encoding="utf-8").split())  # fmt: skip
    validation = " ".join((ROOT / "annotation_configs/guidelines/nli_validation.md").read_text(
        encoding="utf-8").split())  # fmt: skip
    for words in (
        "The hypothesis is necessarily true given the premise is true",
        "The hypothesis may or may not be true given the premise is true",
    ):
        assert words in validation, words
    # the criteria, in the paper's words (after Williams et al.)
    for words in ("The hypothesis is necessarily true given the premise is true",
                  "The hypothesis is necessarily false given the premise is true",
                  "The hypothesis may or may not be true given the premise is true",
                  # what the annotators are told to do and not to do
                  "similar lengths across the classes",
                  "Refrain from inserting certain lexical items repeatedly",
                  "as diverse strategies as possible when making inferences",
                  "synonyms/antonyms", "word scrambling", "voice alteration",
                  "causative alternation", "time", "quantity", "geography",
                  "Maintain the writing style of the premise",
                  "semantically unacceptable sentence",
                  "demonstrative pronoun not used in the premise",
                  "difficult to understand", "hate speech", "social bias",
                  "personally identifiable information"):  # fmt: skip
        assert words in text, words
    assert "반드시 참" in text and "반드시 거짓" in text  # in Korean for the annotators
