"""Issue 56: the card's toxic-content section states what the run's files show: off with
the recipe's reason, on with each detector's figures and drops, and the corpora it did
not score with their reasons (from the committed demo cards' facts)."""

from __future__ import annotations

import json
from pathlib import Path

from pipelines.export.data_card import _classifiers

ROOT = Path(__file__).resolve().parents[3]


def _facts(demo: str) -> dict:
    return json.loads((ROOT / "data_cards" / demo / "dataset" / "card.json").read_text("utf-8"))


def test_on_the_section_shows_each_detector_and_what_it_dropped():
    facts = _facts("sts-demo")
    text = _classifiers(facts)
    stage = next(s for s in facts["ingest"]["stages"] if s["stage"] == "classify")
    assert "ran on the ingested sentences" in text
    for name in ("gender_bias", "hate"):
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
        assert row.endswith(f"| {stage['dropped'].get(name, 0)} |")
        assert "built-in (char-ngram-svm" in row
    assert "Not run on" not in text  # nsmc and parakqc are both scored


def test_a_skipped_corpus_is_listed_with_its_reason():
    facts = _facts("tc-demo")  # its one corpus stands in for YNA's headlines: skipped
    text = _classifiers(facts)
    assert "Not run on:" in text
    assert "- `khs-news-titles`: these headlines stand in for YNA's" in text
    assert all(line.endswith("| 0 |") for line in text.splitlines()
               if line.startswith(("| gender_bias |", "| hate |")))  # fmt: skip


def test_off_the_section_gives_the_recipes_reason():
    facts = _facts("kornli-demo")
    text = _classifiers(facts)
    assert text.startswith("The toxic-content filter was **off** for this rebuild: KorNLI")
    facts["recipe"]["filters"]["classifiers"]["reason"] = "<b>x</b>"
    assert "&lt;b&gt;x&lt;/b&gt;" in _classifiers(facts)  # recipe text escaped
