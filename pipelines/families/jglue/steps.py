"""JGLUE's JSTS and JNLI (Kurihara et al. 2022, 3.2): the ``jsts`` and ``jnli`` task
kinds, on the construction rules of ``pipelines.families.jglue.construct``.

The source corpus is the captions of YJ Captions, recovered per image from the JGLUE
release files the recipe names (``jglue.releases``: each pair's ``yjcaptions_id`` names
its image and captions). Both kinds start with ``captions`` (the captions, those not in
the recipe's language dropped with their script share) and end with ``split`` (the
recipe's split rule, grouped by image so that no image straddles two splits) and
``export`` (JGLUE's layout: ``sentence_pair_id, yjcaptions_id, sentence1, sentence2,
label`` as JSON Lines per split, train / valid / test).

``jsts``: ``captions`` -> ``pairs`` (JSTS-A and JSTS-B) -> the ``sts`` round (5 raters,
``jsts.xml``) -> ``sts`` (mean, variance rule) -> ``split`` -> ``export``.

``jnli``: ``captions`` -> ``pairs`` (one-image pairs in both directions) -> the ``nli``
round (10 annotators, ``jnli_judgement.xml``) -> ``nli`` (6 of 10, entailment or
neutral) -> ``writing-items`` -> the ``writing`` round (four contradictions per caption,
``jnli_contradiction.xml``) -> ``written`` (edit distance rule) -> the ``validation``
round (10 annotators) -> ``validation`` (6 of 10 say contradiction; reverse added) -> the
``sts`` round on the contradictions -> ``sts`` (JSTS-C, the JSTS rule) -> ``split`` ->
``export`` (JNLI, and JSTS-C in the JSTS layout).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.markdown import Markdown, table
from pipelines.core.stage import value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached
from pipelines.families import CardSection, Round, TaskKind, register_task

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
ROUND_CONFIGS = {
    "sts": "jsts.xml",
    "nli": "jnli_judgement.xml",
    "writing": "jnli_contradiction.xml",
    "validation": "jnli_judgement.xml",
}
ROUND_POOLS = {"sts": "rater", "nli": "annotator", "writing": "writer", "validation": "validator"}
TASK_ROUNDS = {"jsts": ["sts"], "jnli": ["nli", "writing", "validation", "sts"]}
SPLIT_NAMES = {"train": "train", "dev": "valid", "test": "test"}  # JGLUE calls dev "valid"


def _spec(ctx_or_recipe: object) -> object:
    recipe = getattr(ctx_or_recipe, "recipe", ctx_or_recipe)
    return recipe.jglue


def _rules(ctx: RunContext) -> object:
    return _spec(ctx).construction_rules()


def release_paths(recipe: object) -> list[Path]:
    by_name = {c.name: c for c in recipe.corpora}
    return [recipe.corpus_path(by_name[n]) for n in recipe.jglue.releases]


def _round_items(ctx: RunContext, name: str) -> Path:
    if name == "sts" and ctx.task.name == "jnli":
        return ctx.out / "validation" / "sts_items.parquet"
    folder = {"sts": "pairs", "nli": "pairs", "writing": "writing-items", "validation": "written"}
    return ctx.out / folder[name] / "items.parquet"


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The task kind's Label Studio rounds (``TASK_ROUNDS``), from ``jglue.<name>_round``."""
    from pipelines.core.recipe import SimulateSpec

    out = {}
    for name in TASK_ROUNDS[ctx.task.name]:
        spec = getattr(_spec(ctx), f"{name}_round")
        sim = None
        if ctx.simulated:
            sim = spec.simulate or SimulateSpec(annotators=spec.raters)
        config = ctx.recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name]
        out[name] = Round(
            _round_items(ctx, name),
            config,
            spec.project or f"{ctx.recipe.name}-{name}",
            spec.raters,
            sim,
            ROUND_POOLS[name],
            ctx.out / "annotate" / f"{name}.parquet",
            spec.timeout,
            spec.poll,
        )
    return out


def configs(recipe: object) -> list[tuple[str, Path]]:
    out = []
    for name in ROUND_CONFIGS:
        spec = getattr(recipe.jglue, f"{name}_round")
        if spec is not None:
            config = recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name]
            out.append((f"jglue.{name}_round.config", config))
    return out


def preflight(recipe: object) -> None:
    """Every release file reads (a malformed line fails here, naming the file and line)
    and the task's rounds are in the recipe."""
    from pipelines.core.recipe import RecipeError
    from pipelines.families.jglue.release import read_releases

    missing = [
        f"jglue.{n}_round"
        for n in TASK_ROUNDS[recipe.task]
        if getattr(recipe.jglue, f"{n}_round") is None
    ]
    if missing:
        raise RecipeError(f"a {recipe.task} rebuild needs {missing} in the recipe")
    read_releases(release_paths(recipe))


# ------------------------------------------------------------------------------ steps


def captions_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The captions per image, recovered from the release files; a caption whose share
    of the recipe language's script is under ``japanese_share_min`` is dropped with the
    share (``captions/dropped.parquet``)."""
    from pipelines.families.jglue.release import caption_tables

    paths = release_paths(ctx.recipe)
    rules = _rules(ctx)

    def compute() -> tuple[dict, dict]:
        return caption_tables(paths, ctx.recipe.language, rules.japanese_share_min)

    info, hit = cached(
        ctx.out / "captions",
        paths,
        [ctx.recipe.language, rules.japanese_share_min],
        compute,
        "captions.json",
        ["captions.parquet", "dropped.parquet", "releases.parquet", "variants.parquet"],
    )
    return StepOutcome(
        f"{info['kept']:,} captions of {info['images']:,} images"
        f"{' (cached)' if hit else ''}; {info['wrong_language']} not {info['language']}",
        {**info, "cached": hit},
        Rows("caption", info["captions"], info["kept"], info["dropped"]),
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

    settings = [
        spec.draw_from,
        spec.same_image,
        spec.other_image,
        spec.other_image_method,
        spec.seed,
        ctx.simulated,
        ctx.task.name,
    ]
    info, hit = cached(
        ctx.out / "pairs",
        [captions, ctx.out / "captions" / "releases.parquet"],
        settings,
        compute,
        "pairs.json",
        ["pairs.parquet", "items.parquet"],
    )
    return StepOutcome(
        f"{info['items']:,} items from pairs {info['pairs']}" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
    )


def _agree(annotations: Path, settings: object) -> dict:
    from pipelines.agreement.rules import agree

    return agree(pd.read_parquet(annotations), settings)


def sts_settings(rules: object) -> object:
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


def sts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JSTS (3.2.2): the gold label is the mean of the ratings; a pair whose rating
    variance is ``variance_max`` (1.0) or more is dropped. Counts per kind beside the
    paper's (16,000 -> 10,236 for A; 4,000 -> 2,970 for B); for pairs the release has, the
    gold against the release's label."""
    from pipelines.families.jglue.construct import PAPER_JSTS
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
            "against_release": {
                "pairs": len(have),
                "mean_abs_diff": round(float(diff.mean()), 4) if have else None,
            },
            "settings": {"variance_max": settings.variance_max},
        }
        return {"gold.parquet": gold, "dropped.parquet": dropped}, info

    info, hit = cached(
        ctx.out / "sts",
        [r.annotations, r.items],
        [settings.variance_max],
        compute,
        "sts.json",
        ["gold.parquet", "dropped.parquet"],
    )
    kinds = ", ".join(f"{k} {v['pairs']}->{v['kept']}" for k, v in info["per_kind"].items())
    return StepOutcome(
        f"{info['gold']:,} of {info['items']:,} pairs kept ({kinds})"
        + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("pair", info["items"], info["gold"], info["dropped"]),
    )


def _majority(rules: object, min_votes: int) -> object:
    from pipelines.agreement.rules import MajoritySettings
    from pipelines.families.jglue.release import NLI_LABELS

    return MajoritySettings(min_votes=min_votes, values=list(NLI_LABELS), report_flags=[])


def nli_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JNLI step 1: a directed pair's gold is entailment or neutral when
    ``nli_min_votes`` (6) of its annotators agree; a contradiction majority, a tie or no
    majority is dropped with its reason."""
    from pipelines.families.jglue.construct import nli_gold

    r = rounds(ctx)["nli"]
    rules = _rules(ctx)

    def compute() -> tuple[dict, dict]:
        result = _agree(r.annotations, _majority(rules, rules.nli_min_votes))
        gold, more = nli_gold(result["gold"], rules)
        dropped = pd.concat(
            [result["dropped"], pd.DataFrame(more, columns=result["dropped"].columns)],
            ignore_index=True,
        )
        items = pd.read_parquet(r.items)
        gold = gold.merge(items, on="item_id", how="left", validate="one_to_one")
        info = {
            "items": result["figures"]["items"],
            "gold": len(gold),
            "labels": value_counts(gold["label"]),
            "dropped": value_counts(dropped.loc[dropped["kind"] == "item", "reason"]),
            "both_directions_kept": int(gold.groupby("pair_id").size().eq(2).sum()),
            "krippendorff_alpha": result["figures"]["krippendorff_alpha"],
            "fleiss_kappa": result["figures"]["fleiss_kappa"],
        }
        return {"gold.parquet": gold, "dropped.parquet": dropped}, info

    info, hit = cached(
        ctx.out / "nli",
        [r.annotations, r.items],
        [rules.nli_min_votes, list(rules.nli_gold)],
        compute,
        "nli.json",
        ["gold.parquet", "dropped.parquet"],
    )
    return StepOutcome(
        f"{info['gold']:,} of {info['items']:,} directed pairs kept "
        f"{info['labels']}" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("pair", info["items"], info["gold"], info["dropped"]),
    )


def writing_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The writing round's captions: ``writing_captions`` captions of images the NLI round
    did not use (``draw_from: release``: captions the release wrote for, so that
    simulated writers write the release's sentences)."""
    from pipelines.families.jglue.construct import writing_items
    from pipelines.families.jglue.release import contradictions_by_caption

    spec = _spec(ctx)
    inputs = [
        ctx.out / "captions" / "captions.parquet",
        ctx.out / "pairs" / "pairs.parquet",
        ctx.out / "captions" / "releases.parquet",
    ]

    def compute() -> tuple[dict, dict]:
        pairs = pd.read_parquet(inputs[1])
        used = {i for images in pairs["images"] for i in images}
        release = contradictions_by_caption(_releases(ctx))
        items = writing_items(
            pd.read_parquet(inputs[0]),
            used,
            spec.writing_captions,
            spec.seed,
            set(release) if spec.draw_from == "release" else None,
            release if ctx.simulated else None,
        )
        return {"items.parquet": items}, {"captions": len(items), "images_excluded": len(used)}

    info, hit = cached(
        ctx.out / "writing-items",
        inputs,
        [spec.writing_captions, spec.seed, spec.draw_from, ctx.simulated],
        compute,
        "items.json",
        ["items.parquet"],
    )
    return StepOutcome(
        f"{info['captions']} captions for the writing round" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
    )


def written_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The written contradictions as (caption, sentence) pairs; a sentence at a
    normalised edit distance of ``edit_distance_max`` (0.75) or more from its caption,
    an empty, repeated or copied one, and a skipped caption are dropped with the reason.
    The kept pairs are the validation round's items."""
    from pipelines.families.jglue.construct import latent_nli, validation_items, written_pairs
    from pipelines.families.jglue.release import labels_by_texts

    r = rounds(ctx)["writing"]
    rules = _rules(ctx)

    def compute() -> tuple[dict, dict]:
        pairs, dropped = written_pairs(
            pd.read_parquet(r.annotations), pd.read_parquet(r.items), rules, 4
        )
        items = validation_items(pairs)
        if ctx.simulated:
            known = labels_by_texts(_releases(ctx), "jnli", True)
            items["sim_label"] = [
                latent_nli(a, b, known)
                for a, b in zip(items["sentence1"], items["sentence2"], strict=True)
            ]
        n = len(pairs) + len(dropped[dropped["field"] != ""])
        info = {
            "written": n,
            "kept": len(pairs),
            "dropped": value_counts(dropped.loc[dropped["field"] != "", "reason"]),
            "captions_skipped": int((dropped["reason"] == "skipped").sum()),
            "edit_distance": {
                "mean_kept": round(float(pairs["edit_distance"].mean()), 4) if len(pairs) else None
            },
        }
        return {"pairs.parquet": pairs, "items.parquet": items, "dropped.parquet": dropped}, info

    info, hit = cached(
        ctx.out / "written",
        [r.annotations, r.items],
        [rules.edit_distance_max, ctx.simulated],
        compute,
        "written.json",
        ["pairs.parquet", "items.parquet", "dropped.parquet"],
    )
    return StepOutcome(
        f"{info['kept']:,} of {info['written']:,} written sentences kept "
        f"{info['dropped']}" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("sentence", info["written"], info["kept"], info["dropped"]),
    )


def validation_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JNLI's one-way validation: a written pair is kept when ``contradiction_min_votes``
    (6) of its annotators say contradiction; the reverse direction is added; the kept
    pairs are the JSTS-C round's items."""
    from pipelines.families.jglue.construct import validated, with_reverse

    r = rounds(ctx)["validation"]
    rules = _rules(ctx)

    def compute() -> tuple[dict, dict]:
        result = _agree(r.annotations, _majority(rules, rules.contradiction_min_votes))
        items = pd.read_parquet(r.items)
        kept, more = validated(result["gold"], items)
        dropped = pd.concat(
            [result["dropped"], pd.DataFrame(more, columns=result["dropped"].columns)],
            ignore_index=True,
        )
        both = with_reverse(kept)
        sts_items = kept.assign(kind="C", images=[[i] for i in kept["image_id"]])
        if ctx.simulated:
            sts_items = _sts_truth(sts_items, _releases(ctx), _spec(ctx).seed)
        info = {
            "items": len(items),
            "kept": len(kept),
            "pairs_with_reverse": len(both),
            "dropped": value_counts(dropped.loc[dropped["kind"] == "item", "reason"]),
            "fleiss_kappa": result["figures"]["fleiss_kappa"],
        }
        return {
            "contradictions.parquet": both,
            "sts_items.parquet": sts_items,
            "dropped.parquet": dropped,
        }, info

    info, hit = cached(
        ctx.out / "validation",
        [r.annotations, r.items],
        [rules.contradiction_min_votes, ctx.simulated],
        compute,
        "validation.json",
        ["contradictions.parquet", "sts_items.parquet", "dropped.parquet"],
    )
    return StepOutcome(
        f"{info['kept']:,} of {info['items']:,} contradictions kept, "
        f"{info['pairs_with_reverse']:,} with the reverse" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("pair", info["items"], info["kept"], info["dropped"]),
    )


def final_items(ctx: RunContext) -> pd.DataFrame:
    """The released pairs before the split: ``item_id`` (the ``yjcaptions_id``),
    ``sentence1``, ``sentence2``, ``label``, ``kind``, ``images``."""
    cols = ["item_id", "sentence1", "sentence2", "label", "kind", "images"]
    if ctx.task.name == "jsts":
        return pd.read_parquet(ctx.out / "sts" / "gold.parquet")[cols]
    nli = pd.read_parquet(ctx.out / "nli" / "gold.parquet")[cols]
    c = pd.read_parquet(ctx.out / "validation" / "contradictions.parquet")
    c = c.rename(columns={"pair_id": "item_id"})[cols]
    return pd.concat([nli, c], ignore_index=True)


def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule over the released pairs, grouped by image (a pair of two
    images joins both), with the artifact report -> OUT/split."""
    from pipelines.core.io import write_parquet
    from pipelines.splits.base import recipe_split_settings
    from pipelines.splits.run import run_split

    items = final_items(ctx)
    path = ctx.out / "final" / "items.parquet"
    write_parquet(items, path)
    settings = recipe_split_settings(ctx.recipe, ctx.seed)
    split = run_split(path, settings, ctx.out / "split", None, ctx.recipe.language)
    n = sum(split["splits"].values())
    return StepOutcome(
        f"{split['splits']}",
        {"splits": split["splits"], "written": split["written"]},
        Rows("pair", n, n),
    )


def records_of(items: pd.DataFrame) -> list[dict]:
    """JGLUE's layout: ``sentence_pair_id`` (from "0" per file), ``yjcaptions_id``,
    ``sentence1``, ``sentence2``, ``label``."""
    return [
        {
            "sentence_pair_id": str(n),
            "yjcaptions_id": r.item_id,
            "sentence1": r.sentence1,
            "sentence2": r.sentence2,
            "label": float(r.label) if isinstance(r.label, int | float) else r.label,
        }
        for n, r in enumerate(items.itertuples(index=False))
    ]


def _split_tables(ctx: RunContext) -> dict[str, pd.DataFrame]:
    """The released pairs per JGLUE split name, in id order; JNLI's JSTS-C pairs too
    (``jsts-c_<split>``: each in its contradiction's split)."""
    items = pd.read_parquet(ctx.out / "final" / "items.parquet")
    splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")[["item_id", "split"]]
    items = items.merge(splits, on="item_id", validate="one_to_one")
    out = {
        SPLIT_NAMES[s]: g.sort_values("item_id", ignore_index=True)
        for s, g in items.groupby("split")
    }
    if ctx.task.name == "jnli":
        c = pd.read_parquet(ctx.out / "sts" / "gold.parquet")
        side = dict(zip(items["item_id"], items["split"], strict=True))
        c = c.assign(split=c["item_id"].map(side))
        for s, g in c.dropna(subset=["split"]).groupby("split"):
            out[f"jsts-c_{SPLIT_NAMES[s]}"] = g.sort_values("item_id", ignore_index=True)
    return out


def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE's layout per split -> OUT/dataset: ``<split>.json`` (JSON Lines, the five
    release fields), ``<split>.parquet`` (with ``kind``, ``images`` and ``license``) and
    the data card."""
    from pipelines.export.family import export_dataset
    from pipelines.export.records import jsonl

    out = ctx.out
    inputs = {
        "items": out / "final" / "items.parquet",
        "splits": out / "split" / "splits.parquet",
        "captions": out / "captions" / "captions.json",
        "pairs": out / "pairs" / "pairs.json",
        "sts": out / "sts" / "sts.json",
        "artifacts": out / "split" / "artifacts.json",
    }
    if ctx.task.name == "jnli":
        for name in ("nli", "written", "validation"):
            inputs[name] = out / name / f"{name}.json"
        inputs["sts-gold"] = out / "sts" / "gold.parquet"
    tables = _split_tables(ctx)
    licence = ctx.recipe.release_licence().release

    def build(facts: dict) -> tuple[dict, dict, dict]:
        texts = {f"{s}.json": jsonl(records_of(t)) for s, t in tables.items()}
        frames = {
            f"{s}.parquet": t.drop(columns=["split"]).assign(license=licence)
            for s, t in tables.items()
        }
        return frames, texts, {}

    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        {f"{s}.json": len(t) for s, t in tables.items()},
        [f"{s}.{e}" for s in tables for e in ("json", "parquet")],
        list(_spec(ctx).releases),
        "flows/rebuild.py, pipelines/families/jglue/steps.py, pipelines/families/jglue/",
    )
    n = sum(len(t) for s, t in tables.items() if not s.startswith("jsts-c"))
    return StepOutcome(
        f"{facts['export']['files']} -> {out / 'dataset'}" + (" (cached)" if hit else ""),
        {**facts["export"], "cached": hit},
        Rows("pair", n, n),
    )


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """JGLUE's facts for the card: each step's JSON (``family``), the artifact report,
    the rules and the split."""
    from dataclasses import asdict

    family = {
        name: json.loads(p.read_text(encoding="utf-8"))
        for name, p in inputs.items()
        if p.suffix == ".json"
    }
    from pipelines.export.card_facts import label_facts

    art = family.pop("artifacts")
    items = pd.read_parquet(inputs["items"]).assign(source=lambda f: "JSTS-" + f["kind"])
    splits = pd.read_parquet(inputs["splits"])
    return {
        "family": family,
        "rules": asdict(_rules(ctx)),
        "artifacts_md": (ctx.out / "split" / "artifacts.md").read_text(encoding="utf-8"),
        "labels": label_facts(items, items, splits),
        "split": {
            "rule": art["rule"],
            "settings": art["settings"],
            "splits": {k: int(v) for k, v in splits["split"].value_counts().items()},
            "cues": art.get("cues"),
        },
    }


# ------------------------------------------------------------------------------- card


def _kind_table(per_kind: dict) -> str:
    names = {"A": "JSTS-A (one image)", "B": "JSTS-B (two images)", "C": "JSTS-C (contradictions)"}
    rows = []
    for kind, v in per_kind.items():
        paper = v.get("paper")
        rows.append(
            [
                names.get(kind, kind),
                v["pairs"],
                v["kept"],
                v["kept_share"],
                Markdown(f"{paper['pairs']:,} -> {paper['kept']:,} ({paper['kept_share']})")
                if paper
                else "not reported",
                ", ".join(f"{a} {b}" for a, b in v["dropped"].items()) or "none",
            ]
        )
    return table(["pairs", "rated", "kept", "kept share", "paper (3.2.2)", "dropped"], rows)


def card(facts: dict) -> CardSection:
    """Captions, the pairs, each round's rule and its counts beside the paper's."""
    from pipelines.export.family import inline_counts, round_paragraph

    f, j = facts["family"], facts["recipe"]["jglue"]
    cap, pairs, sts = f["captions"], f["pairs"], f["sts"]
    rules = facts["rules"]
    jnli = facts["task_kind"] == "jnli"
    lines = [
        f"Source: {cap['captions']:,} captions of {cap['images']:,} YJ Captions images "
        f"recovered from the JGLUE release files ({', '.join(cap['files'])}); "
        f"{cap['wrong_language']} not in the recipe's language ({cap['language']}) dropped "
        f"(share {cap['wrong_language_share']}). {cap['variants']} captions are written "
        "differently in two files (e.g. a closing 。); the first file's text is used.",
        "",
        f"Pairs: {inline_counts(pairs['pairs'])} ({pairs['candidates_A']:,} one-image pairs "
        f"possible); seed {j['seed']}; two-image pairs drawn by `{j['other_image_method']}`.",
    ]
    if jnli:
        nli, wr, va = f["nli"], f["written"], f["validation"]
        lines += [
            "",
            f"JNLI step 1: {nli['items']:,} directed pairs (each pair both ways), gold when "
            f"{rules['nli_min_votes']} annotators agree on {', '.join(rules['nli_gold'])}: "
            f"{nli['gold']:,} kept {inline_counts(nli['labels'])}; dropped "
            f"{inline_counts(nli['dropped'])}; both directions kept for "
            f"{nli['both_directions_kept']} pairs.",
            "",
            f"Writing: {wr['written']:,} contradictions written; {wr['kept']:,} kept, dropped "
            f"{inline_counts(wr['dropped'])} (edit distance rule: >= "
            f"{rules['edit_distance_max']}).",
            "",
            f"Validation: {va['kept']:,} of {va['items']:,} kept "
            f"({rules['contradiction_min_votes']} say contradiction); "
            f"{va['pairs_with_reverse']:,} pairs with the reverse direction; dropped "
            f"{inline_counts(va['dropped'])}.",
        ]
    lines += [
        "",
        "Files: JGLUE's layout, one JSON Lines file per split; the split called "
        "dev here is `valid.json` (JGLUE's name).",
    ]
    lines += [
        "",
        f"STS (mean of the ratings; variance >= {rules['variance_max']} dropped):",
        "",
        _kind_table(sts["per_kind"]),
    ]
    if sts["against_release"]["pairs"]:
        lines += [
            "",
            f"Against the release: {sts['against_release']['pairs']} kept pairs have "
            f"a released label; mean absolute difference "
            f"{sts['against_release']['mean_abs_diff']}.",
        ]
    annotation = "\n\n".join(round_paragraph(n, r) for n, r in facts["rounds"].items())
    if facts["annotation"]["simulated"]:
        annotation += (
            "\n\nThe rounds are **simulated**. Latent truth: the release's label of the same "
            "two texts when it has one ("
            + inline_counts(pairs["truth_sources"])
            + "), else "
            + (
                "every NLI label (each annotator answers as one of them: no gold); the JSTS-C "
                "ratings follow "
                if jnli
                else ""
            )
            + "the least-squares line of the release's labels on ROUGE-L (Japanese morphemes) "
            "for the pair's kind, plus noise of the line's residual spread."
        )
        if jnli:
            annotation += (
                " Simulated writers write the release's contradictions of the "
                "caption; the missing ones are filled with a caption of another "
                "image (unrelated sentences the rules must remove)."
            )
    alpha = sts["krippendorff_alpha"]
    agreement = (
        f"Krippendorff's alpha of the STS ratings: interval {alpha.get('interval')}, "
        f"ordinal {alpha.get('ordinal')}. JGLUE screens no annotator; the variance "
        "rule drops the pairs the raters disagree on (see Item construction)."
    )
    if jnli:
        agreement += (
            f" Fleiss' kappa: JNLI step 1 {f['nli']['fleiss_kappa']}, validation "
            f"{f['validation']['fleiss_kappa']}."
        )
    warnings = []
    if facts["annotation"]["simulated"]:
        warnings.append("The Label Studio rounds are simulated.")
    if cap["wrong_language"]:
        warnings.append(f"{cap['wrong_language']} captions were not in {cap['language']}.")
    return CardSection(
        item=(
            "One item is a pair of Japanese sentences with "
            + (
                "an NLI label (entailment, neutral, contradiction)."
                if jnli
                else "a 0-5 similarity label, the mean of its ratings."
            )
        ),
        construction="\n".join(lines),
        annotation=annotation,
        limitations=[
            "Captions describe photographs: the sentences are short, concrete and in one register.",
            "The source captions are recovered from a JGLUE release, so the rebuild "
            "covers its images only.",
        ],
        sections={
            "warnings": "\n".join(f"- {w}" for w in warnings) or "- none raised.",
            "sources": "YJ Captions captions from the JGLUE v1.3 release files (CC BY-SA "
            "4.0). Language: Japanese (ja-JP), written descriptions of photographs.",
            "filters": f"The script share rule: a caption under {rules['japanese_share_min']} "
            "Japanese script (kana and kanji among its letters) is dropped.",
            "timeframe": "The JGLUE v1.3 release.",
            "classifiers": "No toxic-content classifier runs on image captions.",
            "annotators": "See Annotation.",
            "agreement": agreement,
        },
    )


# --------------------------------------------------------------------- registration

for _step, _fn in (
    ("captions", captions_step),
    ("pairs", pairs_step),
    ("sts", sts_step),
    ("nli", nli_step),
    ("writing-items", writing_items_step),
    ("written", written_step),
    ("validation", validation_step),
    ("split", split_step),
    ("export", export_step),
):
    for _kind in ("jsts", "jnli"):
        STEPS.add(f"{_kind}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])


def _round_steps(name: str) -> list[str]:
    return [f"{op}-{name}" for op in ("push", "simulate", "wait", "pull")]


for _kind, _steps, _title in (
    (
        "jsts",
        ["captions", "pairs", *_round_steps("sts"), "sts", "split", "export"],
        "JGLUE JSTS: semantic textual similarity of image captions (Kurihara et al. 2022, 3.2.2)",
    ),
    (
        "jnli",
        [
            "captions",
            "pairs",
            *_round_steps("nli"),
            "nli",
            "writing-items",
            *_round_steps("writing"),
            "written",
            *_round_steps("validation"),
            "validation",
            *_round_steps("sts"),
            "sts",
            "split",
            "export",
        ],
        "JGLUE JNLI: inference between image captions (Kurihara et al. 2022, 3.2.3)",
    ),
):
    register_task(
        TaskKind(
            name=_kind,
            title=_title,
            layout="jglue",
            steps=_steps,
            rounds=rounds,
            records=lambda inputs: {"all": records_of(inputs.gold)},
            card=card,
            needs=["jglue", "split"],
            simulated=lambda recipe: any(
                getattr(recipe.jglue, f"{n}_round") is not None
                and getattr(recipe.jglue, f"{n}_round").simulate is not None
                for n in TASK_ROUNDS[recipe.task]
            ),
            preflight=preflight,
            configs=configs,
        )
    )
