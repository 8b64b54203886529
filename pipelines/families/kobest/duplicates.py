"""The near-duplicate review (KoBEST 3.4: linguists found COPA items made by swapping
the premise and the answer of another item and changing the question).

``near_duplicates``: pairs of items whose normalised text (NFKC, lower case, no spaces
or punctuation) has a rapidfuzz ratio of ``near_duplicate_min`` or more, in every task.
``copa_swaps``: pairs of COPA items with opposite questions where the premise of each is
close to the answer of the other (both ratios at or over ``swap_min``). Both compare all
pairs with ``rapidfuzz.process.cdist`` (C++, all cores), in blocks of rows.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pandas as pd
from rapidfuzz import fuzz
from rapidfuzz.process import cdist

BLOCK = 2048
PAIR_COLUMNS = ["item_a", "item_b", "kind", "score", "text_a", "text_b"]


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\W_]+", "", text)


def _pairs_over(a: list[str], b: list[str], cutoff: float, same: bool) -> list[tuple]:
    out = []
    for start in range(0, len(a), BLOCK):
        scores = cdist(
            a[start : start + BLOCK],
            b,
            scorer=fuzz.ratio,
            score_cutoff=cutoff,
            dtype=np.float32,
            workers=-1,
        )
        rows, cols = np.nonzero(scores >= cutoff)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            i = start + r
            if not same or i < c:
                out.append((i, c, float(scores[r, c])))
    return out


def near_duplicates(items: pd.DataFrame, fields: tuple[str, ...], minimum: float) -> pd.DataFrame:
    """Pairs (``item_a`` before ``item_b`` in ``items``' order) of near-duplicate items
    with their ratio (0-100)."""
    texts = [" ".join(str(r[f]) for f in fields) for r in items.to_dict("records")]
    norm = [normalise(t) for t in texts]
    ids = items["item_id"].astype(str).tolist()
    rows = [
        (ids[i], ids[j], "near_duplicate", round(s, 2), texts[i], texts[j])
        for i, j, s in _pairs_over(norm, norm, minimum, True)
    ]
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def copa_answer(item: dict) -> str:
    return str(item["alternative_1"] if int(item["label"]) == 0 else item["alternative_2"])


def copa_swaps(items: pd.DataFrame, minimum: float) -> pd.DataFrame:
    """Pairs of COPA items that are swaps of one another: questions differ (원인 / 결과),
    and the premise of each is close to the answer of the other; the score is the lower
    of the two ratios."""
    recs = items.to_dict("records")
    premises = [normalise(str(r["premise"])) for r in recs]
    answers = [normalise(copa_answer(r)) for r in recs]
    ids = items["item_id"].astype(str).tolist()
    forward = {(i, j): s for i, j, s in _pairs_over(premises, answers, minimum, False) if i != j}
    rows = []
    for (i, j), s in forward.items():
        back = forward.get((j, i))
        if i < j and back is not None and recs[i]["question"] != recs[j]["question"]:
            rows.append(
                (
                    ids[i],
                    ids[j],
                    "copa_swap",
                    round(min(s, back), 2),
                    f"{recs[i]['premise']} ({recs[i]['question']}) {copa_answer(recs[i])}",
                    f"{recs[j]['premise']} ({recs[j]['question']}) {copa_answer(recs[j])}",
                )
            )
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)
