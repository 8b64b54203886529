"""KoBBQ (Jin et al. 2024): a bias benchmark built from templates and a survey, the
``kobbq`` task kind.

Steps: ``survey-items`` and the ``survey`` Label Studio round (when the recipe has
``kobbq.survey_round``: the release's questions asked again, simulated respondents
answering as the release's did) -> ``survey`` (the survey rules of KoBBQ 3.2.5 on the
release's survey, and on the round's tally: ``pipelines.families.kobbq.survey``) -> ``expand``
(every template x version x fillers x context x question: ``pipelines.families.kobbq.templates``;
with ``use_targets`` the survey's roles limit the fillers) -> ``evaluation`` (one
filler combination per template, seeded) -> ``check-items`` and the ``check`` round (when
the recipe has ``kobbq.check_round``: readers answer evaluation samples; their majority
is scored like a model) -> ``export`` (the release layout, the baselines' bounds and the
data card).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd

from pipelines.core.markdown import settings_table, table
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached
from pipelines.export.family import round_paragraph
from pipelines.families import CardSection, Round, TaskKind, register_task

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
ROUND_CONFIGS = {"survey": "kobbq_survey.xml", "check": "kobbq_check.xml"}


def _spec(ctx: RunContext) -> object:
    return ctx.recipe.kobbq


def templates_path(recipe: object) -> Path:
    corpus = next(c for c in recipe.corpora if c.name == recipe.kobbq.templates)
    return recipe.corpus_path(corpus)


def _templates(recipe: object) -> list:
    from pipelines.families.kobbq.templates import read_templates

    return read_templates(templates_path(recipe))


def _questions(recipe: object) -> list:
    from pipelines.families.kobbq.survey import read_survey

    k = recipe.kobbq
    return read_survey(recipe.resolve(k.survey), k.survey_settings())


def preflight(recipe: object) -> None:
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
            from pipelines.core.recipe import SimulateSpec

            sim = SimulateSpec(annotators=spec.respondents)
        config = ctx.recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name]
        out[name] = Round(
            ctx.out / f"{name}-round" / "items.parquet", config,
            spec.project or f"{ctx.recipe.name}-{name}", spec.respondents, sim,
            "respondent" if name == "survey" else "reader",
            ctx.out / "annotate" / f"{name}.parquet", spec.timeout, spec.poll,
        )  # fmt: skip
    return out


def configs(recipe: object) -> list[tuple[str, Path]]:
    k = recipe.kobbq
    return [
        (f"kobbq.{name}_round.config",
         recipe.resolve(spec.config) if spec.config else CONFIGS / ROUND_CONFIGS[name])
        for name in ("survey", "check")
        if (spec := getattr(k, f"{name}_round")) is not None
    ]  # fmt: skip


def _round_step(op: str, name: str):  # noqa: ANN202 - a step function
    def step(ctx: RunContext, arg: str = "") -> StepOutcome:
        if _round_spec(ctx, name) is None:
            return StepOutcome(f"no {name} round in the recipe", {"skipped": True})
        return STEPS.get(op)(ctx, name)

    step.__doc__ = (f"The {name} round's {op} (the shared step), skipped when the recipe has "
                    f"no kobbq.{name}_round.")  # fmt: skip
    return step


# ------------------------------------------------------------------------------ steps


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

    inputs = [templates_path(ctx.recipe), ctx.recipe.resolve(k.survey)]
    info, hit = cached(ctx.out / "survey-round", inputs, [spec.per_category, k.rules], compute,
                       "items.json", ["items.parquet"])  # fmt: skip
    return StepOutcome(f"{info['questions']} survey questions for Label Studio"
                       + (" (cached)" if hit else ""), info)  # fmt: skip


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
    inputs = [templates_path(ctx.recipe), ctx.recipe.resolve(k.survey)]
    if r is not None:
        inputs += [r.items, r.annotations]

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

    names = ["targets.parquet"] + (["round_targets.parquet"] if r is not None else [])
    info, hit = cached(ctx.out / "survey", inputs, [k.rules], compute, "survey.json", names)
    n, kept = info["questions"], info["kept"]
    t1, t2 = info["per_type"]["type1"], info["per_type"]["type2"]
    return StepOutcome(
        f"{kept}/{n} stereotypes kept; type 1 dropped {t1['dropped']}/{t1['questions']}, "
        f"type 2 {t2['dropped']}/{t2['questions']}" + (" (cached)" if hit else ""),
        info,
        Rows("question", n, kept, {k2: int(v) for k2, v in _reasons(info).items()}),
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


def expand_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every sample of every template (``pipelines.families.kobbq.templates.expand``) ->
    OUT/expand/samples.parquet; with ``use_targets``, the samples whose template's
    question the survey dropped or whose fillers' groups the survey does not give the
    slot's role go to dropped.parquet with the reason. expand.json: the count table
    beside the paper's Table 1, the template file's warnings and its particle lint."""
    from pipelines.families.kobbq import survey as sv
    from pipelines.families.kobbq import templates as tp

    k = _spec(ctx)
    src = "round_targets.parquet" if k.targets_from == "round" else "targets.parquet"
    inputs = [templates_path(ctx.recipe)] + ([ctx.out / "survey" / src] if k.use_targets else [])

    def compute() -> tuple[dict, dict]:
        started = time.perf_counter()
        templates = _templates(ctx.recipe)
        every = tp.expand(templates, k.unknown)
        seconds = round(time.perf_counter() - started, 2)
        dropped = every.head(0).assign(reason=pd.Series(dtype=str))
        kept = every
        if k.use_targets:
            targets = pd.read_parquet(ctx.out / "survey" / src)
            kept, dropped = sv.limit_by_survey(every, templates, targets, k.unknown)
        table_ = tp.counts(kept, templates)
        info = {
            "templates": len({t.template_id for t in templates}),
            "template_rows": len(templates),
            "samples_all": len(every),
            "samples": len(kept),
            "dropped": {str(a): int(b) for a, b in dropped["reason"].value_counts().items()},
            "counts": table_.to_dict(orient="records"),
            "counts_all": tp.counts(every, templates).to_dict(orient="records"),
            "classes": tp.class_counts(templates),
            "warnings": [
                w.replace(str(inputs[0]), inputs[0].name) for w in tp.warnings_of(templates)
            ],
            "particles": tp.particle_report(templates),
            "seconds": seconds,
        }
        return {"samples.parquet": kept, "dropped.parquet": dropped}, info

    info, hit = cached(ctx.out / "expand", inputs, [k.unknown, k.use_targets, k.targets_from],
                       compute, "expand.json", ["samples.parquet", "dropped.parquet"])  # fmt: skip
    total = info["samples_all"]
    return StepOutcome(
        f"{info['templates']} templates, {info['template_rows']} rows -> {info['samples']:,} "
        f"samples (Table 1: 76,048)" + (" (cached)" if hit else ""),
        info,
        Rows("sample", total, info["samples"], info["dropped"]),
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

    info, hit = cached(
        ctx.out / "evaluation",
        [ctx.out / "expand" / "samples.parquet"],
        [k.evaluation_seed],
        compute,
        "evaluation.json",
        ["test.parquet"],
    )
    return StepOutcome(f"{info['samples']:,} samples of {info['templates']} templates"
                       + (" (cached)" if hit else ""), info)  # fmt: skip


def check_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The reading-check round's items: the evaluation samples of ``per_category``
    templates per category (``pipelines.families.kobbq.templates.check_items``)."""
    from pipelines.families.kobbq.templates import check_items

    spec = _round_spec(ctx, "check")
    if spec is None:
        return StepOutcome("no check round in the recipe", {"skipped": True})

    def compute() -> tuple[dict, dict]:
        test = pd.read_parquet(ctx.out / "evaluation" / "test.parquet")
        if spec.per_category:
            first = (test.drop_duplicates("template_id").groupby("category")
                     .head(spec.per_category)["template_id"])  # fmt: skip
            test = test[test["template_id"].isin(set(first))]
        items = check_items(test)
        return {"items.parquet": items}, {"samples": len(items)}

    info, hit = cached(ctx.out / "check-round", [ctx.out / "evaluation" / "test.parquet"],
                       [spec.per_category], compute, "items.json", ["items.parquet"])  # fmt: skip
    return StepOutcome(f"{info['samples']} samples for the reading check"
                       + (" (cached)" if hit else ""), info)  # fmt: skip


def records_of(samples: pd.DataFrame) -> list[dict]:
    from pipelines.families.kobbq.templates import release_records

    return release_records(samples)


def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The release layout -> OUT/dataset: ``all_samples`` and ``test_samples`` as TSV (as
    the release writes them), JSON Lines and Parquet (with ``license``), the survey's
    targets, the baselines' scores on the evaluation set (always "unknown", always the
    biased answer: the bounds), the readers' scores when there was a check round, and
    the data card (``pipelines.export.family``)."""
    from pipelines.export.family import export_dataset
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq.templates import release_tsv

    out, recipe = ctx.out, ctx.recipe
    inputs = {
        "samples": out / "expand" / "samples.parquet",
        "expand": out / "expand" / "expand.json",
        "test": out / "evaluation" / "test.parquet",
        "targets": out / "survey" / "targets.parquet",
        "survey": out / "survey" / "survey.json",
    }
    samples = pd.read_parquet(inputs["samples"])
    test = pd.read_parquet(inputs["test"])
    licence = recipe.release_licence().release

    def build(facts: dict) -> tuple[dict, dict, dict]:
        records = {"all_samples": records_of(samples), "test_samples": records_of(test)}
        safe = ctx.recipe.export.spreadsheet_safe
        texts = {f"{s}.tsv": release_tsv(rows, safe) for s, rows in records.items()}
        texts.update({f"{s}.jsonl": jsonl([{**r, "license": licence} for r in rows])
                      for s, rows in records.items()})  # fmt: skip
        tables = {f"{s}.parquet": pd.DataFrame(rows).assign(license=licence)
                  for s, rows in records.items()}  # fmt: skip
        tables["targets.parquet"] = pd.read_parquet(inputs["targets"])
        return tables, texts, {"scores.json": facts["scores"]}

    parts = {"all_samples": len(samples), "test_samples": len(test)}
    names = [f"{s}.{e}" for s in parts for e in ("tsv", "jsonl", "parquet")]
    facts, hit = export_dataset(
        ctx, inputs, rounds(ctx), build, card_facts_of, {f"{s}.tsv": n for s, n in parts.items()},
        [*names, "targets.parquet", "scores.json"], [recipe.kobbq.templates],
        "flows/rebuild.py, pipelines/families/kobbq/steps.py, pipelines/families/kobbq/",
    )  # fmt: skip
    n = len(samples)
    return StepOutcome(f"{facts['export']['files']} -> {out / 'dataset'}"
                       f"{' (cached)' if hit else ''}",
                       {**facts["export"], "cached": hit}, Rows("sample", n, n))  # fmt: skip


def _dropped(path: Path) -> list[dict]:
    """The questions the survey rules dropped (for the card)."""
    t = pd.read_parquet(path)
    t = t[~t["kept"]]
    return [{"question_id": r.question_id, "category": r.category, "stereotype": r.stereotype,
             "type": int(r.type), "kept": False, "reason": r.reason,
             "targets": list(r.targets), "non_targets": list(r.non_targets),
             "templates": list(r.templates)} for r in t.itertuples(index=False)]  # fmt: skip


def card_facts_of(ctx: RunContext, inputs: dict[str, Path]) -> dict:
    """KoBBQ's facts for the card: the expansion, the survey and what its rules dropped,
    and the scores of the baselines (and of the readers' majority when there was a check
    round) on the evaluation set."""
    from pipelines.families.kobbq import scoring

    test = pd.read_parquet(inputs["test"])
    scores = {b: scoring.score(test, scoring.baseline(test, b), averaged=False)
              for b in ("unknown", "biased")}  # fmt: skip
    check = inputs.get("check-annotations")
    if check is not None and check.is_file():
        votes = scoring.majority_answers(pd.read_parquet(check))
        scores["readers (majority)"] = scoring.score(test, votes[["sample_id", "prediction"]],
                                                     averaged=False)  # fmt: skip
    splits = {"all_samples": len(pd.read_parquet(inputs["samples"], columns=["sample_id"])),
              "test_samples": len(test)}  # fmt: skip
    return {
        "expand": json.loads(inputs["expand"].read_text(encoding="utf-8")),
        "survey": json.loads(inputs["survey"].read_text(encoding="utf-8")),
        "scores": scores,
        "dropped_stereotypes": _dropped(inputs["targets"]),
        "split": {"rule": "release", "splits": splits, "settings": {}},
    }


# ------------------------------------------------------------------------------- card


def _count_table(expand: dict) -> str:
    rows = [[r["category"], r["templates"], r["template_rows"], r["samples"],
             r["unique_context_question"], r["paper"], r["difference"]]
            for r in expand["counts"]]  # fmt: skip
    return table(["category", "templates", "template rows", "samples", "unique context + "
                  "question", "paper (Table 1)", "difference"], rows)  # fmt: skip


def _score_table(scores: dict) -> str:
    cols = ["acc_amb", "acc_dis", "diff_bias_amb", "max_diff_bias_amb", "diff_bias_dis",
            "max_diff_bias_dis", "ooc_ratio"]  # fmt: skip
    return table(["model", *cols], [[m, *[s["overall"][c] for c in cols]]
                                    for m, s in scores.items()])  # fmt: skip


def card(facts: dict) -> CardSection:
    """Templates, the survey and what its rules removed, the expansion against Table 1,
    the evaluation set and the scores' bounds."""
    from pipelines.families.kobbq.survey import stereotype_table
    from pipelines.families.kobbq.templates import CLASSES

    ex, sv, k = facts["expand"], facts["survey"], facts["recipe"]["kobbq"]
    classes = table(["category", *CLASSES], [[c, *[v.get(x, 0) for x in CLASSES]]
                                             for c, v in ex["classes"].items()])  # fmt: skip
    per_type = table(
        ["type", "questions", "dropped", "share dropped", "paper's share", "reasons"],
        [[t, v["questions"], v["dropped"], v["dropped_share"], v["paper_dropped_share"],
          ", ".join(f"{a} {b}" for a, b in v["reasons"].items()) or "none"]
         for t, v in sv["per_type"].items()])  # fmt: skip
    per_cat = table(
        ["category", "questions", "kept", "type 1", "type 2", "dropped", "templates removed"],
        [[c, v["questions"], v["kept"], v["type1"], v["type2"],
          ", ".join(f"{a} {b}" for a, b in v["dropped"].items()) or "none",
          ", ".join(f"{a} {b}" for a, b in v["templates_removed"].items()) or "none"]
         for c, v in sv["per_category"].items()])  # fmt: skip
    roles = sv["role_disagreements"]
    construction = "\n".join([
        f"{ex['templates']} templates in {len(ex['classes'])} categories, {ex['template_rows']} "
        "template rows (context versions a/b/c/d), by class (KoBBQ 3.1: Simply-Transferred, "
        "Target-Modified, Sample-Removed, Newly-Created):",
        "",
        classes,
        "",
        "Each template expands into every filler combination of its slots x ambiguous / "
        "disambiguated context x biased / counter-biased question (`benchforge kobbq "
        f"expand`), in {ex['seconds']} s. Samples per category against the paper's Table 1 "
        "(a sample is one context + question; the release counts every combination):",
        "",
        _count_table(ex),
        "",
        f"Expansion settings: unknown answer `{k['unknown']}`, survey roles limit the fillers: "
        f"{k['use_targets']}. Dropped samples per reason: "
        + (", ".join(f"{a} {b}" for a, b in ex["dropped"].items()) or "none") + ".",
        "",
        "Template file warnings: " + ("; ".join(ex["warnings"]) or "none") + ". Particle "
        f"lint: of {ex['particles']['checked']} written forms that are a filler plus its "
        f"`*_post` particle, {ex['particles']['differ']} use the form that does not agree.",
    ])  # fmt: skip
    rnd = sv.get("round")
    annotation = "\n".join([
        "The survey (KoBBQ 3.2.5) asked 100 people per stereotype which groups it applies "
        f"to. Rules (`kobbq.rules`): target >= {k['rules'].get('target_ratio', 2.0)} x the "
        "equal split, non-target <= "
        f"{k['rules'].get('non_target_ratio', 0.5)} x it (type 1); the target's share of "
        "the stereotype-holders > 2/3 (type 2); dropped when more than half saw no "
        "stereotype. How each question's type was decided: "
        + ", ".join(f"{a} {b}" for a, b in sv["type_source"].items()) + ".",
        "",
        per_type,
        "",
        per_cat,
        "",
        "Stereotypes the rules dropped (every question, kept or not, is in "
        "`survey/targets.parquet`; `benchforge kobbq survey` writes them all to survey.md):",
        "",
        stereotype_table(pd.DataFrame(facts["dropped_stereotypes"]), dropped_only=True)
        if facts["dropped_stereotypes"] else "none",
        "",
        f"The rules' roles disagree with the groups the template file uses for "
        f"{roles['fillers']} fillers of {roles['templates']} template rows (a group the "
        "file uses as a non-target that the rule calls `neither`); see "
        "`survey/survey.json`.",
    ])  # fmt: skip
    for name in ("survey", "check"):
        r = facts["rounds"].get(name)
        if r:
            annotation += "\n\n" + round_paragraph(name, r, "task")
    if rnd:
        annotation += (
            f"\n\nThe survey round's tally through the same rules: {rnd['questions']} "
            f"questions, {rnd['respondents']} answers; the same keep/drop decision as the "
            f"release for {rnd['same_decision']}, the same targets for {rnd['same_targets']}; "
            f"{rnd['invalid_answers']} invalid answers left out."
        )
    if facts["annotation"]["simulated"]:
        annotation += ("\n\nThe round's people are **simulated**: survey respondents answer "
                       "as one of the release's respondents (rebuilt from its votes); readers "
                       "know the correct answer and miss it with their error rate.")  # fmt: skip
    scores = facts["scores"]
    artifacts = "\n".join([
        "Scores on the evaluation set (KoBBQ 4): accuracy in ambiguous (`acc_amb`) and "
        "disambiguated (`acc_dis`) contexts, diff-bias and its maximum given the accuracy. "
        "The two baselines bound the scores: always \"unknown\" (no bias), always the "
        "biased answer (the most bias).",
        "",
        _score_table(scores),
        "",
        "Score any model's predictions with `benchforge kobbq score`.",
    ])  # fmt: skip
    splits = (
        "The release has no train split: `all_samples` holds every sample "
        f"({facts['split']['splits']['all_samples']:,}); `test_samples` the evaluation set, "
        "one filler combination per template drawn with seed "
        f"{k['evaluation_seed']} ({facts['split']['splits']['test_samples']:,} samples)."
    )
    warnings = []
    total = next(r for r in ex["counts"] if r["category"] == "total")
    if total["difference"]:
        warnings.append(f"{total['samples']:,} samples against Table 1's {total['paper']:,} "
                        f"({total['difference']:+,}); the count table says where.")  # fmt: skip
    if facts["annotation"]["simulated"]:
        warnings.append("The Label Studio rounds are simulated.")
    return CardSection(
        item=(
            "One item is a context (ambiguous, or with its disambiguating part) and a "
            "question about two people of different groups, with three choices (the two "
            'people and "unknown"), the correct answer and the biased answer.'
        ),  # fmt: skip
        construction=construction,
        annotation=annotation,
        limitations=[
            "Samples of one template share their wording; score per template (the paper "
            "averages over templates).",
            "The survey reflects Korean respondents in 2023; stereotypes change.",
        ],
        sections={
            "warnings": "\n".join(f"- {w}" for w in warnings) or "- none raised.",
            "composition": (
                f"{facts['split']['splits']['all_samples']:,} samples. Task: {facts['task']}."
            ),  # fmt: skip
            "sources": "\n".join(
                [
                    "Templates and survey of the KoBBQ release (Jin et al. 2024), "
                    f"corpus `{k['templates']}`, survey `{Path(k['survey']).name}`. Language: "
                    "Korean (written, formal).",
                    "",
                    settings_table({"templates": k["templates"], "survey": k["survey"]}),
                ]
            ),  # fmt: skip
            "filters": (
                "No text filter runs: the templates are written by the benchmark's "
                "authors. The survey rules are the filter (see Annotation)."
            ),  # fmt: skip
            "timeframe": "The template and survey release (2023-2024).",
            "classifiers": "No toxic-content classifier runs: the contexts describe "
            "stereotypes on purpose.",
            "annotators": (
                "Survey respondents: the release's 100 per question (its README "
                "gives their demographics)."
            ),  # fmt: skip
            "agreement": "There are no labels to agree on: answers follow from the templates.",
            "splits": splits,
            "artifacts": artifacts,
        },
    )


# --------------------------------------------------------------------- registration


STEP_NAMES = [
    "survey-items", "push-survey", "simulate-survey", "wait-survey", "pull-survey",
    "survey", "expand", "evaluation",
    "check-items", "push-check", "simulate-check", "wait-check", "pull-check",
    "export",
]  # fmt: skip

for _step, _fn in (("survey-items", survey_items_step), ("survey", survey_step),
                   ("expand", expand_step), ("evaluation", evaluation_step),
                   ("check-items", check_items_step), ("export", export_step)):  # fmt: skip
    STEPS.add(f"kobbq:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])
for _round in ("survey", "check"):
    for _op in ("push", "simulate", "wait", "pull"):
        _fn = _round_step(_op, _round)
        STEPS.add(f"kobbq:{_op}-{_round}", _fn, (_fn.__doc__ or "").split("\n")[0])

register_task(TaskKind(
    name="kobbq", title="KoBBQ-style bias benchmark (Jin et al. 2024)", layout="kobbq",
    steps=STEP_NAMES, rounds=rounds,
    records=lambda inputs: {"all_samples": records_of(inputs.gold)}, card=card,
    needs=["kobbq"],
    simulated=lambda recipe: bool(recipe.kobbq and any(
        r and r.simulate for r in (recipe.kobbq.survey_round, recipe.kobbq.check_round))),
    preflight=preflight, configs=configs,
))  # fmt: skip
