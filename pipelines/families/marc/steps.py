"""MARC-ja's steps (JGLUE 3.1): ``reviews`` (ratings to labels) -> ``split`` ->
``crowd-items`` (the dev and test reviews) -> the relabelling round (push ... pull,
10 people per review) -> ``agree`` (the shared ``majority`` rule with ``min_votes: 7``)
-> ``labels`` (train keeps the rating's label, dev and test the crowd's; the
divergence between them) -> ``export``.

JGLUE 3.1: "1- and 2-star ratings are converted to "negative", and 4 and 5 are
converted to "positive". We do not use reviews with a 3-star rating"; for dev and test,
"we crowdsource a positive/negative judgment task for approximately 12,000 reviews. We
adopt only reviews with the same votes from 7 or more out of 10 workers and assign a
label of the maximum votes to these reviews"; train is "extracted ... directly from
MARC without performing the cleaning procedure"."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.rebuild.rounds import simulation
from pipelines.rebuild.split import split_over

if TYPE_CHECKING:
    from pipelines.families.marc.section import MarcSpec


def spec_of(ctx: RunContext) -> MarcSpec:
    return ctx.recipe.marc


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The relabelling round (the recipe's ``annotation``) over the dev and test
    reviews."""
    ann, out = ctx.recipe.annotation, ctx.out
    return {
        "": Round(
            out / "crowd" / "items.parquet",
            ctx.recipe.resolve(ann.config),
            ctx.project,
            ann.overlap,
            simulation(ann.simulate, ctx.simulated, ann.overlap),
            "rater",
            out / "annotate" / "annotations.parquet",
            ann.timeout,
            ann.poll,
        )
    }


# --------------------------------------------------------------------------- reviews


def rating_labels(ratings: pd.Series, spec: MarcSpec) -> tuple[pd.Series, pd.Series]:
    """(label, reason) per rating: the label ``marc.labels`` gives it, else the reason
    it is dropped: ``no_rating`` (missing or not a number), ``rating_outside_scale``,
    ``neutral_rating`` (on the scale but no label's: MARC-ja's 3 stars)."""
    value = pd.to_numeric(ratings, errors="coerce")
    by_rating = {float(r): label for label, rs in spec.labels.items() for r in rs}
    label = value.map(lambda v: by_rating.get(float(v)) if pd.notna(v) else None)
    low, high = spec.scale
    reason = pd.Series([None] * len(ratings), index=ratings.index, dtype=object)
    reason[label.isna()] = "neutral_rating"
    reason[value.notna() & ((value < low) | (value > high))] = "rating_outside_scale"
    reason[value.isna()] = "no_rating"
    return label.astype(object).where(reason.isna(), None), reason


def review_labels(
    ratings: pd.Series, texts: pd.Series, spec: MarcSpec
) -> tuple[pd.Series, pd.Series]:
    """:func:`rating_labels`, and a review over ``max_chars`` characters dropped as
    ``too_long`` (JGLUE's conversion script: ``--max-char-length 500``; exactly 500
    stays)."""
    label, reason = rating_labels(ratings, spec)
    if spec.max_chars is not None:
        long = texts.str.len() > spec.max_chars
        reason[long & reason.isna()] = "too_long"
    return label.where(reason.isna(), None), reason


@declares(
    reads=out_files("ingest/sentences.parquet", "ingest/documents.parquet"),
    writes=out_files("reviews/reviews.parquet", "reviews/dropped.parquet", "reviews/reviews.json"),
    settings=lambda ctx, arg: [spec_of(ctx).model_dump(exclude={"simulation", "stand_in"})],
)
def reviews_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Each ingested review's rating mapped to its label (``marc.labels``); a review
    whose rating is missing, off the scale or neutral, or that is over ``max_chars``
    characters (JGLUE's conversion script: ``--max-char-length 500``; exactly 500
    stays), is dropped with that reason."""
    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        sentences = pd.read_parquet(ctx.out / "ingest" / "sentences.parquet")
        docs = pd.read_parquet(
            ctx.out / "ingest" / "documents.parquet", columns=["doc_id", "source_id", "meta"]
        )
        frame = sentences.merge(docs, on="doc_id", how="left", validate="many_to_one")
        meta = frame["meta"].map(lambda m: json.loads(m) if isinstance(m, str) else {})
        ratings = meta.map(lambda m: m.get(spec.rating_field))
        label, reason = review_labels(ratings, frame["text"].astype(str), spec)
        group = (
            meta.map(lambda m: str(m.get(spec.group_field)))
            if spec.group_field
            else frame["doc_id"]
        )
        reviews = pd.DataFrame(
            {
                "item_id": "r-" + frame["source_id"].astype(str),
                "text": frame["text"].astype(str),
                "rating": pd.to_numeric(ratings, errors="coerce"),
                "rating_label": label,
                "label": label,
                "group": group.astype(str),
                "source": frame["corpus"].astype(str),
                "license": frame["license"].astype(str),
            }
        )
        kept = reviews[reason.isna()].reset_index(drop=True)
        dropped = pd.DataFrame(
            {
                "kind": "review",
                "id": reviews.loc[reason.notna(), "item_id"],
                "reason": reason[reason.notna()],
                "detail": "rating " + ratings[reason.notna()].astype(str),
            }
        )
        info = {
            "reviews": len(reviews),
            "kept": len(kept),
            "dropped": value_counts(dropped["reason"]),
            "labels": value_counts(kept["label"]),
            "ratings": {
                str(k): int(v) for k, v in sorted(reviews["rating"].value_counts().items())
            },
            "mapping": {k: list(v) for k, v in spec.labels.items()},
            "scale": list(spec.scale),
        }
        return {"reviews.parquet": kept, "dropped.parquet": dropped.reset_index(drop=True)}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['reviews']:,} reviews labelled from their ratings",
        Rows("review", info["reviews"], info["kept"], info["dropped"]),
        after=f": {info['labels']}; dropped {info['dropped']}",
    )


def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule over the labelled reviews (``group_columns: [group]``
    keeps a product's reviews in one split), with the artifact report -> OUT/split."""
    return split_over(ctx, ctx.out / "reviews" / "reviews.parquet", "review")


# ----------------------------------------------------------------------- crowd items


def text_model_truth(train: pd.DataFrame, evals: pd.DataFrame, seed: int) -> list[list[str]]:
    """The simulated raters' latent answers per dev/test review: ten answers, of which
    ``round(10 p)`` are positive, ``p`` the review's positive probability under a
    classifier trained on the train reviews' rating labels (TF-IDF over character
    1-3 grams, logistic regression with C 10 and balanced class weights, so the larger
    class does not swallow the other; scikit-learn)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    labels = sorted(train["label"].unique())
    if len(labels) != 2:
        return [[lab] * 10 for lab in evals["rating_label"]]
    vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(1, 3), min_df=2, sublinear_tf=True)
    model = LogisticRegression(C=10.0, class_weight="balanced", max_iter=2000, random_state=seed)
    model.fit(vec.fit_transform(train["text"]), train["label"])
    p = model.predict_proba(vec.transform(evals["text"]))[:, list(model.classes_).index(labels[1])]
    return [[labels[1]] * int(round(10 * x)) + [labels[0]] * (10 - int(round(10 * x))) for x in p]


@declares(
    reads=out_files("reviews/reviews.parquet", "split/splits.parquet"),
    writes=out_files("crowd/items.parquet", "crowd/items.json"),
    settings=lambda ctx, arg: [spec_of(ctx).simulation.model_dump(), ctx.simulated, ctx.seed],
)
def crowd_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dev and test reviews, for the raters (the text only; the rating is not
    shown)."""
    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        reviews = pd.read_parquet(ctx.out / "reviews" / "reviews.parquet")
        splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")[["item_id", "split"]]
        reviews = reviews.merge(splits, on="item_id", validate="one_to_one")
        evals = reviews[reviews["split"].isin(["dev", "test"])].sort_values("item_id")
        items = evals[["item_id", "text", "source"]].reset_index(drop=True)
        info = {"items": len(items), "train": int((reviews["split"] == "train").sum())}
        if ctx.simulated:
            if spec.simulation.text_model:
                train = reviews[reviews["split"] == "train"]
                truth = text_model_truth(train, evals, ctx.seed or 0)
            else:
                truth = [[lab] * 10 for lab in evals["rating_label"]]
            items["sim_label"] = truth
            agree = [
                sum(t == r for t in ts) / len(ts)
                for ts, r in zip(truth, evals["rating_label"], strict=True)
            ]
            info["truth_agrees_with_rating"] = round(float(np.mean(agree)), 4) if agree else None
        return {"items.parquet": items}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} dev/test reviews to relabel",
        Rows("review", info["items"], info["items"]),
    )


# ---------------------------------------------------------------------------- labels


def final_labels(
    reviews: pd.DataFrame, splits: pd.DataFrame, gold: pd.DataFrame, dropped: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(released reviews, dropped, figures): train keeps its rating's label; a dev or
    test review takes the crowd's label when the agreement step kept it (7 of 10),
    else it is dropped with the agreement step's reason. Figures: the divergence
    between the rating's label and the crowd's (JGLUE 3.1: MARC "sometimes contains
    data where the rating diverges from the review text"), per rating."""
    frame = reviews.merge(splits[["item_id", "split"]], on="item_id", validate="one_to_one")
    crowd = dict(zip(gold["item_id"].astype(str), gold["label"].astype(str), strict=True))
    why = dict(zip(dropped["id"].astype(str), dropped["reason"].astype(str), strict=False))
    evals = frame["split"].isin(["dev", "test"])
    frame["crowd_label"] = frame["item_id"].map(crowd)
    lost = evals & frame["crowd_label"].isna()
    out_rows = pd.DataFrame(
        {
            "kind": "review",
            "id": frame.loc[lost, "item_id"],
            "reason": frame.loc[lost, "item_id"].map(why).fillna("not_relabelled"),
            "detail": "dev/test review without a 7-of-10 crowd label",
        }
    )
    final = frame[~lost].copy()
    final["label"] = np.where(
        final["split"] == "train", final["rating_label"], final["crowd_label"]
    )
    relabelled = final[final["split"] != "train"]
    diverged = relabelled[relabelled["crowd_label"] != relabelled["rating_label"]]
    per_rating = {
        str(r): {
            "relabelled": int(len(g)),
            "diverged": int((g["crowd_label"] != g["rating_label"]).sum()),
        }
        for r, g in relabelled.groupby("rating")
    }
    figures = {
        "train_from_ratings": int((final["split"] == "train").sum()),
        "evaluation_reviews": int(evals.sum()),
        "relabelled_kept": len(relabelled),
        "kept_share": round(len(relabelled) / int(evals.sum()), 4) if evals.any() else None,
        "dropped": value_counts(out_rows["reason"]),
        "diverged": len(diverged),
        "divergence": round(len(diverged) / len(relabelled), 4) if len(relabelled) else None,
        "per_rating": per_rating,
        "splits": value_counts(final["split"]),
        "labels_per_split": {s: value_counts(g["label"]) for s, g in final.groupby("split")},
    }
    return final.reset_index(drop=True), out_rows.reset_index(drop=True), figures


@declares(
    reads=out_files(
        "reviews/reviews.parquet",
        "split/splits.parquet",
        "agree/gold.parquet",
        "agree/dropped.parquet",
    ),
    writes=out_files("final/reviews.parquet", "final/dropped.parquet", "final/labels.json"),
    settings=lambda ctx, arg: [],
)
def labels_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Train from the ratings, dev and test from the crowd (7 of 10); the divergence
    between rating and crowd label."""

    def compute() -> tuple[dict, dict]:
        final, dropped, figures = final_labels(
            pd.read_parquet(ctx.out / "reviews" / "reviews.parquet"),
            pd.read_parquet(ctx.out / "split" / "splits.parquet"),
            pd.read_parquet(ctx.out / "agree" / "gold.parquet"),
            pd.read_parquet(ctx.out / "agree" / "dropped.parquet"),
        )
        return {"reviews.parquet": final, "dropped.parquet": dropped}, figures

    done = cached(ctx, compute)
    info = done.info
    n = info["train_from_ratings"] + info["evaluation_reviews"]
    return done.outcome(
        f"train {info['train_from_ratings']:,} from ratings; dev/test {info['relabelled_kept']:,}"
        f" of {info['evaluation_reviews']:,} relabelled (7 of 10)",
        Rows("review", n, n - sum(info["dropped"].values()), info["dropped"]),
        after=f"; rating and crowd diverge on {info['diverged']} ({info['divergence']})",
    )
