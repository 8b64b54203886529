"""Agreement's input: the long table of annotations read and checked (a bad row or
value is an error naming the file and the row), split into ratings, report flags
and blanks, and the per-annotator and per-label figures the rules report."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.agreement.settings import (
    AgreementError,
    AgreementSettingsBase,
)
from pipelines.annotation.label_config import REPORT_FIELDS
from pipelines.core.io import read_table
from pipelines.measures.reliability import alpha, round_figure


def read_annotations(path: Path) -> pd.DataFrame:
    """A Parquet or CSV long table with at least item_id, annotator_id and value."""
    if not path.is_file():
        raise AgreementError(f"{path}: file not found")
    if path.suffix not in (".parquet", ".csv"):
        raise AgreementError(f"{path}: expected a .parquet or .csv file")
    frame = read_table(path, AgreementError, {"item_id": str, "annotator_id": str, "value": str})
    missing = [c for c in ("item_id", "annotator_id", "value") if c not in frame.columns]
    if missing:
        raise AgreementError(f"{path}: no column {missing} (columns: {list(frame.columns)})")
    for col in ("item_id", "annotator_id"):
        empty = frame[col].isna()
        if empty.any():
            row = int(np.flatnonzero(empty.to_numpy())[0]) + 2 if path.suffix == ".csv" else None
            where = f"line {row}" if row else f"row {int(np.flatnonzero(empty.to_numpy())[0])}"
            raise AgreementError(f"{path}: {where}: empty {col}")
    frame = frame.copy()
    frame["item_id"] = frame["item_id"].astype(str)
    frame["annotator_id"] = frame["annotator_id"].astype(str)
    return frame


def split_annotations(
    frame: pd.DataFrame, settings: AgreementSettingsBase
) -> tuple[pd.DataFrame, dict[str, dict[str, int]], list[dict]]:
    """The ratings of the chosen field (item_id, annotator_id, value, role), the report
    flags per item ({item: {flag: annotators}}) and a dropped record (kind ``rating``,
    reason ``empty_value``, the table row) for each annotation that is not cancelled but
    has no value: nothing is dropped silently (issue 32). Cancelled annotations carry no
    rating."""
    work = frame
    if "cancelled" in work.columns:
        work = work[~work["cancelled"].fillna(False).astype(bool)]
    flags: dict[str, dict[str, set]] = {}

    def add_flag(item: str, who: str, text: object) -> None:
        if isinstance(text, str) and text:
            for flag in text.split("|"):
                flags.setdefault(item, {}).setdefault(flag, set()).add(who)

    if "report_flags" in work.columns:
        for item, who, text in work[["item_id", "annotator_id", "report_flags"]].itertuples(
            index=False
        ):
            add_flag(item, who, text)
    if "field" in work.columns:
        reports = work[work["field"].isin(REPORT_FIELDS)]
        for item, who, text in reports[["item_id", "annotator_id", "value"]].itertuples(
            index=False
        ):
            add_flag(item, who, text)
        answers = work[~work["field"].isin(REPORT_FIELDS) & work["field"].notna()]
        fields = sorted(answers["field"].unique())
        chosen = settings.answer_field or (fields[0] if len(fields) == 1 else None)
        if chosen is None:
            raise AgreementError(f"the annotations hold fields {fields}: choose one with --field")
        if chosen not in fields:
            raise AgreementError(f"no field {chosen!r} in the annotations (fields: {fields})")
        work = answers[answers["field"] == chosen]
    ratings = work[["item_id", "annotator_id", "value"]].copy()
    ratings["role"] = work["role"].fillna("") if "role" in work.columns else ""
    if "suggested" in work.columns and work["suggested"].notna().any():
        ratings["suggested"] = work["suggested"]  # the pre-loaded suggestion (issue 55)
    empty = ratings["value"].isna() | (ratings["value"].astype(str).str.strip() == "")
    check_values(ratings[~empty], settings)
    dup = ratings.duplicated(["item_id", "annotator_id"], keep=False)
    if dup.any():
        first = ratings[dup].iloc[0]
        raise AgreementError(
            f"annotator {first.annotator_id!r} rated item {first.item_id!r} more than once"
        )
    counts = {item: {f: len(who) for f, who in per.items()} for item, per in flags.items()}
    blanks = [
        {"kind": "rating", "id": f"{row.item_id}/{row.annotator_id}", "reason": "empty_value",
         "detail": f"row {int(index) + 1}: an annotation that is not cancelled has no value"}
        for index, row in ratings[empty].iterrows()
    ]  # fmt: skip
    return ratings[~empty].reset_index(drop=True), counts, blanks


def _canonical(value: object) -> str:
    """A value as compared with the allowed answers: numbers by value ("5" == "5.0")."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    return repr(number) if math.isfinite(number) else text


def check_values(ratings: pd.DataFrame, settings: AgreementSettingsBase) -> None:
    """Every rating is one of ``settings.values`` (when given), and for the mean rule a
    finite number; the error names the table row (counted from 1), the annotator, the
    item and the value."""

    def fail(index: object, problem: str) -> None:
        row = ratings.loc[index]
        raise AgreementError(
            f"row {int(index) + 1}: annotator {row['annotator_id']!r}, item "
            f"{row['item_id']!r}: value {row['value']!r} {problem}"
        )

    if settings.values is not None:
        allowed = {_canonical(v) for v in settings.values}
        bad = ~ratings["value"].map(_canonical).isin(allowed)
        if bad.any():
            fail(bad.idxmax(), f"is not one of the interface's answers {settings.values}")
    if settings.numeric:
        numbers = pd.to_numeric(ratings["value"], errors="coerce").astype(float)
        bad = ~np.isfinite(numbers.to_numpy())
        if bad.any():
            fail(ratings.index[int(np.flatnonzero(bad)[0])], "is not a finite number")


def _rating_counts(values: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """How many annotators (rows) gave each rating of ``scale`` to each item (column)."""
    return np.stack([(values == v).sum(axis=0) for v in scale]).astype(float)


def _others_mode(counts: np.ndarray, own: np.ndarray, scale: np.ndarray,
                 mean_others: np.ndarray) -> np.ndarray:  # fmt: skip
    """Per item, the rating most of the other annotators gave (``counts``: every
    annotator's, :func:`_rating_counts`; ``own``: the annotator's ratings, taken off); a
    tie goes to the tied rating nearest their mean; NaN where nobody else rated."""
    counts = counts - (own[None, :] == scale[:, None])
    distance = np.abs(scale[:, None] - np.nan_to_num(mean_others)[None, :])
    best = scale[np.argmax(counts - 1e-6 * distance, axis=0)]
    return np.where(counts.sum(axis=0) > 0, best, np.nan)


def annotator_figures(
    matrix: pd.DataFrame, min_shared: int, level: str = "interval"
) -> pd.DataFrame:
    """Per annotator: items rated, items shared with others, Pearson r and Krippendorff's
    alpha at ``level`` of their ratings against the mean of the other annotators.

    KLUE 3.2.1 screens STS annotators by alpha **(nominal)**: a nominal (or ordinal)
    alpha compares categories, and a mean of ratings is not one, so at those levels the
    annotator is compared with the others' most common rating per item (their mode; a
    tie goes to the tied rating nearest their mean). Pearson is always against the mean."""
    rows = []
    values = matrix.to_numpy()
    scale = np.unique(values[~np.isnan(values)])
    categorical = level in ("nominal", "ordinal")
    # every annotator's ratings counted once; each annotator's own are taken off per row
    counts = _rating_counts(values, scale) if categorical else None
    for pos, annotator in enumerate(matrix.index):
        own = values[pos]
        others = np.delete(values, pos, axis=0)
        with np.errstate(invalid="ignore"), np.testing.suppress_warnings() as sup:
            sup.filter(RuntimeWarning)
            mean_others = np.nanmean(others, axis=0) if len(others) else np.full_like(own, np.nan)
        shared = ~np.isnan(own) & ~np.isnan(mean_others)
        r = a = None
        if shared.sum() >= max(2, min_shared):
            x, y = own[shared], mean_others[shared]
            if x.std() > 0 and y.std() > 0:
                r = float(np.corrcoef(x, y)[0, 1])
            if categorical:
                y = _others_mode(counts, own, scale, mean_others)[shared]
            a = alpha(np.vstack([x, y]), level)
        rows.append(
            {
                "annotator_id": annotator,
                "items": int((~np.isnan(own)).sum()),
                "shared_items": int(shared.sum()),
                "pearson": round_figure(r),
                "alpha": round_figure(a),
            }
        )
    return pd.DataFrame(rows, columns=["annotator_id", "items", "shared_items", "pearson", "alpha"])


def label_agreement(ratings: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Per annotator of a categorical rule (no screening): items answered, how many of
    them have a gold label, the share of those where the annotator chose the gold label,
    and the share where they chose what the other annotators' majority chose (their own
    vote left out; items where the others tie or nobody else answered are not counted)."""
    values = ratings.assign(value=ratings["value"].astype(str))
    gold_of = dict(zip(gold["item_id"], gold["label"].astype(str), strict=True))
    counts = values.groupby(["item_id", "value"]).size()
    rows = []
    for annotator, own in values.groupby("annotator_id", sort=True):
        with_gold = [(i, v) for i, v in zip(own["item_id"], own["value"], strict=True)
                     if i in gold_of]  # fmt: skip
        same, compared = 0, 0
        for item, value in zip(own["item_id"], own["value"], strict=True):
            others = counts.loc[item].copy()
            others[value] -= 1
            others = others[others > 0]
            if others.empty or (others == others.max()).sum() > 1:
                continue
            compared += 1
            same += int(others.idxmax() == value)
        rows.append({
            "annotator_id": annotator,
            "items": int(len(own)),
            "gold_items": len(with_gold),
            "gold_agreement": round_figure(sum(v == gold_of[i] for i, v in with_gold)
                                           / len(with_gold)) if with_gold else None,
            "others_agreement": round_figure(same / compared) if compared else None,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=["annotator_id", "items", "gold_items", "gold_agreement",
                                       "others_agreement"])  # fmt: skip
