"""The one attachment count behind every UAS and LAS (``pipelines.models.attachment``)."""

from __future__ import annotations

import pytest

from pipelines.models.attachment import attachment, attachment_counts, right_branching


def test_a_label_counts_only_with_the_right_head() -> None:
    gold = [(2, "NP_SBJ"), (3, "NP_OBJ"), (0, "VP")]
    pred = [(2, "NP_OBJ"), (1, "NP_OBJ"), (0, "VP")]  # head right label wrong; head wrong
    assert attachment_counts([(gold, pred)]) == (3, 2, 1)
    s = attachment([[2, 3, 0]], [["NP_SBJ", "NP_OBJ", "VP"]], [[2, 1, 0]],
                   [["NP_OBJ", "NP_OBJ", "VP"]], 100, 2)  # fmt: skip
    assert s == {"words": 3, "uas": 66.67, "las": 33.33}


def test_trees_of_different_lengths_are_an_error_unless_asked() -> None:
    with pytest.raises(ValueError):
        attachment_counts([([(0, "VP")], [(2, "NP"), (0, "VP")])])
    assert attachment_counts([([(0, "VP")], [(2, "NP"), (0, "VP")])], strict=False) == (1, 0, 0)
    assert attachment([], [], [], []) == {"words": 0, "uas": None, "las": None}
    assert right_branching([3, 1]) == [[2, 3, 0], [0]]
