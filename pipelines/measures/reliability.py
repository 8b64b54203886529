"""Chance-corrected agreement of ratings, shared by the agreement rules and the
annotation value types (below both: ``pyproject.toml``'s layers).

Krippendorff's alpha (the ``krippendorff`` package) at the levels a value's scale
allows, and Fleiss' kappa (checked against statsmodels). ``ratings`` is a long table:
``item_id``, ``annotator_id``, ``value``. Figures are rounded by :func:`round_figure`."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def numeric_values(ratings: pd.DataFrame) -> pd.Series | None:
    """The values as floats when every one is a number, else None (nominal labels)."""
    values = pd.to_numeric(ratings["value"], errors="coerce")
    return None if values.isna().any() else values.astype(float)


# ---------------------------------------------------------------------------- figures


def reliability_matrix(ratings: pd.DataFrame, values: pd.Series) -> pd.DataFrame:
    """Annotators x items; NaN where an annotator did not rate an item."""
    frame = ratings.assign(v=values.to_numpy())
    return frame.pivot(index="annotator_id", columns="item_id", values="v").astype(float)


def alpha(matrix: np.ndarray, level: str) -> float | None:
    """Krippendorff's alpha (``krippendorff`` package); None where it is undefined (fewer
    than two values in the domain, or no item rated twice)."""
    import krippendorff

    pairable = (np.sum(~np.isnan(matrix), axis=0) >= 2).any() if matrix.size else False
    if not pairable or len(np.unique(matrix[~np.isnan(matrix)])) < 2:
        return None
    try:
        result = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    except (ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(result) else result


def alphas(ratings: pd.DataFrame) -> dict[str, float | None]:
    """Alpha at every level that fits the labels: all four for numbers, nominal else."""
    values = numeric_values(ratings)
    if values is None:
        codes = pd.Series(pd.factorize(ratings["value"].astype(str))[0], index=ratings.index)
        matrix = reliability_matrix(ratings, codes.astype(float)).to_numpy()
        return {"nominal": round_figure(alpha(matrix, "nominal"))}
    matrix = reliability_matrix(ratings, values).to_numpy()
    return {
        level: round_figure(alpha(matrix, level))
        for level in ("nominal", "ordinal", "interval", "ratio")
    }


def fleiss_kappa(table: np.ndarray) -> float:
    """Fleiss' kappa of an items x categories count table, every item rated by the same
    number of raters (Fleiss 1971, eq. 1-9), as ``statsmodels.stats.inter_rater.
    fleiss_kappa(table, method="fleiss")`` computes it (tested against it): statsmodels'
    import costs every run about 1 s of its 35 (issue 38), for five lines of arithmetic."""
    table = np.asarray(table, dtype=float)
    items, _ = table.shape
    raters = table.sum(axis=1)[0]
    p_cat = table.sum(axis=0) / (items * raters)
    p_item = ((table * table).sum(axis=1) - raters) / (raters * (raters - 1))
    p_mean, p_chance = p_item.mean(), (p_cat * p_cat).sum()
    return float((p_mean - p_chance) / (1 - p_chance))


def fleiss(ratings: pd.DataFrame) -> dict:
    """Fleiss' kappa (``fleiss_kappa``) over the items with the most common rating count."""
    per_item = ratings.groupby("item_id")["value"].agg(list)
    if per_item.empty:
        return {"kappa": None, "items": 0, "raters_per_item": 0}
    sizes = per_item.map(len)
    n = int(sizes.mode().max())
    used = per_item[sizes == n]
    if n < 2:
        return {"kappa": None, "items": int(len(used)), "raters_per_item": n}
    cats = sorted({str(v) for vs in used for v in vs})
    table = np.array([[sum(str(v) == c for v in vs) for c in cats] for vs in used])
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = fleiss_kappa(table) if len(cats) > 1 else float("nan")
    return {
        "kappa": round_figure(None if math.isnan(kappa) else kappa),
        "items": int(len(used)),
        "raters_per_item": n,
    }


def round_figure(x: float | None, digits: int = 4) -> float | None:
    """``x`` rounded to ``digits`` places; None for None or NaN (an undefined figure)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(x, digits)
