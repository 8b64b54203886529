"""Issue 54: ``card check`` fails on each defect the steward's review found, put back
into a committed demo card (``data_cards/``), with the release manifest refreshed so
that the check named is the one that catches it, not the file hashes.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipelines.export.card_check import check_card
from pipelines.export.manifest import refresh_release_manifest

CARDS = Path(__file__).resolve().parents[3] / "data_cards"


def _copy(demo: str, tmp: Path) -> Path:
    folder = tmp / demo
    shutil.copytree(CARDS / demo, folder)
    return folder


def _edit_card(folder: Path, old: str, new: str, count: int = 1) -> None:
    path = folder / "dataset" / "DATA_CARD.md"
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    refresh_release_manifest(folder / "dataset", ["DATA_CARD.md"])


def _edit_facts(folder: Path, change) -> None:
    path = folder / "dataset" / "card.json"
    facts = json.loads(path.read_text(encoding="utf-8"))
    change(facts)
    path.write_text(json.dumps(facts, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    refresh_release_manifest(folder / "dataset", ["card.json"])


def _mismatches(folder: Path) -> list[str]:
    result = check_card(folder)
    assert result.verified  # the manifest holds: the named check caught it
    return [str(m) for m in result.mismatches]


@pytest.mark.parametrize("demo", ["marc-ja-demo", "kobest-copa-demo", "sts-demo"])
def test_the_committed_card_passes(demo):
    assert check_card(CARDS / demo).ok


def test_artifact_report_sizes_that_are_not_the_releases(tmp_path):
    """MARC-ja's report said dev 42 / test 41 while the release holds 31 / 23: the
    report now says it reads the split as drawn; without that sentence, or with sizes
    of neither split, the check names it."""
    folder = _copy("marc-ja-demo", tmp_path)
    _edit_card(folder, "This report describes the split as drawn, before later rounds "
               "dropped items", "This report", count=-1)  # fmt: skip
    assert any("the split before the revisions" in m for m in _mismatches(folder))
    folder = _copy("sts-demo", tmp_path / "b")
    text = (folder / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    dev = re.search(r"^\| dev \| (\d+) \|$", text.split("#### Split sizes")[1], re.M)
    _edit_card(folder, f"| dev | {dev.group(1)} |\n", f"| dev | {int(dev.group(1)) + 13} |\n",
               count=-1)  # fmt: skip
    found = _mismatches(folder)
    assert any(m.startswith("artifact report: split dev") for m in found), found


def test_a_split_per_source_that_counts_another_unit(tmp_path):
    """KLUE-NER's Splits table counted entities per source (dev 12 items | kmou-test 14,
    nsmc-reviews 11)."""
    folder = _copy("sts-demo", tmp_path)

    def entities(facts: dict) -> None:
        per = facts["labels"]["sources_per_split"]["dev"]
        per[next(iter(per))] += 11

    _edit_facts(folder, entities)
    found = _mismatches(folder)
    assert any(m.startswith("sources of dev (the Splits table)") for m in found), found


def test_a_warning_whose_figure_the_files_contradict(tmp_path):
    """A warning's figure is computed again from the files: one the card changed, or one
    it dropped, is named."""
    folder = _copy("marc-ja-demo", tmp_path)
    _edit_card(folder, "is 26 of 31 items of dev (84%", "is 26 of 31 items of dev (74%")
    found = _mismatches(folder)
    assert any(m.startswith("warning: the card says") and "74%" in m for m in found), found
    folder = _copy("marc-ja-demo", tmp_path / "b")
    text = (folder / "dataset" / "DATA_CARD.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("- **Simulated rounds**"))
    _edit_card(folder, line + "\n", "")
    assert any("(not shown)" in m and "Simulated rounds" in m for m in _mismatches(folder))


def test_a_count_table_total_that_is_not_the_files(tmp_path):
    """KoBBQ compared 55,512 samples with Table 1 while its file held 55,480."""
    folder = _copy("kobbq-demo", tmp_path)
    _edit_facts(folder, lambda f: f["totals"][0].update(records=f["totals"][0]["records"] + 32))
    found = _mismatches(folder)
    assert any(m.startswith("the count table's total samples (all_samples.parquet)")
               for m in found), found  # fmt: skip


def test_a_left_out_file_is_unchecked_never_checked(tmp_path):
    folder = _copy("kobbq-demo", tmp_path)
    result = check_card(folder)
    assert result.ok
    assert any("all_samples.jsonl: left out of this copy" in u for u in result.unchecked)
    assert not any("all_samples.jsonl" in c for c in result.checked)
    (folder / "CARD_COPY.json").unlink()  # without the note, a missing file is missing
    assert any("all_samples.jsonl" in m and "missing" in m for m in _mismatches(folder))
