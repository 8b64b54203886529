"""Property-based tests (hypothesis) of the readers and the agreement inputs (issue 32):
whatever bytes a corpus line or an annotation holds, the answer is the data read back
exactly or an error of the project's own kind naming the file, line or row, never a
traceback of another kind."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.agreement.rules import AgreementError, AgreementSettings, agree
from pipelines.core.line_files import InputError, iter_rows

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=40)


@FAST
@given(st.lists(st.fixed_dictionaries({"id": st.integers(0, 10**6), "text": TEXT}),
                min_size=1, max_size=8))  # fmt: skip
def test_json_lines_read_back_exactly(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("jsonl") / "c.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")  # fmt: skip
    read = [r for _, r in iter_rows(path, "jsonl") if r is not None]
    assert read == records


@FAST
@given(st.binary(min_size=1, max_size=60))
def test_any_bytes_are_data_or_an_error_naming_the_line(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("bytes") / "c.jsonl"
    path.write_bytes(b'{"text": "ok"}\n' + blob + b"\n")
    try:
        rows = list(iter_rows(path, "jsonl"))
    except InputError as exc:
        assert str(path) in str(exc) and ":" in str(exc)
    else:
        assert rows[0] == (1, {"text": "ok"})


VALUES = st.one_of(st.none(), st.integers(-3, 8), st.floats(allow_infinity=False),
                   st.sampled_from(["0", "5", "2.5", "x", "", "nan", "inf"]))  # fmt: skip


@FAST
@given(st.lists(st.tuples(st.sampled_from(["i1", "i2", "i3"]),
                          st.sampled_from(["a", "b", "c", "d"]), VALUES),
                min_size=1, max_size=24, unique_by=lambda t: (t[0], t[1])))  # fmt: skip
def test_agreement_inputs_are_gold_or_an_error_naming_the_row(rows):
    frame = pd.DataFrame(rows, columns=["item_id", "annotator_id", "value"])
    try:
        result = agree(frame, AgreementSettings(rule="mean", sd_max=None))
    except AgreementError as exc:
        assert str(exc)
        return
    gold = result["gold"]
    assert gold["item_id"].is_unique
    assert all(math.isfinite(float(v)) for v in gold["label"]) if "label" in gold else True
    blank = sum(v is None or (isinstance(v, float) and math.isnan(v)) or v == "" for *_, v in rows)
    dropped = result["dropped"]
    assert (dropped["kind"] == "rating").sum() == blank  # nothing dropped silently
    assert result["figures"]["ratings"] == len(rows) - blank


def test_jcqa_questions_that_are_not_text_or_labels_out_of_range_name_the_line(tmp_path):
    """Case 10/12: ``"question": null`` was a TypeError; label 9 and a repeated q_id
    were accepted."""
    from pipelines.families.jcqa.filters import JcqaError, read_questions

    good = {"q_id": 1, "question": "問い", **{f"choice{i}": f"c{i}" for i in range(5)},
            "label": 2}  # fmt: skip
    cases = [({**good, "question": None}, "question is None, not text"),
             ({**good, "label": 9}, "label 9 is not one of 0-4")]  # fmt: skip
    for bad, message in cases:
        path = tmp_path / "q.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps({**bad, "q_id": 2}) + "\n")
        with pytest.raises(JcqaError, match=f"q.jsonl:2: {message}"):
            read_questions(path)
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n")
    with pytest.raises(JcqaError, match="q.jsonl:2: q_id 1 repeats line 1"):
        read_questions(path)


@pytest.mark.parametrize("threshold", [-1, 0, 1.5])
def test_a_near_duplicate_threshold_out_of_range_is_a_clear_error(threshold):
    """Case 10: ``split --near-duplicate-threshold -1`` was datasketch's ValueError."""
    from pipelines.splits.base import SplitError, SplitSettings

    with pytest.raises(SplitError, match="near_duplicate_threshold must be in"):
        SplitSettings(rule="random", near_duplicate_threshold=threshold)


def test_the_recipe_reader_takes_every_shipped_recipe():
    from pipelines.core.recipe import load_recipe

    for path in sorted((Path(__file__).resolve().parents[2] / "recipes").glob("*.yaml")):
        load_recipe(path)
