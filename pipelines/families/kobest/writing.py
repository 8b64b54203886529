"""KoBEST's writing steps (Kim et al. 2022, 3): ``prompts`` (the writing round's items),
``written`` (bad input dropped, the guideline checks and, when the recipe turns them
on, the toxic-content detectors: the demos turn them off, as KoBEST 3.5 has linguists
review every item instead)
and ``reviewed`` (the linguists' decisions, edits kept as versions)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.families.kobest.rounds import (
    DROP_COLUMNS,
    _corpus,
    _lang,
    _rules,
    _source_rows,
    _spec,
    _task,
    rounds,
)
from pipelines.families.kobest.tasks import KobestTask, label_of

if TYPE_CHECKING:
    from pipelines.families.kobest.checks import CheckContext

# ------------------------------------------------------------------------------ steps


def _seeds(ctx: RunContext) -> Path | None:
    spec = _spec(ctx)
    if ctx.simulated and spec.simulation and spec.simulation.seeds:
        return _corpus(ctx.recipe, spec.simulation.seeds)
    return None


def _prompts_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    spec, seeds = _spec(ctx), _seeds(ctx)
    return {**({"source": _corpus(ctx.recipe, spec.source)} if spec.source else {}),
            **({"seeds": seeds} if seeds else {})}  # fmt: skip


def _prompts_settings(ctx: RunContext, arg: str) -> list:
    spec = _spec(ctx)
    plants = spec.simulation.model_dump() if spec.simulation else {}
    rules = _rules(ctx)
    return [spec.items, spec.seed, plants, ctx.simulated, _task(ctx).name, rules.antonyms,
            rules.idioms]  # fmt: skip


@declares(
    reads=_prompts_reads,
    writes=out_files("prompts/items.parquet", "prompts/prompts.json"),
    settings=_prompts_settings,  # the prompt and simulation modules' code is in the key
)
def prompts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The writing round's items: the given fields and the assigned label per prompt
    (``pipelines.families.kobest.prompts``); simulated rounds: the latent answers
    (``pipelines.families.kobest.simulate``)."""
    from pipelines.families.kobest import prompts as p
    from pipelines.families.kobest import simulate as sim

    spec, task = _spec(ctx), _task(ctx)
    seeds_path = _seeds(ctx)
    plants = spec.simulation.model_dump() if spec.simulation else {}

    def compute() -> tuple[dict, dict]:
        if task.name == "sentineg":
            given = p.sentineg_given(
                p.nsmc_sentences(_source_rows(ctx.recipe, task), spec.items, spec.seed),
                _rules(ctx).antonyms,
                _rules(ctx).idioms,
            )
        elif task.name == "copa" and seeds_path is not None:
            seeds = sim.read_seeds(seeds_path)
            given = sim.copa_given(seeds, plants["swaps"], spec.seed)
        elif seeds_path is not None:
            seeds = sim.read_seeds(seeds_path, task.name)
            given = sim.seeded_given(task, seeds, spec.seed).head(spec.items)
        elif task.name == "copa":
            given = pd.DataFrame(index=range(spec.items))
        else:
            rows = _source_rows(ctx.recipe, task)
            topics = task.name == "boolq" and "topic" in rows
            if topics:  # 2.2: the paragraphs even over the topics
                rows = p.even_topics(rows, spec.items, spec.seed)
            extra = [c for c in ("label", *(("topic",) if topics else ())) if c in rows]
            given = rows[[*task.given, *extra]].head(spec.items)
        items = p.prompts(task, given, spec.seed)
        if task.name == "copa" and seeds_path is not None:
            items = sim.copa_latent(items, seeds, plants["cue"], spec.seed)
        elif seeds_path is not None:
            items = sim.seeded_latent(task, items, seeds, plants["cue"], spec.seed)
        elif task.name == "sentineg" and ctx.simulated:
            items = sim.sentineg_latent(
                items,
                plants.get("copies", 0),
                plants.get("brands", 0),
                plants.get("cue", 0),
                spec.seed,
            )
        info = {"prompts": len(items), "labels": value_counts(items["label"].astype(str))}
        if "topic" in given and task.name == "boolq":
            info["topics"] = value_counts(given["topic"].astype(str))
        if "draft_method" in items:
            info["drafts"] = value_counts(items["draft_method"])
        if "sim_plant" in items:
            info["planted"] = value_counts(
                items["sim_plant"].str.split(",").explode().replace("", None).dropna()
            )
        return {"items.parquet": items}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['prompts']} prompts {info['labels']}",
    )


def _checker(ctx: RunContext) -> tuple[dict, object]:
    from pipelines.families.kobest.checks import CheckContext, checks_of

    task = _task(ctx)
    return checks_of(task.name, task.checks), CheckContext(_lang(ctx), _rules(ctx))


def check_items(
    items: list[dict], checks: dict, cctx: CheckContext, stage: str
) -> tuple[list[dict], list[dict], list[dict]]:
    """(kept, dropped, every check result) of ``items``: an item failing a ``drop``
    check is dropped with the first such check as its reason; ``flag`` results go into
    the item's ``flags``."""
    from pipelines.families.kobest.checks import run_checks

    kept, dropped, results = [], [], []
    for item in items:
        failed = run_checks(item, checks, cctx)
        results += [
            {"item_id": item["item_id"], "stage": stage, "check": n, "action": a, "detail": d}
            for n, a, d in failed
        ]
        drops = [(n, d) for n, a, d in failed if a == "drop"]
        if drops:
            dropped.append(
                {
                    "item_id": item["item_id"],
                    "stage": stage,
                    "reason": drops[0][0],
                    "detail": "; ".join(f"{n}: {d}" for n, d in drops),
                }
            )
            continue
        flags = [f"{n}: {d}" for n, a, d in failed if a == "flag"]
        kept.append({**item, "flags": "; ".join(flags)})
    return kept, dropped, results


def toxic_drops(ctx: RunContext, items: list[dict], task: KobestTask) -> dict[str, dict]:
    """The recipe's toxic-content detectors (``filters.classifiers``, when enabled: not a
    KoBEST step, whose linguists review ethics by hand, KoBEST 3.5) on every written
    field; item id -> its drop row for the items a detector fires on."""
    from pipelines.quality.toxic import detector_folders, filter_toxic, load_detectors

    settings = ctx.recipe.filters.classifiers
    if not settings.active or not items:
        return {}
    rows = [
        {
            "item_id": it["item_id"],
            "text": it[f],
            "corpus": "written",
            "style": "colloquial",
            "field": f,
        }
        for it in items
        for f in task.text
    ]
    models = detector_folders(settings, ctx.recipe.resolve)
    result = filter_toxic(pd.DataFrame(rows), settings, load_detectors(settings, models))
    out: dict[str, dict] = {}
    for r in result.dropped.to_dict("records"):
        out.setdefault(
            r["item_id"],
            {
                "item_id": r["item_id"],
                "stage": "written",
                "reason": r["reason"],
                "detail": f"{r['field']}: {r['detail']}",
            },
        )
    return out


def written_items(
    annotations: pd.DataFrame, prompts: pd.DataFrame, task: KobestTask
) -> tuple[list[dict], list[dict]]:
    """(items, dropped): one item per prompt from its writer's fields. Bad input is
    dropped with a reason, never a crash: ``not_written`` (skipped), ``missing_field``
    (a written field empty), ``bad_label`` (a label outside the task's set)."""
    from pipelines.families.kobest.review import answers

    got = answers(annotations)
    items, dropped = [], []
    for p in prompts.to_dict("records"):
        anns = got.get(str(p["item_id"]))
        if not anns:
            dropped.append(
                {
                    "item_id": p["item_id"],
                    "stage": "written",
                    "reason": "not_written",
                    "detail": "no annotation",
                }
            )
            continue
        ann = anns[0]
        missing = [f for f in task.written if not ann.get(f)]
        given_missing = [f for f in task.given if not str(p.get(f) or "").strip()]
        label = label_of(task, p.get("label"))
        if missing or given_missing:
            dropped.append(
                {
                    "item_id": p["item_id"],
                    "stage": "written",
                    "reason": "missing_field",
                    "detail": f"empty: {', '.join(missing + given_missing)}",
                }
            )
            continue
        if label is None:
            dropped.append(
                {
                    "item_id": p["item_id"],
                    "stage": "written",
                    "reason": "bad_label",
                    "detail": f"{p.get('label')!r} not in {sorted(task.labels)}",
                }
            )
            continue
        item = {
            k: v
            for k, v in p.items()
            if k.startswith("sim_")
            or k in ("item_id", "original_label", "source_id", "draft", "draft_method", "seed_id")
        }
        item.update({f: p[f] for f in task.given})
        item.update({f: ann[f] for f in task.written})
        item.update(label=label, version=0, writer=ann["annotator"])
        items.append(item)
    return items, dropped


def _review_items(items: list[dict], task: KobestTask, simulated: bool, latent) -> pd.DataFrame:  # noqa: ANN001
    frame = pd.DataFrame(items)
    frame["finding"] = frame["flags"].replace("", "없음") if "flags" in frame else "없음"
    frame["label_text"] = [task.labels[int(v)] for v in frame["label"]]
    frame["guideline"] = task.guideline
    return latent(frame, task) if simulated and "sim_review" in frame else frame


def _written_settings(ctx: RunContext, arg: str) -> list:
    rules = _rules(ctx)
    return [list(_task(ctx).checks), rules.actions, rules.min_context_sentences,
            list(rules.wh_words), rules.brands, rules.antonyms, rules.idioms, rules.slang,
            rules.dictionary, ctx.simulated,
            ctx.recipe.filters.classifiers.model_dump(), _detector_names(ctx)]  # fmt: skip


def _detector_names(ctx: RunContext) -> list[str]:
    """The detector folders' names (a built-in one's holds its data and code key)."""
    from pipelines.quality.toxic import detector_folders

    return [
        p.name
        for p in detector_folders(ctx.recipe.filters.classifiers, ctx.recipe.resolve).values()
    ]


@declares(
    reads=lambda ctx, arg: {
        "writing annotations": rounds(ctx)["writing"].annotations,
        "writing items": rounds(ctx)["writing"].items,
    },
    writes=out_files(*(f"written/{n}" for n in (
        "items.parquet", "review_items.parquet", "dropped.parquet", "checks.parquet",
        "versions.parquet", "written.json"))),
    settings=_written_settings,
)  # fmt: skip
def written_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The written items: bad input dropped (``written_items``), the guideline checks
    (``pipelines.families.kobest.checks``) and the toxic-content detectors run on each; the kept
    items (version 0) are the review round's items."""
    from pipelines.families.kobest.simulate import review_latent

    r = rounds(ctx)["writing"]
    task = _task(ctx)

    def compute() -> tuple[dict, dict]:
        items, bad = written_items(pd.read_parquet(r.annotations), pd.read_parquet(r.items), task)
        checks, cctx = _checker(ctx)
        kept, dropped, results = check_items(items, checks, cctx, "written")
        toxic = toxic_drops(ctx, kept, task)
        kept = [k for k in kept if k["item_id"] not in toxic]
        dropped = [*bad, *dropped, *toxic.values()]
        from pipelines.families.kobest.review import version_row

        versions = [version_row(i, task, "writing", i["writer"], "") for i in kept]
        review = _review_items(kept, task, ctx.simulated, review_latent) if kept else pd.DataFrame()
        n = len(items) + len(bad)
        info = {
            "prompts": n,
            "written": len(items),
            "kept": len(kept),
            "dropped": value_counts(pd.Series([d["reason"] for d in dropped], dtype=object)),
            "checks": {
                name: {
                    "drop": sum(1 for x in results if x["check"] == name and x["action"] == "drop"),
                    "flag": sum(1 for x in results if x["check"] == name and x["action"] == "flag"),
                }
                for name in checks
            },
            "detectors": sorted(ctx.recipe.filters.classifiers.active),
            "detectors_off": ctx.recipe.filters.classifiers.reason
            if not ctx.recipe.filters.classifiers.enabled
            else None,
        }
        return {
            "items.parquet": pd.DataFrame(kept),
            "review_items.parquet": review,
            "dropped.parquet": pd.DataFrame(dropped, columns=DROP_COLUMNS),
            "checks.parquet": pd.DataFrame(
                results, columns=["item_id", "stage", "check", "action", "detail"]
            ),
            "versions.parquet": pd.DataFrame(versions),
        }, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']} of {info['prompts']} prompts kept {info['dropped']}",
        Rows("item", info["prompts"], info["kept"], info["dropped"]),
    )


def apply_round(
    ctx: RunContext, r: Round, items: pd.DataFrame, round_name: str, votes: int
) -> tuple[pd.DataFrame, pd.DataFrame, list[dict], dict]:
    """A review or revision round's decisions (``review.decide``), the edited items
    checked again; (items, versions, dropped, decisions)."""
    from pipelines.families.kobest.review import decide

    task = _task(ctx)
    decided, versions, dropped = decide(
        pd.read_parquet(r.annotations), items, task, votes, round_name
    )
    dropped = [{**d, "stage": round_name} for d in dropped]
    decisions = value_counts(decided["decision"]) if len(decided) else {}
    edited = decided[decided["decision"] == "edit"].to_dict("records")
    checks, cctx = _checker(ctx)
    _, bad, _ = check_items(edited, checks, cctx, round_name)
    bad_ids = {b["item_id"] for b in bad}
    decided = decided[~decided["item_id"].isin(bad_ids)]
    return decided, versions, [*dropped, *bad], {**decisions, "rechecked_dropped": len(bad)}


@declares(
    reads=lambda ctx, arg: {
        "review annotations": rounds(ctx)["review"].annotations,
        "written": ctx.out / "written" / "items.parquet",
    },
    writes=out_files(*(f"reviewed/{n}" for n in (
        "items.parquet", "versions.parquet", "dropped.parquet", "reviewed.json"))),
    settings=lambda ctx, arg: [_rules(ctx).review_votes],
)  # fmt: skip
def reviewed_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The linguists' review (``review.decide``): rejected and unreviewed items dropped
    with the reason, edits kept as versions (and checked again)."""
    r = rounds(ctx)["review"]
    rules = _rules(ctx)
    written = ctx.out / "written" / "items.parquet"

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(written)
        kept, versions, dropped, decisions = apply_round(
            ctx, r, items, "review", rules.review_votes
        )
        info = {
            "items": len(items),
            "kept": len(kept),
            "decisions": decisions,
            "dropped": value_counts(pd.Series([d["reason"] for d in dropped], dtype=object)),
            "edits": len(versions),
        }
        return {
            "items.parquet": kept,
            "versions.parquet": versions,
            "dropped.parquet": pd.DataFrame(dropped, columns=DROP_COLUMNS),
        }, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']} of {info['items']} items kept; decisions {info['decisions']}",
        Rows("item", info["items"], info["kept"], info["dropped"]),
    )
