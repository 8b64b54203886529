"""Facts the data card reads, gathered at export from the run's own tables.

Every function here turns stage outputs into plain JSON (written to ``card.json``), so
that ``benchforge card render RUN_DIR`` renders the card and its figures again from that file
alone, and the card never computes a number the data does not hold.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import subprocess
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.core.spans import span_labels as _element_labels  # a span set's labels
from pipelines.export.records import SPLITS, release_tables, split_rows

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

if TYPE_CHECKING:
    from pipelines.annotation.rounds import Round

ROOT = Path(__file__).resolve().parents[2]


def _bin(score: float, width: float) -> str:
    top = 5.0 - width
    low = min(max(0.0, (score // width) * width), top) if score < 5 else top
    return f"{low:.1f}-{low + width:.1f}"


NO_ELEMENT = "(none)"


def label_facts(gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame,
                width: float = 0.5, numeric: bool | None = None) -> dict:  # fmt: skip
    """Gold labels per split and per source. Numeric gold (STS scores, 0-5) is counted
    in bins of ``width``; categorical gold per label. ``numeric``: whether the labels
    are scores (None: when every label reads as a number; class indices such as
    KoBEST's 0/1 say False)."""
    frame = gold[["item_id", "label"]].merge(splits[["item_id", "split"]], on="item_id")
    frame = frame.merge(items[["item_id", "source"]], on="item_id")
    # items per source and split, counted before a structured label is cut into its
    # elements (issue 54: the NER card's "dev 10 items | kmou-test 12" counted entities)
    sources_per_split = {
        s: {k: int(v) for k, v in part["source"].value_counts().sort_index().items()}
        for s, part in frame.groupby("split", sort=True)
    }
    values = pd.to_numeric(frame["label"], errors="coerce")
    if numeric is None:
        numeric = bool(len(frame)) and not values.isna().any()
    structured = (not numeric and bool(len(frame))
                  and all(_element_labels(v) is not None for v in frame["label"]))  # fmt: skip
    if numeric:
        frame = frame.assign(label=[_bin(float(v), width) for v in values])
        n = round(5.0 / width)
        order = [f"{k * width:.1f}-{(k + 1) * width:.1f}" for k in range(n)]
    elif structured:
        # structured gold (a span set): one row per element, counted by its label; an
        # item without any element counts once as NO_ELEMENT
        frame = frame.assign(label=[_element_labels(v) or [NO_ELEMENT] for v in frame["label"]])
        frame = frame.explode("label", ignore_index=True)
        order = sorted(frame["label"].unique())
    else:
        frame = frame.assign(label=frame["label"].astype(str))
        order = sorted(frame["label"].unique())

    def counts(part: pd.DataFrame) -> dict[str, int]:
        c = part["label"].value_counts()
        return {k: int(c[k]) for k in order if k in c}

    return {
        "numeric": numeric,
        "elements": structured,  # counts of the gold values' elements, not of items
        "order": order,
        "per_split": {
            s: counts(frame[frame["split"] == s]) for s in SPLITS if (frame["split"] == s).any()
        },  # fmt: skip
        "per_source": {s: counts(part) for s, part in frame.groupby("source", sort=True)},
        "sources_per_split": sources_per_split,
    }


# what a record answers, or who made it, rather than what it asks: left out when records
# are compared (two records asking the same thing are duplicates whatever their labels)
NOT_INPUT = re.compile(
    r"^(license|source|prediction|annotations|labels?|gold_label|score|answer|"
    r"biased_answer|author|version|simulated|n_annotations|label_sd)$|^label\d|_label$|^sim_"
)
EVAL_SPLITS = ("dev", "valid", "validation", "test")


def _is_id(name: str) -> bool:
    return name.lower() in ("id", "guid", "idx", "index") or bool(
        re.search(r"(_id|_guid|_idx|ID|Id)$", name)
    )


def _content(frame: pd.DataFrame) -> pd.DataFrame:
    """What the record asks: every field but ids, labels, answers, annotations and
    provenance (``NOT_INPUT``); nested values as JSON."""
    cols = [c for c in frame.columns if not NOT_INPUT.search(c) and not _is_id(c)]
    out = frame[cols].copy()
    for c in cols:
        if out[c].dtype == object:
            out[c] = out[c].map(lambda v: json.dumps(v.tolist() if hasattr(v, "tolist") else v,
                                                     ensure_ascii=False, sort_keys=True,
                                                     default=str))  # fmt: skip
    return out


def duplicate_facts(tables: dict[str, pd.DataFrame], files: dict[str, int]) -> dict:
    """Records that ask what another record asks, per release file (``files``: the
    release's file names; the Parquet table of each is compared), and evaluation records
    (dev, valid, test) that ask what a train record asks. What a record asks is every
    field but ids (``*_id``, ``guid``, ...) and ``NOT_INPUT`` (labels, answers,
    annotations, licence, source)."""
    content = {stem: _content(t) for stem, t in release_tables(tables, files).items()}
    fields = sorted({c for t in content.values() for c in t.columns})
    out: dict = {"fields": fields, "files": {}, "in_train": {}}
    for stem, t in content.items():
        out["files"][stem] = {"records": len(t), "unique": int(len(t) - t.duplicated().sum())}
    train = content.get("train")
    if train is not None:
        seen = set(map(tuple, train.astype(str).itertuples(index=False)))
        for stem in EVAL_SPLITS:
            t = content.get(stem)
            if t is not None and list(t.columns) == list(train.columns):
                rows = t.astype(str).itertuples(index=False)
                out["in_train"][stem] = int(sum(tuple(r) in seen for r in rows))
    return out


def release_facts(tables: dict[str, pd.DataFrame], files: dict[str, int], hub: dict,
                  ) -> dict:  # fmt: skip
    """The facts read from the release tables themselves, once they are built: their
    duplicates (:func:`duplicate_facts`), their layout as the Hub reads it
    (``hf_card.release_layout``), with the task kind's ``hub`` metadata (the callers add
    the rows of a public evaluation set they hold, ``public_eval.overlap``)."""
    from pipelines.export.hf_card import release_layout

    return {
        "duplicates": duplicate_facts(tables, files),
        "release": release_layout(tables, files),
        "hub": dict(hub),
    }


def funnel(ingest: dict, steps: dict, released: int) -> list[dict]:
    """Rows kept after each step: the raw documents, each ingest stage, each rebuild step
    that keeps or drops rows (its ``rows`` record), and the released rows."""
    stages = ingest.get("stages") or []
    out = []
    if stages:
        out.append({"step": "raw", "unit": stages[0]["unit"], "count": int(stages[0]["in"])})
    out += [{"step": s["stage"], "unit": s["unit"], "count": int(s["kept"])} for s in stages]
    for name, entry in steps.items():
        rows = entry.get("rows")
        if isinstance(rows, dict) and name not in ("export", "split"):
            out.append({"step": name, "unit": rows["unit"], "count": int(rows["kept"])})
    out.append({"step": "released", "unit": "row", "count": int(released)})
    return out


def timeframe(table: pd.DataFrame) -> dict:
    """When the round's annotations were made (Label Studio's ``created_at``) and how
    long each took (``lead_time``, seconds)."""
    out: dict = {"first": None, "last": None, "median_seconds": None, "total_hours": None}
    if "created_at" in table.columns and table["created_at"].notna().any():
        created = pd.to_datetime(table["created_at"], utc=True).dropna()
        out["first"] = created.min().strftime("%Y-%m-%d %H:%M UTC")
        out["last"] = created.max().strftime("%Y-%m-%d %H:%M UTC")
    if "lead_time" in table.columns:
        lead = table.drop_duplicates("annotation_id")["lead_time"].dropna().astype(float)
        if len(lead):
            out["median_seconds"] = round(float(lead.median()), 1)
            out["total_hours"] = round(float(lead.sum()) / 3600, 2)
    return out


def with_licences(records: dict[str, list[dict]], gold: pd.DataFrame, items: pd.DataFrame,
                  splits: pd.DataFrame) -> dict[str, list[dict]]:  # fmt: skip
    """Every exported record with its source's licence (``license``, the item's), in the
    order :func:`split_rows` gives the records. A task kind whose records are not that
    order (one per gold item and split) is an error, not a silent mismatch."""
    licences: dict[str, list[str]] = {s: [] for s in SPLITS}
    for split, _, row in split_rows(gold, items, splits):
        licences[split].append(str(row.license))
    out = {}
    for split, rows in records.items():
        if len(rows) != len(licences[split]):
            raise ValueError(
                f"{split}: {len(rows)} records for {len(licences[split])} gold items; the "
                "task kind's records must give one record per gold item (split_rows)"
            )
        out[split] = [{**r, "license": lic} for r, lic in zip(rows, licences[split],
                                                                strict=True)]  # fmt: skip
    return out


def provenance(recipe_path: Path | None, servers: dict[str, str]) -> dict:
    """benchforge's version and git commit, the export date, the recipe file's SHA-256
    and the Label Studio version each round's server reported."""
    try:
        version = metadata.version("benchforge")
    except metadata.PackageNotFoundError:
        version = "unknown (not installed)"
    recipe_hash = None
    if recipe_path and Path(recipe_path).is_file():
        recipe_hash = hashlib.sha256(Path(recipe_path).read_bytes()).hexdigest()
    return {
        "benchforge version": version,
        "git commit": git_commit(),
        "exported": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "recipe sha256": recipe_hash,
        **{f"Label Studio ({name or 'main'} round)": v for name, v in servers.items()},
    }


def models_used(recipe: dict, classifier_cards: dict) -> str:
    """The models the run used: each detector with its model card's dev macro-F1, and the
    round-trip translators' checkpoints; "none" when no model was used."""
    out = []
    classifiers = recipe["filters"]["classifiers"]
    detectors = classifiers["detectors"] if classifiers.get("enabled", True) else {}
    for name, spec in sorted(detectors.items()):
        card = classifier_cards.get(name) or {}
        f1 = card.get("dev_macro_f1")
        model = spec["model"] or f"built-in {card.get('folder', '')}".strip()
        out.append(f"{name} detector {model} (dev macro-F1 "
                   f"{'n/a' if f1 is None else round(f1, 4)})")  # fmt: skip
    rtt = ((recipe.get("pairing") or {}).get("rtt")) or {}
    for way in ("forward", "backward"):
        spec = rtt.get(way)
        if spec:
            where = spec.get("model") or spec.get("endpoint")
            out.append(f"{way} translator {where} ({spec.get('backend')})")
    return "; ".join(out) or "none"


def git_commit() -> str:
    """The checkout's commit, with "+ uncommitted changes" when the tree differs."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10)  # fmt: skip
        if head.returncode != 0:
            return "unknown (not a git checkout)"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, timeout=10)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return "unknown (git not available)"
    return head.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def server_record(r: Round) -> Path:
    """Where ``pull`` keeps the version of the Label Studio server the round came from."""
    return r.annotations.with_name(r.annotations.stem + ".server.json")


def round_server(r: Round) -> str:
    """The Label Studio version ``pull`` read from the round's server."""
    record = server_record(r)
    if not record.is_file():
        return "unknown (not recorded by pull)"
    return json.loads(record.read_text(encoding="utf-8"))["label_studio"]


def guideline_facts(r: Round) -> dict | None:
    """The guideline the round showed (``pipelines.annotation.guidelines``): its file name,
    language and how many options it gives a hotkey; None when it has none."""
    from pipelines.annotation.guidelines import GuidelineError, round_guideline

    try:
        parsed = round_guideline(r.config, r.guideline)
    except (GuidelineError, OSError):
        return None
    return {"file": parsed.path.name, "lang": parsed.lang, "hotkeys": len(parsed.keys)}


def annotation_facts(r: Round, table: pd.DataFrame, simulated: bool) -> dict:
    """A round's figures for the data card: interface, overlap, annotators, the server's
    version (as ``pull`` read it) and when the annotations were made."""
    cancelled = table.get("cancelled", pd.Series(dtype=bool)).fillna(False).astype(bool)
    return {
        "config": Path(r.config).name,
        "guideline": guideline_facts(r),
        "server": round_server(r),
        "project": r.project,
        "overlap": r.overlap,
        "annotators": int(table["annotator_id"].nunique()),
        "annotations": int(table["annotation_id"].nunique()),
        "skipped": int(table.loc[cancelled, "annotation_id"].nunique()),
        "simulated": simulated,
        "simulate": r.simulate.model_dump() if simulated and r.simulate else None,
        "timeframe": timeframe(table),
    }


def licence_facts(recipe: Recipe, items: pd.DataFrame) -> dict:
    """The release licence, why, the attribution lines and the exported rows per source
    licence."""
    from pipelines.core.licenses import attribution_lines

    resolution = recipe.release_licence()
    used = set(items["source"])
    specs = [c for c in recipe.corpora if c.name in used]
    corpora = [c.model_dump() for c in specs]
    return {
        "release": resolution.release,
        "explain": resolution.explain(),
        "sources": {c["name"]: c["license"] for c in corpora},
        "attribution": attribution_lines(corpora),
        # the licence texts the sources ship, reproduced in the card (MIT's notice)
        "notices": {
            c.name: recipe.resolve(c.license_file).read_text(encoding="utf-8").strip()
            for c in specs
            if c.license_file
        },  # fmt: skip
        "scraped": [c.name for c in specs if c.scraped_user_text],
    }
