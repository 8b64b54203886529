"""``benchforge card check RUN_DIR``: does the card say what its files show?

A data card states counts: how many records each release file holds, how many items
each split has, and how the labels are distributed per split. The card's facts
(``card.json``, from which DATA_CARD.md is rendered) are computed while the rebuild
runs, from intermediate tables; a step that drops items after those tables were read
(KoBEST's revision rounds drop items after the split) makes the card say one thing and
the files another. This check recomputes each stated count from the released files
themselves and names every mismatch:

- ``files``: each release file the card lists holds the number of records it states
  (JSON Lines and JSON: one record a non-empty line; TSV: the lines after the header;
  Parquet: its rows);
- ``splits``: each split the card states has that many records in the release's
  Parquet file of that split (``dev`` is also the JGLUE release's ``valid``);
- ``labels``: each split's label distribution in the card equals the one counted in that
  file's label column (``label``, ``gold_label``, ``score``, or ``labels.label`` for the
  KLUE-STS layout), binned as the card bins it (numeric labels in its bins of 0.5).

- ``totals`` (issue 54): each total a family's card states of a release file (KoBBQ's
  count table) is the file's records;
- ``sources`` (issue 54): each split's items per source (the Splits table) add up to
  the split's items;
- ``annotators kept`` (issue 54): the annotators and ratings the agreement kept after
  screening are the distinct annotators and the ratings the released items carry;

- ``README.md``: the Hub card's metadata is valid (``hf_card.validate_readme``) and
  each split's ``num_examples`` is the record count of the file its config names;
- ``release files`` (issue 51): every file of the release (``OUT/dataset`` and the
  release layout's ``OUT/release``, the card's own files included) has the SHA-256 and
  size the release manifest recorded when the rebuild finished
  (:mod:`pipelines.export.manifest`); a file missing, changed or added is named, and a
  run without the manifest is not vouched for. The label distributions are recounted
  from each split's JSON Lines file as well as its Parquet file.

- ``artifact report`` (issue 54): the report's *Split sizes* table gives each split the
  number of records its release file holds, and its label tables (``train``,
  ``dev+test``) the labels the release's files count (scores cut at the report's
  threshold into high and low, as the report cuts them); a table of other labels is
  listed unchecked;
- ``warnings`` (issue 54): the card's warnings, computed again from card.json with the
  split sizes and label distributions counted from the files, are the warnings the card
  shows (a warning's figure that the files contradict is named with both texts);

- ``card.json types`` (issue 53): each fact card.json holds has the type
  ``pipelines.export.facts.CardFacts`` gives it; a wrong one is named by its key path.

What the check could not recompute (a split without a Parquet file, a layout without a
label column) is listed as unchecked, never as passed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from pipelines.export.card_facts import _bin
from pipelines.export.facts import CardFacts

# the release's name of a split, where it is not the split's own (JGLUE: valid)
SPLIT_ALIASES = {"dev": ("dev", "valid", "validation")}
LABEL_COLUMNS = ("label", "gold_label", "score")
# the artifact report's high/low cut of scores where the split rule has none of its own:
# pipelines.splits.base.REPORT_THRESHOLD, which this layer may not import (a test checks
# that the two agree)
REPORT_THRESHOLD = 3.0


@dataclass
class Mismatch:
    """One stated count the files contradict."""

    what: str
    card: object
    files: object
    source: str = "the card"  # or "the release manifest"

    def __str__(self) -> str:
        return f"{self.what}: {self.source} says {self.card}, the files hold {self.files}"


@dataclass
class CardCheck:
    """What was compared, what did not match, and what could not be recomputed."""

    dataset: Path
    checked: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    # the release files whose SHA-256 and size match the release manifest
    verified: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def records_in(path: Path) -> int:
    """The records of one release file (see the module docstring)."""
    if path.suffix == ".parquet":
        return int(pd.read_parquet(path, columns=[]).shape[0])
    with path.open(encoding="utf-8") as handle:
        lines = sum(1 for line in handle if line.strip())
    return lines - 1 if path.suffix == ".tsv" and lines else lines


def split_file(dataset: Path, split: str) -> Path | None:
    """The release's Parquet file of ``split``, if it has one."""
    for name in SPLIT_ALIASES.get(split, (split,)):
        if (dataset / f"{name}.parquet").is_file():
            return dataset / f"{name}.parquet"
    return None


def _labels(frame: pd.DataFrame) -> pd.Series | None:
    for column in LABEL_COLUMNS:
        if column in frame.columns:
            return frame[column]
    if "labels" in frame.columns:  # KLUE-STS: {"label": ..., "real-label": ..., ...}
        return frame["labels"].map(lambda d: d.get("label") if isinstance(d, dict) else None)
    return None


def _element_labels(frame: pd.DataFrame) -> pd.Series | None:
    """The element labels of a release whose gold is structured (KLUE-NER's
    ``entities``: one label per entity, ``(none)`` for a sentence without any; KLUE-DP's
    ``deprel``: one per word), as the card counts them (``card_facts.label_facts``)."""
    from pipelines.export.card_facts import NO_ELEMENT

    if "deprel" in frame.columns:  # KLUE-DP: one label a word
        return pd.Series([str(d) for ds in frame["deprel"] for d in ds], dtype=object)
    if "entities" not in frame.columns:
        return None
    out = [str(e["label"]) for ents in frame["entities"] for e in ents]
    out += [NO_ELEMENT] * int(sum(len(ents) == 0 for ents in frame["entities"]))
    return pd.Series(out, dtype=object)


def label_counts(labels: pd.Series, numeric: bool, order: list[str]) -> dict[str, int]:
    """The distribution of ``labels`` as a card states it (numeric: in the card's bins,
    binned by the function that binned them, ``card_facts._bin``, at the width of the
    card's first bin)."""
    if numeric:
        low, high = (float(x) for x in order[0].split("-"))
        values = [_bin(float(v), high - low) for v in pd.to_numeric(labels, errors="coerce")]
    else:
        values = [str(v) for v in labels]
    counts = pd.Series(values, dtype=object).value_counts()
    return {k: int(counts[k]) for k in [*order, *sorted(set(counts.index) - set(order))]
            if k in counts}  # fmt: skip


def check_card(run_dir: Path) -> CardCheck:
    """Compare the card of ``run_dir`` (a rebuild's output folder, or its ``dataset``
    folder) with its release files."""
    dataset = run_dir / "dataset" if (run_dir / "dataset" / "card.json").is_file() else run_dir
    card = dataset / "card.json"
    if not card.is_file():
        raise FileNotFoundError(f"{run_dir}: no dataset/card.json (is it a finished rebuild?)")
    facts = json.loads(card.read_text(encoding="utf-8"))
    result = CardCheck(dataset)
    check_types(facts, result)
    check_files(dataset, result)
    for name, stated in facts.get("export", {}).get("files", {}).items():
        path = dataset / name
        if not path.is_file() and f"dataset/{name}" in left_out(dataset):
            result.unchecked.append(f"file {name}: left out of this copy ({COPY_NOTE})")
            continue
        result.checked.append(f"file {name}")
        if not path.is_file():
            result.mismatches.append(Mismatch(f"file {name}", f"{stated} records", "no such file"))
        elif (n := records_in(path)) != stated:
            result.mismatches.append(Mismatch(f"file {name}", f"{stated} records", f"{n}"))
    labels = facts.get("labels") or {}
    for split, stated in (facts.get("split", {}).get("splits") or {}).items():
        path = split_file(dataset, split)
        if path is None:
            result.unchecked.append(f"split {split}: no Parquet file of that split")
            continue
        frame = pd.read_parquet(path)
        result.checked.append(f"split {split}")
        if len(frame) != stated:
            result.mismatches.append(Mismatch(f"split {split} ({path.name})", f"{stated} items",
                                              f"{len(frame)}"))  # fmt: skip
        per_split = labels.get("per_split", {})
        if split not in per_split:
            continue
        column = _element_labels(frame) if labels.get("elements") else _labels(frame)
        if column is None:
            result.unchecked.append(f"labels of {split}: no label column in {path.name}")
            continue
        got = label_counts(column, bool(labels.get("numeric")), list(labels.get("order", [])))
        result.checked.append(f"labels of {split}")
        if got != per_split[split]:
            result.mismatches.append(Mismatch(f"labels of {split} ({path.name})",
                                              per_split[split], got))  # fmt: skip
        lines = path.with_suffix(".jsonl")
        if lines.is_file() and (text := _jsonl_labels(lines, labels)) != per_split[split]:
            result.mismatches.append(Mismatch(f"labels of {split} ({lines.name})",
                                              per_split[split], text))  # fmt: skip
    check_sources(facts, result)
    check_totals(dataset, facts, result)
    check_annotators(dataset, facts, result)
    counted = check_artifact_report(dataset, facts, result)
    check_warnings(dataset, facts, counted, result)
    check_baseline(dataset, facts, result)
    check_readme(dataset, result)
    return result


def check_annotators(dataset: Path, facts: dict, result: CardCheck) -> None:
    """The annotators and ratings the card says screening kept (``agreement.
    annotators_kept``, ``ratings_kept``) against the individual ratings the released
    items carry (the KLUE-STS layout's ``annotations.annotators``), over every split's
    Parquet file. Only where the release holds every gold item and its items carry their
    annotators (the KLUE-STS layout); elsewhere nothing is checked or claimed."""
    g = facts.get("agreement") or {}
    if "annotators_kept" not in g:
        return
    splits = facts.get("split", {}).get("splits") or {}
    if sum(splits.values()) != g.get("gold_items"):  # a later step dropped gold items:
        return  # the card's kept counts describe the gold, not this release (not checked)
    people: set[str] = set()
    ratings = 0
    for split in splits:
        path = split_file(dataset, split)
        frame = pd.read_parquet(path) if path is not None else None
        if frame is None or "annotations" not in frame.columns:
            return  # a layout whose items do not carry their annotators: not checked
        for cell in frame["annotations"]:
            if not isinstance(cell, dict) or "annotators" not in cell:
                return
            people.update(str(a) for a in cell["annotators"])
            ratings += len(cell["annotators"])
    for what, stated, got in (("annotators kept", g["annotators_kept"], len(people)),
                              ("ratings kept", g.get("ratings_kept"), ratings)):  # fmt: skip
        result.checked.append(what)
        if stated != got:
            result.mismatches.append(Mismatch(what, stated, got))


def check_totals(dataset: Path, facts: dict, result: CardCheck) -> None:
    """Each total a family's card states of a release file (``totals``: KoBBQ's count
    table against ``all_samples.tsv``) against the file's records."""
    for t in facts.get("totals") or []:
        path = dataset / t["file"]
        what = f"{t['what']} ({t['file']})"
        if not path.is_file():
            if f"dataset/{t['file']}" in left_out(dataset):
                result.unchecked.append(f"{what}: the file is left out of this copy")
                continue
            result.mismatches.append(Mismatch(what, f"{t['records']} records", "no such file"))
            continue
        result.checked.append(what)
        if (n := records_in(path)) != t["records"]:
            result.mismatches.append(Mismatch(what, f"{t['records']} records", f"{n}"))


def check_sources(facts: dict, result: CardCheck) -> None:
    """Each split's per-source counts (the Splits table) add up to the split's items,
    which the files hold (checked above): counting another unit (KLUE-NER's entities)
    is named."""
    per = (facts.get("labels") or {}).get("sources_per_split") or {}
    for split, n in (facts.get("split", {}).get("splits") or {}).items():
        if split not in per:
            continue
        result.checked.append(f"sources of {split}")
        if (total := sum(per[split].values())) != n:
            result.mismatches.append(Mismatch(f"sources of {split} (the Splits table)",
                                              f"{total} items over its sources",
                                              f"{n} items in the split"))  # fmt: skip


def card_section(dataset: Path, heading: str) -> str | None:
    """The text of the section ``## heading`` of the card's DATA_CARD.md (None when the
    card has no such section)."""
    path = dataset / "DATA_CARD.md"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return m.group(1) if m else None


def _table_after(text: str, heading: str) -> dict[str, int] | None:
    """The ``first column -> items`` rows of the first table under the heading
    ``heading`` (any level) of ``text``, or None."""
    m = re.search(rf"^#+ {re.escape(heading)}\n+((?:\|.*\n?)+)", text, flags=re.M)
    if not m:
        return None
    rows = [r.strip().strip("|").split("|") for r in m.group(1).strip().split("\n")]
    head = [c.strip() for c in rows[0]]
    if "items" not in head:
        return None
    at = head.index("items")
    out = {}
    for row in rows[2:]:
        cells = [c.strip().strip("`") for c in row]
        try:
            out[cells[0]] = int(cells[at].replace(",", ""))
        except (ValueError, IndexError):
            return None
    return out


def _counted(dataset: Path, facts: dict) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Each split's records and label distribution (as the card counts labels), from
    the release's Parquet files."""
    labels = facts.get("labels") or {}
    sizes: dict[str, int] = {}
    per_split: dict[str, dict[str, int]] = {}
    for split in facts.get("split", {}).get("splits") or {}:
        path = split_file(dataset, split)
        if path is None:
            continue
        frame = pd.read_parquet(path)
        sizes[split] = len(frame)
        column = _element_labels(frame) if labels.get("elements") else _labels(frame)
        if column is not None and labels.get("order") is not None:
            per_split[split] = label_counts(column, bool(labels.get("numeric")),
                                            list(labels.get("order", [])))  # fmt: skip
    return sizes, per_split


def check_artifact_report(dataset: Path, facts: dict, result: CardCheck) -> tuple:
    """The artifact report's split sizes and label tables against the release files
    (see the module docstring); returns what was counted, for :func:`check_warnings`."""
    sizes, per_split = _counted(dataset, facts)
    report = card_section(dataset, "Artifact report")
    if not report or "Split sizes" not in report:
        return sizes, per_split
    stated = _table_after(report, "Split sizes")
    if stated is None:
        result.unchecked.append("artifact report: its Split sizes table cannot be read")
        return sizes, per_split
    before = (facts.get("split") or {}).get("before_revisions")
    if before and before != (facts.get("split") or {}).get("splits"):
        # the report is of the split before later rounds dropped items (KoBEST), and says
        # so: its sizes are those, and its labels are not the release's to recount
        result.checked.append("artifact report split sizes (before the revisions)")
        for split, n in stated.items():
            if split in before and before[split] != n:
                result.mismatches.append(Mismatch(f"artifact report: split {split} before "
                                                  "the revisions", f"{n} items",
                                                  f"{before[split]} (card.json)"))  # fmt: skip
        if "before later rounds dropped items" not in report:
            result.mismatches.append(Mismatch("artifact report", "the release's split",
                                              "the split before the revisions"))  # fmt: skip
        return sizes, per_split
    result.checked.append("artifact report split sizes")
    for split, n in stated.items():
        if split in sizes and sizes[split] != n:
            result.mismatches.append(Mismatch(f"artifact report: split {split}", f"{n} items",
                                              f"{sizes[split]}"))  # fmt: skip
    numeric = bool((facts.get("labels") or {}).get("numeric"))
    # numeric labels: the report cuts them at its threshold into high and low
    split = facts.get("split") or {}
    cut = next((c for c in ((split.get("report_settings") or {}).get("binary_threshold"),
                            (split.get("settings") or {}).get("binary_threshold"))
                if c is not None), REPORT_THRESHOLD)  # fmt: skip
    groups = {"train": ["train"], "dev+test": [s for s in sizes if s != "train"]}
    for name, splits in groups.items():
        table_ = _table_after(report, name)
        if table_ is None or not splits or any(s not in per_split for s in splits):
            continue
        files: dict[str, int] = {}
        if numeric and cut is not None and set(table_) <= {"high", "low"}:
            for s in splits:
                values = pd.to_numeric(_labels(pd.read_parquet(split_file(dataset, s))),
                                       errors="coerce")  # fmt: skip
                for k, v in (
                    (values >= cut).map({True: "high", False: "low"}).value_counts().items()
                ):
                    files[k] = files.get(k, 0) + int(v)
        elif numeric:
            result.unchecked.append(f"artifact report labels of {name}: scores in groups "
                                    "the report does not name")  # fmt: skip
            continue
        for s in splits if not numeric else []:
            for k, v in per_split[s].items():
                files[k] = files.get(k, 0) + v
        if not set(table_) <= set(files) | set((facts.get("labels") or {}).get("order", [])):
            result.unchecked.append(f"artifact report labels of {name}: labels not the release's")
            continue
        result.checked.append(f"artifact report labels of {name}")
        if {k: v for k, v in files.items() if v} != table_:
            result.mismatches.append(Mismatch(f"artifact report: labels of {name}", table_, files))
    return sizes, per_split


def check_warnings(dataset: Path, facts: dict, counted: tuple, result: CardCheck) -> None:
    """The card's warnings against the warnings computed from card.json with the split
    sizes and label distributions counted from the files (see the module docstring)."""
    from pipelines.core.plugins import TASK_KINDS
    from pipelines.export.data_card import _warnings

    shown = card_section(dataset, "Warnings")
    name = facts.get("task_kind") or (facts.get("recipe") or {}).get("task")
    if shown is None:  # no rendered card here: it states no warning
        return
    if not name or name not in TASK_KINDS.names():
        result.unchecked.append("warnings: card.json names no task kind benchforge has")
        return
    sizes, per_split = counted
    files = json.loads(json.dumps(facts))
    files.setdefault("artifacts_md", "")  # the report is not in card.json (checked above)
    files.setdefault("split", {})["splits"] = {**files["split"].get("splits", {}), **sizes}
    if files.get("labels") and per_split:
        files["labels"]["per_split"] = {**files["labels"].get("per_split", {}), **per_split}
    kind = TASK_KINDS.get(name)
    try:
        section = kind.card(files)
    except Exception as exc:  # noqa: BLE001 - a card.json the family cannot read again
        result.unchecked.append(f"warnings: the family cannot read card.json again ({exc})")
        return
    want = [w for w in _warnings(files, section).split("\n") if w.strip()]
    got = [w for w in shown.strip().split("\n") if w.startswith("- ")]
    result.checked.append("warnings")
    for line in sorted(set(got) - set(want)):
        result.mismatches.append(Mismatch("warning", line[2:], "not what the files give"))
    for line in sorted(set(want) - set(got)):
        result.mismatches.append(Mismatch("warning", "(not shown)", line[2:]))


def _jsonl_labels(path: Path, labels: dict) -> dict[str, int] | str:
    """The label distribution of a JSON Lines release file, counted as the Parquet's
    (or why it cannot be: a line that is not a JSON object)."""
    rows = []
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                return f"line {n} is not JSON ({exc.msg})"
            if not isinstance(row, dict):
                return f"line {n} is not a JSON object"
            rows.append(row)
    frame = pd.DataFrame(rows)
    column = _element_labels(frame) if labels.get("elements") else _labels(frame)
    if column is None:
        return "no label field"
    return label_counts(column, bool(labels.get("numeric")), list(labels.get("order", [])))


@dataclass
class TypeMismatch(Mismatch):
    """A fact of card.json whose value does not have the type ``facts.CardFacts`` gives
    it (``card``: what the type asks; ``files``: the value card.json holds)."""

    source: str = "pipelines/export/facts.py"

    def __str__(self) -> str:
        return f"{self.what}: {self.card} (card.json holds {self.files}; {self.source})"


def check_types(facts: object, result: CardCheck) -> None:
    """Every fact card.json holds against its type (``facts.CardFacts``): a fact of the
    wrong type is a mismatch naming its key path (``checked`` lists counts only). A
    required fact the card lacks is not named here (an export refuses to write such a
    card; a card from another tool states what it states, and its counts are checked
    below)."""
    from pipelines.export.facts import problems

    for p in problems(facts):
        if not p.missing:
            shown = json.dumps(p.value, ensure_ascii=False, default=str)
            result.mismatches.append(TypeMismatch(f"card.json {p.key}", p.message,
                                                  shown if len(shown) <= 80
                                                  else shown[:77] + "..."))  # fmt: skip


COPY_NOTE = "CARD_COPY.json"  # scripts/data_cards.py: a committed copy's left-out files


def left_out(dataset: Path) -> dict[str, dict]:
    """The release files a committed copy of the run (``data_cards/<demo>/``) left out
    for their size, by their manifest path, as its ``CARD_COPY.json`` names them."""
    note = dataset.parent / COPY_NOTE
    if not note.is_file():
        return {}
    return {e["path"]: e for e in json.loads(note.read_text(encoding="utf-8"))["omitted"]}


def check_files(dataset: Path, result: CardCheck) -> None:
    """Every release file against the release manifest (``manifest.verify_release``):
    a file missing, changed or added is a mismatch naming it, except a file a committed
    copy left out for its size with the hash the manifest records (listed unchecked)."""
    from pipelines.export.manifest import verify_release

    verified, problems = verify_release(dataset)
    result.verified += verified
    omitted = left_out(dataset)
    recorded = json.loads((dataset / "release_manifest.json").read_text(encoding="utf-8"))[
        "files"] if omitted else {}  # fmt: skip
    for rel, stated, shown in problems:
        entry = omitted.get(rel)
        if entry and shown.startswith("missing") and recorded.get(rel, {}).get("sha256") == entry[
            "sha256"]:  # fmt: skip
            result.unchecked.append(f"release file {rel}: left out of this copy "
                                    f"({entry['bytes'] / 2**20:.1f} MB; {COPY_NOTE})")  # fmt: skip
            continue
        result.mismatches.append(Mismatch(f"release file {rel}", stated, shown,
                                          "the release manifest"))  # fmt: skip


def check_baseline(dataset: Path, facts: CardFacts, result: CardCheck) -> None:
    """The baseline's figures were computed on the released files: each scored split's
    file has the hash the baseline recorded and as many records as it scored."""
    from pipelines.core.io import sha256_file

    b = facts.get("baseline")
    if not b:
        return
    for split, info in (b.get("files") or {}).items():
        path = dataset / info["name"]
        what = f"baseline's {split} file {info['name']}"
        result.checked.append(what)
        if not path.is_file():
            result.mismatches.append(Mismatch(what, "present", "no such file"))
            continue
        if (digest := sha256_file(path)) != info["sha256"]:
            result.mismatches.append(Mismatch(what, f"sha256 {info['sha256'][:12]}",
                                              f"sha256 {digest[:12]}"))  # fmt: skip
        scored = (b.get("splits") or {}).get(split)
        if scored is not None and (n := records_in(path)) != scored["items"]:
            result.mismatches.append(Mismatch(what, f"{scored['items']} items scored", f"{n}"))


def check_readme(dataset: Path, result: CardCheck) -> None:
    """The Hub card (``README.md``): its metadata passes ``hf_card.validate_readme`` and
    each split's ``num_examples`` is the record count of the file its config names."""
    import yaml

    from pipelines.export.hf_card import validate_readme

    path = dataset / "README.md"
    if not path.is_file():
        result.unchecked.append("README.md: none (a release exported before the Hub card)")
        return
    text = path.read_text(encoding="utf-8")
    result.checked.append("README.md metadata")
    for problem in validate_readme(text, dataset):
        result.mismatches.append(Mismatch("README.md metadata", "valid Hub metadata", problem))
    meta = yaml.safe_load(text.split("---", 2)[1]) or {}
    files = {c["config_name"]: {f["split"]: f["path"] for f in c.get("data_files") or []}
             for c in meta.get("configs") or []}  # fmt: skip
    for info in meta.get("dataset_info") or []:
        for split in info.get("splits") or []:
            name = files.get(info["config_name"], {}).get(split["name"])
            if name is None or not (dataset / name).is_file():
                continue  # validate_readme named it
            result.checked.append(f"README.md {info['config_name']}/{split['name']}")
            if (n := records_in(dataset / name)) != split["num_examples"]:
                result.mismatches.append(Mismatch(
                    f"README.md {info['config_name']}/{split['name']} ({name})",
                    f"{split['num_examples']} records", f"{n}"))  # fmt: skip
