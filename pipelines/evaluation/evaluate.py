"""``benchforge evaluate``: score predictions on a built dataset with the metrics its
paper reports (:mod:`pipelines.evaluation.metrics`, declared by the task kind's
:class:`~pipelines.evaluation.spec.Evaluation`).

Predictions are JSON Lines, one object a line: ``guid`` (the item's id: the value of
the release's id field, ``guid`` in KLUE's layout, ``sentence_pair_id`` in JSTS's,
``q_id`` in JCommonsenseQA's, ...) and ``prediction`` (a class name, a number, a choice
index, a list of tags a character, or an answer text), and optionally
``probabilities`` (class -> probability, for AUPRC). Every item of the split needs one
prediction; a guid the split does not have, a repeated one or a value of the wrong kind
is an error naming the file and the line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from pipelines.evaluation.metrics import METRICS
from pipelines.evaluation.spec import (
    SPLIT_ALIASES,
    Evaluation,
    EvaluationError,
    read_records,
)


def dataset_folder(run_dir: Path) -> Path:
    """RUN_DIR/dataset, or RUN_DIR itself when it is the dataset folder."""
    run_dir = Path(run_dir)
    if (run_dir / "dataset" / "card.json").is_file():
        return run_dir / "dataset"
    if (run_dir / "card.json").is_file():
        return run_dir
    raise EvaluationError(
        f"{run_dir}: no finished rebuild here (neither {run_dir}/dataset/card.json nor "
        f"{run_dir}/card.json exists)"
    )


def task_of(dataset: Path) -> tuple[str, Evaluation]:
    """The task kind named by the release's card.json and its evaluation."""
    from pipelines.core.plugins import TASK_KINDS  # the families, found by name

    card = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
    name = card.get("task_kind")
    kind = TASK_KINDS.get(name)
    if kind.evaluation is None:
        raise EvaluationError(f"task kind {name!r} declares no evaluation")
    return name, kind.evaluation


def gold_records(dataset: Path, split: str, ev: Evaluation) -> list[dict]:
    return read_records(ev.split_file(dataset, split))


def read_predictions(path: Path) -> dict[str, dict]:
    """guid -> the prediction's object, from a JSON Lines file (errors name the line)."""
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(f"{path}: predictions file not found")
    out: dict[str, dict] = {}
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvaluationError(f"{path}, line {n}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or "guid" not in row or "prediction" not in row:
                raise EvaluationError(
                    f"{path}, line {n}: a prediction is an object with 'guid' and 'prediction'"
                )
            guid = str(row["guid"])
            if guid in out:
                raise EvaluationError(f"{path}, line {n}: guid {guid!r} is predicted twice")
            row["_line"] = n
            out[guid] = row
    return out


def _coerce(ev: Evaluation, value: object, record: dict, where: str) -> object:
    """A prediction as the target's kind, or an error naming ``where``."""
    target = ev.target
    if target == "score":
        try:
            x = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise EvaluationError(f"{where}: a score must be a number, got {value!r}") from None
        if not math.isfinite(x):
            raise EvaluationError(f"{where}: a score must be finite, got {value!r}")
        return x
    if target == "choice":
        options = ev.choices(record) if ev.choices else []
        if isinstance(value, str) and value in options:
            return options.index(value)
        try:
            index = int(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise EvaluationError(
                f"{where}: a choice is an index 0-{len(options) - 1} or one of the options' "
                f"texts, got {value!r}"
            ) from None
        if not 0 <= index < len(options):
            raise EvaluationError(f"{where}: choice {index} is not 0-{len(options) - 1}")
        return index
    if target == "tags":
        tags = value.split() if isinstance(value, str) else list(value)  # type: ignore[arg-type]
        want = len(ev.gold(record))  # type: ignore[arg-type]
        if len(tags) != want:
            raise EvaluationError(f"{where}: {len(tags)} tags for {want} characters")
        return [str(t) for t in tags]
    if value is None:
        return ""
    return str(value)


def check_ids(ev: Evaluation, records: list[dict], predictions: dict[str, dict], source: str
              ) -> list[str]:  # fmt: skip
    """The records' guids, once every prediction is of an item of the split and every
    item has one (an error names ``source`` and the line)."""
    ids = ev.ids(records)
    known = set(ids)
    for guid, row in predictions.items():
        if guid not in known:
            raise EvaluationError(
                f"{source}, line {row['_line']}: guid {guid!r} is not an item of this split"
            )
    missing = [g for g in ids if g not in predictions]
    if missing:
        raise EvaluationError(
            f"{source}: {len(missing)} of {len(ids)} items have no prediction "
            f"(first: {missing[:3]})"
        )
    return ids


def align(ev: Evaluation, records: list[dict], predictions: dict[str, dict], source: str
          ) -> tuple[list, list, np.ndarray | None]:  # fmt: skip
    """Gold values, predictions and probabilities (or None) in the records' order."""
    ids = check_ids(ev, records, predictions, source)
    labels = ev.classes([ev.gold(r) for r in records])
    gold, pred, probs = [], [], []
    have_probs = all("probabilities" in predictions[g] for g in ids)
    for guid, record in zip(ids, records, strict=True):
        row = predictions[guid]
        where = f"{source}, line {row['_line']}"
        gold.append(ev.gold(record))
        pred.append(_coerce(ev, row["prediction"], record, where))
        if have_probs:
            p = row["probabilities"]
            if not isinstance(p, dict):
                raise EvaluationError(f"{where}: probabilities is an object class -> probability")
            probs.append([float(p.get(label, 0.0)) for label in labels])
    return gold, pred, (np.asarray(probs) if have_probs and probs else None)


def score(ev: Evaluation, gold: list, pred: list, probabilities: np.ndarray | None = None,
          records: list[dict] | None = None) -> dict[str, float | None]:  # fmt: skip
    """Every metric of ``ev`` (x 100, rounded to 2 places; None when undefined)."""
    labels = ev.classes(gold)
    if ev.target == "choice":
        gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    out: dict[str, float | None] = {}
    for name in ev.metrics:
        m = METRICS.get(name)
        if m.needs == "probabilities" and probabilities is None:
            out[name] = None
            continue
        value = m.fn(gold, pred, probabilities, labels)
        out[name] = None if value is None or not math.isfinite(value) else round(float(value), 2)
    return out


def evaluate(run_dir: Path, split: str, predictions: Path) -> dict:
    """Score ``predictions`` on ``split`` of the rebuild in ``run_dir``: the task kind,
    the split, the number of items, each metric, and where the paper defines them."""
    dataset = dataset_folder(run_dir)
    name, ev = task_of(dataset)
    records = gold_records(dataset, split, ev)
    given = read_predictions(predictions)
    if ev.scorer is not None:
        check_ids(ev, records, given, str(predictions))
        result = ev.scorer(records, given, str(predictions))
    else:
        gold, pred, probs = align(ev, records, given, str(predictions))
        result = score(ev, gold, pred, probs, records)
    return {
        "task_kind": name,
        "split": SPLIT_ALIASES.get(split, split),
        "file": ev.split_file(dataset, split).name,
        "items": len(records),
        "metrics": result,
        "source": ev.source,
    }


def metric_lines(result: dict) -> Iterable[str]:
    """The result as a readable block (the CLI's output)."""
    yield f"{result['task_kind']} {result['split']} ({result['file']}, {result['items']} items)"
    for name, value in result["metrics"].items():
        yield f"  {name:<18} {'n/a' if value is None else f'{value:.2f}'}"
    yield f"  (as defined in {result['source']})"
