"""JNLI's steps (JGLUE 3.2.2): ``nli`` (step 3: gold by agreement), ``writing-items``
and ``written`` (contradictions written and checked), ``validation`` (step 4). A
``jsts`` rebuild with ``jglue.jsts_c`` runs the last three too: JSTS-C's pairs are the
validated contradictions (step 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.families.jglue.rounds import (
    _rules,
    _spec,
    round_files,
    rounds,
)
from pipelines.families.jglue.steps import (
    _agree,
    _releases,
    _sts_truth,
)

if TYPE_CHECKING:
    from pipelines.agreement.settings import MajoritySettings
    from pipelines.families.jglue.construct import JglueRules


def _majority(rules: JglueRules, min_votes: int) -> MajoritySettings:
    from pipelines.agreement.rules import MajoritySettings
    from pipelines.families.jglue.release import NLI_LABELS

    return MajoritySettings(min_votes=min_votes, values=list(NLI_LABELS), report_flags=[])


@declares(
    reads=round_files("nli"),
    writes=out_files("nli/gold.parquet", "nli/dropped.parquet", "nli/nli.json"),
    settings=lambda ctx, arg: [_rules(ctx).nli_min_votes, list(_rules(ctx).nli_gold)],
)
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

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['gold']:,} of {info['items']:,} directed pairs kept {info['labels']}",
        Rows("pair", info["items"], info["gold"], info["dropped"]),
    )


@declares(
    reads=out_files(
        "captions/captions.parquet", "pairs/pairs.parquet", "captions/releases.parquet"
    ),
    writes=out_files("writing-items/items.parquet", "writing-items/items.json"),
    settings=lambda ctx, arg: [
        _spec(ctx).writing_captions,
        _spec(ctx).seed,
        _spec(ctx).draw_from,
        ctx.simulated,
    ],
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
        release = contradictions_by_caption(_releases(ctx), ctx.task.name)
        items = writing_items(
            pd.read_parquet(inputs[0]),
            used,
            spec.writing_captions,
            spec.seed,
            set(release) if spec.draw_from == "release" else None,
            release if ctx.simulated else None,
        )
        return {"items.parquet": items}, {"captions": len(items), "images_excluded": len(used)}

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['captions']} captions for the writing round",
    )


@declares(
    reads=round_files("writing", "captions/releases.parquet"),
    writes=out_files(*(f"written/{n}" for n in (
        "pairs.parquet", "items.parquet", "dropped.parquet", "written.json"))),
    settings=lambda ctx, arg: [_rules(ctx).edit_distance_max, ctx.simulated],
)  # fmt: skip
def written_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The written contradictions as (caption, sentence) pairs; a sentence at a
    normalised edit distance of ``edit_distance_max`` (0.75) or more from its caption,
    an empty, repeated or copied one, and a skipped caption are dropped with the reason.
    The kept pairs are the validation round's items."""
    from pipelines.families.jglue.construct import latent_nli, validation_items, written_pairs
    from pipelines.families.jglue.release import contradictions_of, labels_by_texts

    r = rounds(ctx)["writing"]
    rules = _rules(ctx)

    def compute() -> tuple[dict, dict]:
        pairs, dropped = written_pairs(
            pd.read_parquet(r.annotations), pd.read_parquet(r.items), rules, 4
        )
        items = validation_items(pairs)
        if ctx.simulated:
            known = labels_by_texts(_releases(ctx), "jnli", True)
            if ctx.task.name == "jsts":  # a released JSTS-C pair passed the validation
                for pair in contradictions_of(_releases(ctx), "jsts"):
                    known.setdefault(pair, "contradiction")
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

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['written']:,} written sentences kept {info['dropped']}",
        Rows("sentence", info["written"], info["kept"], info["dropped"]),
    )


def _validation_reads(ctx: RunContext, arg: str) -> dict:
    files = round_files("validation", "captions/releases.parquet")(ctx, arg)
    if ctx.task.name == "jsts":  # the A and B pairs join JSTS-C in the STS round
        files["pairs/items.parquet"] = ctx.out / "pairs" / "items.parquet"
    return files


@declares(
    reads=_validation_reads,
    writes=out_files(*(f"validation/{n}" for n in (
        "contradictions.parquet", "sts_items.parquet", "dropped.parquet", "validation.json"))),
    settings=lambda ctx, arg: [_rules(ctx).contradiction_min_votes, ctx.simulated],
)  # fmt: skip
def validation_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JNLI's one-way validation: a written pair is kept when ``contradiction_min_votes``
    (6) of its annotators say contradiction; the reverse direction is added; the kept
    pairs are the JSTS-C round's items (``jsts``: with the A and B pairs, one STS round,
    JGLUE 3.2.2 step 5: "in the same way as in Steps 1 and 2")."""
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
        if ctx.task.name == "jsts":
            ab = pd.read_parquet(ctx.out / "pairs" / "items.parquet")
            sts_items = pd.concat([ab, sts_items[[c for c in ab.columns if c in sts_items]]],
                                  ignore_index=True)  # fmt: skip
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

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['items']:,} contradictions kept, "
        f"{info['pairs_with_reverse']:,} with the reverse",
        Rows("pair", info["items"], info["kept"], info["dropped"]),
    )
