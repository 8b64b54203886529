"""Human performance (issue 35, item 5): separate annotators answer a sample of the
final test set as a model would, and their answers are scored against the gold labels.
KLUE reports it per task, JGLUE (Table 3: "Human") and KoBEST as well; the card shows
it beside the dataset.

Contract (:func:`human_scores`): from the human round's long table (``item_id``,
``annotator_id``, ``value``; skips left out) and the gold labels of the sampled items,

- on ratings (every gold label and answer a number): each person's Pearson r with the
  gold, and the Pearson r of the people's mean rating per item (KLUE-STS reports
  Pearson);
- on labels: each person's accuracy and macro F1 over the gold's classes
  (scikit-learn), and those of the people's majority answer per item (a tie counts as
  wrong).

Figures are over the items a person answered; ``items`` says how many.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines.agreement.qualification import answers_of


def _numeric(values: pd.Series) -> pd.Series | None:
    out = pd.to_numeric(values, errors="coerce")
    return None if out.isna().any() else out


def human_scores(annotations: pd.DataFrame, gold: pd.DataFrame) -> dict:
    """The figures (see the module docstring); ``gold``: ``item_id`` and ``label``."""
    from sklearn.metrics import accuracy_score  # here: the CLI loads every rule module

    answers = answers_of(annotations)
    truth = dict(zip(gold["item_id"].astype(str), gold["label"].astype(str), strict=True))
    answers = answers[answers["item_id"].isin(truth)]
    numeric = (
        _numeric(pd.Series(list(truth.values()))) is not None
        and _numeric(answers["value"]) is not None
    )
    classes = sorted(set(truth.values()))  # macro F1 over the gold's classes, not a "(tie)"
    people = []
    for who, mine in answers.groupby("annotator_id", sort=True):
        gold_of = mine["item_id"].map(truth)
        row = {"annotator_id": str(who), "items": len(mine)}
        if numeric:
            row["pearson"] = _pearson(mine["value"].astype(float), gold_of.astype(float))
        else:
            row["accuracy"] = round(float(accuracy_score(gold_of, mine["value"])), 4)
            row["macro_f1"] = _macro_f1(gold_of, mine["value"], classes)
        people.append(row)
    by_item = answers.groupby("item_id")["value"]
    if numeric:
        pooled = by_item.apply(lambda v: v.astype(float).mean())
        combined = {"pearson": _pearson(pooled, pooled.index.map(truth).astype(float))}
        kind = "rating"
    else:

        def majority(values: pd.Series) -> str:
            counts = values.value_counts()
            return str(counts.index[0]) if (counts == counts.max()).sum() == 1 else "(tie)"

        pooled = by_item.apply(majority)
        expected = pooled.index.map(truth)
        combined = {"accuracy": round(float(accuracy_score(expected, pooled)), 4),
                    "macro_f1": _macro_f1(expected, pooled, classes)}  # fmt: skip
        kind = "label"
    return {"kind": kind, "items": int(answers["item_id"].nunique()),
            "sampled": len(truth), "people": people, "combined": combined}  # fmt: skip


def _macro_f1(truth: object, answers: object, classes: list[str]) -> float:
    from sklearn.metrics import f1_score

    f1 = f1_score(truth, answers, average="macro", labels=classes, zero_division=0)
    return round(float(f1), 4)


def _pearson(x: pd.Series, y: pd.Series) -> float | None:
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.std(x) == 0 or np.std(y) == 0:
        return None
    return round(float(np.corrcoef(x, y)[0, 1]), 4)
