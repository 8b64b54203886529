"""The papers' ledgers (issue 52, ``docs/papers/<paper>.md``): every rule, threshold,
count, metric and table of the five papers has a row naming the code and the test that
follow it, or why not. The checks live in ``scripts/paper_ledgers.py`` (run it to see the
rows by status); this test fails on any row that names a file, function or test that does
not exist, has a status outside the four, or is not *followed* and does not say why, and,
where the papers' plain-text copies are on the machine, on a quote the paper does not
print."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("paper_ledgers", ROOT / "scripts/paper_ledgers.py")
ledgers = importlib.util.module_from_spec(_spec)
sys.modules["paper_ledgers"] = ledgers
_spec.loader.exec_module(ledgers)


@pytest.mark.parametrize("name", sorted(ledgers.PAPER_OF))
def test_every_paper_has_a_ledger_with_rows(name):
    file = ledgers.LEDGERS / name
    assert file.is_file(), f"docs/papers/{name} is missing"
    assert len(ledgers.rows(file)) >= 10, f"docs/papers/{name} has almost no rows"


def test_every_row_names_code_and_tests_that_exist_and_says_why():
    found = [
        f"{row.at}: {p}"
        for row in ledgers.all_rows()
        for p in ledgers.problems(row, check_quotes=False)
    ]
    assert not found, "\n".join(found)


def test_row_ids_are_unique_within_a_ledger():
    rows = ledgers.all_rows()
    seen = {(r.ledger, r.id) for r in rows}
    assert len(seen) == len(rows)


def test_quotes_are_the_papers_words():
    if not ledgers.PAPERS.is_dir():
        pytest.skip("the papers' plain-text copies (../shared/papers) are not on this machine")
    found = [
        f"{row.at}: {p}"
        for row in ledgers.all_rows()
        for p in ledgers.problems(row)
        if p.startswith("the paper does not say")
    ]
    assert not found, "\n".join(found)


def test_the_checker_catches_what_it_should(tmp_path):
    """The checks are not vacuous: a made-up function, test, status and quote are caught."""
    row = ledgers.Row(
        "klue.md", 1, "K0", '"Char F1 is an average of made-up words"', "3.4.2",
        "`pipelines/evaluation/metrics.py:no_such_function`",
        "`tests/unit/evaluation/test_metrics.py::test_no_such_test`", "mostly", "",
    )  # fmt: skip
    found = " ".join(ledgers.problems(row))
    assert "defines no no_such_function" in found
    assert "has no test test_no_such_test" in found
    assert "is not one of" in found
    if ledgers.PAPERS.is_dir():
        assert "the paper does not say" in found
    good = ledgers.Row(
        "klue.md", 1, "K0", '"We exclude the majority negative entity class (O)"', "3.4.2",
        "`pipelines/evaluation/metrics.py:char_macro_f1`",
        "`tests/unit/test_paper_ledgers.py::test_the_checker_catches_what_it_should`",
        "followed", "",
    )  # fmt: skip
    assert ledgers.problems(good) == []
