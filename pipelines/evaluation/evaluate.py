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
    utf8_text,
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
    """The release records of ``split``; a split file the release lacks is an error
    naming the split files it has."""
    path = ev.split_file(dataset, split)
    if not path.is_file():
        present = [name for name in ev.files.values() if (Path(dataset) / name).is_file()]
        raise EvaluationError(f"{path}: release file not found (this release's split files: "
                              f"{', '.join(present) or 'none'})")  # fmt: skip
    return read_records(path)


def read_predictions(path: Path) -> dict[str, dict]:
    """guid -> the prediction's object, from a JSON Lines file (errors name the line)."""
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(f"{path}: predictions file not found")
    out: dict[str, dict] = {}
    for n, line in enumerate(utf8_text(path).split("\n"), start=1):
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


def _listing(values: Iterable[str]) -> str:
    return ", ".join(values)


def _number(value: object) -> bool:
    """A JSON number (not a truth value, which Python counts as one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _coerce(ev: Evaluation, value: object, record: dict, where: str) -> object:
    """A prediction as the target's kind, or an error naming ``where``, the value and
    what is allowed: a value out of the task's set is refused, not scored as wrong."""
    target = ev.target
    if target == "score":
        if not (_number(value) or isinstance(value, str)):
            raise EvaluationError(f"{where}: a score must be a number, got {value!r}")
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
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if not _number(value) or not math.isfinite(value) or value != int(value):  # type: ignore[arg-type]
            raise EvaluationError(
                f"{where}: a choice is an index 0-{len(options) - 1} or one of the options' "
                f"texts, got {value!r}"
            )
        index = int(value)  # type: ignore[arg-type]
        if not 0 <= index < len(options):
            raise EvaluationError(f"{where}: choice {index} is not 0-{len(options) - 1}")
        return index
    allowed = ev.allowed()
    if target == "tags":
        if isinstance(value, str):
            tags = value.split()
        elif isinstance(value, list) and all(isinstance(t, str) for t in value):
            tags = list(value)
        else:
            raise EvaluationError(
                f"{where}: tags are a list of one tag a character, or one string of them "
                f"separated by spaces, got {value!r}"
            )
        want = len(ev.gold(record))  # type: ignore[arg-type]
        if len(tags) != want:
            raise EvaluationError(f"{where}: {len(tags)} tags for {want} characters")
        for i, tag in enumerate(tags, start=1):
            if allowed and tag not in allowed:
                raise EvaluationError(
                    f"{where}: tag {tag!r} at character {i} is not one of the task's tags "
                    f"({_listing(allowed)})"
                )
        return tags
    if target == "label":
        # a class is its name; a class named by a number ("0", "1") may be the number
        whole = _number(value) and isinstance(value, int)
        name = str(value) if isinstance(value, str) or whole else None
        if name is None or (allowed and name not in allowed):
            raise EvaluationError(
                f"{where}: prediction {value!r} is not one of the task's classes"
                + (f" ({_listing(allowed)})" if allowed else " (a class is its name)")
            )
        return name
    if not isinstance(value, str):
        raise EvaluationError(f'{where}: an answer is a text ("" for no answer), got {value!r}')
    return value


def _probabilities(p: object, labels: list[str], where: str) -> list[float]:
    """A prediction's probabilities in ``labels`` order (a class it omits: 0)."""
    if not isinstance(p, dict):
        raise EvaluationError(f"{where}: probabilities is an object class -> probability, "
                              f"got {p!r}")  # fmt: skip
    for name, x in p.items():
        if name not in labels:
            raise EvaluationError(f"{where}: probabilities of {name!r}, not one of the task's "
                                  f"classes ({_listing(labels)})")  # fmt: skip
        if not _number(x) or not 0.0 <= x <= 1.0:
            raise EvaluationError(f"{where}: the probability of {name!r} must be a number "
                                  f"0-1, got {x!r}")  # fmt: skip
    return [float(p.get(label, 0.0)) for label in labels]


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
            probs.append(_probabilities(row["probabilities"], labels, where))
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
