"""KoBEST (Kim et al. 2022): the five task kinds ``kobest-boolq``, ``kobest-copa``,
``kobest-wic``, ``kobest-hellaswag`` and ``kobest-sentineg``, one registration each
over the same steps (``pipelines.families.kobest`` holds the task definitions, checks and
reviews):

``prompts`` (the writing round's items: given fields and the assigned label) -> the
``writing`` round (one writer per prompt) -> ``written`` (bad input dropped; the
guideline checks and the toxic-content detectors on every written item) -> the
``review`` round (linguists: accept / edit / reject with a reason) -> ``reviewed``
(decisions, edits kept as versions and checked again) -> ``duplicates`` (COPA swaps
and near duplicates: the review table, the later item of each pair dropped) ->
``split`` (the recipe's rule) -> ``artifacts-1`` (the model-driven review on the
partial input: cues, partial-input accuracy, the items that follow a cue) ->
``revision-1`` (those items to the revision round, the revisions checked and kept as
versions) -> ``artifacts-2`` -> ... up to ``rules.iterations`` revisions, a last review
after the last one; a revision round is skipped when its review found nothing ->
``export`` (KoBEST's layout, JSON Lines per split, and the data card).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from pipelines.core.io import write_parquet
from pipelines.core.markdown import table
from pipelines.core.stage import value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached, step_function
from pipelines.export.family import inline_counts, round_paragraph
from pipelines.families import CardSection, Round, TaskKind, register_task
from pipelines.families.kobest.tasks import KOBEST_TASKS, KobestTask, kobest_task, label_of

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
POOLS = {"writing": "writer", "review": "linguist", "revision": "reviser"}
DROP_COLUMNS = ["item_id", "stage", "reason", "detail"]


def _spec(ctx_or_recipe: object) -> object:
    return getattr(ctx_or_recipe, "recipe", ctx_or_recipe).kobest


def _task(ctx: RunContext) -> KobestTask:
    return kobest_task(ctx.task.name.removeprefix("kobest-"))


def _rules(ctx_or_recipe: object) -> object:
    return _spec(ctx_or_recipe).kobest_rules()


def _lang(ctx: RunContext) -> object:
    from pipelines.lang import language

    return language(ctx.recipe.language)


def round_config(recipe: object, task: str, name: str) -> Path:
    spec = getattr(recipe.kobest, f"{name}_round")
    if spec is not None and spec.config:
        return recipe.resolve(spec.config)
    return CONFIGS / (f"kobest_{task}.xml" if name == "writing" else f"kobest_{task}_review.xml")


def _round(ctx: RunContext, name: str, items: Path, annotations: Path, pool: str) -> Round:
    from pipelines.core.recipe import SimulateSpec
    from pipelines.families.kobest.section import KobestRound

    key = "revision" if name.startswith("revision") else name
    spec = getattr(_spec(ctx), f"{key}_round") or KobestRound()
    sim = None
    if ctx.simulated:
        sim = spec.simulate or SimulateSpec(annotators=max(spec.people, 3))
    return Round(
        items,
        round_config(ctx.recipe, _task(ctx).name, key),
        f"{spec.project}{name.removeprefix(key)}" if spec.project else f"{ctx.recipe.name}-{name}",
        spec.people,
        sim,
        pool,
        annotations,
        spec.timeout,
        spec.poll,
    )


def rounds(ctx: RunContext) -> dict[str, Round]:
    """``writing``, ``review`` and ``revision<k>`` for each of ``rules.iterations``."""
    out = ctx.out
    r = {
        "writing": _round(
            ctx,
            "writing",
            out / "prompts" / "items.parquet",
            out / "annotate" / "writing.parquet",
            POOLS["writing"],
        ),
        "review": _round(
            ctx,
            "review",
            out / "written" / "review_items.parquet",
            out / "annotate" / "review.parquet",
            POOLS["review"],
        ),
    }
    for k in range(1, _rules(ctx).iterations + 1):
        r[f"revision{k}"] = _round(
            ctx,
            f"revision{k}",
            out / f"artifacts-{k}" / "revision_items.parquet",
            out / "annotate" / f"revision{k}.parquet",
            POOLS["revision"],
        )
    return r


def plan(recipe: object) -> list[str]:
    """The steps of a recipe: the artifact reviews and revision rounds follow
    ``rules.iterations``."""
    ops = ("push", "simulate", "wait", "pull")
    steps = [
        "prompts",
        *(f"{op}-writing" for op in ops),
        "written",
        *(f"{op}-review" for op in ops),
        "reviewed",
        "duplicates",
        "split",
    ]
    n = _rules(recipe).iterations
    for k in range(1, n + 1):
        steps += [f"artifacts-{k}", f"revision-{k}"]
    return [*steps, f"artifacts-{n + 1}", "export"]


def configs(recipe: object) -> list[tuple[str, Path]]:
    task = recipe.task.removeprefix("kobest-")
    return [
        (f"kobest.{n}_round.config", round_config(recipe, task, n))
        for n in ("writing", "review", "revision")
    ]


def _corpus(recipe: object, name: str) -> Path:
    by_name = {c.name: c for c in recipe.corpora}
    return recipe.corpus_path(by_name[name])


def preflight(recipe: object) -> None:
    """The sources read (a malformed line fails here, naming the file and line), and the
    task has what its prompts need."""
    from pipelines.core.recipe import RecipeError

    spec, task = recipe.kobest, kobest_task(recipe.task.removeprefix("kobest-"))
    if task.name in ("boolq", "wic", "hellaswag", "sentineg") and not spec.source:
        raise RecipeError(f"a {recipe.task} rebuild needs kobest.source (a corpus of the recipe)")
    if spec.source:
        _source_rows(recipe, task)
    sim = spec.simulation
    if sim and sim.seeds:
        from pipelines.families.kobest.simulate import read_seeds

        read_seeds(_corpus(recipe, sim.seeds))


def _source_rows(recipe: object, task: KobestTask) -> pd.DataFrame:
    """The source corpus as a table (JSON Lines, gzip allowed); a malformed line, or a
    row missing a given field or holding it empty, is an error naming the file and line."""
    from pipelines.core.recipe import RecipeError
    from pipelines.ingest.readers import read_json_lines

    path = _corpus(recipe, recipe.kobest.source)
    need = ("review", "rating") if task.name == "sentineg" else task.given
    rows = read_json_lines(path, need, RecipeError)
    for row in rows:
        for field in need:
            if row[field] is None or not str(row[field]).strip():
                raise RecipeError(f"{path}:{row['line']}: empty {field!r}")
    return pd.DataFrame(rows).drop(columns="line")


# ------------------------------------------------------------------------------ steps


def prompts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The writing round's items: the given fields and the assigned label per prompt
    (``pipelines.families.kobest.prompts``); simulated rounds: the latent answers
    (``pipelines.families.kobest.simulate``)."""
    from pipelines.families.kobest import prompts as p
    from pipelines.families.kobest import simulate as sim

    spec, task = _spec(ctx), _task(ctx)
    inputs = [_corpus(ctx.recipe, spec.source)] if spec.source else []
    seeds_path = None
    if ctx.simulated and spec.simulation and spec.simulation.seeds:
        seeds_path = _corpus(ctx.recipe, spec.simulation.seeds)
        inputs.append(seeds_path)
    plants = spec.simulation.model_dump() if spec.simulation else {}

    def compute() -> tuple[dict, dict]:
        if task.name == "sentineg":
            given = p.sentineg_given(
                p.nsmc_sentences(_source_rows(ctx.recipe, task), spec.items, spec.seed),
                _rules(ctx).antonyms,
            )
        elif task.name == "copa" and seeds_path is not None:
            seeds = sim.read_seeds(seeds_path)
            given = sim.copa_given(seeds, plants["swaps"], spec.seed)
        elif task.name == "copa":
            given = pd.DataFrame(index=range(spec.items))
        else:
            rows = _source_rows(ctx.recipe, task)
            given = rows[[*task.given, *(["label"] if "label" in rows else [])]].head(spec.items)
        items = p.prompts(task, given, spec.seed)
        if task.name == "copa" and seeds_path is not None:
            items = sim.copa_latent(items, seeds, plants["cue"], spec.seed)
        elif task.name == "sentineg" and ctx.simulated:
            items = sim.sentineg_latent(
                items,
                plants.get("copies", 0),
                plants.get("brands", 0),
                plants.get("cue", 0),
                spec.seed,
            )
        info = {"prompts": len(items), "labels": value_counts(items["label"].astype(str))}
        if "draft_method" in items:
            info["drafts"] = value_counts(items["draft_method"])
        if "sim_plant" in items:
            info["planted"] = value_counts(
                items["sim_plant"].str.split(",").explode().replace("", None).dropna()
            )
        return {"items.parquet": items}, info

    from pipelines.core.steps import code_hash

    # the prompt and simulation modules' code too: a change there rebuilds the prompts
    settings = [
        spec.items,
        spec.seed,
        plants,
        ctx.simulated,
        task.name,
        _rules(ctx).antonyms,
        code_hash(p.prompts),
        code_hash(sim.copa_latent),
    ]
    info, hit = cached(
        ctx.out / "prompts", inputs, settings, compute, "prompts.json", ["items.parquet"]
    )
    return StepOutcome(
        f"{info['prompts']} prompts {info['labels']}" + (" (cached)" if hit else ""),
        {**info, "cached": hit},
    )


def _checker(ctx: RunContext) -> tuple[dict, object]:
    from pipelines.families.kobest.checks import CheckContext, checks_of

    task = _task(ctx)
    return checks_of(task.name, task.checks), CheckContext(_lang(ctx), _rules(ctx))


def check_items(
    items: list[dict], checks: dict, cctx: object, stage: str
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
    """KoBEST 3.5: the recipe's toxic-content detectors (``filters.classifiers``) on every
    written field; item id -> its drop row for the items a detector fires on."""
    from pipelines.quality.toxic import filter_toxic, load_detectors

    settings = ctx.recipe.filters.classifiers
    if not settings.detectors or not items:
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
    models = {name: ctx.recipe.resolve(d.model) for name, d in settings.detectors.items()}
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
            "detectors": sorted(ctx.recipe.filters.classifiers.detectors),
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

    rules = _rules(ctx)
    info, hit = cached(
        ctx.out / "written",
        [r.annotations, r.items],
        [
            list(task.checks),
            rules.actions,
            rules.min_context_sentences,
            list(rules.wh_words),
            rules.brands,
            rules.antonyms,
            ctx.simulated,
            ctx.recipe.filters.classifiers.model_dump(),
        ],
        compute,
        "written.json",
        [
            "items.parquet",
            "review_items.parquet",
            "dropped.parquet",
            "checks.parquet",
            "versions.parquet",
        ],
    )
    return StepOutcome(
        f"{info['kept']} of {info['prompts']} prompts kept {info['dropped']}"
        + (" (cached)" if hit else ""),
        {**info, "cached": hit},
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

    info, hit = cached(
        ctx.out / "reviewed",
        [r.annotations, written],
        [rules.review_votes],
        compute,
        "reviewed.json",
        ["items.parquet", "versions.parquet", "dropped.parquet"],
    )
    return StepOutcome(
        f"{info['kept']} of {info['items']} items kept; decisions {info['decisions']}"
        + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("item", info["items"], info["kept"], info["dropped"]),
    )


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

    info, hit = cached(
        ctx.out / "duplicates",
        [src],
        [rules.near_duplicate_min, rules.swap_min, rules.duplicates],
        compute,
        "duplicates.json",
        ["pairs.parquet", "items.parquet", "dropped.parquet"],
    )
    return StepOutcome(
        f"pairs {info['pairs']}; {info['kept']} of {info['items']} kept"
        + (" (cached)" if hit else ""),
        {**info, "cached": hit},
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


def artifacts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The ``k``-th model-driven artifact review (``review.artifact_review``): on the
    partial input, the cues, the partial-input accuracy against the majority baseline,
    and the items that follow a cue (the next revision round's items; none after the
    last)."""
    from pipelines.families.kobest.review import artifact_review
    from pipelines.families.kobest.simulate import revision_latent
    from pipelines.splits.artifacts import report_markdown

    k = int(arg)
    task, rules = _task(ctx), _rules(ctx)
    src, splits = current_items(ctx, k), ctx.out / "split" / "splits.parquet"
    last = k > rules.iterations
    seed = ctx.seed if ctx.seed is not None else _spec(ctx).seed

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
        revision = pd.DataFrame()
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

    info, hit = cached(
        ctx.out / f"artifacts-{k}",
        [src, splits],
        [rules.skew_share, rules.min_count, rules.cue_margin, last, seed, ctx.simulated],
        compute,
        "artifacts.json",
        ["carriers.parquet", "revision_items.parquet", "report.parquet"],
    )
    acc = info["partial_input"]
    cues = ", ".join(f"{c['morpheme']}->{c['label']}" for c in info["cues"][:5]) or "none"
    return StepOutcome(
        f"review {k}: partial-input accuracy {acc['accuracy']} vs majority "
        f"{acc['majority_baseline']}; cues {cues}; {info['sent_to_revision']} to revision"
        + (" (cached)" if hit else ""),
        {**info, "cached": hit},
    )


def revision_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The ``k``-th revision round: the items the review flagged go to Label Studio
    (push, simulate, wait, pull: the shared steps); their revisions are decided like a
    review (accept / edit / reject), checked again and kept as versions. Skipped, the
    items passed on unchanged, when the review flagged nothing."""
    k = int(arg)
    name = f"revision{k}"
    r = rounds(ctx)[name]
    src = current_items(ctx, k)
    out = ctx.out / f"revision-{k}"
    flagged = pd.read_parquet(r.items)
    info: dict = {"iteration": k, "flagged": len(flagged)}
    if len(flagged):
        for op in ("push", "simulate", "wait", "pull"):
            fn, op_arg = step_function(ctx.task.name, f"{op}-{name}")
            info[op] = fn(ctx, op_arg).summary

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

    inputs = [src, r.items] + ([r.annotations] if len(flagged) else [])
    got, hit = cached(
        out,
        inputs,
        [k],
        compute,
        "revision.json",
        ["items.parquet", "versions.parquet", "dropped.parquet"],
    )
    info.update(got)
    summary = (
        "nothing flagged: skipped"
        if got["skipped"]
        else f"{got['flagged']} revised: {got['decisions']}"
    )
    return StepOutcome(
        summary + (" (cached)" if hit else ""),
        {**info, "cached": hit},
        Rows("item", got["items"], got["kept"], got["dropped"]),
    )


def final_path(ctx: RunContext) -> Path:
    return current_items(ctx, _rules(ctx).iterations + 1)


def records_of(items: pd.DataFrame, task: KobestTask) -> list[dict]:
    """KoBEST's layout: the task's fields in order and ``label`` (an int)."""
    return [
        {**{f: str(r[f]) for f in task.layout}, "label": int(r["label"])}
        for r in items.to_dict("records")
    ]


def release_tables(items: pd.DataFrame, splits: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The items per split (train, dev, test), in item order."""
    frame = items.merge(splits[["item_id", "split"]], on="item_id", validate="one_to_one")
    return {s: g.sort_values("item_id", ignore_index=True) for s, g in frame.groupby("split")}


def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """KoBEST's layout per split -> OUT/dataset: ``<split>.jsonl`` (the task's fields and
    ``label``), ``<split>.parquet`` (with ``item_id``, ``version`` and ``license``),
    ``versions.parquet`` (every version of every released item), ``duplicates.parquet``
    (the near-duplicate review table) and the data card."""
    from pipelines.export.family import export_dataset
    from pipelines.export.records import jsonl

    out, task, rules = ctx.out, _task(ctx), _rules(ctx)
    n = rules.iterations + 1
    inputs = {
        "prompts": out / "prompts" / "prompts.json",
        "written": out / "written" / "written.json",
        "reviewed": out / "reviewed" / "reviewed.json",
        "duplicates": out / "duplicates" / "duplicates.json",
        "items": final_path(ctx),
        "splits": out / "split" / "splits.parquet",
        "pairs": out / "duplicates" / "pairs.parquet",
        **{f"artifacts-{k}": out / f"artifacts-{k}" / "artifacts.json" for k in range(1, n + 1)},
        **{f"revision-{k}": out / f"revision-{k}" / "revision.json" for k in range(1, n)},
    }
    items = pd.read_parquet(inputs["items"])
    tables = release_tables(items, pd.read_parquet(inputs["splits"]))
    versions = pd.concat(
        [
            pd.read_parquet(p)
            for p in [
                out / "written" / "versions.parquet",
                out / "reviewed" / "versions.parquet",
                *(out / f"revision-{k}" / "versions.parquet" for k in range(1, n)),
            ]
            if p.is_file()
        ],
        ignore_index=True,
    )
    versions = versions[versions["item_id"].isin(items["item_id"])] if len(versions) else versions
    licence = ctx.recipe.release_licence().release
    keep = ["item_id", *task.layout, "label", "version"]

    def build(facts: dict) -> tuple[dict, dict, dict]:
        texts = {f"{s}.jsonl": jsonl(records_of(t, task)) for s, t in tables.items()}
        frames = {f"{s}.parquet": t[keep].assign(license=licence) for s, t in tables.items()}
        frames["versions.parquet"] = versions
        frames["duplicates.parquet"] = pd.read_parquet(inputs["pairs"])
        return frames, texts, {}

    sources = [c.name for c in ctx.recipe.corpora]
    facts, hit = export_dataset(
        ctx,
        inputs,
        rounds(ctx),
        build,
        card_facts,
        {f"{s}.jsonl": len(t) for s, t in tables.items()},
        [
            *(f"{s}.{e}" for s in tables for e in ("jsonl", "parquet")),
            "versions.parquet",
            "duplicates.parquet",
        ],
        sources,
        "flows/rebuild.py, pipelines/families/kobest/steps.py, pipelines/families/kobest/",
    )
    total = sum(len(t) for t in tables.values())
    return StepOutcome(
        f"{facts['export']['files']} -> {out / 'dataset'}" + (" (cached)" if hit else ""),
        {**facts["export"], "cached": hit},
        Rows("item", total, total),
    )


def card_facts(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """KoBEST's facts for the card: each step's JSON, the rules, the split, a sample of
    the duplicate pairs and every review's report."""
    from dataclasses import asdict

    from pipelines.export.card_facts import label_facts

    family = {
        n: json.loads(p.read_text(encoding="utf-8"))
        for n, p in inputs.items()
        if p.suffix == ".json"
    }
    items = pd.read_parquet(inputs["items"]).assign(source=_task(ctx).name)
    items = items.assign(label=items["label"].astype(str))
    splits = pd.read_parquet(inputs["splits"])
    pairs = pd.read_parquet(inputs["pairs"])
    reports = {}
    for k in range(1, _rules(ctx).iterations + 2):
        p = ctx.out / f"artifacts-{k}" / "report.parquet"
        reports[str(k)] = pd.read_parquet(p)["markdown"].iloc[0] if p.is_file() else ""
    return {
        "family": family,
        "rules": asdict(_rules(ctx)),
        "kobest_task": _task(ctx).name,
        "labels": label_facts(items, items, splits),
        "pairs": pairs.head(20).to_dict("records"),
        "reports_md": reports,
        "artifacts_md": (ctx.out / "split" / "artifacts.md").read_text(encoding="utf-8"),
        "split": {
            "rule": ctx.recipe.split.rule,
            "settings": {},
            "splits": {k: int(v) for k, v in splits["split"].value_counts().items()},
        },
    }


# ------------------------------------------------------------------------------- card


def iteration_rows(family: dict, n: int) -> list[list]:
    rows = []
    for k in range(1, n + 1):
        a = family.get(f"artifacts-{k}")
        if not a:
            continue
        rev = family.get(f"revision-{k}") or {}
        acc = a["partial_input"]
        cues = (
            ", ".join(
                f"`{c['morpheme']}` -> {c['label']} ({c['share']:.0%} of {c['count']})"
                for c in a["cues"][:6]
            )
            or "none"
        )
        planted = f"{a['cue_items_flagged']} of {a['cue_items']}" if "cue_items" in a else ""
        rows.append(
            [
                k,
                a["items"],
                acc["accuracy"],
                acc["majority_baseline"],
                cues,
                a["carriers"],
                planted,
                "skipped" if rev.get("skipped", True) else inline_counts(rev.get("decisions", {})),
            ]
        )
    return rows


def card(facts: dict) -> CardSection:
    """The prompts, the checks, the linguists' review, the duplicate review and every
    artifact review, per iteration."""
    from pipelines.families.kobest.checks import CHECKS

    f, rules = facts["family"], facts["rules"]
    task = kobest_task(facts["kobest_task"])
    pr, wr, rv, du = f["prompts"], f["written"], f["reviewed"], f["duplicates"]
    n = rules["iterations"] + 1
    check_rows = [
        [name, v["drop"], v["flag"], CHECKS.doc(name)] for name, v in wr["checks"].items()
    ]
    lines = [
        f"KoBEST {task.title} (Kim et al. 2022, {task.section}). Each item was written from a "
        f"prompt carrying the label it must take (balanced: {inline_counts(pr['labels'])}).",
        "",
        f"Prompts: {pr['prompts']}"
        + (
            f"; drafts of the negation helper: {inline_counts(pr['drafts'])}"
            if pr.get("drafts")
            else ""
        )
        + ".",
        "",
        f"Writing: {wr['written']} written of {wr['prompts']} prompts; {wr['kept']} passed the "
        f"guideline checks; dropped {inline_counts(wr['dropped'])}. Toxic-content detectors: "
        + (", ".join(wr["detectors"]) or "none configured in this recipe")
        + ".",
        "",
        table(["check", "dropped", "flagged", "rule"], check_rows) if check_rows else "",
        "",
        f"Linguist review: {rv['kept']} of {rv['items']} kept; "
        f"decisions {inline_counts(rv['decisions'])}; "
        f"dropped {inline_counts(rv['dropped'])}; {rv['edits']} edits kept as versions "
        "(`versions.parquet`).",
        "",
        f"Near-duplicate review (rapidfuzz ratio >= {du['settings']['near_duplicate_min']}; COPA "
        f"swaps: premise of one ~ answer of the other both ways, >= {du['settings']['swap_min']}): "
        f"pairs {inline_counts(du['pairs'])}; action `{du['settings']['action']}`, dropped "
        f"{inline_counts(du['dropped'])}"
        + (
            f"; planted swaps found: {du['swaps_found']} of {du['swaps_planted']}"
            if "swaps_planted" in du
            else ""
        )
        + ". The pairs are in `duplicates.parquet`.",
    ]
    if facts.get("pairs"):
        lines += [
            "",
            table(
                ["item a", "item b", "kind", "score"],
                [[p["item_a"], p["item_b"], p["kind"], p["score"]] for p in facts["pairs"][:10]],
            ),
        ]
    lines += [
        "",
        f"Model-driven artifact review on the partial input ({', '.join(task.partial)}): a "
        f"bag-of-features logistic regression trained on train, measured on dev+test; a cue "
        f"is a feature one label takes more than {rules['skew_share']:.0%} of, in "
        f"{rules['min_count']} items or more; up to {rules['iterations']} revision rounds.",
        "",
        table(
            [
                "review",
                "items",
                "partial-input accuracy",
                "majority baseline",
                "cues",
                "items following a cue",
                "planted cue items flagged",
                "revision round",
            ],
            iteration_rows(f, n),
        ),
    ]
    for k, md in facts.get("reports_md", {}).items():
        if md:
            body = md.replace("\n# ", "\n#### ").replace("\n## ", "\n##### ")
            body = body.replace("# Artifact report", "#### Artifact report", 1)
            lines += [
                "",
                f"<details><summary>Artifact review {k}</summary>",
                "",
                body,
                "</details>",
            ]
    annotation = "\n\n".join(round_paragraph(n, r) for n, r in facts["rounds"].items())
    if facts["annotation"]["simulated"]:
        annotation += (
            "\n\nThe rounds are **simulated** (`pipelines/families/kobest/simulate.py`): "
            "writers write latent items with planted faults ("
            + inline_counts(pr.get("planted", {}))
            + "), linguists accept, edit (a planted misspelling) or reject (an ambiguous item) "
            "with accuracy under 1, revisers remove the planted cue."
        )
    warnings = (
        ["The Label Studio rounds are simulated."] if facts["annotation"]["simulated"] else []
    )
    last = f.get(f"artifacts-{n}") or {}
    if last.get("cues"):
        warnings.append(f"The last artifact review still finds {len(last['cues'])} cues.")
    return CardSection(
        item=f"One item is a KoBEST {task.name} item: {', '.join(task.layout)} and a label "
        f"({'; '.join(f'{k} {v}' for k, v in task.labels.items())}).",
        construction="\n".join(lines),
        annotation=annotation,
        limitations=[
            "Items are written by people from prompts; the demos' people are simulated.",
            "The artifact review sees only surface features (morphemes and patterns) of the "
            "partial input; a cue it cannot represent stays unseen.",
        ],
        sections={
            "warnings": "\n".join(f"- {w}" for w in warnings) or "- none raised.",
            "sources": ", ".join(
                facts["recipe"]["corpora"][i]["name"]
                for i in range(len(facts["recipe"]["corpora"]))
            )
            + ". Language: Korean (ko-KR), written by annotators.",
            "filters": "The guideline checks above (KoBEST 3); bad input (a field missing, a "
            "label outside the task's set) is dropped with a reason.",
            "timeframe": "Written for this rebuild.",
            "classifiers": "Toxic-content detectors: "
            + (", ".join(wr["detectors"]) or "none configured")
            + ".",
            "annotators": "See Annotation.",
            "agreement": f"Linguist decisions need {rules['review_votes']} reviewer(s) agreeing.",
        },
    )


# --------------------------------------------------------------------- registration

for _step, _fn in (
    ("prompts", prompts_step),
    ("written", written_step),
    ("reviewed", reviewed_step),
    ("duplicates", duplicates_step),
    ("split", split_step),
    ("artifacts", artifacts_step),
    ("revision", revision_step),
    ("export", export_step),
):
    for _name in KOBEST_TASKS.names():
        STEPS.add(f"kobest-{_name}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])

for _name in KOBEST_TASKS.names():
    _t = kobest_task(_name)
    register_task(
        TaskKind(
            name=f"kobest-{_name}",
            title=f"KoBEST {_t.title} (Kim et al. 2022, {_t.section})",
            layout="kobest",
            steps=[],
            plan=plan,
            rounds=rounds,
            records=lambda inputs, t=_t: {"all": records_of(inputs.gold, t)},
            card=card,
            needs=["kobest", "split"],
            simulated=lambda recipe: any(
                getattr(recipe.kobest, f"{n}_round") is not None
                and getattr(recipe.kobest, f"{n}_round").simulate is not None
                for n in ("writing", "review", "revision")
            ),
            preflight=preflight,
            configs=configs,
        )
    )
