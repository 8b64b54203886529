"""Issue 34 item 1: `benchforge card check` recomputes what a card states from the
release files and names every mismatch (pipelines.export.card_check)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd

from pipelines.export.card_check import check_card, label_counts, records_in
from pipelines.export.manifest import refresh_release_manifest, write_release_manifest

ROOT = Path(__file__).resolve().parents[3]
ORDER = [f"{k * 0.5:.1f}-{(k + 1) * 0.5:.1f}" for k in range(10)]


NO_README = "README.md: none (a release exported before the Hub card)"


def _release(folder: Path, labels: dict[str, list], numeric: bool) -> Path:
    """A release as the shared export writes it, with a card stating its true counts."""
    dataset = folder / "dataset"
    dataset.mkdir(parents=True)
    files, per_split = {}, {}
    for split, values in labels.items():
        rows = [{"guid": f"{split}-{i}", "label": v} for i, v in enumerate(values)]
        (dataset / f"{split}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
        pd.DataFrame(rows).to_parquet(dataset / f"{split}.parquet")
        files[f"{split}.jsonl"] = len(rows)
        per_split[split] = label_counts(pd.Series(values), numeric, ORDER if numeric else [])
    facts = {
        "export": {"files": files},
        "split": {"splits": {s: len(v) for s, v in labels.items()}},
        "labels": {"numeric": numeric, "order": ORDER if numeric else ["a", "b"],
                   "per_split": per_split},
    }  # fmt: skip
    (dataset / "card.json").write_text(json.dumps(facts), encoding="utf-8")
    write_release_manifest(dataset)  # as a finished rebuild does
    return dataset


def _plant(dataset: Path, change) -> None:  # noqa: ANN001 - a function of the facts
    facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
    change(facts)
    (dataset / "card.json").write_text(json.dumps(facts), encoding="utf-8")
    refresh_release_manifest(dataset, ["card.json"])  # the counts, not the hash, differ


def test_a_true_card_passes_and_each_planted_mismatch_is_named(tmp_path):
    dataset = _release(tmp_path, {"train": ["a", "b", "a"], "dev": ["b"], "test": ["a"]}, False)
    result = check_card(tmp_path)  # the run folder, or its dataset/
    # no README.md here (test_hf_card checks one): listed as unchecked, never as passed
    assert result.ok and result.unchecked == [NO_README]
    assert len(result.checked) == 3 + 3 + 3  # files, splits, label distributions

    _plant(dataset, lambda f: f["split"]["splits"].update(train=5))  # KoBEST's bug
    _plant(dataset, lambda f: f["export"]["files"].update({"dev.jsonl": 2}))
    _plant(dataset, lambda f: f["labels"]["per_split"].update(test={"b": 1}))
    got = [str(m) for m in check_card(dataset).mismatches]
    assert got == [
        "file dev.jsonl: the card says 2 records, the files hold 1",
        "split train (train.parquet): the card says 5 items, the files hold 3",
        "labels of test (test.parquet): the card says {'b': 1}, the files hold {'a': 1}",
        "labels of test (test.jsonl): the card says {'b': 1}, the files hold {'a': 1}",
    ]


def test_numeric_labels_are_counted_in_the_cards_bins_and_gaps_are_unchecked(tmp_path):
    dataset = _release(tmp_path, {"train": [0.0, 4.9, 5.0, 2.5], "dev": [1.2]}, True)
    assert check_card(dataset).ok
    assert label_counts(pd.Series([0.0, 4.9, 5.0, 2.5]), True, ORDER) == {
        "0.0-0.5": 1, "2.5-3.0": 1, "4.5-5.0": 2}  # fmt: skip
    (dataset / "dev.parquet").unlink()
    write_release_manifest(dataset)  # a release without it
    result = check_card(dataset)
    assert result.ok and result.unchecked == ["split dev: no Parquet file of that split",
                                              NO_README]  # fmt: skip


def test_record_counts_per_format(tmp_path):
    (tmp_path / "a.tsv").write_text("h1\th2\nx\ty\nz\tw\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text('{"a": 1}\n\n{"a": 2}\n', encoding="utf-8")
    assert records_in(tmp_path / "a.tsv") == 2 and records_in(tmp_path / "b.jsonl") == 2


def test_the_cli_exits_1_on_a_mismatch_and_2_without_a_card(tmp_path):
    dataset = _release(tmp_path / "run", {"train": ["a"], "dev": ["b"]}, False)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "flows.cli", "card", "check", *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip

    ok = cli(str(tmp_path / "run"))
    assert ok.returncode == 0 and "6 counts checked, 0 mismatch(es)" in ok.stdout
    _plant(dataset, lambda f: f["split"]["splits"].update(dev=7))
    bad = cli(str(tmp_path / "run"), "--json")
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["mismatches"] == [
        "split dev (dev.parquet): the card says 7 items, the files hold 1"
    ]
    none = cli(str(tmp_path / "nothing"))
    assert none.returncode == 2 and "no dataset/card.json" in none.stderr


def test_the_checks_report_threshold_is_the_reports():
    from pipelines.export.card_check import REPORT_THRESHOLD
    from pipelines.splits.base import REPORT_THRESHOLD as SPLITS

    assert REPORT_THRESHOLD == SPLITS
