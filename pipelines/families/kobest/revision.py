"""KoBEST's later steps: ``duplicates`` (COPA swaps and near duplicates), ``split``,
``artifacts-k`` (the model-driven review on the partial input) and ``revision-k``
(the items that follow a cue, revised and checked again)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.io import write_parquet
from pipelines.core.stage import value_counts
from pipelines.core.steps import (
    Cached,
    Rows,
    RunContext,
    StepOutcome,
    cached,
    declares,
    out_files,
)
from pipelines.families.kobest.rounds import (
    DROP_COLUMNS,
    _lang,
    _rules,
    _seed,
    _task,
    rounds,
)
from pipelines.families.kobest.writing import (
    apply_round,
)
from pipelines.rebuild.export import inline_counts
from pipelines.rebuild.rounds import run_round


@declares(
    reads=out_files("reviewed/items.parquet"),
    writes=out_files(*(f"duplicates/{n}" for n in (
        "pairs.parquet", "items.parquet", "dropped.parquet", "duplicates.json"))),
    settings=lambda ctx, arg: [
        _rules(ctx).near_duplicate_min, _rules(ctx).swap_min, _rules(ctx).duplicates],
)  # fmt: skip
def duplicates_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The near-duplicate review (``pipelines.families.kobest.duplicates``): the review table of
    pairs and scores (``pairs.parquet``); with ``duplicates: drop`` the later item of
    each pair is dropped (``swap`` or ``near_duplicate``)."""
    from pipelines.families.kobest.duplicates import copa_swaps, near_duplicates

    task, rules = _task(ctx), _rules(ctx)
    src = ctx.out / "reviewed" / "items.parquet"

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(src)
        pairs = near_duplicates(items, task.text, rules.near_duplicate_min)
        if task.name == "copa":
            pairs = pd.concat([copa_swaps(items, rules.swap_min), pairs], ignore_index=True)
        dropped: dict[str, dict] = {}
        if rules.duplicates == "drop":
            for p in pairs.to_dict("records"):
                if p["item_a"] not in dropped and p["item_b"] not in dropped:
                    reason = "swap" if p["kind"] == "copa_swap" else "near_duplicate"
                    dropped[p["item_b"]] = {
                        "item_id": p["item_b"],
                        "stage": "duplicates",
                        "reason": reason,
                        "detail": f"of {p['item_a']} (score {p['score']})",
                    }
        kept = items[~items["item_id"].isin(dropped)]
        planted = {}
        if "sim_plant" in items and "seed_id" in items:
            # a planted swap whose original reached this step (the review may drop one)
            twice = items["seed_id"].map(items["seed_id"].value_counts()) > 1
            swapped = items[items["sim_plant"].str.contains("swap") & twice]["item_id"]
            found = set(pairs.loc[pairs["kind"] == "copa_swap", "item_b"])
            found |= set(pairs.loc[pairs["kind"] == "copa_swap", "item_a"])
            planted = {"swaps_planted": len(swapped), "swaps_found": int(swapped.isin(found).sum())}
        info = {
            "items": len(items),
            "kept": len(kept),
            "pairs": value_counts(pairs["kind"]),
            "dropped": value_counts(
                pd.Series([d["reason"] for d in dropped.values()], dtype=object)
            ),
            "settings": {
                "near_duplicate_min": rules.near_duplicate_min,
                "swap_min": rules.swap_min,
                "action": rules.duplicates,
            },
            **planted,
        }
        return {
            "pairs.parquet": pairs,
            "items.parquet": kept,
            "dropped.parquet": pd.DataFrame(list(dropped.values()), columns=DROP_COLUMNS),
        }, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"pairs {info['pairs']}; {info['kept']} of {info['items']} kept",
        Rows("item", info["items"], info["kept"], info["dropped"]),
    )


def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule over the kept items -> OUT/split (the split step's
    artifact report on the full items included)."""
    from pipelines.splits.base import recipe_split_settings
    from pipelines.splits.run import run_split

    task = _task(ctx)
    items = pd.read_parquet(ctx.out / "duplicates" / "items.parquet")
    path = ctx.out / "final" / "items.parquet"
    write_parquet(items[["item_id", *task.layout, "label"]].astype({"label": str}), path)
    settings = recipe_split_settings(ctx.recipe, ctx.seed)
    if not settings.text_columns or settings.text_columns == list(settings.text_defaults):
        settings.text_columns = [task.layout[0], task.layout[-1]]
    split = run_split(path, settings, ctx.out / "split", None, ctx.recipe.language)
    n = sum(split["splits"].values())
    return StepOutcome(f"{split['splits']}", {"splits": split["splits"]}, Rows("item", n, n))


def current_items(ctx: RunContext, k: int) -> Path:
    """The items the ``k``-th artifact review reads: the kept items, then each
    revision's."""
    return ctx.out / ("duplicates" if k == 1 else f"revision-{k - 1}") / "items.parquet"


def _artifacts_settings(ctx: RunContext, arg: str) -> list:
    rules, k = _rules(ctx), int(arg)
    seed = _seed(ctx)
    return [rules.skew_share, rules.min_count, rules.cue_margin, k > rules.iterations, seed,
            ctx.simulated]  # fmt: skip


@declares(
    reads=lambda ctx, arg: {
        "items": current_items(ctx, int(arg)), "splits": ctx.out / "split" / "splits.parquet"
    },
    writes=lambda ctx, arg: {n: ctx.out / f"artifacts-{arg}" / n for n in (
        "carriers.parquet", "revision_items.parquet", "report.parquet", "artifacts.json")},
    settings=_artifacts_settings,
)  # fmt: skip
def artifacts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The ``k``-th model-driven artifact review (``review.artifact_review``): on the
    partial input, the cues, the partial-input accuracy against the majority baseline,
    and the items that follow a cue (the next revision round's items; none after the
    last)."""
    from pipelines.families.kobest.review import artifact_review
    from pipelines.families.kobest.simulate import revision_latent
    from pipelines.splits.annotation_artifacts import report_markdown

    k = int(arg)
    task, rules = _task(ctx), _rules(ctx)
    src, splits = current_items(ctx, k), ctx.out / "split" / "splits.parquet"
    last = k > rules.iterations
    seed = _seed(ctx)

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(src)
        report, carriers = artifact_review(
            items,
            pd.read_parquet(splits),
            task,
            _lang(ctx),
            rules.skew_share,
            rules.min_count,
            seed,
            rules.cue_margin,
        )
        revision = pd.DataFrame(columns=["item_id"])  # nothing to revise: an empty round
        if len(carriers) and not last:
            chosen = items.merge(carriers[["item_id", "finding"]], on="item_id")
            chosen = chosen.drop(columns=[c for c in ("flags",) if c in chosen])
            chosen["label_text"] = [task.labels[int(v)] for v in chosen["label"]]
            chosen["guideline"] = task.guideline
            revision = (
                revision_latent(chosen, task) if ctx.simulated and "sim_clean" in chosen else chosen
            )
        planted = {}
        if "sim_plant" in items:
            cue_items = set(items.loc[items["sim_plant"].str.contains("cue"), "item_id"])
            planted = {
                "cue_items": len(cue_items),
                "cue_items_flagged": len(cue_items & set(carriers["item_id"])),
            }
        info = {
            "iteration": k,
            "items": len(items),
            "partial_input": report["partial_input"],
            "cues": report["cues"],
            "carriers": len(carriers),
            "sent_to_revision": len(revision),
            **planted,
            "settings": {
                "skew_share": rules.skew_share,
                "min_count": rules.min_count,
                "cue_margin": rules.cue_margin,
            },
        }
        md = report_markdown(report, f"artifact review {k}")
        (ctx.out / f"artifacts-{k}").mkdir(parents=True, exist_ok=True)
        return {
            "carriers.parquet": carriers.assign(cues=carriers["cues"].map(list)),
            "revision_items.parquet": revision,
            "report.parquet": pd.DataFrame({"markdown": [md]}),
        }, info

    done = cached(ctx, compute)
    info = done.info
    acc = info["partial_input"]
    cues = ", ".join(f"{c['morpheme']}->{c['label']}" for c in info["cues"][:5]) or "none"
    return done.outcome(
        f"review {k}: partial-input accuracy {acc['accuracy']} vs majority "
        f"{acc.get('reference') or acc['majority_baseline']}; cues {cues}; "
        f"{info['sent_to_revision']} to revision",
    )


def _revision_pulls(ctx: RunContext, arg: str) -> dict[str, Path]:
    r = rounds(ctx)[f"revision{arg}"]
    flagged = len(pd.read_parquet(r.items))  # an empty table may have no columns
    return {"annotations": r.annotations} if flagged else {}  # pulled by the step's round


@declares(
    reads=lambda ctx, arg: {
        "items": current_items(ctx, int(arg)), "flagged": rounds(ctx)[f"revision{arg}"].items
    },
    writes=lambda ctx, arg: {n: ctx.out / f"revision-{arg}" / n for n in (
        "items.parquet", "versions.parquet", "dropped.parquet", "revision.json")},
    settings=lambda ctx, arg: [int(arg)],
    pulls=_revision_pulls,
)  # fmt: skip
def revision_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The ``k``-th revision round: the items the review flagged go to Label Studio
    (push, simulate, wait, pull: the shared steps); their revisions are decided like a
    review (accept / edit / reject), checked again and kept as versions. Skipped, the
    items passed on unchanged, when the review flagged nothing."""
    k = int(arg)
    name = f"revision{k}"
    r = rounds(ctx)[name]
    src = current_items(ctx, k)
    flagged = pd.read_parquet(r.items)
    info: dict = {"iteration": k, "flagged": len(flagged)}
    if len(flagged):
        info.update(run_round(ctx, name))

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(src)
        if not len(flagged):
            return {
                "items.parquet": items,
                "versions.parquet": pd.DataFrame(),
                "dropped.parquet": pd.DataFrame(columns=DROP_COLUMNS),
            }, {
                "iteration": k,
                "items": len(items),
                "kept": len(items),
                "flagged": 0,
                "decisions": {},
                "dropped": {},
                "skipped": True,
            }
        chosen = items[items["item_id"].isin(flagged["item_id"])]
        decided, versions, dropped, decisions = apply_round(ctx, r, chosen, name, 1)
        rest = items[~items["item_id"].isin(flagged["item_id"])]
        merged = pd.concat([rest, decided.drop(columns=["decision"])], ignore_index=True)
        merged = (
            merged.set_index("item_id")
            .loc[[i for i in items["item_id"] if i in set(merged["item_id"])]]
            .reset_index()
        )
        return {
            "items.parquet": merged,
            "versions.parquet": versions,
            "dropped.parquet": pd.DataFrame(dropped, columns=DROP_COLUMNS),
        }, {
            "iteration": k,
            "items": len(items),
            "kept": len(merged),
            "flagged": len(flagged),
            "decisions": decisions,
            "edits": len(versions),
            "dropped": value_counts(pd.Series([d["reason"] for d in dropped], dtype=object)),
            "skipped": False,
        }

    done = cached(ctx, compute)
    got = done.info
    info.update(got)
    summary = (
        "nothing flagged: skipped"
        if got["skipped"]
        else f"{got['flagged']} revised: {got['decisions']}"
    )
    # the step's info: the iteration, its round's figures and the cached ones
    return Cached(info, done.hit).outcome(
        summary, Rows("item", got["items"], got["kept"], got["dropped"])
    )


# ------------------------------------------------------------ SentiNeg's test set (2.6)


def _negated_settings(ctx: RunContext, arg: str) -> list:
    rules = _rules(ctx)
    seed = _seed(ctx)
    return [rules.negated_test, rules.negated_test_items, rules.antonyms, rules.brands,
            rules.actions, seed, rules.human_conversion, rules.idioms]  # fmt: skip


def _candidates_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    return {
        "items": current_items(ctx, _rules(ctx).iterations + 1),
        "splits": ctx.out / "split" / "splits.parquet",
    }


@declares(
    reads=_candidates_reads,
    writes=out_files(*(f"candidates/{n}" for n in (
        "candidates.parquet", "conversion_items.parquet", "candidates.json"))),
    settings=_negated_settings,
)  # fmt: skip
def candidates_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """SentiNeg's test-set candidates (KoBEST 2.6, ``negated_test``): a sentiment model
    trained on train and dev; the train items whose predicted polarity flips once negated
    are selected (``negated_set.select``) and are the conversion round's items."""
    from pipelines.families.kobest.checks import CheckContext, checks_of
    from pipelines.families.kobest.negated_set import SELECTED, select
    from pipelines.families.kobest.prompts import instruction

    task, rules = _task(ctx), _rules(ctx)
    reads = _candidates_reads(ctx, arg)
    seed = _seed(ctx)

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(reads["items"])
        splits = pd.read_parquet(reads["splits"])
        splits = splits[splits["item_id"].isin(items["item_id"])][["item_id", "split"]]
        empty = pd.DataFrame(columns=["item_id"])
        if not rules.negated_test:
            return {"candidates.parquet": empty, "conversion_items.parquet": empty}, {
                "skipped": True, "selected": 0}  # fmt: skip
        candidates, report = select(items, splits, _lang(ctx), checks_of(task.name, task.checks),
                                    CheckContext(_lang(ctx), rules), rules.negated_test_items,
                                    seed, rules.antonyms, rules.idioms)  # fmt: skip
        chosen = candidates[candidates["outcome"] == SELECTED]
        conversion = empty
        if rules.human_conversion and len(chosen):
            label = 1 - chosen["label"].astype(int)
            conversion = pd.DataFrame({
                "item_id": chosen["item_id"].tolist(), "original": chosen["sentence"].tolist(),
                "draft": chosen["negated"].tolist(), "draft_method": chosen["method"].tolist(),
                "label": label.tolist(),
                "instruction": [instruction(task, {"label": v}) for v in label],
                "guideline": task.guideline,
            })  # fmt: skip
            if ctx.simulated:  # the simulated converter keeps the helper's draft
                conversion["sim_sentence"] = conversion["draft"]
        info = {"skipped": False, "human_conversion": rules.human_conversion, **report,
                "to_convert": len(conversion)}  # fmt: skip
        return {"candidates.parquet": candidates, "conversion_items.parquet": conversion}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        (
            "skipped (rules.negated_test is off)"
            if info["skipped"]
            else f"{info['selected']} of {info['candidates']} train items selected"
            + (
                f"; {info['to_convert']} to the conversion round"
                if info.get("human_conversion")
                else "; the helper's drafts convert them (rules.human_conversion off)"
            )
        ),
    )


def _conversion_pulls(ctx: RunContext, arg: str) -> dict[str, Path]:
    r = rounds(ctx)["conversion"]
    todo = len(pd.read_parquet(r.items)) if r.items.is_file() else 0
    return {"annotations": r.annotations} if todo else {}  # pulled by the step's round


@declares(
    reads=lambda ctx, arg: {
        "items": current_items(ctx, _rules(ctx).iterations + 1),
        "splits": ctx.out / "split" / "splits.parquet",
        "candidates": ctx.out / "candidates" / "candidates.parquet",
        "conversion": ctx.out / "candidates" / "conversion_items.parquet",
    },
    writes=out_files(*(f"negated/{n}" for n in (
        "items.parquet", "splits.parquet", "candidates.parquet", "negated.json"))),
    settings=_negated_settings,
    pulls=_conversion_pulls,
)  # fmt: skip
def negated_test_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """SentiNeg's test set (KoBEST 2.6, ``negated_test``): the selected candidates go to
    the conversion round (push, simulate, wait, pull: the shared steps), where a person
    converts each to a sentence of opposite meaning; each conversion, checked again, is
    relabelled into test and its candidate leaves train (``candidates.parquet``: every
    train item's outcome). ``rules.human_conversion`` off: the helper's drafts convert."""
    from pipelines.families.kobest.checks import CheckContext, checks_of
    from pipelines.families.kobest.negated_set import SELECTED, apply
    from pipelines.families.kobest.review import answers

    task, rules = _task(ctx), _rules(ctx)
    src = current_items(ctx, rules.iterations + 1)
    folder = ctx.out / "candidates"
    r = rounds(ctx)["conversion"]
    todo = pd.read_parquet(folder / "conversion_items.parquet")
    info: dict = {}
    if rules.negated_test and rules.human_conversion and len(todo):
        info.update(run_round(ctx, "conversion"))

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(src)
        splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")
        splits = splits[splits["item_id"].isin(items["item_id"])][["item_id", "split"]]
        if not rules.negated_test:
            empty = pd.DataFrame(columns=["item_id", "outcome"])
            info = {"skipped": True, "converted": 0}
            return {"items.parquet": items.assign(converted_from="", converter=""),
                    "splits.parquet": splits, "candidates.parquet": empty}, info  # fmt: skip
        candidates = pd.read_parquet(folder / "candidates.parquet")
        report = json.loads((folder / "candidates.json").read_text(encoding="utf-8"))
        report = {k: v for k, v in report.items() if k not in ("skipped", "to_convert")}
        if rules.human_conversion:
            got = answers(pd.read_parquet(r.annotations)) if len(todo) else {}
            conversions = {i: (a[0].get("sentence", ""), a[0]["annotator"])
                           for i, a in got.items() if a}  # fmt: skip
        else:
            chosen = candidates[candidates["outcome"] == SELECTED]
            pairs = zip(chosen["item_id"], chosen["negated"], strict=True)
            conversions = {i: (t, "negation helper") for i, t in pairs}
        new_items, new_splits, candidates, report = apply(
            items, splits, candidates, report, conversions,
            checks_of(task.name, task.checks), CheckContext(_lang(ctx), rules),
        )  # fmt: skip
        info = {"skipped": False, **report}
        return {"items.parquet": new_items, "splits.parquet": new_splits,
                "candidates.parquet": candidates}, info  # fmt: skip

    done = cached(ctx, compute)
    info.update(done.info)
    n = sum((info.get("splits_after") or {}).values()) or None
    return Cached(info, done.hit).outcome(
        "skipped (rules.negated_test is off)"
        if info["skipped"]
        else f"{info['converted']} of {info['candidates']} train items converted into test "
        f"({inline_counts({k: v for k, v in info['outcomes'].items() if v})})",
        Rows("item", n, n) if n else None,
    )
