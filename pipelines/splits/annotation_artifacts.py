"""The artifact report: what a reviewer needs to trust a split.

For train and for dev+test separately (so the split's effect is visible):

- label distribution;
- length per label of the last text column (the hypothesis, or sentence2; KLUE 3.3:
  neutral hypotheses tend to be the longest);
- lexical overlap per label between the first and last text columns (MeCab morpheme
  Jaccard);
- cue morphemes of the last text column: PMI with each label (Gururangan et al. 2018) for
  morphemes seen ``min_count`` times or more, and every morpheme one label holds more than
  ``skew_share`` (70%) of (KoBEST found number words this way);
- a last-column-only classifier (bag of morphemes + logistic regression, trained on the
  train split) against the majority baseline on dev+test: how far a model gets without
  the first text (JGLUE reported 0.658 against 0.553 on JNLI).

``features`` replaces the last column's morphemes by any partial input of an item: the
KoBEST artifact review (``pipelines.families.kobest.review``) passes position-tagged morphemes and
patterns of the alternatives (COPA), the endings (HellaSwag) or the target word (WiC),
and the same cues and classifier then measure that partial input.

Numeric labels (STS scores) are analysed through their binary label (>= 3.0).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np
import pandas as pd

from pipelines.core.markdown import cell, code, escape, settings_table
from pipelines.lang import Language, language


def _labels(frame: pd.DataFrame, binary_threshold: float | None) -> pd.Series:
    """Numeric labels of more than 3 values (scores) binned at ``binary_threshold``;
    classes as they are (always, when ``binary_threshold`` is None)."""
    values = pd.to_numeric(frame["label"], errors="coerce")
    if binary_threshold is not None and values.notna().all() and values.nunique() > 3:
        return (values >= binary_threshold).map({True: "high", False: "low"})
    return frame["label"].astype(str)


def cue_words(
    tokens: list[list[str]], labels: list[str], min_count: int, skew_share: float, top: int
) -> dict:
    """PMI of each (morpheme, label) over items containing the morpheme, and the skewed
    morphemes (one label holds more than ``skew_share`` of the items that contain it)."""
    n = len(labels)
    label_n = Counter(labels)
    word_n: Counter = Counter()
    joint: dict[str, Counter] = defaultdict(Counter)
    for toks, label in zip(tokens, labels, strict=True):
        for word in set(toks):
            word_n[word] += 1
            joint[word][label] += 1
    pmi: dict[str, list] = {}
    for label in sorted(label_n):
        rows = []
        for word, count in word_n.items():
            together = joint[word][label]
            if count < min_count or not together:
                continue
            value = math.log((together / n) / ((count / n) * (label_n[label] / n)))
            rows.append({"morpheme": word, "pmi": round(value, 4), "count": together})
        rows.sort(key=lambda r: (-r["pmi"], -r["count"], r["morpheme"]))
        pmi[label] = rows[:top]
    skewed = []
    for word, count in word_n.items():
        if count < min_count:
            continue
        label, together = joint[word].most_common(1)[0]
        if together / count > skew_share:
            skewed.append(
                {"morpheme": word, "label": label, "share": round(together / count, 4),
                 "count": count}
            )  # fmt: skip
    skewed.sort(key=lambda r: (-r["count"], r["morpheme"]))
    return {"pmi": pmi, "skewed": skewed}


def _part_figures(
    frame: pd.DataFrame, first: str, last: str, binary_threshold: float | None, lang: Language
) -> dict:
    labels = _labels(frame, binary_threshold)
    last_text = frame[last].astype(str)
    out = {
        "items": int(len(frame)),
        "labels": {k: int(v) for k, v in sorted(labels.value_counts().items())},
        "length_per_label": {
            k: round(float(last_text[labels == k].str.len().mean()), 2)
            for k in sorted(labels.unique())
        },
    }
    if first != last:
        overlap = [
            _jaccard(lang.morphemes(a), lang.morphemes(b))
            for a, b in zip(frame[first].astype(str), last_text, strict=True)
        ]
        s = pd.Series(overlap, index=frame.index)
        out["overlap_per_label"] = {
            k: round(float(s[labels == k].mean()), 4) for k in sorted(labels.unique())
        }
    return out


def _jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


def last_column_only(
    train_tokens: list[list[str]],
    train_labels: list[str],
    eval_tokens: list[list[str]],
    eval_labels: list[str],
    seed: int,
) -> dict:
    """Accuracy of a bag-of-morphemes logistic regression that sees only the last text
    column, against always answering train's majority label (``majority_baseline``),
    the evaluation items' own majority (``eval_majority_baseline``) and chance over
    train's labels (``chance``); ``reference`` is the highest of the three (issue 54:
    COPA's partial-input 0.56 was set against train's tie-break 0.11 while always
    answering 0 scored 0.89 on the evaluation items)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    majority = Counter(train_labels).most_common(1)[0][0]
    base = float(np.mean([label == majority for label in eval_labels])) if eval_labels else None
    references = reference_figures(train_labels, eval_labels, base)
    if len(set(train_labels)) < 2 or not eval_labels:
        return {"accuracy": None, "majority_baseline": base, "majority_label": majority,
                **references}  # fmt: skip
    vec = CountVectorizer(analyzer=lambda toks: toks, min_df=1)
    x_train = vec.fit_transform(train_tokens)
    clf = LogisticRegression(max_iter=2000, random_state=seed)
    clf.fit(x_train, train_labels)
    pred = clf.predict(vec.transform(eval_tokens))
    acc = float(np.mean([p == g for p, g in zip(pred, eval_labels, strict=True)]))
    return {
        "accuracy": round(acc, 4),
        "majority_baseline": round(base, 4) if base is not None else None,
        "majority_label": majority,
        **references,
        "eval_items": len(eval_labels),
    }


def reference_figures(train_labels: list[str], eval_labels: list[str],
                      majority_baseline: float | None) -> dict:  # fmt: skip
    """What a partial-input model must beat on the evaluation items: their own majority
    label's share, chance over train's labels, and the highest of those and train's
    majority (``majority_baseline``)."""
    if not eval_labels:
        return {"eval_majority_baseline": None, "eval_majority_label": None, "chance": None,
                "reference": None}  # fmt: skip
    label, n = Counter(eval_labels).most_common(1)[0]
    share, chance = n / len(eval_labels), 1 / max(1, len(set(train_labels)))
    return {"eval_majority_baseline": round(share, 4), "eval_majority_label": label,
            "chance": round(chance, 4),
            "reference": round(max(share, chance, majority_baseline or 0.0), 4)}  # fmt: skip


def _structured(labels: pd.Series) -> bool:
    """Whether every gold label is a span set (KLUE-NER's entities), not one class or
    score per item."""
    from pipelines.core.spans import span_labels

    return bool(len(labels)) and all(span_labels(v) is not None for v in labels)


def artifact_report(
    items: pd.DataFrame,
    splits: pd.DataFrame,
    text_columns: list[str],
    binary_threshold: float | None = 3.0,
    min_count: int = 10,
    skew_share: float = 0.7,
    top: int = 15,
    seed: int = 0,
    lang: Language | None = None,
    features: Callable[[dict], list[str]] | None = None,
    features_name: str | None = None,
) -> dict:
    """The report's figures for ``items`` (with ``label``) split by ``splits``; morphemes
    of ``lang`` (Korean by default) of the last text column, or ``features(row)`` of each
    item (named ``features_name`` in the report) when given. Scores are binned at
    ``binary_threshold`` (None: the labels are classes, never binned)."""
    lang = lang or language()
    frame = items.merge(splits[["item_id", "split"]], on="item_id", how="inner")
    first, last = text_columns[0], text_columns[-1]
    train = frame[frame["split"] == "train"]
    evals = frame[frame["split"].isin(["dev", "test"])]
    settings = {
        "text_columns": text_columns,
        "binary_threshold": binary_threshold,
        "min_count": min_count,
        "skew_share": skew_share,
    }
    if features_name:
        settings["features"] = features_name
    structured = "label" in frame.columns and _structured(frame["label"])
    if "label" not in frame.columns or structured:  # no item label to find shortcuts to
        # issue 54: KLUE-NER's gold is a span set per sentence; as a "label" it filled the
        # card with hundreds of PMI lines of JSON strings, one label per item
        return {
            "splits": {k: int(v) for k, v in frame["split"].value_counts().sort_index().items()},
            "settings": settings,
            **({"structured": True} if structured else {}),
        }
    if features is not None:
        tokens = {r["item_id"]: features(r) for r in frame.to_dict("records")}
    else:
        tokens = {
            i: lang.morphemes(t)
            for i, t in zip(frame["item_id"], frame[last].astype(str), strict=True)
        }
    report: dict = {
        "splits": {k: int(v) for k, v in frame["split"].value_counts().sort_index().items()},
        "train": _part_figures(train, first, last, binary_threshold, lang) if len(train) else {},
        "dev+test": _part_figures(evals, first, last, binary_threshold, lang) if len(evals) else {},
    }
    for name, part in (("train", train), ("dev+test", evals)):
        if len(part):
            report[name]["cues"] = cue_words(
                [tokens[i] for i in part["item_id"]],
                _labels(part, binary_threshold).tolist(),
                min_count,
                skew_share,
                top,
            )
    report["last_column_only"] = last_column_only(
        [tokens[i] for i in train["item_id"]],
        _labels(train, binary_threshold).tolist(),
        [tokens[i] for i in evals["item_id"]],
        _labels(evals, binary_threshold).tolist(),
        seed,
    )
    report["settings"] = settings
    return report


def report_markdown(report: dict, rule: str) -> str:
    """artifacts.md: the report for a reviewer. Labels and morphemes are data (a KLUE-NER
    label is its spans' JSON, entity text included): escaped, in tables and code spans
    alike (``pipelines.core.markdown``)."""
    lines = [f"# Artifact report (split rule {code(rule)})", ""]
    lines += ["## Split sizes", "", "| split | items |", "|---|---|"]
    lines += [f"| {cell(k)} | {v} |" for k, v in report["splits"].items()]
    for warning in report.get("warnings", []):
        lines += ["", f"**Warning:** {escape(warning)}."]
    if report.get("structured"):
        lines += ["", "The gold labels are span sets, one per item, not a class: the "
                  "label-and-cue analysis (cue words, a partial-input classifier) does not "
                  "apply. The card's label tables count the spans' labels."]  # fmt: skip
    if report.get("rule_figures"):
        lines += ["", f"## What the {code(rule)} rule measured", ""]
        lines += [settings_table(report["rule_figures"], skip_empty=False)]
    only = report.get("last_column_only")
    if only:
        seen = report["settings"].get("features") or (
            f"morphemes of {code(report['settings']['text_columns'][-1])}"
        )
        title = "Partial-input" if report["settings"].get("features") else "Last-column-only"
        lines += [
            "",
            f"## {title} classifier",
            "",
            f"Bag of {seen} + logistic "
            f"regression, trained on train, measured on dev+test: accuracy "
            f"**{only['accuracy']}** against the majority baseline {only['majority_baseline']} "
            f"(always {code(only['majority_label'])}). The closer to the baseline, the fewer "
            "shortcuts.",
        ]
        if only.get("reference") is not None and only["reference"] != only["majority_baseline"]:
            lines[-1] += (
                f" The evaluation items' own majority (always "
                f"{code(only['eval_majority_label'])}) scores {only['eval_majority_baseline']} "
                f"and chance {only['chance']}: the model is measured against "
                f"{only['reference']}, the highest."
            )
    lines.append("")
    for part in ("train", "dev+test"):
        fig = report.get(part) or {}
        if not fig:
            continue
        lines += [
            f"## {part}",
            "",
            "| label | items | length (chars) | overlap |",
            "|---|---|---|---|",
        ]
        for label, count in fig["labels"].items():
            overlap = fig.get("overlap_per_label", {}).get(label, "")
            lines.append(f"| {cell(label)} | {count} | {fig['length_per_label'][label]} | "
                         f"{escape(overlap)} |")  # fmt: skip
        skewed = fig.get("cues", {}).get("skewed", [])
        lines += ["", f"Skewed morphemes (one label > {report['settings']['skew_share']:.0%}):"]
        if skewed:
            lines += ["", "| morpheme | label | share | items |", "|---|---|---|---|"]
            lines += [
                f"| {cell(r['morpheme'])} | {cell(r['label'])} | {r['share']} | {r['count']} |"
                for r in skewed[:20]
            ]
        else:
            lines.append("none.")
        lines.append("")
        for label, rows in fig.get("cues", {}).get("pmi", {}).items():
            top = ", ".join(f"{escape(r['morpheme'])} ({r['pmi']})" for r in rows[:8]) or "none"
            lines.append(f"- top PMI with {code(label)}: {top}")
        lines.append("")
    return "\n".join(lines) + "\n"
