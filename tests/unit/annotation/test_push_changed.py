"""``annotate push`` says which items already in a project hold other data than the
task pushed for them (the items changed since; the task is never pushed twice)."""

from __future__ import annotations

from pipelines.annotation.annotate import changed_items


def test_changed_items_compare_the_task_data_as_canonical_json():
    stored = {"a": {"item_id": "a", "text": "가", "n": 1, "tags": ["x"]},
              "b": {"item_id": "b", "text": "나", "n": None}}  # fmt: skip
    same = [{"data": {"n": 1, "tags": ["x"], "text": "가", "item_id": "a"}},  # key order
            {"data": {"item_id": "b", "text": "나", "n": None}}]  # fmt: skip
    assert changed_items(same, stored) == []
    edited = [{"data": {"item_id": "a", "text": "가", "n": 2, "tags": ["x"]}},
              {"data": {"item_id": "b", "text": "다", "n": None}},
              {"data": {"item_id": "c", "text": "new"}}]  # fmt: skip
    assert changed_items(edited, stored) == ["a", "b"]  # c is new, not changed
