"""Issue 34 item 4: the release folder as a Hugging Face dataset. ``README.md`` carries
the Hub's YAML header; ``datasets.load_dataset(folder)`` with no other argument loads
every split; the metadata passes the libraries' own readers; a broken header is named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pipelines.export.card_check import check_card
from pipelines.export.hf_card import (
    hub_licence,
    readme,
    release_layout,
    size_category,
    validate_readme,
)
from pipelines.export.manifest import refresh_release_manifest, write_release_manifest


def _release(folder: Path) -> dict:
    """A small release: a default config (train, valid, test) and a second group of
    files (``jsts-c_train``), as JNLI's release has; Korean and Japanese text."""
    tables = {
        "train.parquet": pd.DataFrame({"guid": ["a", "b", "c"],
                                       "sentence1": ["```x```", "猫がいる。", "좋은 영화"],
                                       "choices": [["예", "아니오"]] * 3,
                                       "label": [0, 1, 1], "license": ["CC-BY-SA-4.0"] * 3}),
        "valid.parquet": pd.DataFrame({"guid": ["d"], "sentence1": ["비"],
                                       "choices": [["예", "아니오"]], "label": [0],
                                       "license": ["CC-BY-SA-4.0"]}),
        "test.parquet": pd.DataFrame({"guid": ["e", "f"], "sentence1": ["눈", "해"],
                                      "choices": [["예", "아니오"]] * 2, "label": [1, 0],
                                      "license": ["CC-BY-SA-4.0"] * 2}),
        "jsts-c_train.parquet": pd.DataFrame({"id": ["g"], "score": [1.5]}),
        "versions.parquet": pd.DataFrame({"x": [1]}),  # not a release file
    }  # fmt: skip
    files = {"train.jsonl": 3, "valid.jsonl": 1, "test.jsonl": 2, "jsts-c_train.json": 1}
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        table.to_parquet(folder / name, index=False)
    return {
        "task": "A <b>test</b> release",
        "recipe": {"name": "demo", "language": "ko"},
        "annotation": {"simulated": True},
        "export": {"files": files, "licence": {"release": "CC-BY-SA-4.0"}},
        "provenance": {"git commit": "abc123"},
        "release": release_layout(tables, files),
        "hub": {"task_categories": ["text-classification"],
                "citation": "@article{x,\n  title = {X},\n  year = {2021}\n}"},
    }  # fmt: skip


def test_the_header_configs_and_body(tmp_path):
    facts = _release(tmp_path)
    assert list(facts["release"]) == ["default", "jsts-c"]
    files = {"train": "train.parquet", "validation": "valid.parquet", "test": "test.parquet"}
    assert facts["release"]["default"]["data_files"] == files
    text = readme(facts, "# Data card: demo\n\n## Composition\n\nthree items\n")
    assert validate_readme(text, tmp_path) == []
    head = text.split("---")[1]
    for line in ("license: cc-by-sa-4.0", "- ko", "- text-classification", "- n<1K",
                 "- simulated-annotations", "config_name: jsts-c", "path: jsts-c_train.parquet",
                 "num_examples: 3", "name: choices\n    list: string"):  # fmt: skip
        assert line in head, line
    assert 'load_dataset("path/to/dataset", "jsts-c")' in text
    assert "the files keep the paper's: `validation` is `valid.parquet`." in text
    assert "@article{x," in text and "@software{benchforge," in text and "commit abc123" in text
    assert "### Composition" in text  # the card's sections one level down
    assert "````json" in text  # a record holding ``` gets a longer fence
    assert "A &lt;b&gt;test&lt;/b&gt; release" in text.split("---", 2)[2]


def test_load_dataset_reads_the_folder_with_no_other_argument(tmp_path):
    """Every split of the default config, with its records; the second config by name."""
    datasets = pytest.importorskip("datasets")
    facts = _release(tmp_path)
    (tmp_path / "README.md").write_text(readme(facts, "# Card\n"), encoding="utf-8")
    cache = {"cache_dir": str(tmp_path / "hf-cache")}
    ds = datasets.load_dataset(str(tmp_path), **cache)
    # the Hub's split name, the paper's file name (issue 54)
    assert {k: len(v) for k, v in ds.items()} == {"train": 3, "validation": 1, "test": 2}
    assert ds["train"][1]["sentence1"] == "猫がいる。"
    assert ds["train"].features["choices"].feature.dtype in ("string", "large_string")
    other = datasets.load_dataset(str(tmp_path), "jsts-c", **cache)
    assert other["train"][0]["score"] == 1.5


def test_validation_names_each_problem(tmp_path):
    facts = _release(tmp_path)
    text = readme(facts, "# Card\n")
    broken = (text.replace("license: cc-by-sa-4.0", "license: CC BY-SA")
                  .replace("- n<1K", "- tiny").replace("- ko\n", "- klingon\n")
                  .replace("path: test.parquet", "path: missing.parquet"))  # fmt: skip
    problems = "\n".join(validate_readme(broken, tmp_path))
    assert "`license`: 'CC BY-SA' is not a Hub licence id" in problems
    assert "`size_categories`: 'tiny'" in problems and "`language`: 'klingon'" in problems
    assert "missing.parquet is not in" in problems
    assert validate_readme("---\nlicense: [unclosed\n---\n", None)[0].startswith(
        "the YAML header does not parse"
    )


def test_card_check_reads_the_readme(tmp_path):
    """``card check`` validates the Hub card and its record counts: a planted count is a
    mismatch."""
    facts = _release(tmp_path)
    text = readme(facts, "# Card\n")
    facts.update({"split": {"splits": {}}, "labels": {}})
    facts["export"]["files"] = {}  # the JSON files are not written here: the Parquet are
    (tmp_path / "card.json").write_text(json.dumps(facts), encoding="utf-8")
    (tmp_path / "README.md").write_text(text, encoding="utf-8")
    write_release_manifest(tmp_path)
    assert check_card(tmp_path).ok
    (tmp_path / "README.md").write_text(text.replace("num_examples: 2", "num_examples: 5"),
                                        encoding="utf-8")  # fmt: skip
    refresh_release_manifest(tmp_path, ["README.md"])  # the count, not the hash, differs
    result = check_card(tmp_path)
    assert [str(m) for m in result.mismatches] == [
        "README.md default/test (test.parquet): the card says 5 records, the files hold 2"
    ]


def test_licences_and_sizes():
    assert hub_licence("CC0-1.0") == "cc0-1.0" and hub_licence("MIT") == "mit"
    assert hub_licence("KOGL-Type-1") == "other"
    assert [size_category(n) for n in (999, 1000, 76568, 100_000)] == [
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
    ]


def test_a_class_tasks_label_loads_as_a_class_label(tmp_path):
    """Issue 54: the gold column of a class task is a ``ClassLabel`` on the Hub, its
    names the card's labels in order; the files keep the strings."""
    datasets = pytest.importorskip("datasets")
    tables = {f"{s}.parquet": pd.DataFrame({"sentence1": ["비", "눈"], "label": labels,
                                            "license": ["CC0-1.0"] * 2})
              for s, labels in (("train", ["neutral", "entailment"]),
                                ("test", ["contradiction", "neutral"]))}  # fmt: skip
    files = {"train.jsonl": 2, "test.jsonl": 2}
    for name, table in tables.items():
        table.to_parquet(tmp_path / name, index=False)
    facts = {**_release(tmp_path / "other"), "release": release_layout(tables, files),
             "export": {"files": files, "licence": {"release": "CC0-1.0"}},
             "labels": {"numeric": False,
                        "order": ["contradiction", "entailment", "neutral"]}}  # fmt: skip
    text = readme(facts, "# Card\n")
    assert validate_readme(text, tmp_path) == []
    assert "ClassLabel: 0 contradiction, 1 entailment, 2 neutral" in text
    (tmp_path / "README.md").write_text(text, encoding="utf-8")
    ds = datasets.load_dataset(str(tmp_path), cache_dir=str(tmp_path / "hf-cache"))
    assert ds["train"].features["label"].names == ["contradiction", "entailment", "neutral"]
    assert ds["train"]["label"] == [2, 1] and ds["test"]["label"] == [0, 2]
    # scores stay numbers
    facts["labels"] = {"numeric": True, "order": ["0.0-0.5"]}
    assert "class_label" not in readme(facts, "# Card\n").split("---")[1]
