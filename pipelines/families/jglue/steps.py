"""JGLUE's first steps (3.2.1-3.2.2): ``captions`` (the captions recovered from the
release files), ``pairs`` (JSTS-A and JSTS-B) and ``sts`` (the variance rule)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.families.jglue.rounds import (
    _rules,
    _spec,
    release_paths,
    round_files,
    rounds,
)

if TYPE_CHECKING:
    from pipelines.agreement.settings import AgreementSettingsBase, MeanSettings
    from pipelines.families.jglue.construct import JglueRules

# ------------------------------------------------------------------------------ steps


@declares(
    reads=lambda ctx, arg: {f"release {p.name}": p for p in release_paths(ctx.recipe)},
    writes=out_files(*(f"captions/{n}" for n in (
        "captions.parquet", "dropped.parquet", "releases.parquet", "variants.parquet",
        "captions.json"))),
    settings=lambda ctx, arg: [ctx.recipe.language, _rules(ctx).japanese_share_min],
)  # fmt: skip
def captions_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The captions per image, recovered from the release files; a caption whose share
    of the recipe language's script is under ``japanese_share_min`` is dropped with the
    share (``captions/dropped.parquet``)."""
    from pipelines.families.jglue.release import caption_tables

    paths = release_paths(ctx.recipe)
    rules = _rules(ctx)

    def compute() -> tuple[dict, dict]:
        return caption_tables(paths, ctx.recipe.language, rules.japanese_share_min)

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} captions of {info['images']:,} images",
        Rows("caption", info["captions"], info["kept"], info["dropped"]),
        after=f"; {info['wrong_language']} not {info['language']}",
    )


def _releases(ctx: RunContext) -> pd.DataFrame:
    return pd.read_parquet(ctx.out / "captions" / "releases.parquet")


def _reference(releases: pd.DataFrame) -> pd.DataFrame:
    """The release's JSTS pairs with their ROUGE-L (the latent model's reference)."""
    from pipelines.families.jglue.construct import rouge

    ref = releases[releases["task"] == "jsts"]
    ref = ref.assign(label=ref["label"].astype(float))
    return ref.assign(rouge=rouge(ref)) if len(ref) else ref.assign(rouge=[])


def _sts_truth(items: pd.DataFrame, releases: pd.DataFrame, seed: int) -> pd.DataFrame:
    from pipelines.families.jglue.construct import latent_similarity
    from pipelines.families.jglue.release import labels_by_texts

    truth, source = latent_similarity(
        items, labels_by_texts(releases, "jsts", False), _reference(releases), seed
    )
    return items.assign(sim_similarity=truth, sim_source=source)


def _pairs_settings(ctx: RunContext, arg: str) -> list:
    spec = _spec(ctx)
    return [spec.draw_from, spec.same_image, spec.other_image, spec.other_image_method,
            spec.seed, ctx.simulated, ctx.task.name]  # fmt: skip


@declares(
    reads=out_files("captions/captions.parquet", "captions/releases.parquet"),
    writes=out_files("pairs/pairs.parquet", "pairs/items.parquet", "pairs/pairs.json"),
    settings=_pairs_settings,
)
def pairs_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """``jsts``: JSTS-A (``same_image``) and JSTS-B (``other_image``) pairs, the STS
    round's items. ``jnli``: one-image pairs in both directions, the NLI round's items.
    Simulated rounds: each item's latent truth and its source (release or model)."""
    from pipelines.families.jglue.construct import (
        latent_nli,
        nli_items,
        other_image_pairs,
        same_image_pairs,
    )
    from pipelines.families.jglue.release import labels_by_texts

    spec = _spec(ctx)
    captions = ctx.out / "captions" / "captions.parquet"
    jnli = ctx.task.name == "jnli"

    def compute() -> tuple[dict, dict]:
        caps = pd.read_parquet(captions)
        releases = _releases(ctx)
        only = None
        if spec.draw_from == "release":
            task = releases[(releases["task"] == ctx.task.name) & (releases["kind"] == "A")]
            only = set(zip(task["sentence1"], task["sentence2"], strict=True))
        pairs = same_image_pairs(caps, spec.same_image, spec.seed, only)
        if not jnli:
            b = other_image_pairs(
                caps, spec.other_image, spec.seed, spec.other_image_method, ctx.recipe.language
            )
            pairs = pd.concat([pairs, b], ignore_index=True)
            items = pairs.rename(columns={"pair_id": "item_id"})
            if ctx.simulated:
                items = _sts_truth(items, releases, spec.seed)
        else:
            items = nli_items(pairs)
            if ctx.simulated:
                known = labels_by_texts(releases, "jnli", True)
                items["sim_label"] = [
                    latent_nli(a, b, known)
                    for a, b in zip(items["sentence1"], items["sentence2"], strict=True)
                ]
                items["sim_source"] = [
                    "model" if len(v) > 1 else "release" for v in items["sim_label"]
                ]
        info = {
            "pairs": value_counts(pairs["kind"]),
            "items": len(items),
            "candidates_A": int(
                sum(n * (n - 1) // 2 for n in caps[~caps["written"]].groupby("image_id").size())
            ),
            "truth_sources": value_counts(items["sim_source"]) if "sim_source" in items else {},
        }
        return {"pairs.parquet": pairs, "items.parquet": items}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} items from pairs {info['pairs']}",
    )


def _agree(annotations: Path, settings: AgreementSettingsBase) -> dict:
    from pipelines.agreement.rules import agree

    return agree(pd.read_parquet(annotations), settings)


def sts_settings(rules: JglueRules) -> MeanSettings:
    """JGLUE's STS rule in the agreement library's terms: mean of the ratings, no
    annotator screening, drop at variance >= ``variance_max``."""
    from pipelines.agreement.rules import MeanSettings

    return MeanSettings(
        pearson_min=None,
        alpha_min=None,
        sd_max=None,
        variance_max=rules.variance_max,
        report_flags=[],
        values=[str(v) for v in range(6)],
    )


def _kind_counts(items: pd.DataFrame, gold: pd.DataFrame, dropped: pd.DataFrame) -> dict:
    kinds = items.set_index("item_id")["kind"]
    out = {}
    for kind in sorted(set(kinds)):
        n = int((kinds == kind).sum())
        kept = int(gold["item_id"].map(kinds).eq(kind).sum())
        reasons = dropped.loc[dropped["id"].map(kinds).eq(kind), "reason"]
        out[kind] = {
            "pairs": n,
            "kept": kept,
            "kept_share": round(kept / n, 4) if n else None,
            "dropped": value_counts(reasons),
        }
    return out


@declares(
    reads=round_files("sts", "captions/releases.parquet"),
    writes=out_files("sts/gold.parquet", "sts/dropped.parquet", "sts/sts.json"),
    settings=lambda ctx, arg: [sts_settings(_rules(ctx)).variance_max],
)
def sts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JSTS (3.2.2): the gold label is the mean of the ratings; a pair whose rating
    variance is ``variance_max`` (1.0) or more is dropped. Counts per kind beside the
    paper's (16,000 -> 10,236 for A; 4,000 -> 2,970 for B); for pairs the release has, the
    gold against the release's label."""
    from pipelines.families.jglue.construct import PAPER_JSTS, variance_figures
    from pipelines.families.jglue.release import labels_by_texts

    r = rounds(ctx)["sts"]
    settings = sts_settings(_rules(ctx))

    def compute() -> tuple[dict, dict]:
        result = _agree(r.annotations, settings)
        items = pd.read_parquet(r.items)
        gold = result["gold"].merge(items, on="item_id", how="left", validate="one_to_one")
        dropped = result["dropped"]
        per_kind = _kind_counts(items, gold, dropped[dropped["kind"] == "item"])
        for kind, paper in PAPER_JSTS.items():
            if kind in per_kind:
                per_kind[kind]["paper"] = {
                    **paper,
                    "kept_share": round(paper["kept"] / paper["pairs"], 4),
                }
        known = labels_by_texts(_releases(ctx), "jsts", False)
        release = [
            known.get((a, b)) for a, b in zip(gold["sentence1"], gold["sentence2"], strict=True)
        ]
        have = [i for i, v in enumerate(release) if v is not None]
        diff = (
            np.abs(gold["label"].to_numpy()[have] - np.array([release[i] for i in have]))
            if have
            else np.zeros(0)
        )
        info = {
            "items": result["figures"]["items"],
            "gold": len(gold),
            "per_kind": per_kind,
            "dropped": value_counts(dropped.loc[dropped["kind"] == "item", "reason"]),
            "krippendorff_alpha": result["figures"]["krippendorff_alpha"],
            "variance": variance_figures(pd.read_parquet(r.annotations), gold["item_id"]),
            "against_release": {
                "pairs": len(have),
                "mean_abs_diff": round(float(diff.mean()), 4) if have else None,
            },
            "settings": {"variance_max": settings.variance_max},
        }
        return {"gold.parquet": gold, "dropped.parquet": dropped}, info

    done = cached(ctx, compute)
    info = done.info
    kinds = ", ".join(f"{k} {v['pairs']}->{v['kept']}" for k, v in info["per_kind"].items())
    return done.outcome(
        f"{info['gold']:,} of {info['items']:,} pairs kept ({kinds})",
        Rows("pair", info["items"], info["gold"], info["dropped"]),
    )
