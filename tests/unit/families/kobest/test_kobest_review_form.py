"""KoBEST's review forms (issue 55): each task's ``reason`` control lists only the reasons
that apply to that task (COPA's review used to carry SentiNeg's ``not_negated``), shown
in Korean with the stable code as alias, and every reason the simulated linguists give
for the task is one of its form's options (else the simulator would answer at random)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from pipelines.annotation.label_config import parse_label_config
from pipelines.families.kobest import simulate as sim
from pipelines.families.kobest.rounds import CONFIGS

ROOT = Path(__file__).resolve().parents[4]
TASKS = ("boolq", "copa", "wic", "hellaswag", "sentineg")
COMMON = {"spelling", "guideline", "ambiguous", "wrong_label", "cue", "other"}
# the reasons that belong to one task only (BoolQ's paragraph and HellaSwag's context can
# lack the clue, 2.2 / 3.4; a WiC 'different' item can use one sense; SentiNeg's sentence
# can fail to negate, 2.6)
OWN = {"boolq": {"no_clue"}, "hellaswag": {"no_clue"}, "wic": {"same_sense"},
       "sentineg": {"not_negated"}, "copa": set()}  # fmt: skip
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _reason(task: str):  # noqa: ANN202
    config = parse_label_config(CONFIGS / f"kobest_{task}_review.xml")
    return next(c for c in config.controls if c.name == "reason")


@pytest.mark.parametrize("task", TASKS)
def test_each_review_form_lists_only_its_tasks_reasons(task: str) -> None:
    assert set(_reason(task).options) == COMMON | OWN[task]
    decision = next(
        c
        for c in parse_label_config(CONFIGS / f"kobest_{task}_review.xml").controls
        if c.name == "decision"
    )
    assert decision.options == ("accept", "edit", "reject")


def test_copa_and_wic_forms_no_longer_carry_other_tasks_reasons() -> None:
    assert "not_negated" not in _reason("copa").options
    assert not {"no_clue", "not_negated"} & set(_reason("wic").options)
    assert "no_clue" not in _reason("sentineg").options


@pytest.mark.parametrize("task", TASKS)
def test_reasons_are_shown_in_korean_with_the_code_as_alias(task: str) -> None:
    import xml.etree.ElementTree as ET

    root = ET.parse(CONFIGS / f"kobest_{task}_review.xml").getroot()
    for control in root.iter("Choices"):
        for choice in control.iter("Choice"):
            assert choice.get("alias"), (control.get("name"), choice.get("value"))
            assert HANGUL.search(choice.get("value", "")), choice.get("alias")


@pytest.mark.parametrize("task", ("boolq", "copa", "wic", "hellaswag"))
def test_every_reason_the_simulated_linguists_give_is_on_the_form(task: str) -> None:
    seeds = sim.read_seeds(ROOT / "data" / "demo" / "kobest" / f"{task}_seeds.jsonl", task)
    reviewed = seeds[seeds["plant"].isin(["review_reject", "review_edit"])]
    given = {str(r) for r in reviewed["reason"] if isinstance(r, str) and r}
    assert given, f"{task}: the demo plants reviewed items with a reason"
    assert given <= set(_reason(task).options)


def test_the_simulated_sentineg_linguists_reason_is_on_its_form() -> None:
    prompts = pd.DataFrame(
        {
            "item_id": ["a", "b"],
            "original": ["재밌어요", "영화"],
            "draft": ["재미없어요", "영화"],
            "draft_method": ["antonym", "none"],
            "label": [0, 1],
        }
    )
    latent = sim.sentineg_latent(prompts, 0, 0, 0, 0)
    given = {r for r in latent["sim_reason"] if r}
    assert given == {"not_negated"} and given <= set(_reason("sentineg").options)
