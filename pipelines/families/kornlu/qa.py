"""``qa`` (translation QA and the label-risk checks) and ``relabel`` (flagged pairs
sent to annotators when ``qa.on_flag: relabel``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.families.kornlu.sources import (
    DEFAULT_CHECKS,
    HALVES,
    LABELS,
)
from pipelines.families.kornlu.translate import (
    RELABEL,
    final_sentences,
)

QA_READS = (
    "translate/pairs.parquet",
    "translate/sentences.parquet",
    *(f"crosscheck/items-{h}.parquet" for h in HALVES),
    *(f"annotate/crosscheck-{h}.parquet" for h in HALVES),
)


def _qa_reads(ctx: RunContext, arg: str) -> dict:
    """The translations and, when a split is post-edited, the cross-check rounds."""
    any_pe = ctx.recipe.translation.any_postedit
    return out_files(*(QA_READS if any_pe else QA_READS[:2]))(ctx, arg)


def _qa_settings(ctx: RunContext, arg: str) -> list:
    from pipelines.quality.translation_qa import QaSettings

    qa = ctx.recipe.translation.qa
    settings = QaSettings(near_identical=qa.near_identical, latin_min_words=qa.latin_min_words,
                          length_ratio_z=qa.length_ratio_z)  # fmt: skip
    return [qa.checks or DEFAULT_CHECKS[ctx.task.name], settings.__dict__, qa.on_flag]


@declares(
    reads=_qa_reads,
    writes=out_files(*(f"qa/{n}" for n in (
        "pairs.parquet", "dropped.parquet", "review.parquet", "sentences.parquet", "qa.json"))),
    settings=_qa_settings,
)  # fmt: skip
def qa_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Translation QA (pipelines.quality.translation_qa) and the label-risk checks ->
    OUT/qa: ``pairs.parquet`` (kept, with the final Korean sentences and the English
    label), ``dropped.parquet`` (flagged pairs when ``on_flag: drop``, pairs a translator
    reported, with the reason), ``review.parquet`` (every flagged pair with its checks),
    ``sentences.parquet`` (every sentence's lineage) and ``qa.json``."""
    from pipelines.quality.translation_qa import QaSettings, edit_figures, run_checks

    kind, qa = ctx.task, ctx.recipe.translation.qa
    names = qa.checks or DEFAULT_CHECKS[kind.name]
    settings = QaSettings(near_identical=qa.near_identical, latin_min_words=qa.latin_min_words,
                          length_ratio_z=qa.length_ratio_z)  # fmt: skip

    def compute() -> tuple[dict, dict]:
        s = final_sentences(ctx)
        final = s.set_index("sentence_id")["final"]
        # the QA figures describe post-editing: machine-translated-only sentences (Ham et
        # al. 2020, 3.1: train) are counted apart
        edited = s[s["postedit_split"].astype(bool)]
        pairs = pd.read_parquet(ctx.out / "translate" / "pairs.parquet")
        pairs["ko1"], pairs["ko2"] = pairs["s1"].map(final), pairs["s2"].map(final)
        flags = run_checks(pairs, names, settings)
        joined = lambda c: "|".join(dict.fromkeys(c))  # noqa: E731 - first-seen order
        grouped = flags.groupby("pair_id").agg(checks=("check", joined),
                                               details=("detail", " ; ".join))  # fmt: skip
        review = pairs.merge(grouped, left_on="pair_id", right_index=True)
        review = review[["pair_id", "split", "checks", "details", "label", "en1", "en2",
                         "ko1", "ko2"]]  # fmt: skip
        reports = s.set_index("sentence_id")
        flagged_report = {}
        for p in pairs.itertuples(index=False):
            for sid in (p.s1, p.s2):
                flag = "|".join(x for x in (reports.at[sid, "postedit_report"],
                                            reports.at[sid, "review_report"]) if x)  # fmt: skip
                if flag:
                    flagged_report.setdefault(p.pair_id, "report:" + flag.split("|")[0])
        reason = pd.Series(flagged_report, dtype=object)
        if qa.on_flag == "drop" and len(review):
            first = review.set_index("pair_id")["checks"].str.split("|").str[0]
            reason = pd.concat([reason, first[~first.index.isin(reason.index)]])
        dropped = pairs[pairs["pair_id"].isin(reason.index)].copy()
        dropped["reason"] = dropped["pair_id"].map(reason)
        kept = pairs[~pairs["pair_id"].isin(reason.index)].reset_index(drop=True)
        figures = {
            "per_split": {
                split: {
                    "mt_vs_final": edit_figures(part["draft"].tolist(), part["final"].tolist()),
                    "mt_vs_postedit": edit_figures(part["draft"].tolist(),
                                                   part["postedit"].tolist()),
                    "postedit_vs_final": edit_figures(part["postedit"].tolist(),
                                                      part["final"].tolist()),
                }
                for split, part in _sentences_per_split(s, pairs).items()
                if ctx.recipe.translation.postedited(split)
            },
            "mt_only": {split: {"sentences": len(part), "pairs": int((pairs["split"] == split)
                                                                     .sum())}
                        for split, part in _sentences_per_split(s, pairs).items()
                        if not ctx.recipe.translation.postedited(split)},
            "per_posteditor": {
                who: {**edit_figures(part["draft"].tolist(), part["postedit"].tolist()),
                      "half": sorted(part["half"].unique().tolist())}
                for who, part in s[s["postedited"].fillna(False)].groupby("posteditor")
            },
            "per_reviewer": {
                who: {"reviewed": len(part), "accepted": int(part["accepted"].sum()),
                      "accepted_share": round(float(part["accepted"].mean()), 4),
                      "edit_distance_mean": round(float(np.mean([
                          _dist(a, b) for a, b in zip(part["postedit"], part["final"],
                                                      strict=True)])), 4)}
                for who, part in s[s["reviewed"].fillna(False)].groupby("reviewer")
            },
            "per_backend": {
                b: edit_figures(part["draft"].tolist(), part["final"].tolist())
                for b, part in edited.groupby("backend")
            },
            "not_postedited": int((~edited["postedited"].fillna(False).astype(bool)).sum()),
            "not_reviewed": int((~edited["reviewed"].fillna(False).astype(bool)).sum()),
        }  # fmt: skip
        info = {
            "pairs": len(pairs),
            "kept": len(kept),
            "dropped": value_counts(dropped["reason"]),
            "flags": value_counts(flags["check"]),
            "flagged_pairs": len(review),
            "checks": names,
            "settings": {**settings.__dict__, "on_flag": qa.on_flag},
            "figures": figures,
        }
        return {"pairs.parquet": kept, "dropped.parquet": dropped, "review.parquet": review,
                "sentences.parquet": s}, info  # fmt: skip

    done = cached(ctx, compute)
    info = done.info
    overall = {k: v["mt_vs_final"] for k, v in info["figures"]["per_split"].items()}
    summary = ", ".join(
        f"{k}: BLEU {v.get('bleu')}, chrF {v.get('chrf')}, unchanged "
        f"{v.get('unchanged_share', 0):.0%}"
        for k, v in overall.items()
    )
    return done.outcome(
        f"{summary}; {info['flagged_pairs']} pairs flagged {info['flags']}",
        Rows("pair", info["pairs"], info["kept"], info["dropped"]),
    )


def _dist(a: str, b: str) -> float:
    from pipelines.quality.translation_qa import edit_distance

    return edit_distance(str(a), str(b))


def _sentences_per_split(s: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    out = {}
    for split, part in pairs.groupby("split"):
        ids = set(part["s1"]) | set(part["s2"])
        out[str(split)] = s[s["sentence_id"].isin(ids)]
    return out


# ---------------------------------------------------------------------------- relabel


def relabel_items(pairs: pd.DataFrame, review: pd.DataFrame, kind: str,
                  simulated: bool) -> pd.DataFrame:  # fmt: skip
    """The relabel round's items: every flagged pair still in the release, as the family's
    interface shows a pair (the Korean sentences; the English label is not shown). For
    simulated annotators the English label is the latent answer (``sim_<answer>``)."""
    spec = RELABEL[kind]
    flagged = pairs[pairs["pair_id"].isin(set(review["pair_id"]))]
    first, second = spec["fields"]
    items = pd.DataFrame({"item_id": flagged["pair_id"], first: flagged["ko1"],
                          second: flagged["ko2"], "source": flagged["source"],
                          "license": flagged["license"]}).reset_index(drop=True)  # fmt: skip
    if simulated:
        items[f"sim_{spec['answer']}"] = flagged["label"].to_numpy()
    return items


def relabelled(
    pairs: pd.DataFrame, votes: pd.DataFrame, kind: str
) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """(pairs, dropped counts, dropped pairs with ``reason`` and ``detail``): each
    relabelled pair takes the mean of its ratings (STS) or the label more than half of
    its votes chose (NLI; without one the pair is dropped, ``relabel_no_majority``);
    ``label_en`` keeps the English label. A pair one relabeller reported is dropped
    (``relabel_report``), as the interface it is shown in says (``sts.xml``: dropped
    where no review round follows, and none follows this one;
    ``nli_validation.xml``: dropped); ``relabel_reports`` keeps the flags."""
    answer = RELABEL[kind]["answer"]
    live = votes[~votes["cancelled"].fillna(False).astype(bool)]
    done = live[live["field"] == answer]
    flags = live.assign(report_flags=live["report_flags"].fillna("").astype(str))
    flags = flags[flags["report_flags"] != ""].drop_duplicates("annotation_id")
    reported = {
        str(item): "|".join(sorted({f for v in group["report_flags"] for f in v.split("|")}))
        for item, group in flags.groupby("item_id")
    }
    out = pairs.assign(
        label_en=pairs["label"], relabelled=False, relabel_votes="",
        relabel_reports=pairs["pair_id"].astype(str).map(reported).fillna(""),
    )  # fmt: skip
    dropped: list[str] = []
    for pair_id, group in done.groupby("item_id"):
        values = group["value"].astype(str).tolist()
        at = out.index[out["pair_id"] == pair_id]
        out.loc[at, "relabel_votes"] = "|".join(values)
        if LABELS[kind] is None:
            new: object = round(float(np.mean([float(v) for v in values])), 2)
        else:
            top, n = (
                pd.Series(values).value_counts().index[0],
                pd.Series(values).value_counts().iloc[0],
            )
            if n * 2 <= len(values):
                dropped.append(pair_id)
                continue
            new = top
        out.loc[at, "label"] = new
        out.loc[at, "relabelled"] = True
    gone = out["pair_id"].astype(str).isin(reported)
    no_majority = out["pair_id"].isin(dropped) & ~gone
    lost = pd.concat([
        out[gone].assign(reason="relabel_report", detail=out.loc[gone, "relabel_reports"]),
        out[no_majority].assign(reason="relabel_no_majority",
                                detail=out.loc[no_majority, "relabel_votes"]),
    ]).reset_index(drop=True)  # fmt: skip
    kept = out[~out["pair_id"].isin(dropped) & ~gone].reset_index(drop=True)
    # the counts are the written rows' (a reported pair without a majority counts once)
    return kept, {str(r): int(n) for r, n in lost["reason"].value_counts().items()}, lost


@declares(
    reads=out_files("qa/pairs.parquet", "qa/review.parquet"),
    writes=out_files("relabel/pairs.parquet", "relabel/relabel.json", "relabel/dropped.parquet"),
)
def relabel_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """``on_flag: relabel``: the flagged pairs go through a Label Studio round of their own
    (push, simulate, wait, pull, as every round) and take its label; otherwise the QA's
    pairs pass as they are. -> OUT/relabel/pairs.parquet (the pairs the export releases),
    OUT/relabel/dropped.parquet (the pairs it dropped, with ``reason``: a relabeller's
    report, no majority)."""
    from pipelines.core.io import write_parquet

    kind, qa = ctx.task, ctx.recipe.translation.qa
    pairs_path, review_path = ctx.out / "qa" / "pairs.parquet", ctx.out / "qa" / "review.parquet"
    folder = ctx.out / "relabel"
    folder.mkdir(parents=True, exist_ok=True)
    pairs = pd.read_parquet(pairs_path)
    lines: list[str] = []
    info: dict = {"round": qa.on_flag == "relabel"}
    if qa.on_flag == "relabel":
        items = relabel_items(pairs, pd.read_parquet(review_path), kind.name, ctx.simulated)
        info["items"] = len(items)
        if len(items):
            items_path = folder / "items.parquet"
            if not items_path.is_file() or not pd.read_parquet(items_path).equals(items):
                write_parquet(items, items_path)
            from pipelines.rebuild.rounds import run_round

            lines += [f"{op}: {summary}" for op, summary in run_round(ctx, "relabel").items()]
            votes = pd.read_parquet(ctx.out / "annotate" / "relabel.parquet")
            final, dropped, lost = relabelled(pairs, votes, kind.name)
        else:
            final, dropped = pairs.assign(label_en=pairs["label"], relabelled=False), {}
            lost = pairs.iloc[0:0].assign(reason="", detail="")
    else:
        final, dropped = pairs.assign(label_en=pairs["label"], relabelled=False), {}
        lost = pairs.iloc[0:0].assign(reason="", detail="")
    write_parquet(lost, folder / "dropped.parquet")  # every pair this step dropped, why
    changed = final[final["relabelled"]]
    info.update(relabelled=len(changed), dropped=dropped)
    if len(changed) and LABELS[kind.name] is None:
        info["mean_abs_change"] = round(
            float(
                (changed["label"].astype(float) - changed["label_en"].astype(float)).abs().mean()
            ),
            3,
        )
    elif len(changed):
        info["label_changed"] = int((changed["label"] != changed["label_en"]).sum())
    target = folder / "pairs.parquet"
    if not target.is_file() or not pd.read_parquet(target).equals(final):
        write_parquet(final, target)
    from pipelines.core.io import write_json

    write_json(info, folder / "relabel.json")
    summary = (f"{len(changed)} flagged pairs relabelled ({'; '.join(lines)})" if info["round"]
               else f"no relabel round (on_flag: {qa.on_flag})")  # fmt: skip
    return StepOutcome(summary, info, Rows("pair", len(pairs), len(final), dropped))
