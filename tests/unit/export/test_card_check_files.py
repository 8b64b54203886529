"""Issue 51 item 7: `benchforge card check` vouches only for what the files show. Every
release file (OUT/dataset, the release layout's OUT/release, the card's own files) is
verified against the release manifest, and each way the probe tampered with a release
is a mismatch naming the file: an edited number or entity label in ``dev.jsonl``, an
edited tag in a release TSV, a deleted TSV, a deleted DATA_CARD.md or DATA_CARD.html.
The release is a small KLUE-NER one written with the project's own writers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pipelines.export.card_check import check_card, label_counts
from pipelines.export.card_facts import NO_ELEMENT
from pipelines.export.manifest import RELEASE_MANIFEST, release_files, write_release_manifest
from pipelines.families.klue.ner_layout import NerRelease, NerSentence, write_layout

ROOT = Path(__file__).resolve().parents[3]
TSV = "release/klue-ner-v1.1_dev.tsv"
SENTENCES = {
    "train": [("한국에서 김철수가 왔다", [(0, 2, "LC"), (5, 8, "PS")]), ("비가 온다", [])],
    "dev": [("서울 시청에 3일 갔다", [(0, 2, "LC"), (7, 9, "DT")]),
            ("삼성이 이겼다", [(0, 2, "OG")])],
    "test": [("부산은 덥다", [(0, 2, "LC")])],
}  # fmt: skip


def _records(split: str) -> list[dict]:
    out = []
    for n, (text, spans) in enumerate(SENTENCES[split]):
        s = NerSentence(f"klue-ner-v1.1_{split}_{n:05d}", text, spans)
        ents = [{"start": a, "end": b, "label": t, "text": text[a:b]} for a, b, t in spans]
        out.append({"guid": s.guid, "sentence": s.tagged(), "tokens": list(text),
                    "ner_tags": s.tags(), "entities": ents, "source": "demo"})  # fmt: skip
    return out


def _release(run: Path) -> Path:
    """A finished KLUE-NER run's release: records, Parquet, card files, the layout's TSVs
    and the release manifest, as the rebuild leaves them."""
    dataset = run / "dataset"
    dataset.mkdir(parents=True)
    per_split, files = {}, {}
    for split in SENTENCES:
        recs = _records(split)
        (dataset / f"{split}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8"
        )
        pd.DataFrame(recs).to_parquet(dataset / f"{split}.parquet")
        files[f"{split}.jsonl"] = len(recs)
        labels = [e["label"] for r in recs for e in r["entities"]]
        labels += [NO_ELEMENT] * sum(not r["entities"] for r in recs)
        per_split[split] = label_counts(pd.Series(labels, dtype=object), False, [])
        release = NerRelease(
            ["# KLUE-NER layout"],
            [NerSentence(r["guid"], "".join(r["tokens"]),
                         [(e["start"], e["end"], e["label"]) for e in r["entities"]])
             for r in recs],
        )  # fmt: skip
        (run / "release").mkdir(exist_ok=True)
        (run / "release" / f"klue-ner-v1.1_{split}.tsv").write_text(
            write_layout(release), encoding="utf-8"
        )
    order = sorted({k for c in per_split.values() for k in c})
    facts = {
        "export": {"files": files},
        "split": {"splits": {s: len(v) for s, v in SENTENCES.items()}},
        "labels": {"numeric": False, "elements": True, "order": order, "per_split": per_split},
    }
    (dataset / "card.json").write_text(json.dumps(facts), encoding="utf-8")
    (dataset / "DATA_CARD.md").write_text("# Card\n\n| split | n |\n", encoding="utf-8")
    (dataset / "DATA_CARD.html").write_text("<h1>Card</h1>\n", encoding="utf-8")
    (dataset / "figures").mkdir()
    (dataset / "figures" / "labels.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    (dataset / "manifest.json").write_text('{"key": "k", "files": {}}', encoding="utf-8")
    write_release_manifest(dataset)
    return dataset


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_an_untouched_release_passes_with_every_file_verified(tmp_path):
    dataset = _release(tmp_path / "run")
    result = check_card(tmp_path / "run")
    assert result.ok, [str(m) for m in result.mismatches]
    # every file of the release: dataset/ (card files, figures) and release/ (the layout)
    assert sorted(result.verified) == release_files(dataset)
    assert {TSV, "dataset/DATA_CARD.md", "dataset/DATA_CARD.html", "dataset/card.json",
            "dataset/dev.jsonl", "dataset/figures/labels.png"} <= set(result.verified)  # fmt: skip
    # the steps' cache records and the manifest itself are not release files
    assert "dataset/manifest.json" not in result.verified
    assert f"dataset/{RELEASE_MANIFEST}" not in result.verified


def _tamper_number(run: Path) -> None:
    _edit(run / "dataset" / "dev.jsonl", '"start": 7, "end": 9', '"start": 7, "end": 8')


def _tamper_label(run: Path) -> None:
    _edit(run / "dataset" / "dev.jsonl", '"label": "OG"', '"label": "PS"')


def _tamper_tag(run: Path) -> None:
    _edit(run / TSV, "B-OG", "B-PS")


TAMPERING = {
    "number in dev.jsonl": (_tamper_number, "dataset/dev.jsonl", "changed"),
    "entity label in dev.jsonl": (_tamper_label, "dataset/dev.jsonl", "changed"),
    "tag in a release TSV": (_tamper_tag, TSV, "changed"),
    "deleted TSV": (lambda run: (run / TSV).unlink(), TSV, "missing (deleted)"),
    "deleted DATA_CARD.md": (lambda run: (run / "dataset" / "DATA_CARD.md").unlink(),
                             "dataset/DATA_CARD.md", "missing (deleted)"),
    "deleted DATA_CARD.html": (lambda run: (run / "dataset" / "DATA_CARD.html").unlink(),
                               "dataset/DATA_CARD.html", "missing (deleted)"),
    "added file": (lambda run: (run / "release" / "extra.tsv").write_text("x\n"),
                   "release/extra.tsv", "present (added)"),
    "deleted figure": (lambda run: (run / "dataset" / "figures" / "labels.png").unlink(),
                       "dataset/figures/labels.png", "missing (deleted)"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(TAMPERING))
def test_each_tampering_is_a_mismatch_naming_the_file(tmp_path, case):
    tamper, name, how = TAMPERING[case]
    _release(tmp_path / "run")
    tamper(tmp_path / "run")
    result = check_card(tmp_path / "run")
    assert not result.ok
    named = [str(m) for m in result.mismatches if m.what == f"release file {name}"]
    assert len(named) == 1 and how in named[0], [str(m) for m in result.mismatches]
    assert named[0].startswith(f"release file {name}: the release manifest says ")


def test_an_edited_entity_label_is_also_recounted_from_the_json_lines(tmp_path):
    """The card's label distribution is recomputed from dev.jsonl, not only from the
    Parquet file the probe left alone."""
    _release(tmp_path / "run")
    _tamper_label(tmp_path / "run")
    got = [str(m) for m in check_card(tmp_path / "run").mismatches]
    assert "labels of dev (dev.jsonl): the card says {'DT': 1, 'LC': 1, 'OG': 1}, the files " \
           "hold {'DT': 1, 'LC': 1, 'PS': 1}" in got  # fmt: skip


def test_a_release_without_its_manifest_is_not_vouched_for(tmp_path):
    dataset = _release(tmp_path / "run")
    (dataset / RELEASE_MANIFEST).unlink()
    result = check_card(tmp_path / "run")
    assert [m.what for m in result.mismatches] == [f"release file dataset/{RELEASE_MANIFEST}"]
    assert "no such file" in str(result.mismatches[0])
    (dataset / RELEASE_MANIFEST).write_text("{not json", encoding="utf-8")
    assert "unreadable" in str(check_card(tmp_path / "run").mismatches[0])


def test_a_copied_run_keeps_its_manifest_and_the_cli_names_the_file(tmp_path):
    import shutil

    _release(tmp_path / "run")
    shutil.copytree(tmp_path / "run", tmp_path / "copy")

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "flows.cli", "card", "check", *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip

    ok = cli(str(tmp_path / "copy"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "0 mismatch(es), 1 unchecked" in ok.stdout  # no README.md here
    n = len(release_files(tmp_path / "copy" / "dataset"))
    assert f"{n} release files match release_manifest.json" in ok.stdout
    _tamper_tag(tmp_path / "copy")
    bad = cli(str(tmp_path / "copy"))
    assert bad.returncode == 1 and f"MISMATCH release file {TSV}:" in bad.stdout
    assert "Traceback" not in bad.stderr
