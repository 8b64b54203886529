"""KoBBQ (Jin et al. 2024): a bias benchmark built from templates and a survey, the
``kobbq`` task kind.

Steps: ``survey-items`` and the ``survey`` Label Studio round (when the recipe has
``kobbq.survey_round``: the release's questions asked again, simulated respondents
answering as the release's did) -> ``survey`` (the survey rules of KoBBQ 3.2.5 on the
release's survey, and on the round's tally: ``pipelines.families.kobbq.survey``) -> ``expand``
(every template x version x fillers x context x question: ``pipelines.families.kobbq.templates``;
the survey's outcome removes the templates of the questions its rules drop, and, with
``templates_stage: before-survey``, the fillers whose group does not have the slot's
role) -> ``evaluation`` (one sampled example per template, seeded) -> ``check-items``
and the ``check`` round (when the recipe has ``kobbq.check_round``: readers answer the
counter-biased context with the counter-biased question, KoBBQ 3.2.5; their majority is
scored like a model) -> ``export`` (the release layout, the baselines' bounds and the
data card).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.steps import (
    STEPS,
    Paths,
    Rows,
    RunContext,
    StepOutcome,
    cached,
    declares,
    out_files,
    run_retried,
)

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
ROUND_CONFIGS = {"survey": "kobbq_survey.xml", "check": "kobbq_check.xml"}


def _spec(ctx: RunContext) -> object:
    return ctx.recipe.kobbq


def templates_path(recipe: Recipe) -> Path:
    corpus = next(c for c in recipe.corpora if c.name == recipe.kobbq.templates)
    return recipe.corpus_path(corpus)


def _templates(recipe: Recipe) -> list:
    from pipelines.families.kobbq.templates import read_templates

    return read_templates(templates_path(recipe))


def _questions(recipe: Recipe) -> list:
    from pipelines.families.kobbq.survey import read_survey

    k = recipe.kobbq
    return read_survey(recipe.resolve(k.survey), k.survey_settings())


def preflight(recipe: Recipe) -> None:
    """Read the templates and the survey before any work: a slot that does not parse, a
    survey entry without ``no_stereo`` or an unknown category fails here."""
    _templates(recipe)
    _questions(recipe)


def _round_spec(ctx: RunContext, name: str) -> object | None:
    return getattr(_spec(ctx), f"{name}_round")


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The survey and reading-check rounds the recipe asks for."""
    out = {}
    for name in ("survey", "check"):
        spec = _round_spec(ctx, name)
        if spec is None:
            continue
        sim = spec.simulate if ctx.simulated else None
        if ctx.simulated and sim is None:
            from pipelines.annotation.settings import SimulateSpec

            sim = SimulateSpec(annotators=spec.respondents)
        config = ctx.recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name]
        out[name] = Round(
            ctx.out / f"{name}-round" / "items.parquet", config,
            spec.project or f"{ctx.project_base}-{name}", spec.respondents, sim,
            "respondent" if name == "survey" else "reader",
            ctx.out / "annotate" / f"{name}.parquet", spec.timeout, spec.poll,
        )  # fmt: skip
    return out


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    k = recipe.kobbq
    return [
        (f"kobbq.{name}_round.config",
         recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name])
        for name in ("survey", "check")
        if (spec := getattr(k, f"{name}_round")) is not None
    ]  # fmt: skip


def round_step(op: str, name: str):  # noqa: ANN202 - a step function
    def step(ctx: RunContext, arg: str = "") -> StepOutcome:
        if _round_spec(ctx, name) is None:
            return StepOutcome(f"no {name} round in the recipe", {"skipped": True})
        return run_retried(STEPS.get(op), ctx, name)  # with its declared retries

    step.__doc__ = (f"The {name} round's {op} (the shared step), skipped when the recipe has "
                    f"no kobbq.{name}_round.")  # fmt: skip
    return step


# ------------------------------------------------------------------------------ steps


def _inputs(ctx: RunContext) -> dict[str, Path]:
    survey = ctx.recipe.resolve(_spec(ctx).survey)
    return {"templates": templates_path(ctx.recipe), "survey": survey}


def _if_round(name: str, files: Paths) -> Paths:
    """``files``, or none when the recipe has no round ``name`` (the step is skipped)."""
    return lambda ctx, arg: files(ctx, arg) if _round_spec(ctx, name) is not None else {}


@declares(
    reads=_if_round("survey", lambda ctx, arg: _inputs(ctx)),
    writes=_if_round("survey", out_files("survey-round/items.parquet", "survey-round/items.json")),
    # only asked when the recipe has the round (no writes: nothing cached)
    settings=lambda ctx, arg: [_round_spec(ctx, "survey").per_category, _spec(ctx).rules],
)
def survey_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The survey round's items: ``per_category`` of the release's questions per
    category, in the questionnaire of their type, with latent respondents rebuilt from
    the release's votes (``pipelines.families.kobbq.survey.survey_items``)."""
    from pipelines.families.kobbq.survey import apply_rules, first_per_category, survey_items

    spec = _round_spec(ctx, "survey")
    if spec is None:
        return StepOutcome("no survey round in the recipe", {"skipped": True})
    k = _spec(ctx)

    def compute() -> tuple[dict, dict]:
        questions = first_per_category(_questions(ctx.recipe), spec.per_category)
        targets = apply_rules(questions, _templates(ctx.recipe), k.survey_settings())
        targets = targets[targets["question_id"].isin({q.question_id for q in questions})]
        items = survey_items(questions, targets)
        return {"items.parquet": items}, {
            "questions": len(items),
            "categories": int(items["category"].nunique()),
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['questions']} survey questions for Label Studio",
        merge=False,
    )


def _survey_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    r = rounds(ctx).get("survey")
    extra = {"round items": r.items, "round annotations": r.annotations} if r else {}
    return {**_inputs(ctx), **extra}


def _survey_writes(ctx: RunContext, arg: str) -> dict[str, Path]:
    names = ["targets.parquet"] + (["round_targets.parquet"] if "survey" in rounds(ctx) else [])
    return {n: ctx.out / "survey" / n for n in [*names, "survey.json"]}


@declares(reads=_survey_reads, writes=_survey_writes, settings=lambda ctx, arg: [_spec(ctx).rules])
def survey_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The survey rules (KoBBQ 3.2.5) on the release's survey -> OUT/survey/targets.parquet
    (one row per question: type, groups with votes, share and role, kept, reason) and
    survey.json (what each rule removed per category and type, beside the paper's
    shares); with a survey round, the same on the round's tally (round_targets.parquet)
    and how often the two agree."""
    from pipelines.families.kobbq.survey import (
        apply_rules,
        read_survey,
        report,
        tally,
        with_item_types,
    )

    k = _spec(ctx)
    settings = k.survey_settings()
    r = rounds(ctx).get("survey")

    def compute() -> tuple[dict, dict]:
        templates = _templates(ctx.recipe)
        targets = apply_rules(read_survey(ctx.recipe.resolve(k.survey), settings), templates,
                              settings)  # fmt: skip
        info = report(targets, templates)
        tables = {"targets.parquet": targets}
        if r is not None:
            items = pd.read_parquet(r.items)
            questions, invalid = tally(items, pd.read_parquet(r.annotations))
            got = apply_rules(questions, [], with_item_types(settings, items))
            tables["round_targets.parquet"] = got
            info["round"] = {**invalid, **compare(targets, got)}
        return tables, info

    done = cached(ctx, compute)
    info = done.info
    n, kept = info["questions"], info["kept"]
    t1, t2 = info["per_type"]["type1"], info["per_type"]["type2"]
    return done.outcome(
        f"{kept}/{n} stereotypes kept; type 1 dropped {t1['dropped']}/{t1['questions']}, "
        f"type 2 {t2['dropped']}/{t2['questions']}",
        Rows("question", n, kept, {k2: int(v) for k2, v in _reasons(info).items()}),
        merge=False,
    )


def _reasons(info: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in info["per_type"].values():
        for reason, n in t["reasons"].items():
            out[reason] = out.get(reason, 0) + n
    return out


def compare(release: pd.DataFrame, got: pd.DataFrame) -> dict:
    """How the round's outcome compares with the release's, question by question: the
    same kept/dropped decision, and the same targets."""
    rel = release.set_index("question_id")
    same_kept = same_targets = 0
    for row in got.itertuples():
        ref = rel.loc[row.question_id]
        same_kept += int(bool(ref["kept"]) == bool(row.kept))
        same_targets += int(set(ref["targets"]) == set(row.targets))
    n = len(got)
    return {"questions": n, "respondents": int(got["respondents"].sum()),
            "same_decision": same_kept, "same_targets": same_targets,
            "same_decision_share": round(same_kept / n, 4) if n else None}  # fmt: skip


def _expand_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    k = _spec(ctx)
    src = "round_targets.parquet" if k.targets_from == "round" else "targets.parquet"
    return {"templates": templates_path(ctx.recipe), "targets": ctx.out / "survey" / src}


@declares(
    reads=_expand_reads,
    writes=out_files("expand/samples.parquet", "expand/dropped.parquet", "expand/expand.json"),
    settings=lambda ctx, arg: [
        _spec(ctx).unknown, _spec(ctx).templates_stage, _spec(ctx).targets_from
    ],
)  # fmt: skip
def expand_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every sample of every template (``pipelines.families.kobbq.templates.expand``) ->
    OUT/expand/samples.parquet, then the survey rules in KoBBQ 3.2.5's order
    (``pipelines.families.kobbq.survey.limit_by_survey``): the samples of the templates
    whose question a rule dropped, and with ``templates_stage: before-survey`` those whose
    fillers' groups do not have the slot's role, go to dropped.parquet with the reason.
    expand.json: what each rule did (``rules``), the count table beside the paper's
    Table 1, the template file's warnings and its particle lint."""
    from pipelines.families.kobbq import survey as sv
    from pipelines.families.kobbq import templates as tp

    k = _spec(ctx)
    src = "round_targets.parquet" if k.targets_from == "round" else "targets.parquet"
    template_file = templates_path(ctx.recipe)

    def compute() -> tuple[dict, dict]:
        started = time.perf_counter()
        templates = _templates(ctx.recipe)
        every = tp.expand(templates, k.unknown)
        seconds = round(time.perf_counter() - started, 2)
        targets = pd.read_parquet(ctx.out / "survey" / src)
        stage = k.templates_stage
        kept, dropped = sv.limit_by_survey(every, templates, targets, k.unknown, stage)
        roles = sv.role_check(every, templates, targets, k.unknown) if stage == "released" else None
        table_ = tp.counts(kept, templates)
        info = {
            "templates": len({t.template_id for t in templates}),
            "template_rows": len(templates),
            "samples_all": len(every),
            "samples": len(kept),
            "dropped": {str(a): int(b) for a, b in dropped["reason"].value_counts().items()},
            "templates_stage": stage,
            "rules": sv.rule_report(targets, every, dropped, stage, roles),
            "counts": table_.to_dict(orient="records"),
            "counts_all": tp.counts(every, templates).to_dict(orient="records"),
            "classes": tp.class_counts(templates),
            "warnings": [
                w.replace(str(template_file), template_file.name) for w in tp.warnings_of(templates)
            ],
            "particles": tp.particle_report(templates),
            "seconds": seconds,
        }
        return {"samples.parquet": kept, "dropped.parquet": dropped}, info

    done = cached(ctx, compute)
    info = done.info
    total = info["samples_all"]
    return done.outcome(
        f"{info['templates']} templates, {info['template_rows']} rows -> {info['samples']:,} "
        f"samples (Table 1: 76,048)",
        Rows("sample", total, info["samples"], info["dropped"]),
        merge=False,
    )


@declares(
    reads=out_files("expand/samples.parquet"),
    writes=out_files("evaluation/test.parquet", "evaluation/evaluation.json"),
    settings=lambda ctx, arg: [_spec(ctx).evaluation_seed],
)
def evaluation_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The evaluation set: one filler combination per template (seeded), all its
    samples, as the release's test file (``pipelines.families.kobbq.templates.evaluation_set``)."""
    from pipelines.families.kobbq.templates import evaluation_set

    k = _spec(ctx)

    def compute() -> tuple[dict, dict]:
        test = evaluation_set(pd.read_parquet(ctx.out / "expand" / "samples.parquet"),
                              k.evaluation_seed)  # fmt: skip
        return {"test.parquet": test}, {
            "samples": len(test),
            "templates": int(test["template_id"].nunique()),
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['samples']:,} samples of {info['templates']} templates",
        merge=False,
    )


@declares(
    reads=_if_round("check", out_files("evaluation/test.parquet")),
    writes=_if_round("check", out_files("check-round/items.parquet", "check-round/items.json")),
    settings=lambda ctx, arg: [_round_spec(ctx, "check").per_category],
)
def check_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The reading-check round's items (KoBBQ 3.2.5, last paragraph): of the evaluation
    samples of ``per_category`` templates per category (0: every template), the
    counter-biased context with the counter-biased question
    (``pipelines.families.kobbq.templates.reading_check_samples``, ``check_items``)."""
    from pipelines.families.kobbq.templates import check_items, reading_check_samples

    spec = _round_spec(ctx, "check")
    if spec is None:
        return StepOutcome("no check round in the recipe", {"skipped": True})

    def compute() -> tuple[dict, dict]:
        test = pd.read_parquet(ctx.out / "evaluation" / "test.parquet")
        if spec.per_category:
            first = (test.drop_duplicates("template_id").groupby("category")
                     .head(spec.per_category)["template_id"])  # fmt: skip
            test = test[test["template_id"].isin(set(first))]
        items = check_items(reading_check_samples(test))
        return {"items.parquet": items}, {"samples": len(items)}

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['samples']} samples for the reading check",
        merge=False,
    )
