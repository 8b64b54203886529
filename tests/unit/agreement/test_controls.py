"""Control items (issue 35, item 2): the share shuffled into a round (at most 50%, the
issue's bad input), each annotator's accuracy on them at the screening threshold, and
the controls kept out of the round's annotations."""

from __future__ import annotations

import pandas as pd
import pytest

from pipelines.agreement.controls import control_accuracy, mix_controls, split_controls
from pipelines.agreement.qualification import QualificationError

ITEMS = pd.DataFrame({"item_id": [f"i{k}" for k in range(8)], "sentence": ["문장"] * 8})
CONTROLS = pd.DataFrame({"item_id": [f"c{k}" for k in range(6)], "sentence": ["통제"] * 6,
                         "value": ["0", "1", "2", "3", "4", "5"]})  # fmt: skip


def test_controls_are_shuffled_in_at_their_share_and_hidden_in_a_column():
    mixed = mix_controls(ITEMS, CONTROLS, 0.2, seed=0)
    assert mixed["is_control"].sum() == 2  # ceil(8 * 0.2 / 0.8)
    assert set(mixed.loc[~mixed["is_control"], "item_id"]) == set(ITEMS["item_id"])
    assert "value" not in mixed and mixed.loc[mixed["is_control"], "control_value"].notna().all()
    assert mixed["is_control"].tolist() != sorted(mixed["is_control"].tolist())  # shuffled
    assert mix_controls(ITEMS, CONTROLS, 0.2, seed=0).equals(mixed)  # seeded


def test_a_control_share_above_half_or_too_few_controls_is_an_error():
    with pytest.raises(QualificationError, match="at most 50%"):
        mix_controls(ITEMS, CONTROLS, 0.51, seed=0)
    twelve = pd.concat([CONTROLS, CONTROLS.assign(item_id=CONTROLS["item_id"] + "b")])
    assert mix_controls(ITEMS, twelve, 0.5, seed=0)["is_control"].sum() == 8  # half is allowed
    with pytest.raises(QualificationError, match="needs 8 control items; 6 given"):
        mix_controls(ITEMS, CONTROLS, 0.5, seed=0)
    with pytest.raises(QualificationError, match="share ids"):
        mix_controls(ITEMS, CONTROLS.assign(item_id=["i0", *CONTROLS["item_id"][1:]]), 0.1, 0)


def _round(answers: dict[str, list[str]]) -> pd.DataFrame:
    rows = [{"item_id": f"c{k}", "annotator_id": who, "value": v}
            for who, vs in answers.items() for k, v in enumerate(vs)]  # fmt: skip
    rows += [{"item_id": "i0", "annotator_id": who, "value": "2"} for who in answers]
    return pd.DataFrame(rows)


def test_control_accuracy_screens_at_its_threshold():
    table = _round({"careful": ["0", "1", "2", "3", "4", "5"],  # 6 of 6
                    "edge": ["0", "1", "2", "3", "5", "4"],  # 4 of 6 = 0.667
                    "careless": ["5", "5", "5", "5", "5", "5"],  # 1 of 6
                    "new": ["0", "1"]})  # fmt: skip
    out = control_accuracy(table, CONTROLS, min_accuracy=4 / 6).set_index("annotator_id")
    assert out.loc["careful", "accuracy"] == 1.0 and not out.loc["careful", "screened"]
    assert not out.loc["edge", "screened"]  # exactly at the threshold stays
    assert out.loc["careless", "screened"] and out.loc["careless", "correct"] == 1
    assert not out.loc["new", "screened"] and "not judged" in out.loc["new", "why"]
    # "3" and "3.0" are the same rating
    assert (
        control_accuracy(_round({"x": ["0.0", "1", "2", "3", "4", "5"]}), CONTROLS, 1.0)[
            "correct"
        ].iloc[0]
        == 6
    )


def test_controls_never_enter_the_rounds_annotations():
    table = _round({"a": ["0", "1", "2", "3", "4", "5"]})
    rest, controls = split_controls(table, set(CONTROLS["item_id"]))
    assert len(rest) + len(controls) == len(table)
    assert set(rest["item_id"]) == {"i0"} and len(controls) == 6
