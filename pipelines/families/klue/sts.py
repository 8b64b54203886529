"""KLUE-STS (KLUE 3.2): the ``klue-sts`` task kind.

Steps: ``pairs`` (ingest and pairing, KLUE 3.2.1) -> ``items`` -> the Label Studio round
(push, simulate, wait, pull) -> ``agree`` (the ``mean`` rule) -> ``split`` (the ``sts``
rule) -> ``export``.

Items: annotation items from built pairs, the sample that goes to annotators.

``sts_items`` draws a seeded sample of pairs, the same number from every value of the
``stratify`` column (the pairing method: intent, topic, gsm, rtt) as far as each has
pairs, and keeps what the STS interface shows (``sentence1``, ``sentence2``) plus the
pair's provenance (``source`` = corpus, ``method``, ``score``, ``license``).

For simulated annotators only (``simulate_truth: sts-pairs``), each item also gets a
latent true similarity ``sim_similarity`` that the simulated annotators perturb
(``pipelines.annotation.simulate``). It is benchforge's assumption, not a measurement: KLUE 3.2.1
expected intent pairs (same intent, paraphrases) to be highly similar, topic pairs
(same topic, other intent) to share a topic only, and GSM pairs to be less similar as
their ROUGE falls. So: intent -> 3.5 + 1.5 * u, topic -> 0.5 + 2.0 * u, gsm and rtt ->
5 * ROUGE score + N(0, 0.5), clipped to 0-5 (u uniform on [0, 1], seeded per pair).
The column never reaches the released data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.markdown import settings_table
from pipelines.core.stage import value_counts
from pipelines.core.steps import (
    STEPS,
    Rows,
    RunContext,
    StepOutcome,
    cached,
    declares,
    out_files,
)
from pipelines.evaluation.spec import regression
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.data_card import annotation_round, inline, table
from pipelines.export.facts import CardFacts
from pipelines.export.records import SPLITS, split_rows
from pipelines.families.klue.hub import hub
from pipelines.families.klue.items_section import ItemsSpec
from pipelines.families.klue.sampling import sample_evenly
from pipelines.rebuild.kinds import ExportInputs, SharedSteps, TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, one_round

ITEM_COLUMNS = ["item_id", "sentence1", "sentence2", "source", "method", "score", "license"]


def sts_truth(items: pd.DataFrame, seed: int) -> np.ndarray:
    """The simulated annotators' latent similarity per item (see the module docstring)."""
    out = np.zeros(len(items))
    for i, (item_id, method, score) in enumerate(
        zip(items["item_id"], items["method"], items["score"], strict=True)
    ):
        rng = np.random.default_rng([seed, int.from_bytes(str(item_id).encode()[-8:], "little")])
        u = rng.random()
        if method == "intent":
            out[i] = 3.5 + 1.5 * u
        elif method == "topic":
            out[i] = 0.5 + 2.0 * u
        else:
            out[i] = 5 * float(score) + rng.normal(0, 0.5)
    return np.clip(out, 0, 5).round(2)


def sts_items(pairs: pd.DataFrame, spec: ItemsSpec, simulated: bool) -> pd.DataFrame:
    """The items to annotate (``ITEM_COLUMNS``; ``sim_similarity`` when simulated)."""
    chosen = sample_evenly(pairs, spec.sample, spec.stratify, spec.seed)
    items = pd.DataFrame(
        {
            "item_id": chosen["pair_id"].astype(str),
            "sentence1": chosen["sentence1"],
            "sentence2": chosen["sentence2"],
            "source": chosen["corpus"],
            "method": chosen["method"],
            "score": chosen["score"].astype(float),
            "license": chosen["license"],
        }
    ).reset_index(drop=True)
    if simulated and spec.simulate_truth == "sts-pairs":
        items["sim_similarity"] = sts_truth(items, spec.seed)
    return items


@STEPS.register("klue-sts:items")
@declares(
    reads=out_files("pairs/pairs.parquet"),
    writes=out_files("items/items.parquet", "items/rejects.parquet", "items/items.json"),
    settings=lambda ctx, arg: [ctx.recipe.items.model_dump(), ctx.simulated],
)
def items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The seeded sample of pairs sent to annotators; the pairs left out are kept in
    items/rejects.parquet (``not_sampled``)."""
    from pipelines.pairing.pairs import pair_rejects

    pairs_file = ctx.out / "pairs" / "pairs.parquet"
    spec = ctx.recipe.items

    def compute() -> tuple[dict, dict]:
        pairs = pd.read_parquet(pairs_file)
        items = sts_items(pairs, spec, ctx.simulated)
        left = pairs[~pairs["pair_id"].astype(str).isin(set(items["item_id"]))]
        rejects = pair_rejects(left, "items", "not_sampled")
        info = {
            "in": len(pairs),
            "items": len(items),
            "dropped": value_counts(rejects["reason"]),
            "spec": spec.model_dump(),
            "per_method": value_counts(items["method"]),
            "per_source": value_counts(items["source"]),
            "simulated_truth": "sim_similarity" in items.columns,
        }
        return {"items.parquet": items, "rejects.parquet": rejects}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} items",
        Rows("pair", info["in"], info["items"], info["dropped"]),
        after=f": {info['per_method']}",
    )


def _ratings(annotations: pd.DataFrame, screened: set[str]) -> dict[str, list[tuple[str, float]]]:
    """item_id -> [(annotator, rating)] of the annotators the agreement rule kept."""
    rows = annotations.copy()
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    if "field" in rows.columns:
        rows = rows[rows["field"].isin(["similarity", "label"]) | rows["field"].isna()]
    rows = rows[~rows["annotator_id"].astype(str).isin(screened)]
    values = pd.to_numeric(rows["value"], errors="coerce")
    rows = rows.assign(value=values).dropna(subset=["value"])
    out: dict[str, list[tuple[str, float]]] = {}
    for item, annotator, value in zip(
        rows["item_id"].astype(str), rows["annotator_id"].astype(str), rows["value"], strict=True
    ):
        out.setdefault(item, []).append((annotator, float(value)))
    return out


def klue_sts_records(
    gold: pd.DataFrame,
    items: pd.DataFrame,
    splits: pd.DataFrame,
    annotations: pd.DataFrame,
    screened: set[str],
    prefix: str,
) -> dict[str, list[dict]]:
    """The records of every split in the KLUE-STS v1.1 layout (one object per pair)::

        {"guid": "<prefix>_<split>_00000", "source": "<corpus>-<method>",
         "sentence1": ..., "sentence2": ...,
         "labels": {"label": 3.7, "real-label": 3.714285714285714, "binary-label": 1},
         "annotations": {"agreement": "0:0:1:2:4:0", "annotators": ["ls-user-3", ...],
                         "annotations": [3, 4, ...]}}

    ``agreement`` counts the kept annotators' ratings per score 0:1:2:3:4:5 (rounded), as
    the release does."""
    ratings = _ratings(annotations, screened)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in split_rows(gold, items, splits):
        given = ratings.get(str(row.item_id), [])
        counts = np.bincount(
            [min(5, max(0, int(round(v)))) for _, v in given], minlength=6
        ).tolist()
        out[split].append(
            {
                "guid": f"{prefix}_{split}_{n:05d}",
                "source": f"{row.source}-{row.method}",
                "sentence1": row.sentence1,
                "sentence2": row.sentence2,
                "labels": {
                    "label": float(row.label),
                    "real-label": float(row.real_label),
                    "binary-label": int(row.binary_label),
                },
                "annotations": {
                    "agreement": ":".join(str(c) for c in counts),
                    "annotators": [a for a, _ in given],
                    "annotations": [int(v) if float(v).is_integer() else v for _, v in given],
                },
            }
        )
    return out


def records(inputs: ExportInputs) -> dict[str, list[dict]]:
    """The export: annotators screened out by the agreement step are left out of each
    pair's ratings."""
    d = inputs.dropped
    screened = set(d.loc[d["kind"] == "annotator", "id"].astype(str))
    return klue_sts_records(inputs.gold, inputs.items, inputs.splits, inputs.annotations,
                            screened, inputs.prefix)  # fmt: skip


def card(facts: CardFacts) -> CardSection:
    """Candidate pairs per method, the pairing settings and the sample
    (``sts.card.md.j2``)."""
    pairs, items = facts["pairs"], facts["items"]
    return from_template(Path(__file__).with_name("sts.card.md.j2"), {
        "pairs": pairs, "items": items, "inline": inline,
        "method_table": table(["method", "pairs"],
                              [[m, n] for m, n in sorted(pairs["pairs"].items())]),
        "corpora_table": settings_table(pairs["corpora"]),
        "pairing_table": settings_table(facts["recipe"]["pairing"]),
        "per_method": dict(sorted(items["per_method"].items())),
        "annotation_round": annotation_round, "annotation": facts["annotation"],
    })  # fmt: skip


register_task(TaskKind(
    name="klue-sts",
    title="KLUE-STS-style semantic textual similarity (KLUE 3.2)",
    layout="klue-sts",
    hub=hub("sentence-similarity"),
    steps=["pairs", "items", LabelStudioRound(), "agree", "split", "export"],
    needs=["annotation", "agreement", "split", "pairing"],
    rounds=one_round,
    card=card,
    shared=SharedSteps(
        records=records,
        ingest_dir="pairs/ingest",
        export_inputs={"pairs_stats": "pairs/stats.json"},
        card_json={"pairs": "pairs_stats"},
        # KLUE 3.2.1: "Krippendorff's alpha (interval) = 0.85", on the pairs rated by
        # the annotators kept after screening (the card sets the rebuild's beside it)
        paper_agreement={"level": "interval", "alpha": 0.85, "source": "KLUE 3.2.1 (STS)",
                         "after_screening": True},  # fmt: skip
    ),
    # KLUE 3.2.2: Pearson's r on the real-valued label, F1 with both sides binarised at 3.0
    evaluation=regression(
        "guid", "labels.real-label", "sentence1", "sentence2", ["pearson", "f1_at_3"],
        "KLUE (Park et al. 2021) 3.2.2",
        prompt="문장 1: {{sentence1}}\n문장 2: {{sentence2}}",
    ),
))  # fmt: skip
