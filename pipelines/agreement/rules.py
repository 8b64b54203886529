"""Agreement filtering: annotator screening, gold labels and reliability figures.

Input: a long table of annotations with ``item_id``, ``annotator_id``, ``value`` and
optionally ``role`` (``author`` for the writer of an NLI hypothesis), ``field``,
``cancelled`` and ``report_flags`` (as written by ``benchforge annotate pull``). Items are
not labeled by every annotator: missing ratings stay missing (NaN in the reliability
matrix), they are never filled.

Rules (the papers' settings are the defaults of ``AgreementSettings``):

- ``mean`` (KLUE 3.2.1, STS): screen annotators first: an annotator whose Pearson r with
  the mean of the other annotators (on the items they share) is under 0.80, or whose
  Krippendorff alpha (nominal, as the paper states: ``alpha_level``) with the others'
  most common rating (their mean at the interval level) is under 0.20, is dropped with
  all their ratings. The gold label is the mean of the remaining ratings rounded to one decimal,
  with a binary label at >= 3.0. Items whose ratings disagree too much are dropped: the
  item's standard deviation is more than 2 standard deviations above the mean item
  standard deviation (``sd_max``). JSTS variant (Kurihara et al. 2022, 3.2): drop items
  whose rating variance is 1.0 or more (``variance_max``).
- ``majority`` with ``min_votes`` K (KLUE-NLI 3.3.1: 3 of 5 including the author; KLUE-TC
  3.1.1: 2 of 3 on the first-ranked topic; JNLI: 6 of 10; MARC-ja: 7 of 10): the label
  with at least K votes; items without one are dropped (``no_majority``).
- Report flags (KLUE: personal information, hate or bias, translation error, unable to
  decide) drop the item with the flag as its reason, when at least ``report_min``
  annotators raised it.

Figures: Krippendorff's alpha at the nominal, ordinal, interval and ratio levels (the
``krippendorff`` package; nominal only for non-numeric labels), Fleiss' kappa
(computed as statsmodels does; over the items with the most common number of ratings,
since it needs an equal count per item), Pearson per annotator against the others, and for NLI the
validation table of KLUE's Table 5.

Modules: ``settings`` (each rule's settings class, the registry, the ``agreement:``
recipe section), ``annotations`` (the input table read, checked and split; the
per-annotator and per-label figures), ``measures`` (alpha, Fleiss' kappa) and this one
(the rules, ``agree`` and ``run_agree``); the names of the first two are re-exported here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.agreement.annotations import (  # noqa: F401 - re-exported
    annotator_figures,
    check_values,
    label_agreement,
    read_annotations,
    split_annotations,
)
from pipelines.agreement.review import MODES, report_hits, review_decision
from pipelines.agreement.screening import PeopleScreen, screen_people
from pipelines.agreement.settings import (  # noqa: F401 - re-exported
    AGREEMENT_RULES,
    DROPPED_COLUMNS,
    AgreementError,
    AgreementRule,
    AgreementSettings,
    AgreementSettingsBase,
    MajoritySettings,
    MeanSettings,
    SpanVoteSettings,
    agreement_rule,
    recipe_agreement_settings,
)
from pipelines.agreement.suggestions import accepting_annotators, suggestion_table
from pipelines.annotation.values import VALUE_TYPES, ValueType
from pipelines.measures.reliability import alphas, numeric_values, reliability_matrix

# ------------------------------------------------------------------------------ rules


@agreement_rule("mean", MeanSettings)
def mean_rule(
    ratings: pd.DataFrame, settings: MeanSettings
) -> tuple[pd.DataFrame, list[dict], pd.DataFrame]:
    """KLUE-STS: screen annotators, then mean label, binary label, disagreement drops.
    Returns (gold, dropped records, per-annotator figures)."""
    values = numeric_values(ratings)
    if values is None:
        bad = ratings[pd.to_numeric(ratings["value"], errors="coerce").isna()].iloc[0]
        raise AgreementError(
            f"the mean rule needs numeric labels; item {bad.item_id!r} annotator "
            f"{bad.annotator_id!r} has {bad.value!r}"
        )
    ratings = ratings.assign(v=values.to_numpy())
    figures = annotator_figures(reliability_matrix(ratings, values), settings.min_shared_items,
                                settings.alpha_level)  # fmt: skip
    dropped: list[dict] = []
    screened: set[str] = set()
    for row in figures.itertuples():
        reasons = []
        if (
            settings.pearson_min is not None
            and row.pearson is not None
            and (row.pearson < settings.pearson_min)
        ):
            reasons.append(f"pearson {row.pearson:.3f} < {settings.pearson_min}")
        if (
            settings.alpha_min is not None
            and row.alpha is not None
            and (row.alpha < settings.alpha_min)
        ):
            reasons.append(f"alpha ({settings.alpha_level}) {row.alpha:.3f} < {settings.alpha_min}")
        if reasons:
            screened.add(row.annotator_id)
            reason = "low_pearson" if reasons[0].startswith("pearson") else "low_alpha"
            dropped.append(
                {"kind": "annotator", "id": row.annotator_id, "reason": reason,
                 "detail": "; ".join(reasons)}
            )  # fmt: skip
    figures["screened_out"] = figures["annotator_id"].isin(screened)
    if screened and screened == set(ratings["annotator_id"]):
        detail = "; ".join(f"{d['id']}: {d['detail']}" for d in dropped)
        raise AgreementError(
            f"the screening would remove every annotator ({len(screened)}: {detail}) with "
            f"pearson_min {settings.pearson_min} and alpha_min {settings.alpha_min}; with so "
            "few or so noisy annotators, lower the thresholds (or set them to null) in the "
            "recipe's agreement section, or collect more annotations"
        )
    kept = ratings[~ratings["annotator_id"].isin(screened)]
    stats = kept.groupby("item_id")["v"].agg(["mean", "std", "var", "count"])
    stats[["std", "var"]] = stats[["std", "var"]].fillna(0.0)  # one rating: no spread
    rounded = stats["mean"].round(settings.decimals)  # rounding overflows too (x 10^d)
    infinite = ~np.isfinite(np.column_stack([stats[["mean", "var"]].to_numpy(), rounded]))
    infinite = infinite.any(axis=1)
    if infinite.any():  # finite ratings whose sums overflow (hypothesis found 1.8e307)
        raise AgreementError(
            f"item {stats.index[infinite][0]!r}: the mean or variance of its ratings is not "
            "a finite number (ratings too large to average); ratings must be on the "
            "interface's scale"
        )
    for item in sorted(set(ratings["item_id"]) - set(stats.index)):
        dropped.append(
            {"kind": "item", "id": item, "reason": "no_rating_left",
             "detail": "every annotator of the item was screened out"}
        )  # fmt: skip
    drop = pd.Series(False, index=stats.index)
    reason_of: dict[str, tuple[str, str]] = {}
    if settings.sd_max is not None and len(stats) > 1:
        mu, sigma = stats["std"].mean(), stats["std"].std()
        limit = mu + settings.sd_max * sigma
        over = stats["std"] > limit
        for item in stats.index[over]:
            reason_of[item] = (
                "disagreement",
                f"label sd {stats.at[item, 'std']:.3f} > {limit:.3f} "
                f"(mean item sd {mu:.3f} + {settings.sd_max} sd)",
            )
        drop |= over
    if settings.variance_max is not None:
        over = stats["var"] >= settings.variance_max
        for item in stats.index[over & ~drop]:
            reason_of[item] = (
                "high_variance",
                f"label variance {stats.at[item, 'var']:.3f} >= {settings.variance_max}",
            )
        drop |= over
    for item, (reason, detail) in reason_of.items():
        dropped.append({"kind": "item", "id": item, "reason": reason, "detail": detail})
    keep = stats[~drop]
    label = keep["mean"].round(settings.decimals)
    gold = pd.DataFrame(
        {
            "item_id": keep.index.astype(str),
            "label": label.to_numpy(),
            "real_label": keep["mean"].to_numpy(),
            "binary_label": (label >= settings.binary_threshold).astype(int).to_numpy(),
            "n_annotations": keep["count"].astype(int).to_numpy(),
            "label_sd": keep["std"].round(4).to_numpy(),
        }
    )
    return gold, dropped, figures


def _screen_by_majority(
    ratings: pd.DataFrame, settings: MajoritySettings
) -> tuple[pd.DataFrame, list[dict]]:
    """(the ratings of the annotators kept, the screened annotators' drop records)."""
    from pipelines.agreement.qualification import PassRule, majority_rows

    share = float(settings.majority_share_min)
    people = sorted(ratings["annotator_id"].astype(str).unique())
    answers = ratings.assign(value=ratings["value"].astype(str))[
        ["item_id", "annotator_id", "value"]
    ]
    rows = majority_rows(answers, people, PassRule("min_majority_share", share))
    out = [r for r in rows if r["answered"] >= settings.min_screened_items and r["score"] < share]
    if out and len(out) == len(people):
        raise AgreementError(
            f"the screening would remove every annotator ({len(out)}) with "
            f"majority_share_min {share}; lower it (or set it to null) in the recipe's "
            "agreement section, or collect more annotations"
        )
    dropped = [
        {"kind": "annotator", "id": r["annotator_id"], "reason": "low_majority_share",
         "detail": f"{r['why']} ({r['score']:.3f} < {share})"}
        for r in out
    ]  # fmt: skip
    screened = {r["annotator_id"] for r in out}
    return ratings[~ratings["annotator_id"].astype(str).isin(screened)], dropped


@agreement_rule("majority", MajoritySettings)
def majority_rule(
    ratings: pd.DataFrame, settings: MajoritySettings
) -> tuple[pd.DataFrame, list[dict], None]:
    """The label with at least ``min_votes`` votes (the author's label counts as a vote);
    a tie between two such labels, or none, drops the item. With
    ``majority_share_min``, annotators who give the others' majority answer on fewer
    than that share of the items (over ``min_screened_items`` or more) are screened out
    first (reason ``low_majority_share``), as the STS rule screens by alpha."""
    k = int(settings.min_votes or 0)
    rows, dropped = [], []
    if settings.majority_share_min is not None:
        ratings, dropped = _screen_by_majority(ratings, settings)
    for item, group in ratings.groupby("item_id", sort=True):
        counts = group["value"].astype(str).value_counts()
        top = counts[counts == counts.max()]
        if counts.max() < k:
            dropped.append(
                {"kind": "item", "id": item, "reason": "no_majority",
                 "detail": f"top label has {int(counts.max())} of {len(group)} votes; {k} needed"}
            )  # fmt: skip
            continue
        if len(top) > 1:
            dropped.append(
                {"kind": "item", "id": item, "reason": "tie",
                 "detail": f"labels {sorted(top.index)} tie at {int(counts.max())} votes"}
            )  # fmt: skip
            continue
        rows.append(
            {
                "item_id": item,
                "label": str(top.index[0]),
                "n_annotations": len(group),
                "votes": int(counts.max()),
                "vote_share": round(float(counts.max()) / len(group), 4),
            }
        )
    gold = pd.DataFrame(rows, columns=["item_id", "label", "n_annotations", "votes", "vote_share"])
    return gold, dropped, None


def element_f1(mine: set, theirs: set) -> float:
    """F1 of one annotator's elements against a reference set (1.0 when both are
    empty: agreeing that an item has nothing to mark)."""
    if not mine and not theirs:
        return 1.0
    hits = len(mine & theirs)
    return 2 * hits / (len(mine) + len(theirs))


def _screen_by_elements(
    ratings: pd.DataFrame, settings: SpanVoteSettings, kind: ValueType
) -> tuple[pd.DataFrame, list[dict]]:
    """(the ratings of the annotators kept, the screened annotators' drop records): an
    annotator's mean element F1 against the elements most of the *other* annotators of
    each item marked (more than half of them), over the items with at least two others;
    screened below ``element_f1_min`` over ``min_screened_items`` items or more."""
    by_item: dict[str, list[tuple[str, set]]] = {}
    for item, who, value in ratings[["item_id", "annotator_id", "value"]].itertuples(index=False):
        by_item.setdefault(str(item), []).append((str(who), set(kind.elements(str(value)))))
    scores: dict[str, list[float]] = {}
    for marks in by_item.values():
        if len(marks) < 3:
            continue  # fewer than two others: no majority to agree with
        for who, mine in marks:
            others = [m for w, m in marks if w != who]
            counts = Counter(e for m in others for e in m)
            majority = {e for e, n in counts.items() if n > len(others) / 2}
            scores.setdefault(who, []).append(element_f1(mine, majority))
    threshold = float(settings.element_f1_min)
    out = {
        who: float(np.mean(f))
        for who, f in scores.items()
        if len(f) >= settings.min_screened_items and float(np.mean(f)) < threshold
    }
    people = ratings["annotator_id"].astype(str).nunique()
    if out and len(out) == people:
        raise AgreementError(
            f"the screening would remove every annotator ({len(out)}) with element_f1_min "
            f"{threshold}; lower it (or set it to null) in the recipe's agreement section"
        )
    dropped = [
        {"kind": "annotator", "id": who, "reason": "low_element_f1",
         "detail": f"mean element F1 {f1:.3f} against the others' majority over "
                   f"{len(scores[who])} items (< {threshold})"}
        for who, f1 in sorted(out.items())
    ]  # fmt: skip
    return ratings[~ratings["annotator_id"].astype(str).isin(set(out))], dropped


def screen_by_elements(ratings: pd.DataFrame, settings: AgreementSettingsBase, kind: ValueType
                       ) -> tuple[pd.DataFrame, list[dict]]:  # fmt: skip
    """With ``settings.element_f1_min``, the ratings of the annotators kept and the drop
    records of those screened (:func:`_screen_by_elements`) and of the items all of whose
    annotators were screened out (``annotators_screened``: no value left); else the
    ratings as they are."""
    if settings.element_f1_min is None:
        return ratings, []
    before = set(ratings["item_id"].astype(str))
    ratings, dropped = _screen_by_elements(ratings, settings, kind)
    gone = sorted(before - set(ratings["item_id"].astype(str)))
    dropped += [{"kind": "item", "id": item, "reason": "annotators_screened",
                 "detail": "every annotator of the item was screened out (low_element_f1)"}
                for item in gone]  # fmt: skip
    return ratings, dropped


@agreement_rule("span_vote", SpanVoteSettings)
def span_vote_rule(
    ratings: pd.DataFrame, settings: SpanVoteSettings
) -> tuple[pd.DataFrame, list[dict], None]:
    """Per item, the elements (spans, relations, arcs) that at least ``min_votes`` of
    its annotators marked; of two voted elements that conflict (overlapping spans, two
    heads for one word) the one with more votes stays (then the earlier). Every element
    left out is a dropped row (kind ``span``: ``few_votes`` or ``conflict``); an item
    whose voted elements make no valid value (a word without a head) is dropped
    (``no_majority``). An item where nobody marked anything has the empty value."""
    kind = VALUE_TYPES.get(settings.value_type)
    k = int(settings.min_votes or 0)
    rows = []
    ratings, dropped = screen_by_elements(ratings, settings, kind)
    for item, group in ratings.groupby("item_id", sort=True):
        values = [str(v) for v in group["value"]]
        counts = Counter(e for v in values for e in set(kind.elements(v)))
        kept: list = []
        for element, n in sorted(counts.items(), key=lambda en: (-en[1], en[0])):
            ident = f"{item}/{json.dumps(element, ensure_ascii=False)}"
            if n < k:
                dropped.append(
                    {
                        "kind": "span",
                        "id": ident,
                        "reason": "few_votes",
                        "detail": f"{n} of {len(values)} annotators; {k} needed",
                    }
                )
            elif any(kind.conflicts(element, other) for other in kept):
                dropped.append(
                    {
                        "kind": "span",
                        "id": ident,
                        "reason": "conflict",
                        "detail": f"{n} votes; overlaps an element with more",
                    }
                )
            else:
                kept.append(element)
        value = kind.from_elements(kept, values)
        if value is None:
            dropped.append(
                {
                    "kind": "item",
                    "id": item,
                    "reason": "no_majority",
                    "detail": f"the elements {k} of {len(values)} annotators share "
                    f"make no {settings.value_type}",
                }
            )
            continue
        rows.append(
            {"item_id": item, "label": value, "n_annotations": len(values), "elements": len(kept)}
        )
    gold = pd.DataFrame(rows, columns=["item_id", "label", "n_annotations", "elements"])
    return gold, dropped, None


def nli_validation_table(ratings: pd.DataFrame, gold: pd.DataFrame) -> dict | None:
    """KLUE Table 5, from the items that have an author label: unanimous gold label,
    individual (validator) label = gold, individual = author, gold = author,
    gold != author, and no gold label; as shares (0-1) with their counts."""
    if "role" not in ratings.columns or not (ratings["role"] == "author").any():
        return None
    gold_of = dict(zip(gold["item_id"], gold["label"].astype(str), strict=True))
    authored = ratings[ratings["role"] == "author"]
    author_of = dict(zip(authored["item_id"], authored["value"].astype(str), strict=True))
    items = sorted(author_of)
    sub = ratings[ratings["item_id"].isin(items)]
    validators = sub[sub["role"] != "author"]
    unanimous = sum(1 for _, g in sub.groupby("item_id") if g["value"].astype(str).nunique() == 1)
    with_gold = [i for i in items if i in gold_of]
    pairs = list(zip(validators["item_id"], validators["value"].astype(str), strict=True))
    ind_gold = sum(v == gold_of.get(i) for i, v in pairs)
    ind_author = sum(v == author_of[i] for i, v in pairs)
    gold_author = sum(gold_of[i] == author_of[i] for i in with_gold)

    def share(n: int, d: int) -> dict:
        return {"count": int(n), "of": int(d), "share": round(n / d, 4) if d else None}

    return {
        "unanimous_gold_label": share(unanimous, len(items)),
        "individual_label_eq_gold": share(ind_gold, len(validators)),
        "individual_label_eq_author": share(ind_author, len(validators)),
        "gold_label_eq_author": share(gold_author, len(items)),
        "gold_label_ne_author": share(len(with_gold) - gold_author, len(items)),
        "no_gold_label": share(len(items) - len(with_gold), len(items)),
    }


# ---------------------------------------------------------------------------- driver


def agree(
    frame: pd.DataFrame,
    settings: AgreementSettingsBase,
    value_type: str | None = None,
    context: dict | None = None,
    people: PeopleScreen | None = None,
    reviews: pd.DataFrame | None = None,
) -> dict:
    """Gold labels, dropped items and annotators, and the dataset-level figures: the
    agreement measures of the answers' value type (``value_type``; by default the
    rule's, else ``rating`` when every value is a number and ``choice`` when not;
    ``context``: what a structured type's measures need, e.g. the texts' lengths).
    ``people``: who counts (a pilot's qualified set, control items;
    ``pipelines.agreement.screening``), applied before the rule; the rows it excludes
    are the result's ``excluded``, an item left without annotations is dropped
    (``no_annotations_left``). With ``reports: review``, ``reviews`` (the review round's
    decisions, ``pipelines.agreement.review.review_table``) decide each reported item."""
    if settings.reports not in MODES:
        raise AgreementError(f"reports must be one of {list(MODES)}, got {settings.reports!r}")
    if value_type or getattr(settings, "value_type", None):  # known: checked before reading
        value_type_for(frame.iloc[:0], settings, value_type)
    screened_people: list[dict] = []
    people_figures: dict | None = None
    excluded = frame.iloc[:0].assign(reason=pd.Series(dtype=str), detail=pd.Series(dtype=str))
    lost: set[str] = set()
    if people is not None:
        before = set(frame["item_id"].astype(str))
        frame, excluded, screened_people, people_figures = screen_people(
            frame, people, settings.answer_field
        )
        if people.controls is not None:
            before -= set(people.controls["item_id"].astype(str))
        lost = before - set(frame["item_id"].astype(str))
        if frame.empty:
            raise AgreementError(
                f"no annotation is left once annotators are screened ({people_figures})"
            )
    ratings, flags, blanks = split_annotations(frame, settings)
    if ratings.empty:
        raise AgreementError("no ratings to aggregate (every annotation empty or cancelled)")
    kind = value_type_for(ratings, settings, value_type)
    dropped: list[dict] = [*screened_people, *blanks]
    for item in sorted(lost):
        dropped.append({"kind": "item", "id": item, "reason": "no_annotations_left",
                        "detail": "every annotation of the item was excluded (not_qualified, "
                                  "low_control_accuracy)"})  # fmt: skip
    suggestions = suggestion_table(ratings, kind)
    if suggestions is not None and settings.suggestion_accept_max is not None:
        accepting = accepting_annotators(suggestions, settings.suggestion_accept_max,
                                         settings.suggestion_min_items)  # fmt: skip
        out = {d["id"] for d in accepting}
        suggestions["screened"] = suggestions["annotator_id"].isin(out)
        if out and out >= set(ratings["annotator_id"].astype(str)):
            raise AgreementError("the suggestion screening would remove every annotator")
        dropped.extend(accepting)
        before = set(ratings["item_id"].astype(str))
        ratings = ratings[~ratings["annotator_id"].astype(str).isin(out)]
        for item in sorted(before - set(ratings["item_id"].astype(str))):
            lost.add(item)
            dropped.append({"kind": "item", "id": item, "reason": "annotators_screened",
                            "detail": "every annotator of the item was screened out "
                                      "(accepts_suggestions)"})  # fmt: skip
    flagged: set[str] = set()
    decisions: dict[str, dict] = {}
    for item, per_flag in sorted(flags.items()):
        hits = report_hits(per_flag, settings)
        if not hits:
            continue
        if settings.reports == "review":
            decision = decisions[item] = review_decision(item, hits, reviews)
            if decision["drop"]:
                flagged.add(item)
                dropped.append({"kind": "item", "id": item, "reason": decision["flag"],
                                "detail": decision["detail"]})  # fmt: skip
            continue
        flagged.add(item)
        first = sorted(hits)[0]
        detail = "; ".join(f"{f} by {n} annotator(s)" for f, n in sorted(hits.items()))
        dropped.append({"kind": "item", "id": item, "reason": first, "detail": detail})
    annotators = None
    usable = ratings[~ratings["item_id"].isin(flagged)]
    gold, rule_drops, annotators = AGREEMENT_RULES.get(settings.rule).apply(usable, settings)
    dropped.extend(rule_drops)
    if "simulated" in frame.columns:
        sim = frame.groupby("item_id")["simulated"].agg(lambda s: bool(s.astype(bool).any()))
        gold["simulated"] = gold["item_id"].map(sim).fillna(False).astype(bool)
    items = ratings["item_id"].nunique() + len(lost)
    figures = {
        "rule": settings.rule,
        "settings": asdict(settings),
        "items": int(items),
        "annotators": int(ratings["annotator_id"].nunique()),
        "ratings": int(len(ratings)),
        "ratings_per_item": round(len(ratings) / items, 3),
        "gold_items": int(len(gold)),
        "dropped_items": _reason_counts(dropped, "item"),
        "dropped_annotators": _reason_counts(dropped, "annotator"),
        "dropped_ratings": _reason_counts(dropped, "rating"),
        "warnings": agreement_warnings(ratings, blanks),
        "value_type": kind.name,
    }
    figures.update(kept_counts(ratings, gold, dropped))
    measures = kind.measures(ratings, context)
    figures.update(measures, measures=list(measures))
    if annotators is not None:
        figures["annotators_table"] = json.loads(annotators.to_json(orient="records"))
        kept = ratings[~ratings["annotator_id"].isin(
            {d["id"] for d in dropped if d["kind"] == "annotator"}
        )]  # fmt: skip
        figures["krippendorff_alpha_after_screening"] = alphas(kept) if len(kept) else {}
    else:
        table = label_agreement(ratings, gold)
        figures["annotator_label_agreement"] = json.loads(table.to_json(orient="records"))
    nli = nli_validation_table(ratings, gold)
    if nli is not None:
        figures["nli_validation"] = nli
    if "simulated" in frame.columns:
        figures["simulated"] = bool(frame["simulated"].astype(bool).any())
    if people_figures is not None:
        figures["people"] = people_figures
    if suggestions is not None:
        figures["suggestions"] = json.loads(suggestions.to_json(orient="records"))
    if settings.reports == "review":
        gold = with_decisions(gold, decisions)
        figures["review"] = review_figures(decisions)
    dropped_frame = pd.DataFrame(dropped, columns=DROPPED_COLUMNS)
    return {"gold": gold, "dropped": dropped_frame, "figures": figures, "excluded": excluded}


def kept_counts(ratings: pd.DataFrame, gold: pd.DataFrame, dropped: list[dict]) -> dict:
    """What the release keeps of ``ratings`` (issue 54: a card's "annotators" and
    "ratings" are those the rule read, after any pilot and control items, and the
    release holds fewer): ``annotators_kept``, the distinct annotators whose ratings
    remain on a gold item once the rule's screening dropped annotators, and
    ``ratings_kept``, how many of their ratings those items carry."""
    out = {str(d["id"]) for d in dropped if d["kind"] == "annotator"}
    rows = ratings[
        ~ratings["annotator_id"].astype(str).isin(out)
        & ratings["item_id"].astype(str).isin(set(gold["item_id"].astype(str)))
    ]
    return {"annotators_kept": int(rows["annotator_id"].nunique()), "ratings_kept": int(len(rows))}


def with_decisions(gold: pd.DataFrame, decisions: dict[str, dict]) -> pd.DataFrame:
    """``gold`` with each reviewed item's decision, reviewer, reason and fix (issue 35:
    the decision and the reviewer are kept with each item)."""
    out = gold.copy()
    for column, key in (("review_decision", "decision"), ("reviewer", "reviewer"),
                        ("review_reason", "reason"), ("review_fix", "fix")):  # fmt: skip
        out[column] = (
            out["item_id"]
            .astype(str)
            .map(lambda i, k=key: decisions[i][k] if i in decisions else None)
        )
    return out


def review_figures(decisions: dict[str, dict]) -> dict:
    """The review round's counts: reported items, kept, fixed (a fix that changed no
    text is counted apart and keeps the item as it was), dropped, not reviewed."""
    got = [d["decision"] for d in decisions.values()]
    fixed = sum(d["decision"] == "fix" and bool(d["fix"]) for d in decisions.values())
    return {
        "reported": len(decisions),
        "kept": got.count("keep"),
        "fixed": fixed,
        "fix_without_change": got.count("fix") - fixed,  # kept as they were
        "dropped": got.count("drop"),
        "not_reviewed": got.count(None),
        "reviewers": sorted({d["reviewer"] for d in decisions.values() if d["reviewer"]}),
    }


def value_type_for(ratings: pd.DataFrame, settings: AgreementSettingsBase, name: str | None = None):  # noqa: ANN201 - a pipelines.annotation.values.ValueType
    """The value type of the answers: ``name``, the rule's own (``span_vote``'s
    ``value_type``), or ``rating``/``choice`` by whether every value is a number; the
    rule must be one the type can aggregate."""
    name = name or getattr(settings, "value_type", None)
    if not name:
        name = "rating" if numeric_values(ratings) is not None else "choice"
    kind = VALUE_TYPES.get(name)
    if settings.rule not in kind.rules:
        raise AgreementError(
            f"rule {settings.rule!r} cannot aggregate {name} answers (its rules: "
            f"{list(kind.rules)})"
        )
    return kind


def agreement_warnings(ratings: pd.DataFrame, blanks: list[dict]) -> list[str]:
    """What a user must hear though the step succeeds (issue 32): items rated by one
    person only (no agreement can be measured or screened: KLUE 3.2.1's screening and
    disagreement rules need several ratings per item), and ratings without a value."""
    out = []
    per_item = ratings.groupby("item_id")["annotator_id"].nunique()
    single = int((per_item < 2).sum())
    if single == len(per_item):
        out.append(
            f"every item has a single rating ({ratings['annotator_id'].nunique()} annotator(s) "
            "in all): no agreement can be measured, no annotator screened and no disagreement "
            "dropped; each gold label is one person's"
        )
    elif single:
        out.append(f"{single} of {len(per_item)} items have a single rating (no agreement on them)")
    if blanks:
        out.append(
            f"{len(blanks)} annotation(s) have no value and are not cancelled: dropped with "
            f"reason empty_value (first: {blanks[0]['detail']})"
        )
    return out


def _settings_text(settings: AgreementSettingsBase) -> str:
    keys = settings.summary
    return ", ".join(f"{k} {getattr(settings, k)}" for k in (*keys, "report_min"))


def _reason_counts(dropped: list[dict], kind: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in dropped:
        if row["kind"] == kind:
            out[row["reason"]] = out.get(row["reason"], 0) + 1
    return dict(sorted(out.items()))


def agreement_code(settings: AgreementSettingsBase, value_type: str) -> list[str]:
    """The modules that compute an agreement, the code roots of its cache key
    (``pipelines.core.code.cache_key``): the rule's module (registered by name), this
    module (``agree``, the screening and review rules it imports) and the module of the
    answers' value type, whose measures give the figures. Editing one of them (or what
    it imports) rewrites the agreement's outputs."""
    return [AGREEMENT_RULES.get(settings.rule).apply.__module__, __name__,
            type(VALUE_TYPES.get(value_type)).__module__]  # fmt: skip


def run_agree(
    path: Path,
    settings: AgreementSettingsBase,
    out: Path,
    value_type: str | None = None,
    people: PeopleScreen | None = None,
    reviews: pd.DataFrame | None = None,
) -> dict:
    """Read ``path``, apply the rule, write gold.parquet, dropped.parquet and
    agreement.json (atomically, manifest last; a rerun with the same input, settings and
    code, :func:`agreement_code`, rewrites nothing). Returns the figures, with
    ``written``. When no item keeps a gold label the step stops (AgreementError naming
    the figures and settings) and writes nothing: an empty gold table would only fail
    later, in the split. With ``people``
    the annotation rows it excludes are written to excluded_annotations.parquet with
    their reasons."""
    from pipelines.core.io import output_lock

    try:
        result = agree(read_annotations(path), settings, value_type, people=people,
                       reviews=reviews)  # fmt: skip
        if result["gold"].empty:
            figures = result["figures"]
            raise AgreementError(
                f"no item keeps a gold label: all {figures['items']} items dropped "
                f"({figures['dropped_items']}; annotators screened out: "
                f"{figures['dropped_annotators'] or 'none'}) by rule {settings.rule!r} with "
                f"{_settings_text(settings)}; nothing to split"
            )
    except AgreementError as exc:
        message = str(exc)
        raise AgreementError(
            message if message.startswith(str(path)) else f"{path}: {message}"
        ) from None
    with output_lock(out):  # one run at a time writes into OUT
        return _write_agree(path, settings, out, result, people, reviews)


def _write_agree(path: Path, settings: AgreementSettingsBase, out: Path, result: dict,
                 people: PeopleScreen | None = None,
                 reviews: pd.DataFrame | None = None) -> dict:  # fmt: skip
    from pipelines.core.code import cache_key
    from pipelines.core.io import write_outputs

    value_type = result["figures"]["value_type"]
    parts = {"settings": asdict(settings), "value_type": value_type}
    tables = {"gold.parquet": result["gold"], "dropped.parquet": result["dropped"]}
    if people is not None:
        parts["people"] = people.key()
        tables["excluded_annotations.parquet"] = result["excluded"]
    if reviews is not None:
        parts["reviews"] = json.loads(reviews.drop(columns=["annotation_id"], errors="ignore")
                                      .to_json(orient="records"))  # fmt: skip
    key = cache_key({"annotations": path}, parts, agreement_code(settings, value_type))
    figures = {**result["figures"], "input": str(path)}
    written = write_outputs(out, key, tables, {"agreement.json": figures})
    return {**figures, "written": written}
