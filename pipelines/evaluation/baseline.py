"""``benchforge baseline``: how hard a built dataset is for a small fine-tuned encoder.

The papers end with baselines on the datasets they built (KLUE Table 7, KorNLI/KorSTS
4, JGLUE Table 8, KoBEST Table 3). No model hub can be reached here, so the baseline is
the project's own small BERT (:mod:`pipelines.models.train_classifier`): a pretrained
encoder folder when one is given or present (``benchforge classifiers pretrain``), else
a BPE tokenizer trained on the train split's texts and an encoder trained from scratch.
It is fine-tuned on train, the epoch with the best dev figure kept, and dev and test
are scored with the task kind's metrics (:mod:`pipelines.evaluation.metrics`), the
predictions written beside them so that ``benchforge evaluate`` gives the same figures.

How each target becomes a classifier:

- ``label``: a class per text (a pair is read as ``text [SEP] pair``);
- ``score``: a similarity read as its nearest whole value (0-5) and predicted as the
  expectation over those classes;
- ``choice``: each (question, option) pair scored right/wrong, the option with the
  highest probability of being right is the answer;
- ``tags``: the character tagger of :mod:`pipelines.models.char_tagger` (KLUE-NER's);
- ``answer``: an extractive reader (start and end of the answer in the paragraph).

Beside each scored split the result holds always answering train's majority (``majority``)
and whether the predictions collapsed (``collapse``; :mod:`pipelines.evaluation.references`):
the card shows the first as a row and turns a collapsed model's row into a warning.

A demo's splits hold tens of items: its baseline says what the pipeline computes, not
how hard the paper's dataset is; at paper size (on a GPU) it does.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from pipelines.core.io import sha256_file, write_json, write_text
from pipelines.evaluation.evaluate import dataset_folder, score, task_of
from pipelines.evaluation.fitters import FITTERS, BaselineSettings
from pipelines.evaluation.references import (
    chance_row,
    collapse,
    majority_answer,
    majority_row,
)
from pipelines.evaluation.spec import Evaluation, EvaluationError, read_records
from pipelines.export.records import SPLITS

log = logging.getLogger(__name__)


def default_encoder(language: str) -> Path | None:
    """The project's pretrained encoder for ``language``, when present:
    ``$BENCHFORGE_HOME/models/encoder-<language>`` (benchforge's data folder,
    :func:`pipelines.annotation.ls_server.home`)."""
    from pipelines.annotation.ls_server import home

    folder = home() / "models" / f"encoder-{language}"
    return folder if (folder / "config.json").is_file() else None


FOLDS = 5


def release_files(dataset: Path, ev: Evaluation, card: dict) -> dict[str, Path]:
    """Each split's release file present in ``dataset``. A split file the release was
    written with (its ``manifest.json`` lists it, or the card's export counts the split)
    but the folder lacks is an error: a release without its train split is not scored
    as one of evaluation splits only (cross-fitted) behind the user's back."""
    manifest = dataset / "manifest.json"
    listed = set(json.loads(manifest.read_text(encoding="utf-8")).get("files") or {}) \
        if manifest.is_file() else set()  # fmt: skip
    exported = {Path(n).stem for n in ((card.get("export") or {}).get("files") or {})}
    files: dict[str, Path] = {}
    for split in SPLITS:
        if split not in ev.files:
            continue
        path = ev.split_file(dataset, split)
        if path.is_file():
            files[split] = path
        elif path.name in listed or split in exported:
            raise EvaluationError(
                f"{path}: missing, although the release was written with it (its "
                "manifest.json or card lists it); restore the release (copy it back, or run "
                "the rebuild again) before a baseline"
            )
    return files


def _cross_fitted(ev: Evaluation, data: dict[str, list[dict]], splits: list[str],
                  settings: BaselineSettings) -> tuple[dict, list[dict]]:  # fmt: skip
    """Each item of ``splits`` predicted by a model fine-tuned on the other folds of its
    split (no dev for epoch selection: every epoch is run)."""
    rng = np.random.default_rng(settings.seed)
    out: dict[str, list[dict]] = {}
    history: list[dict] = []
    for split in splits:
        records = data[split]
        fold = rng.permutation(len(records)) % min(FOLDS, len(records))
        preds: list[dict | None] = [None] * len(records)
        for k in range(int(fold.max()) + 1):
            train = [r for r, f in zip(records, fold, strict=True) if f != k]
            held = [i for i, f in enumerate(fold) if f == k]
            if not train or not held:
                continue
            got, h = FITTERS[ev.target](
                ev, {"train": train, "dev": [], "test": [records[i] for i in held]},
                replace(settings, patience=0),
            )  # fmt: skip
            for i, p in zip(held, got["test"], strict=True):
                preds[i] = p
            history.append({"split": split, "fold": k, "train": len(train), "epochs": h})
        out[split] = [p if p is not None else {"prediction": None} for p in preds]
    return out, history


def baseline(run_dir: Path, settings: BaselineSettings | None = None, write_card: bool = True
             ) -> dict:  # fmt: skip
    """Fine-tune the baseline on RUN_DIR's train split, score dev and test, write
    RUN_DIR/baseline/ (``baseline.json``, ``dev.predictions.jsonl``,
    ``test.predictions.jsonl``) and, with ``write_card``, the figures into the card
    (``card.json``'s ``baseline``, the card rendered again)."""
    from pipelines.evaluation import answers, tags  # noqa: F401 - their fitters

    settings = settings or BaselineSettings()
    settings.check()  # every setting before the release is read
    run_dir = Path(run_dir)
    dataset = dataset_folder(run_dir)
    name, ev = task_of(dataset)
    card = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
    language = (card.get("recipe") or {}).get("language", "ko")
    if settings.encoder is None:
        found = default_encoder(language)
        settings.encoder = str(found) if found else None
    if "train" not in ev.files:
        raise EvaluationError(
            f"task kind {name!r}: the release has no train split to fine-tune on "
            f"(splits: {sorted(ev.files)}); its card's baselines are the paper's own"
        )
    if ev.target not in FITTERS:
        raise EvaluationError(f"task kind {name!r}: no baseline for target {ev.target!r}")
    files = release_files(dataset, ev, card)
    data = {s: read_records(p) for s, p in files.items()}
    for split in SPLITS:
        data.setdefault(split, [])
    if "train" in files and not data["train"]:
        raise EvaluationError(f"{files['train']}: the train split has no items; a baseline "
                              "needs items to learn from")  # fmt: skip
    scored = [s for s in ("dev", "test") if data[s]]
    if not scored:
        raise EvaluationError(f"{dataset}: no dev or test items to score")
    fingerprint = {"settings": asdict(settings),
                   "files": {s: sha256_file(p) for s, p in files.items()}}  # fmt: skip
    known = run_dir / "baseline" / "baseline.json"
    if known.is_file():
        old = json.loads(known.read_text(encoding="utf-8"))
        if old.get("fingerprint") == fingerprint:  # the same files and settings: done
            if write_card:
                add_to_card(run_dir, old)
            return {**old, "cached": True}
    start = time.perf_counter()
    if "train" in files:
        predictions, history = FITTERS[ev.target](ev, data, settings)
        protocol = "fine-tuned on train, the epoch with the best dev figure kept"
    else:  # a release of evaluation splits only (KorNLI/KorSTS demos translate dev)
        predictions, history = _cross_fitted(ev, data, scored, settings)
        protocol = (
            f"{FOLDS}-fold cross-fitted on each split (no train split: every item "
            "scored by a model trained on the other folds, all epochs)"
        )
    seconds = round(time.perf_counter() - start, 1)
    from pipelines.models.checkpoints import default_device

    model = next((h["model"] for h in history if isinstance(h, dict) and "model" in h), None)
    result = {
        "task_kind": name,
        "model": model
        or "benchforge small BERT"
        + (
            f", encoder {Path(settings.encoder).name}"
            if settings.encoder
            else ", trained from scratch"
        ),
        "protocol": protocol,
        "settings": {k: v for k, v in asdict(settings).items() if k != "device"},
        "device": settings.device or default_device(),
        "seconds": seconds,
        "train_items": len(data["train"]),
        "epochs": history,
        "metrics_source": ev.source,
        "files": {
            s: {"name": p.name, "sha256": fingerprint["files"][s]} for s, p in files.items()
        },  # fmt: skip
        "fingerprint": fingerprint,
        "splits": {},
    }
    folder = run_dir / "baseline"
    majority = majority_answer(ev, data["train"])
    for split in scored:
        recs, preds = data[split], predictions[split]
        lines = [{"guid": g, **p} for g, p in zip(ev.ids(recs), preds, strict=True)]
        write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                   folder / f"{split}.predictions.jsonl")  # fmt: skip
        gold = [ev.gold(r) for r in recs]
        pred = [p["prediction"] for p in preds]
        probs = None
        if all("probabilities" in p for p in preds):
            labels = ev.classes(gold)
            probs = np.asarray([[p["probabilities"].get(n, 0.0) for n in labels] for p in preds])
        result["splits"][split] = {
            "items": len(recs),
            "metrics": split_metrics(ev, recs, pred, probs),
            "collapse": collapse(ev, gold, pred, settings.collapse_share,
                                 settings.collapse_spread),
        }  # fmt: skip
        if chance := chance_row(ev):  # a score's correlations at chance (issue 54)
            result["splits"][split]["chance"] = {"metrics": chance}
        if majority is not None:  # the least a model must beat (issue 54)
            result["splits"][split]["majority"] = {
                "answer": str(majority),
                "metrics": majority_row(ev, majority, recs),
            }
        if ev.reference is not None:  # the rule it must beat (a parser's right-branching)
            result["splits"][split]["reference"] = {
                "name": ev.reference_name,
                "metrics": split_metrics(ev, recs, ev.reference(data["train"], recs)),
            }
    write_json(result, folder / "baseline.json")
    if write_card:
        add_to_card(run_dir, result)
    return result


def split_metrics(ev: Evaluation, records: list[dict], pred: list, probs: object = None) -> dict:
    """The split's metrics of ``pred`` (one per record): the task kind's own scorer
    when it has one (KoBBQ, KLUE-DP), else the registered metrics."""
    if ev.scorer is not None:
        given = {g: {"prediction": p} for g, p in zip(ev.ids(records), pred, strict=True)}
        return ev.scorer(records, given, "baseline")
    return score(ev, [ev.gold(r) for r in records], pred, probs, records)


def add_to_card(run_dir: Path, result: dict) -> Path:
    """Put the baseline's figures into RUN_DIR's card.json and render the card again."""
    from pipelines.export.data_card import regenerate

    dataset = dataset_folder(Path(run_dir))
    path = dataset / "card.json"
    facts = json.loads(path.read_text(encoding="utf-8"))
    facts["baseline"] = {k: v for k, v in result.items() if k != "epochs"}
    write_json(facts, path)
    manifest_path = dataset / "manifest.json"
    if manifest_path.is_file():  # the manifest records card.json's new hash
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if "card.json" in manifest.get("files", {}):
            manifest["files"]["card.json"] = sha256_file(path)
            write_json(manifest, manifest_path)
    from pipelines.export.manifest import refresh_release_manifest

    refresh_release_manifest(dataset, ["card.json"])  # issue 51: what card check verifies
    return regenerate(dataset.parent)
