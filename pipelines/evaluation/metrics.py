"""The papers' metrics, one registration each (``benchforge list`` prints them).

A metric takes the gold values and the predictions of the same items, in the same
order (and, for the ranking metrics, each item's class probabilities) and returns its
figure on the scale the papers print: x 100. Where a well-kept library computes the
figure, it does (scikit-learn, scipy, seqeval); the answer metrics follow the SQuAD
v1.1 evaluation script's definitions (Rajpurkar et al. 2016) with the tokenisation the
papers name.

- KLUE (Park et al. 2021): YNAT macro-F1 (4.1); STS Pearson's r and F1 with both sides
  binarised at 3.0 (4.2: "real-value >= 3.0 as paraphrased"); NLI accuracy (4.3); NER
  entity-level macro-F1 (seqeval, strict IOB2) and character-level macro-F1 (4.4); RE
  micro-F1 without ``no_relation`` and AUPRC averaged over every class (4.5); MRC exact
  match and ROUGE-W, the F1 of the longest common consecutive substring of characters
  (4.7).
- JGLUE (Kurihara et al. 2022, 4.1): accuracy (MARC-ja, JNLI, JCommonsenseQA), Pearson
  and Spearman (JSTS), exact match and character-level F1 (JSQuAD).
- KoBEST (Kim et al. 2022, 2.7 and Table 1): F1 for all five tasks, macro-averaged over
  the classes as KoBEST's lm-eval tasks compute it.
- KorNLI/KorSTS (Ham et al. 2020, 4): accuracy (KorNLI) and Spearman x 100 (KorSTS).
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pipelines.core.registry import Registry


@dataclass(frozen=True)
class Metric:
    """``fn(gold, pred, probabilities, labels) -> float`` (x 100; NaN where undefined,
    e.g. a correlation over constant values). ``needs``: ``"label"`` (a class),
    ``"score"`` (a real value), ``"tags"`` (one tag a character), ``"answer"`` (a text,
    gold: the list of accepted answers) or ``"probabilities"`` (a class, and each item's
    probability of every class in ``labels`` order)."""

    name: str
    fn: Callable[..., float]
    needs: str
    doc: str


METRICS: Registry[Metric] = Registry(
    "metric", "pipelines.evaluation.metrics", "the papers' metrics"
)


def metric(name: str, needs: str) -> Callable:
    """Decorator: register ``fn`` as the metric ``name``."""

    def add(fn: Callable) -> Callable:
        doc = " ".join((fn.__doc__ or "").split())
        METRICS.add(name, Metric(name, fn, needs, doc), doc)
        return fn

    return add


def _percent(x: float) -> float:
    return float(x) * 100.0


@metric("accuracy", "label")
def accuracy(gold: Sequence, pred: Sequence, probabilities: object = None,
             labels: object = None) -> float:  # fmt: skip
    """The share of items whose prediction is the gold label (KLUE-NLI, JGLUE's
    MARC-ja, JNLI and JCommonsenseQA, KorNLI)."""
    gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    return _percent(np.mean([g == p for g, p in zip(gold, pred, strict=True)])) if gold else np.nan


@metric("macro_f1", "label")
def macro_f1(gold: Sequence, pred: Sequence, probabilities: object = None,
             labels: object = None) -> float:  # fmt: skip
    """The unweighted mean of every class's F1, over the classes of the gold labels and
    the predictions (KLUE-TC, KoBEST)."""
    from sklearn.metrics import f1_score

    gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    classes = sorted(set(gold) | set(pred))
    return _percent(f1_score(gold, pred, labels=classes, average="macro", zero_division=0))


def _floats(values: Sequence) -> np.ndarray:
    return np.asarray([float(v) for v in values], dtype=float)


def _correlation(fn: Callable, gold: Sequence, pred: Sequence) -> float:
    g, p = _floats(gold), _floats(pred)
    if len(g) < 2 or np.ptp(g) == 0 or np.ptp(p) == 0:
        return np.nan
    return _percent(fn(g, p)[0])


@metric("pearson", "score")
def pearson(gold: Sequence, pred: Sequence, probabilities: object = None,
            labels: object = None) -> float:  # fmt: skip
    """Pearson's r between the gold and the predicted similarity (KLUE-STS, JSTS);
    NaN when either side is constant."""
    from scipy.stats import pearsonr

    return _correlation(pearsonr, gold, pred)


@metric("spearman", "score")
def spearman(gold: Sequence, pred: Sequence, probabilities: object = None,
             labels: object = None) -> float:  # fmt: skip
    """Spearman's rank correlation between the gold and the predicted similarity
    (JSTS, KorSTS); NaN when either side is constant."""
    from scipy.stats import spearmanr

    return _correlation(spearmanr, gold, pred)


STS_THRESHOLD = 3.0  # KLUE 3.2.2: a pair at 3.0 or above is a paraphrase


@metric("f1_at_3", "score")
def f1_at_3(gold: Sequence, pred: Sequence, probabilities: object = None,
            labels: object = None) -> float:  # fmt: skip
    """F1 of the paraphrase class with gold and predicted similarity both binarised at
    3.0 (KLUE 3.2.2: a value of 3.0 or more is a paraphrase)."""
    from sklearn.metrics import f1_score

    g = (_floats(gold) >= STS_THRESHOLD).astype(int)
    p = (_floats(pred) >= STS_THRESHOLD).astype(int)
    return _percent(f1_score(g, p, zero_division=0))


@metric("entity_macro_f1", "tags")
def entity_macro_f1(gold: Sequence, pred: Sequence, probabilities: object = None,
                    labels: object = None) -> float:  # fmt: skip
    """Entity-level macro-F1 over the entity types (seqeval, strict IOB2: an entity
    counts when its type, start and end all match; KLUE 3.4.2)."""
    from seqeval.metrics import f1_score
    from seqeval.scheme import IOB2

    return _percent(f1_score([list(g) for g in gold], [list(p) for p in pred], average="macro",
                             mode="strict", scheme=IOB2, zero_division=0))  # fmt: skip


@metric("char_macro_f1", "tags")
def char_macro_f1(gold: Sequence, pred: Sequence, probabilities: object = None,
                  labels: object = None) -> float:  # fmt: skip
    """KLUE-NER's character-level macro-F1 (KLUE 3.4.2): every character's tag is a
    label; "an average of class-wise F1-scores" over the 12 classes B-PS, I-PS, B-LC,
    I-LC, B-OG, I-OG, B-DT, I-DT, B-TI, I-TI, B-QT and I-QT, O excluded; a class neither
    side has scores 1, as KLUE's released script scores it. The tagger's own report
    computes the same figure (``pipelines.models.char_tagger.char_macro_f1``)."""
    from pipelines.models.char_tagger import char_macro_f1 as klue_char_macro_f1

    return _percent(klue_char_macro_f1([list(g) for g in gold], [list(p) for p in pred]))


NO_RELATION = "no_relation"


@metric("re_micro_f1", "label")
def re_micro_f1(gold: Sequence, pred: Sequence, probabilities: object = None,
                labels: object = None) -> float:  # fmt: skip
    """Micro-F1 over every relation but ``no_relation`` (KLUE 3.5.2): a no_relation
    prediction of a relation is a missed relation, a relation predicted for no_relation
    a false one."""
    from sklearn.metrics import f1_score

    gold, pred = [str(g) for g in gold], [str(p) for p in pred]
    classes = sorted((set(gold) | set(pred) | set(labels or ())) - {NO_RELATION})
    if not classes:
        return np.nan
    return _percent(f1_score(gold, pred, labels=classes, average="micro", zero_division=0))


@metric("auprc", "probabilities")
def auprc(gold: Sequence, pred: Sequence, probabilities: np.ndarray | None = None,
          labels: Sequence[str] | None = None) -> float:  # fmt: skip
    """The area under the precision-recall curve of each class (one against the rest,
    no_relation included), averaged over the classes (KLUE 3.5.2). A class no gold item
    has scores 0, as KLUE's script gives it."""
    from sklearn.metrics import auc, precision_recall_curve

    if probabilities is None or labels is None:
        return np.nan
    gold = [str(g) for g in gold]
    probs = np.asarray(probabilities, dtype=float)
    scores = []
    for c, name in enumerate(labels):
        target = np.asarray([g == name for g in gold], dtype=int)
        if target.sum() == 0:
            scores.append(0.0)
            continue
        precision, recall, _ = precision_recall_curve(target, probs[:, c])
        scores.append(auc(recall, precision))
    return _percent(np.mean(scores))


# -- answers: the SQuAD v1.1 script's normalisation and scores --------------------------

_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """The SQuAD v1.1 script's ``normalize_answer``: lower case, punctuation, the
    articles a/an/the and extra white space removed; NFKC first (full-width forms of
    Japanese and Korean text compare with their ASCII ones) and Unicode punctuation
    removed as well as ASCII."""
    text = unicodedata.normalize("NFKC", str(text)).lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION
                   and not unicodedata.category(ch).startswith("P"))  # fmt: skip
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _chars(text: str) -> list[str]:
    return [ch for ch in normalize_answer(text) if not ch.isspace()]


def _char_f1(gold: str, pred: str) -> float:
    g, p = _chars(gold), _chars(pred)
    if not g or not p:
        return float(g == p)
    same = sum((Counter(g) & Counter(p)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def _lccs_f1(gold: str, pred: str) -> float:
    g, p = "".join(_chars(gold)), "".join(_chars(pred))
    if not g or not p:
        return float(g == p)
    # longest common consecutive substring, dynamic programming over the two strings
    best, prev = 0, [0] * (len(p) + 1)
    for a in g:
        cur = [0] * (len(p) + 1)
        for j, b in enumerate(p, start=1):
            if a == b:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    if best == 0:
        return 0.0
    precision, recall = best / len(p), best / len(g)
    return 2 * precision * recall / (precision + recall)


def _answers(gold: object) -> list[str]:
    if isinstance(gold, str):
        return [gold]
    return [str(a) for a in (gold if gold is not None else [])]


def _best(score: Callable[[str, str], float], gold: Sequence, pred: Sequence) -> float:
    """The mean over items of the best score against any accepted answer (the SQuAD
    script's ``metric_max_over_ground_truths``); an item with no accepted answer (an
    unanswerable question) scores 1 for an empty prediction, 0 for any other."""
    total = 0.0
    for answers, p in zip(gold, pred, strict=True):
        answers = _answers(answers)
        p = "" if p is None else str(p)
        total += max(score(a, p) for a in answers) if answers else float(not p.strip())
    return _percent(total / len(gold)) if len(gold) else np.nan


@metric("exact_match", "answer")
def exact_match(gold: Sequence, pred: Sequence, probabilities: object = None,
                labels: object = None) -> float:  # fmt: skip
    """The share of predictions equal to an accepted answer after the SQuAD script's
    normalisation (JGLUE JSQuAD, KLUE-MRC)."""
    return _best(lambda a, p: float(normalize_answer(a) == normalize_answer(p)), gold, pred)


@metric("char_f1", "answer")
def char_f1(gold: Sequence, pred: Sequence, probabilities: object = None,
            labels: object = None) -> float:  # fmt: skip
    """The SQuAD script's F1 with characters for tokens (JGLUE 4.1, JSQuAD: the answer's
    characters after normalisation, white space left out), best over the accepted
    answers."""
    return _best(_char_f1, gold, pred)


@metric("rouge_w", "answer")
def rouge_w(gold: Sequence, pred: Sequence, probabilities: object = None,
            labels: object = None) -> float:  # fmt: skip
    """KLUE-MRC's ROUGE-W (KLUE 3.7.2): the F1 of the longest common consecutive
    substring of the normalised answer and prediction, in characters, best over the
    accepted answers."""
    return _best(_lccs_f1, gold, pred)
