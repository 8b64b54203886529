"""JSTS and JNLI construction rules (Kurihara et al. 2022, JGLUE 3.2.2), on
captions grouped by image (``pipelines.families.jglue.release.captions_of``).

JSTS (3.2.2, steps 1, 2 and 5):

- ``same_image_pairs``: JSTS-A, two captions of one image; ``other_image_pairs``:
  JSTS-B, captions of two images (``random``: the release's B pairs average 0.19 of 5,
  what unrelated pairs get; ``gsm``: greedy ROUGE matching on Japanese morphemes, for
  B pairs that share words);
- 5 annotators rate 0-5; the gold label is the mean; a pair whose rating variance is
  1.0 or more is dropped (``sts_gold``; the sample variance, as pandas computes it:
  the paper does not say which).

JNLI (3.2.2, steps 3 and 4):

- ``nli_items``: every JSTS-A pair in **both directions**; 10 annotators label each;
  ``nli_gold``: entailment or neutral when 6 or more agree (contradiction votes make no
  gold here: contradictions come from the writing round);
- ``writing_items``: captions for which a crowdworker writes four contradicting
  sentences; ``written_pairs``: a written sentence whose normalised edit distance to its
  caption is 0.75 or more is dropped (Levenshtein distance / the longer length, from
  rapidfuzz: every one of the 367 written contradictions in the JNLI v1.3 valid release
  is under 0.75);
- ``validated``: one-way validation by 10 annotators, kept when 6 or more say
  contradiction; ``with_reverse`` adds the other direction; the kept pairs are rated
  again like JSTS (JSTS-C).

Simulated annotators (demos and tests; the outputs say so) need a latent truth per
item: the release's label of the same two texts when the release has it, else a
documented model (``latent_similarity``, ``latent_nli``, ``writing_items``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
from rapidfuzz.distance import Levenshtein

from pipelines.core.settings import AtLeastOne, NonNegative, Share
from pipelines.families.jglue.release import NLI_LABELS

PAIR_COLUMNS = [
    "pair_id",
    "kind",
    "images",
    "image1",
    "caption1",
    "image2",
    "caption2",
    "sentence1",
    "sentence2",
]
# what JGLUE reports per step (3.2.2, steps 1, 2 and 5)
PAPER_JSTS = {
    "A": {"pairs": 16000, "kept": 10236},
    "B": {"pairs": 4000, "kept": 2970},
    "C": {"pairs": 3779, "kept": 2303},
}

# JGLUE Table 4 (JSTS pairs per similarity range) and Table 5 (JNLI pairs per label):
# train, dev, test
PAPER_TABLES = {
    "jsts": {
        "0-1": (2837, 353, 405),
        "1-2": (1752, 184, 160),
        "2-3": (2784, 308, 355),
        "3-4": (3719, 466, 488),
        "4-5": (1359, 146, 181),
    },
    "jnli": {
        "entailment": (2876, 353, 367),
        "neutral": (11193, 1347, 1365),
        "contradiction": (6004, 734, 776),
    },
}


def similarity_range(label: float) -> str:
    """Table 4's range of a similarity: 0-1, 1-2, 2-3, 3-4 or 4-5 (a boundary value
    goes to the range above it, 5.0 to 4-5; the paper does not say)."""
    low = min(int(float(label)), 4)
    return f"{low}-{low + 1}"


def paper_table(task: str, items: pd.DataFrame, splits: pd.DataFrame) -> list[list]:
    """Table 4 (``jsts``) or Table 5 (``jnli``) with the run's counts beside the paper's:
    rows of (range or label, then train, dev, test and overall as "run (paper)")."""
    frame = items[["item_id", "label"]].merge(splits[["item_id", "split"]], on="item_id")
    key = frame["label"].map(similarity_range) if task == "jsts" else frame["label"].astype(str)
    counts = frame.groupby([key, frame["split"]]).size()
    rows = []
    names = ("train", "dev", "test")
    totals_run, totals_paper = [0, 0, 0], [0, 0, 0]
    for name, paper in PAPER_TABLES[task].items():
        run = [int(counts.get((name, s), 0)) for s in names]
        totals_run = [a + b for a, b in zip(totals_run, run, strict=True)]
        totals_paper = [a + b for a, b in zip(totals_paper, paper, strict=True)]
        rows.append([name, *(f"{r} ({p:,})" for r, p in zip(run, paper, strict=True)),
                     f"{sum(run)} ({sum(paper):,})"])  # fmt: skip
    rows.append(["overall", *(f"{r} ({p:,})" for r, p in zip(totals_run, totals_paper,
                                                           strict=True)),
                 f"{sum(totals_run)} ({sum(totals_paper):,})"])  # fmt: skip
    return rows


# JGLUE Table 6: the mean and standard deviation over JSTS's pairs of the variance of
# each pair's similarity ratings
PAPER_VARIANCE = {"mean": 0.420, "sd": 0.286}


def variance_figures(annotations: pd.DataFrame, kept: list[str] | set[str]) -> dict:
    """Table 6's figures over the ``kept`` pairs: the variance of each pair's ratings
    (the sample variance, as the variance rule) and their mean and standard deviation,
    with the paper's beside them."""
    done = annotations[~annotations["cancelled"].fillna(False).astype(bool)]
    done = done[done["item_id"].isin(set(kept)) & done["value"].notna()]
    if "field" in done:
        done = done[done["field"] == "similarity"]
    var = done.assign(v=done["value"].astype(float)).groupby("item_id")["v"].var().dropna()
    return {
        "pairs": len(var),
        "mean": round(float(var.mean()), 3) if len(var) else None,
        "sd": round(float(var.std()), 3) if len(var) > 1 else None,
        "paper": dict(PAPER_VARIANCE),
    }


@dataclass(frozen=True)
class JglueRules:
    """JGLUE 3.2's thresholds (the recipe's ``jglue.rules``; the paper's by default),
    each in its range (issue 51); ``nli_gold`` names JNLI labels, each once."""

    variance_max: NonNegative = 1.0  # JSTS: drop a pair whose rating variance is 1.0 or more
    nli_min_votes: AtLeastOne = 6  # JNLI step 1: 6 of 10 annotators
    nli_gold: tuple[str, ...] = ("entailment", "neutral")  # the labels step 1 makes
    edit_distance_max: Share = 0.75  # JNLI: drop written sentences this far or farther
    contradiction_min_votes: AtLeastOne = 6  # JNLI validation: 6 of 10 say contradiction
    japanese_share_min: Share = 0.5  # a caption under it is in the wrong language

    def __post_init__(self) -> None:
        bad = sorted(set(self.nli_gold) - set(NLI_LABELS))
        if bad or not self.nli_gold:
            raise ValueError(f"nli_gold: {bad or 'none'}; JNLI's labels are {list(NLI_LABELS)}")
        if len(set(self.nli_gold)) != len(self.nli_gold):
            raise ValueError(f"nli_gold names a label twice: {list(self.nli_gold)}")


def pair_id(image1: str, caption1: str, image2: str, caption2: str) -> str:
    """The release's ``yjcaptions_id`` of a pair."""
    images = image1 if image1 == image2 else f"{image1}_{image2}"
    return f"{images}-{caption1}-{caption2}"


def _pair(kind: str, a: pd.Series, b: pd.Series) -> dict:
    return {
        "pair_id": pair_id(a.image_id, a.caption_id, b.image_id, b.caption_id),
        "kind": kind,
        "images": sorted({a.image_id, b.image_id}),
        "image1": a.image_id,
        "caption1": a.caption_id,
        "image2": b.image_id,
        "caption2": b.caption_id,
        "sentence1": a.text,
        "sentence2": b.text,
    }


def _real(captions: pd.DataFrame) -> pd.DataFrame:
    return captions[~captions["written"].astype(bool)]


def same_image_pairs(
    captions: pd.DataFrame, n: int, seed: int, only: set[tuple[str, str]] | None = None
) -> pd.DataFrame:
    """JSTS-A: ``n`` pairs (seeded; 0: all) of two captions of one image, captions in
    id order; only pairs whose texts (either order) are in ``only`` when given."""
    rows = []
    for _, group in _real(captions).groupby("image_id", sort=True):
        for a, b in itertools.combinations(list(group.itertuples(index=False)), 2):
            if only is None or (a.text, b.text) in only or (b.text, a.text) in only:
                rows.append(_pair("A", a, b))
    frame = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    if n and n < len(frame):
        frame = frame.sample(n=n, random_state=seed).sort_values("pair_id", ignore_index=True)
    return frame


def other_image_pairs(
    captions: pd.DataFrame, n: int, seed: int, method: str = "random", lang: str = "ja"
) -> pd.DataFrame:
    """JSTS-B: ``n`` pairs of captions of two images, no caption twice. ``random``: a
    seeded draw; ``gsm``: one seeded caption per image, paired by greedy sentence
    matching on ROUGE-L of the language's morphemes (the first ``n`` matches)."""
    real = _real(captions)
    if n <= 0 or real["image_id"].nunique() < 2:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    rng = np.random.default_rng(seed)
    one = real.groupby("image_id", sort=True).sample(n=1, random_state=seed)
    one = one.iloc[rng.permutation(len(one))].reset_index(drop=True)
    rows = []
    if method == "gsm":
        from pipelines.lang import language
        from pipelines.pairing.gsm import greedy_sentence_matching

        tokens = [language(lang).morphemes(t) for t in one["text"]]
        result = greedy_sentence_matching(tokens, seed=seed)
        for i, j in list(zip(result.first, result.second, strict=True))[:n]:
            rows.append(_pair("B", one.iloc[int(i)], one.iloc[int(j)]))
    elif method == "random":
        for i in range(0, min(2 * n, len(one) - 1), 2):
            rows.append(_pair("B", one.iloc[i], one.iloc[i + 1]))
    else:
        raise ValueError(f"other_image_method {method!r}: random or gsm")
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def rouge(pairs: pd.DataFrame, lang: str = "ja") -> np.ndarray:
    """ROUGE-L F1 of each pair on the language's morphemes."""
    from pipelines.lang import language
    from pipelines.pairing.rtt import rouge_l

    morphemes = language(lang).morphemes
    return np.array(
        [
            rouge_l(morphemes(a), morphemes(b))
            for a, b in zip(pairs["sentence1"], pairs["sentence2"], strict=True)
        ]
    )


def latent_similarity(
    pairs: pd.DataFrame,
    release: dict[tuple[str, str], object],
    reference: pd.DataFrame,
    seed: int,
) -> tuple[np.ndarray, list[str]]:
    """The simulated raters' latent similarity per pair and where it came from: the
    release's JSTS label of the same two texts (``release``), else a model: the
    least-squares line of the release's labels on ROUGE-L over ``reference`` (released
    pairs of the same kind, with ``rouge`` and ``label``), plus normal noise of the
    line's residual spread, clipped to 0-5 (5 x ROUGE-L when the release has no pair of
    the kind). Seeded per pair."""
    scores = rouge(pairs)
    out, source = np.zeros(len(pairs)), []
    lines = {}
    for kind, ref in reference.groupby("kind"):
        if len(ref) >= 3:
            slope, intercept = np.polyfit(ref["rouge"], ref["label"], 1)
            resid = ref["label"] - (slope * ref["rouge"] + intercept)
            lines[kind] = (float(slope), float(intercept), float(resid.std()))
    for i, r in enumerate(pairs.itertuples(index=False)):
        known = release.get((r.sentence1, r.sentence2))
        if known is not None:
            out[i] = float(known)
            source.append("release")
            continue
        rng = np.random.default_rng([seed, int.from_bytes(r.item_id.encode()[-8:], "little")])
        slope, intercept, sd = lines.get(r.kind, (5.0, 0.0, 0.0))
        out[i] = slope * scores[i] + intercept + rng.normal(0, sd)
        source.append("model")
    return np.clip(out, 0, 5).round(2), source


def latent_nli(s1: str, s2: str, release: dict[tuple[str, str], object]) -> list[str]:
    """The simulated annotators' latent NLI labels of (s1, s2), each annotator answering
    as one of them: the release's label of the directed pair, else every label (the
    release has no gold for the pair, so people are modelled as disagreeing)."""
    known = release.get((s1, s2))
    return [str(known)] if known is not None else list(NLI_LABELS)


def nli_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """JNLI step 1: each pair in both directions (``item_id`` = the directed
    ``yjcaptions_id``; ``pair_id`` = the pair's)."""
    rows = []
    for r in pairs.itertuples(index=False):
        for forward in (True, False):
            i1, c1, s1, i2, c2, s2 = (
                (r.image1, r.caption1, r.sentence1, r.image2, r.caption2, r.sentence2)
                if forward
                else (r.image2, r.caption2, r.sentence2, r.image1, r.caption1, r.sentence1)
            )
            rows.append(
                {
                    "item_id": pair_id(i1, c1, i2, c2),
                    "pair_id": r.pair_id,
                    "direction": "forward" if forward else "reverse",
                    "kind": r.kind,
                    "images": list(r.images),
                    "sentence1": s1,
                    "sentence2": s2,
                }
            )
    return pd.DataFrame(rows)


def nli_gold(gold: pd.DataFrame, rules: JglueRules) -> tuple[pd.DataFrame, list[dict]]:
    """JNLI step 1 on the majority rule's gold (``min_votes`` = ``nli_min_votes``): a
    label outside ``nli_gold`` (contradiction) is dropped, reason
    ``contradiction_majority``."""
    keep = gold["label"].isin(rules.nli_gold)
    dropped = [
        {
            "kind": "item",
            "id": r.item_id,
            "reason": "contradiction_majority",
            "detail": f"{r.votes} of {r.n_annotations} say {r.label}; JNLI takes "
            "contradictions from the writing round",
        }
        for r in gold[~keep].itertuples(index=False)
    ]
    return gold[keep].reset_index(drop=True), dropped


def writing_items(
    captions: pd.DataFrame,
    exclude_images: set[str],
    n: int,
    seed: int,
    only: set[str] | None = None,
    latent: dict[str, list[str]] | None = None,
    per_caption: int = 4,
) -> pd.DataFrame:
    """The writing round's captions: ``n`` (seeded; 0: all) captions of images not in
    ``exclude_images`` (JNLI's step-1 images: in the v1.3 release no image has both),
    only those whose text is in ``only`` when given. With ``latent`` (simulated writers:
    the release's contradictions per caption text) each item carries
    ``sim_contradiction_1..4``: the release's sentences, the missing ones filled with a
    caption of another image (an unrelated sentence: what the edit-distance rule and the
    validation exist to remove)."""
    real = _real(captions)
    pool = real[~real["image_id"].isin(exclude_images)]
    if only is not None:
        pool = pool[pool["text"].isin(only)]
    if n and n < len(pool):
        pool = pool.sample(n=n, random_state=seed)
    pool = pool.sort_values(["image_id", "caption_id"], ignore_index=True)
    items = pd.DataFrame(
        {
            "item_id": pool["image_id"] + "-" + pool["caption_id"],
            "image_id": pool["image_id"],
            "caption_id": pool["caption_id"],
            "caption": pool["text"],
        }
    )
    if latent is None:
        return items
    others, images = real["text"].tolist(), real["image_id"].tolist()
    for k in range(per_caption):
        column = []
        for r in items.itertuples(index=False):
            written = latent.get(r.caption, [])
            if k < len(written):
                column.append(written[k])
                continue
            rng = np.random.default_rng(
                [seed, k, int.from_bytes(r.item_id.encode()[-8:], "little")]
            )
            j = int(rng.integers(len(others)))
            while images[j] == r.image_id:
                j = int(rng.integers(len(others)))
            column.append(others[j])
        items[f"sim_contradiction_{k + 1}"] = column
    return items


def normalised_distance(a: str, b: str) -> float:
    """Levenshtein distance / the longer length (0: the same text, 1: nothing shared)."""
    return float(Levenshtein.normalized_distance(a, b))


def written_pairs(
    writing: pd.DataFrame, items: pd.DataFrame, rules: JglueRules, per_caption: int = 4
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pairs, dropped) from the pulled writing round: one (caption, written sentence)
    pair per written field, ``written_id`` ``g<n>`` numbered in order; dropped with a
    reason: ``skipped`` (the writer skipped the caption), ``empty``, ``repeated`` (the same
    sentence twice for a caption), ``same_as_caption``, ``edit_distance`` (>=
    ``edit_distance_max``)."""
    done = writing[~writing["cancelled"].fillna(False).astype(bool)]
    texts: dict[str, dict[str, str]] = {}
    for r in done.sort_values("annotation_id").itertuples(index=False):
        if r.field and str(r.field).startswith("contradiction_"):
            texts.setdefault(str(r.item_id), {}).setdefault(
                str(r.field), "" if r.value is None else str(r.value).strip()
            )
    rows, dropped, n = [], [], 0
    for item in items.itertuples(index=False):
        got = texts.get(item.item_id)
        if got is None:
            dropped.append(
                {
                    "item_id": item.item_id,
                    "field": "",
                    "written": "",
                    "reason": "skipped",
                    "detail": "no written sentence",
                }
            )
            continue
        seen: set[str] = set()
        for k in range(1, per_caption + 1):
            field = f"contradiction_{k}"
            text = got.get(field, "")
            d = normalised_distance(item.caption, text) if text else 1.0
            reason = (
                "empty"
                if not text
                else "repeated"
                if text in seen
                else "same_as_caption"
                if text == item.caption
                else "edit_distance"
                if d >= rules.edit_distance_max
                else ""
            )
            seen.add(text)
            if reason:
                detail = (
                    f"normalised edit distance {d:.3f} >= {rules.edit_distance_max}"
                    if reason == "edit_distance"
                    else ""
                )
                dropped.append(
                    {
                        "item_id": item.item_id,
                        "field": field,
                        "written": text,
                        "reason": reason,
                        "detail": detail,
                    }
                )
                continue
            rows.append(
                {
                    "written_id": f"g{n}",
                    "image_id": item.image_id,
                    "caption_id": item.caption_id,
                    "caption": item.caption,
                    "written": text,
                    "field": field,
                    "edit_distance": round(d, 4),
                }
            )
            n += 1
    pairs = pd.DataFrame(
        rows,
        columns=[
            "written_id",
            "image_id",
            "caption_id",
            "caption",
            "written",
            "field",
            "edit_distance",
        ],
    )
    return pairs, pd.DataFrame(dropped, columns=["item_id", "field", "written", "reason", "detail"])


def validation_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """The one-way validation's items: caption -> written sentence."""
    return pd.DataFrame(
        {
            "item_id": pairs["image_id"] + "-" + pairs["caption_id"] + "-" + pairs["written_id"],
            "image_id": pairs["image_id"],
            "caption_id": pairs["caption_id"],
            "written_id": pairs["written_id"],
            "sentence1": pairs["caption"],
            "sentence2": pairs["written"],
        }
    )


def validated(gold: pd.DataFrame, items: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """The validation items whose majority (``contradiction_min_votes`` of the votes) is
    contradiction; another majority is dropped (``not_contradiction``)."""
    keep = gold[gold["label"] == "contradiction"]
    dropped = [
        {
            "kind": "item",
            "id": r.item_id,
            "reason": "not_contradiction",
            "detail": f"{r.votes} of {r.n_annotations} say {r.label}",
        }
        for r in gold[gold["label"] != "contradiction"].itertuples(index=False)
    ]
    kept = items[items["item_id"].isin(set(keep["item_id"]))].reset_index(drop=True)
    return kept, dropped


def with_reverse(kept: pd.DataFrame) -> pd.DataFrame:
    """The validated contradictions in both directions (JNLI adds the reverse
    automatically): JNLI records with ``yjcaptions_id`` ``<image>-<caption>-g<n>`` and
    ``<image>-g<n>-<caption>``."""
    rows = []
    for r in kept.itertuples(index=False):
        rows.append(
            {
                "pair_id": f"{r.image_id}-{r.caption_id}-{r.written_id}",
                "sentence1": r.sentence1,
                "sentence2": r.sentence2,
            }
        )
        rows.append(
            {
                "pair_id": f"{r.image_id}-{r.written_id}-{r.caption_id}",
                "sentence1": r.sentence2,
                "sentence2": r.sentence1,
            }
        )
    frame = pd.DataFrame(rows, columns=["pair_id", "sentence1", "sentence2"])
    frame["label"] = "contradiction"
    frame["kind"] = "C"
    frame["images"] = [[p.split("-")[0]] for p in frame["pair_id"]]
    return frame
