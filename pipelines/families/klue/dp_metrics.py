"""KLUE-DP's metrics in ``benchforge evaluate`` (issue 57, item 6): UAS and LAS, per
style as well (KLUE 1.1: DP is "analysed per domain", formal and colloquial), and the
variant KLUE's published baseline computes, under its own names.

A prediction is ``{"guid": ..., "prediction": {"head": [...], "deprel": [...]}}`` (or
``[[head, deprel], ...]``), one head (0 for the root) and label per word of the
sentence; a wrong number of words, a head that is not a word of the sentence or not a
whole number is an error naming the file and the guid.

- ``uas`` / ``las``: the share of words with the gold head / with the gold head and
  label, over every word (x 100), the standard attachment scores.
- ``klue_uas_macro_f1``, ``klue_uas_micro_f1``, ``klue_las_macro_f1``,
  ``klue_las_micro_f1``: as KLUE's baseline code computes them
  (``klue_baseline/metrics/functional.py``): UAS as F1 over head *positions* taken as
  classes (macro: each position a class; micro: equal to UAS's accuracy), LAS as F1
  over labels where a label beyond KLUE's 15 most frequent (:data:`KLUE_LABEL_ORDER`,
  the release's label order) is merged into one ``others`` class and a word with a
  wrong head gets a padding label that matches nothing. Published KLUE-DP figures are
  comparable only with these; the card says which is which.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.evaluation.spec import EvaluationError

# KLUE-DP v1.1's labels in the order of KLUE's baseline (most frequent first); its LAS
# merges every label after the first 15 into "others"
KLUE_LABEL_ORDER = [
    "NP",
    "NP_AJT",
    "VP",
    "NP_SBJ",
    "VP_MOD",
    "NP_OBJ",
    "AP",
    "NP_CNJ",
    "NP_MOD",
    "VNP",
    "DP",
    "VP_AJT",
    "VNP_MOD",
    "NP_CMP",
    "VP_SBJ",
    "VP_CMP",
    "VP_OBJ",
    "VNP_CMP",
    "AP_MOD",
    "X_AJT",
    "VP_CNJ",
    "VNP_AJT",
    "IP",
    "X",
    "X_SBJ",
    "VNP_OBJ",
    "VNP_SBJ",
    "L",
    "AP_AJT",
    "X_CMP",
    "X_CNJ",
    "X_MOD",
    "AP_CMP",
    "R",
    "VNP_CNJ",
    "AP_SBJ",
    "NP_SVJ",
    "AP_OBJ",
]
OTHERS_FROM = 15
PAD = "<wrong head>"


def tree_prediction(value: object, words: int, where: str) -> tuple[list[int], list[str]]:
    """(heads, labels) of one prediction, checked against the sentence's ``words``."""
    if isinstance(value, dict) and "head" in value and "deprel" in value:
        heads, labels = value["head"], value["deprel"]
    elif isinstance(value, list) and all(isinstance(a, list) and len(a) == 2 for a in value):
        heads, labels = [a[0] for a in value], [a[1] for a in value]
    else:
        raise EvaluationError(f"{where}: a prediction is {{'head': [...], 'deprel': [...]}} "
                              "or [[head, deprel], ...]")  # fmt: skip
    if len(heads) != words or len(labels) != words:
        raise EvaluationError(f"{where}: {len(heads)} heads and {len(labels)} labels for a "
                              f"sentence of {words} words")  # fmt: skip
    out = []
    for h in heads:
        if isinstance(h, bool) or not isinstance(h, int) or not 0 <= h <= words:
            raise EvaluationError(f"{where}: head {h!r} is not 0 or a word of the sentence "
                                  f"(1..{words})")  # fmt: skip
        out.append(h)
    return out, [str(lab) for lab in labels]


def attachment_scores(
    gold: Sequence[tuple[list[int], list[str]]], pred: Sequence[tuple[list[int], list[str]]]
) -> dict[str, float | None]:
    """``uas`` and ``las`` (x 100) over every word (``pipelines.models.attachment``)."""
    from pipelines.models.attachment import attachment

    heads, labels = [g[0] for g in gold], [g[1] for g in gold]
    s = attachment(heads, labels, [p[0] for p in pred], [p[1] for p in pred], 100, 2)
    return {"uas": s["uas"], "las": s["las"]}


def klue_baseline_scores(
    gold: Sequence[tuple[list[int], list[str]]], pred: Sequence[tuple[list[int], list[str]]]
) -> dict[str, float | None]:
    """The four figures of KLUE's baseline code (module docstring), x 100."""
    from sklearn.metrics import f1_score

    top = set(KLUE_LABEL_ORDER[:OTHERS_FROM])
    gh, ph, gl, pl = [], [], [], []
    for (h1, l1), (h2, l2) in zip(gold, pred, strict=True):
        for a, b, c, d in zip(h1, l1, h2, l2, strict=True):
            gh.append(a)
            ph.append(c)
            gl.append(b if b in top else "others")
            pl.append((d if d in top else "others") if a == c else PAD)
    if not gh:
        return {k: None for k in ("klue_uas_macro_f1", "klue_uas_micro_f1",
                                  "klue_las_macro_f1", "klue_las_micro_f1")}  # fmt: skip

    def f1(y: list, p: list, average: str) -> float:
        return round(100 * float(f1_score(y, p, average=average, zero_division=0)), 2)

    return {
        "klue_uas_macro_f1": f1(gh, ph, "macro"),
        "klue_uas_micro_f1": f1(gh, ph, "micro"),
        "klue_las_macro_f1": f1(gl, pl, "macro"),
        "klue_las_micro_f1": f1(gl, pl, "micro"),
    }


METRICS = ("uas", "las", "klue_uas_macro_f1", "klue_uas_micro_f1", "klue_las_macro_f1",
           "klue_las_micro_f1")  # fmt: skip


def gold_tree(record: dict) -> tuple[list[int], list[str]]:
    return [int(h) for h in record["head"]], [str(d) for d in record["deprel"]]


def scorer(records: list[dict], predictions: dict[str, dict], source: str) -> dict:
    """``benchforge evaluate`` on a KLUE-DP release: :data:`METRICS` over the split and
    ``uas_<style>`` / ``las_<style>`` per style (``evaluate`` has checked that every
    sentence has one prediction and no other)."""
    gold, pred, styles = [], [], []
    for r in records:
        guid = str(r["guid"])
        gold.append(gold_tree(r))
        pred.append(tree_prediction(predictions[guid]["prediction"], len(r["head"]),
                                    f"{source}: guid {guid}"))  # fmt: skip
        styles.append(str(r.get("style") or ""))
    out = {**attachment_scores(gold, pred), **klue_baseline_scores(gold, pred)}
    for style in sorted(set(styles) - {""}):
        mine = [i for i, s in enumerate(styles) if s == style]
        part = attachment_scores([gold[i] for i in mine], [pred[i] for i in mine])
        out[f"uas_{style}"], out[f"las_{style}"] = part["uas"], part["las"]
    return out
