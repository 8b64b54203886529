"""SentiNeg's test set as KoBEST builds it (Kim et al. 2022, 2.6): "We then used the
training and development sets to train a sentiment classification model. Next, we
extracted candidates from training data where the polarity switched when transformed
into a sentence with the opposite meaning. Finally, we converted each candidate to a
sentence with its opposite meaning and reversed the label."

``select`` is the extraction: each train item is negated by the negation helper
(``negation.suggest``), and a candidate whose *predicted* polarity flips once negated
is selected. ``apply`` is the conversion: each selected candidate's sentence of opposite
meaning (a person's, written in the ``conversion`` round, ``rules.human_conversion``;
or the helper's draft with that setting off), checked again, goes into test with the
opposite label. The converted item leaves train, so that a sentence and its negation
are never on both sides of the split. ``convert`` is both with the helper's drafts.

Contract: every candidate is in the candidates table with its ``outcome``:

- ``converted``: negated, the prediction flipped, converted, the checks passed, moved;
- ``no_negation``: the helper found nothing to negate (no predicate);
- ``prediction_unchanged``: the model gives the negated sentence the same polarity;
- ``check_failed``: the helper's negated sentence fails a guideline check (brand
  names, not a negation of the candidate; ``checks``);
- ``over_limit``: it qualified, but ``rules.negated_test_items`` were selected already
  (candidates are taken in a seeded order);
- ``conversion_failed``: the person's conversion fails a guideline check (it stays in
  train);
- ``not_converted``: selected, but no conversion came back (skipped in the round).

Items in = items out: train loses exactly the items test gains.

The model is a bag-of-morphemes logistic regression (scikit-learn) over MeCab
morphemes with a ``<NEG>`` feature for 안 / 못 / -지 않다 (``negation_count``), trained
on every train and dev item twice: its sentence with its label, and the review the
sentence negates (``original``) with the opposite label. The demos' train and dev sets
hold tens of sentences, too few to fine-tune a transformer, and trained on the
sentences alone such a model memorises them and no negation moves its prediction (the
sentineg demo: 0 of 41 flips); the model's only job is to say whether the negation
moves its prediction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.lang import Language

if TYPE_CHECKING:
    from pipelines.families.kobest.checks import CheckContext

CANDIDATE_COLUMNS = ["item_id", "sentence", "label", "negated", "method", "predicted",
                     "predicted_negated", "outcome", "detail", "converted",
                     "converter"]  # fmt: skip
OUTCOMES = ("converted", "no_negation", "prediction_unchanged", "check_failed", "over_limit",
            "conversion_failed", "not_converted")  # fmt: skip
SELECTED = "selected"  # a candidate waiting for its conversion (``select``'s outcome)


def sentiment_features(lang: Language):  # noqa: ANN201 - a closure
    """``text -> features``: MeCab morphemes and ``<NEG>`` when the text holds a
    negation (``negation.negation_count``)."""
    from pipelines.families.kobest.negation import negation_count

    def features(text: str) -> list[str]:
        tagged = lang.tagged(text)
        return [s for s, _ in tagged] + (["<NEG>"] if negation_count(tagged) else [])

    return features


@dataclass
class SentimentModel:
    """A fitted bag-of-morphemes sentiment model (labels 0 negative, 1 positive)."""

    vectorizer: object
    classifier: object
    features: object

    def predict(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=int)
        x = self.vectorizer.transform([self.features(t) for t in texts])
        return self.classifier.predict(x).astype(int)


def train_sentiment(
    texts: list[str], labels: list[int], lang: Language, seed: int
) -> SentimentModel:
    """The sentiment model trained on ``texts`` (train + dev); both polarities needed."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    if len(set(labels)) < 2:
        raise ValueError(
            f"SentiNeg's test conversion (KoBEST 2.6) needs both polarities in train + dev, "
            f"got only {sorted(set(labels))}"
        )
    features = sentiment_features(lang)
    vec = CountVectorizer(analyzer=lambda toks: toks)
    clf = LogisticRegression(max_iter=2000, random_state=seed)
    clf.fit(vec.fit_transform([features(t) for t in texts]), np.asarray(labels, dtype=int))
    return SentimentModel(vec, clf, features)


def convert(
    items: pd.DataFrame,
    splits: pd.DataFrame,
    lang: Language,
    checks: dict,
    check_ctx: CheckContext,
    limit: int | None,
    seed: int,
    lexicon: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """``select`` then ``apply`` with the helper's drafts as the conversions
    (``rules.human_conversion`` off): (items, splits, candidates, report)."""
    candidates, report = select(items, splits, lang, checks, check_ctx, limit, seed, lexicon)
    chosen = candidates[candidates["outcome"] == SELECTED]
    drafts = {i: (t, "negation helper") for i, t in zip(chosen["item_id"], chosen["negated"],
                                                         strict=True)}  # fmt: skip
    return apply(items, splits, candidates, report, drafts, checks, check_ctx)


def select(
    items: pd.DataFrame,
    splits: pd.DataFrame,
    lang: Language,
    checks: dict,
    check_ctx: CheckContext,
    limit: int | None,
    seed: int,
    lexicon: str | None = None,
    idiom_lexicon: str | None = None,
) -> tuple[pd.DataFrame, dict]:
    """(candidates, report): every train item with its outcome; the ones to convert are
    ``selected`` (the prediction flips on the helper's negation, which passes the
    checks), at most ``limit``, in a seeded order (see the module docstring)."""
    from pipelines.families.kobest.checks import run_checks
    from pipelines.families.kobest.negation import suggest

    split_of = dict(zip(splits["item_id"], splits["split"], strict=True))
    frame = items.assign(split=items["item_id"].map(split_of))
    fit = frame[frame["split"].isin(["train", "dev"])]
    # each item's sentence, and the review it negates with the opposite label: the
    # pairs that teach a model this small what a negation does
    texts = fit["sentence"].astype(str).tolist() + fit["original"].astype(str).tolist()
    labels = fit["label"].astype(int).tolist() + (1 - fit["label"].astype(int)).tolist()
    model = train_sentiment(texts, labels, lang, seed)
    train = frame[frame["split"] == "train"]
    order = np.random.default_rng(seed).permutation(len(train))
    train = train.iloc[order]
    drafts = [suggest(str(t), lang, lexicon, idiom_lexicon) for t in train["sentence"]]
    before = model.predict(train["sentence"].astype(str).tolist())
    after = model.predict([d.draft for d in drafts])
    rows, chosen = [], 0
    for r, d, b, a in zip(train.to_dict("records"), drafts, before, after, strict=True):
        outcome, detail = SELECTED, ""
        candidate = {**r, "original": r["sentence"], "sentence": d.draft}
        if d.method == "none":
            outcome, detail = "no_negation", d.detail
        elif a == b:
            outcome, detail = "prediction_unchanged", f"predicted {b} before and after"
        else:
            results = run_checks(candidate, checks, check_ctx)
            failed = [(n, x) for n, act, x in results if act == "drop"]
            if failed:
                outcome, detail = "check_failed", "; ".join(f"{n}: {x}" for n, x in failed)
            elif limit is not None and chosen >= limit:
                outcome, detail = "over_limit", f"{limit} selected already"
        chosen += outcome == SELECTED
        rows.append({"item_id": r["item_id"], "sentence": r["sentence"],
                     "label": int(r["label"]), "negated": d.draft, "method": d.method,
                     "predicted": int(b), "predicted_negated": int(a), "outcome": outcome,
                     "detail": detail, "converted": "", "converter": ""})  # fmt: skip
    candidates = pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)
    test = frame[frame["split"] == "test"]
    report = {
        "model": "bag-of-morphemes logistic regression (MeCab morphemes, <NEG>), scikit-learn",
        "trained_on": {
            "train": int((fit["split"] == "train").sum()),
            "dev": int((fit["split"] == "dev").sum()),
            "texts": len(texts),
        },
        "test_accuracy_before": _accuracy(model, test),
        "candidates": len(candidates),
        "selected": chosen,
        "limit": limit,
    }
    return candidates, report


def apply(
    items: pd.DataFrame,
    splits: pd.DataFrame,
    candidates: pd.DataFrame,
    report: dict,
    conversions: dict[str, tuple[str, str]],
    checks: dict,
    check_ctx: CheckContext,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """(items, splits, candidates, report) after the conversion: each ``selected``
    candidate's conversion (``conversions``: item id -> (sentence, who wrote it)),
    checked as a negation of the candidate, goes into test relabelled (``item_id``
    ``<train item>-neg``, version 1, ``converted_from``) and the candidate leaves train;
    a conversion that fails a check, or none, leaves the candidate in train. The new
    items name who converted them in ``converter``."""
    from pipelines.families.kobest.checks import run_checks

    by_id = {r["item_id"]: r for r in items.to_dict("records")}
    candidates = candidates.copy()
    moved, new = [], []
    for k, c in candidates.iterrows():
        if c["outcome"] != SELECTED:
            continue
        got = conversions.get(c["item_id"])
        if not got or not str(got[0]).strip():
            candidates.loc[k, ["outcome", "detail"]] = ["not_converted", "no conversion"]
            continue
        text, who = str(got[0]).strip(), str(got[1])
        r = by_id[c["item_id"]]
        candidates.loc[k, ["converted", "converter"]] = [text, who]
        results = run_checks({**r, "original": r["sentence"], "sentence": text}, checks,
                             check_ctx)  # fmt: skip
        failed = [(n, x) for n, act, x in results if act == "drop"]
        if failed:
            detail = "; ".join(f"{n}: {x}" for n, x in failed)
            candidates.loc[k, ["outcome", "detail"]] = ["conversion_failed", detail]
            continue
        candidates.loc[k, "outcome"] = "converted"
        moved.append(r["item_id"])
        new.append({**r, "item_id": f"{r['item_id']}-neg", "original": r["sentence"],
                    "sentence": text, "label": 1 - int(r["label"]), "version": 1,
                    "converted_from": r["item_id"], "draft_method": c["method"],
                    "converter": who})  # fmt: skip
    keep = items[~items["item_id"].isin(moved)]
    out_items = keep.assign(converted_from="", converter="")
    if new:
        columns = [*items.columns, "converted_from", "converter"]
        added = pd.DataFrame(new, columns=list(dict.fromkeys(columns)))
        out_items = pd.concat([out_items, added], ignore_index=True)
    out_splits = pd.concat(
        [
            splits[~splits["item_id"].isin(moved)],
            pd.DataFrame({"item_id": [n["item_id"] for n in new], "split": "test"}),
        ],
        ignore_index=True,
    )
    report = {
        **report,
        "outcomes": {o: int((candidates["outcome"] == o).sum()) for o in OUTCOMES},
        "converted": len(new),
        "splits_before": _counts(splits),
        "splits_after": _counts(out_splits),
    }
    return out_items, out_splits, candidates, report


def _accuracy(model: SentimentModel, rows: pd.DataFrame) -> float | None:
    if not len(rows):
        return None
    pred = model.predict(rows["sentence"].astype(str).tolist())
    return round(float((pred == rows["label"].astype(int).to_numpy()).mean()), 4)


def _counts(splits: pd.DataFrame) -> dict[str, int]:
    c = splits["split"].value_counts()
    return {s: int(c[s]) for s in ("train", "dev", "test") if s in c}
