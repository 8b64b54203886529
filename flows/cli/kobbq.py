"""``benchforge kobbq ...``: the KoBBQ tools on their own (Jin et al. 2024): the survey
rules, template expansion and the evaluation set, Label Studio items for a new survey or
a reading check, baselines and scoring. ``benchforge rebuild recipes/kobbq-demo.yaml``
runs them as one recipe."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from pipelines.families.kobbq.scoring import BASELINES

RULES = (
    ("respondents", int, "respondents per question of the survey JSON (default 100)"),
    ("target-ratio", float, "type 1: a target has at least this many times the equal split "
     "(default 2)"),
    ("non-target-ratio", float, "type 1: a non-target has at most this many times the equal "
     "split (default 0.5)"),
    ("type2-share", float, "type 2: kept when the target's share of those who saw a "
     "stereotype is above this (default 2/3)"),
    ("no-stereo-max", float, "dropped when the no-stereotype share is above this (default 0.5)"),
)  # fmt: skip


def add_parsers(sub: argparse._SubParsersAction) -> None:
    kobbq = sub.add_parser(
        "kobbq",
        help="KoBBQ: survey rules, template expansion, evaluation set, scoring",
        description="The KoBBQ bias benchmark's tools (Jin et al. 2024): the survey rules "
        "that decide which stereotypes stay and which groups are targets (KoBBQ 3.2.5), "
        "template expansion into samples with Korean particle agreement and the evaluation "
        "set, Label Studio items for a survey or a reading check, baselines, and accuracy "
        "and diff-bias scoring (KoBBQ 4). Bad input (a slot that does not parse, a survey "
        "entry without no_stereo, an unknown category, an unknown sample id) exits 2 and "
        "writes nothing.",
    )
    ksub = kobbq.add_subparsers(dest="action", required=True, metavar="ACTION")
    survey = ksub.add_parser(
        "survey",
        help="apply the survey rules -> targets.parquet and a report",
        description="Apply the KoBBQ survey rules to the release's survey JSON (or to "
        "annotations pulled from a Label Studio survey round: --annotations with --items) "
        "and write DIR/targets.parquet (one row per question: category, stereotype, type, "
        "every group with its votes, share and role, kept, reason), DIR/survey.json and "
        "DIR/survey.md (what each rule removed per category and type, beside the paper's "
        "8.3%% / 13.6%%). A question's type comes from the templates (--templates): type 1 "
        "for Target-Modified templates and the religion, domestic-area and race categories "
        "when more than two groups are offered.",
    )
    survey.add_argument("survey", type=Path, help="the survey JSON (KoBBQ_survey_result.json)")
    survey.add_argument("--out", type=Path, required=True, help="output folder")
    survey.add_argument("--templates", type=Path, default=None,
                        help="the template TSV: question types, fixed targets, and the "
                             "templates each rule removes")  # fmt: skip
    survey.add_argument("--annotations", type=Path, default=None,
                        help="annotations pulled from a survey round (benchforge annotate "
                             "pull); the rules run on their tally instead of the JSON")  # fmt: skip
    survey.add_argument("--items", type=Path, default=None,
                        help="the survey round's items (benchforge kobbq survey-items), with "
                             "--annotations")  # fmt: skip
    for name, kind, doc in RULES:
        survey.add_argument(f"--{name}", type=kind, default=None, help=doc)

    expand = ksub.add_parser(
        "expand",
        help="expand templates into samples and draw the evaluation set",
        description="Expand every template x context version x filler combination x "
        "ambiguous/disambiguated context x biased/counter-biased question into samples "
        "(sample ids as the release's) and draw the evaluation set (one combination per "
        "template). Writes DIR/samples.parquet, DIR/all_samples.tsv and .jsonl (the "
        "release layout), DIR/test_samples.{tsv,jsonl,parquet}, DIR/expand.json and "
        "DIR/counts.md (samples per category beside the paper's Table 1). With --targets, "
        "the survey's outcome limits the templates (and, with --stage before-survey, the "
        "fillers); what it removes goes to DIR/dropped.parquet with the reason.",
    )
    expand.add_argument("templates", type=Path, help="the template TSV (KoBBQ_templates.tsv)")
    expand.add_argument("--out", type=Path, required=True, help="output folder")
    expand.add_argument("--targets", type=Path, default=None,
                        help="a `kobbq survey` output folder (its targets.parquet)")  # fmt: skip
    expand.add_argument("--stage", choices=("released", "before-survey"), default="released",
                        help="with --targets, what the template file is: released (already "
                             "through the survey: the templates of dropped questions go, the "
                             "group roles are only checked) or before-survey (the roles choose "
                             "the fillers too); KoBBQ 3.2.5")  # fmt: skip
    expand.add_argument("--unknown", default="알 수 없음",
                        help="the \"unknown\" answer (default 알 수 없음)")  # fmt: skip
    expand.add_argument("--seed", type=int, default=0, help="evaluation set seed (default 0)")
    expand.add_argument(
        "--raw-cells",
        action="store_true",
        help="write TSV cells exactly as they are; by default a cell that a "
        "spreadsheet would run as a formula (=, +, -, @ first) gets a leading "
        "' (the JSON Lines and Parquet files always keep the exact text)",
    )

    items = ksub.add_parser(
        "survey-items",
        help="Label Studio items for a survey round (annotation_configs/kobbq_survey.xml)",
        description="Write the survey questions as Label Studio items (JSON Lines) for "
        "`benchforge annotate push ... --config annotation_configs/kobbq_survey.xml`: the "
        "questionnaire of each question's type, its groups plus the no-stereotype option, "
        "and the latent respondents simulated ones answer as.",
    )
    items.add_argument("survey", type=Path, help="the survey JSON")
    items.add_argument("--out", type=Path, required=True, help="items file (.jsonl)")
    items.add_argument("--templates", type=Path, default=None, help="the template TSV (types)")
    items.add_argument("--per-category", type=int, default=0,
                       help="the first N questions of each category (default 0: all)")  # fmt: skip
    check = ksub.add_parser(
        "check-items",
        help="Label Studio items for a reading check (annotation_configs/kobbq_check.xml)",
        description="Write the reading-comprehension check of KoBBQ 3.2.5 as Label Studio "
        "items (JSON Lines): of the samples given, the counter-biased context (versions a, "
        "c, disambiguated) with the counter-biased question; context, question, the three "
        "choices. Simulated readers know the correct answer.",
    )
    check.add_argument(
        "samples", type=Path, help="samples (.parquet from kobbq expand, or the release's TSV)"
    )
    check.add_argument("--out", type=Path, required=True, help="items file (.jsonl)")

    ev = ksub.add_parser(
        "eval-set",
        help="the evaluation set of KoBBQ 4.1: 5 prompts x cyclic permutations of the choices",
        description="Write KoBBQ 4.1's evaluation set: one randomly sampled example per "
        "template (its eight context-question pairs), each under five prompts (their own "
        'instructions and "unknown" expressions) and the three cyclic permutations of '
        "the choices (A, B, C): 15 quadruples of prompt, context, question and choice "
        "permutation per sample, 32,160 for the paper's 268 templates. Writes "
        "DIR/eval_set.jsonl and .tsv (quadruple_id, sample_id, prompt_id, permutation, "
        "the prompt text, A, B, C, the answer's letter) and DIR/eval_set.json (counts, the "
        "prompts). A quadruple's answer letter maps back to its sample for `kobbq score`.",
    )
    ev.add_argument("samples", type=Path,
                    help="the template TSV (KoBBQ_templates.tsv: expanded first), or samples "
                         "(.parquet from kobbq expand, the release's TSV)")  # fmt: skip
    ev.add_argument("--out", type=Path, required=True, help="output folder")
    ev.add_argument("--seed", type=int, default=0, help="the sampling seed (default 0)")
    ev.add_argument("--prompts", type=Path, default=None,
                    help="a prompts TSV (prompt_id, instruction, context, question, a, b, c, "
                         "answer, unknown; the release's 0_evaluation_prompts.tsv layout); "
                         "default: benchforge's five (kobbq/evalset.py)")  # fmt: skip
    ev.add_argument("--unknown", default="알 수 없음",
                    help="the samples' \"unknown\" choice (each prompt has its own)")  # fmt: skip

    base = ksub.add_parser(
        "baseline",
        help="predictions of a reference model (unknown, biased, counter-biased, random)",
        description="Write the predictions of a reference model for `kobbq score`: always "
        '"unknown" (no bias), always the biased answer or always the counter-biased one '
        "(the bounds of diff-bias), or a seeded random choice.",
    )
    base.add_argument("samples", type=Path, help="samples (.parquet, or the release's TSV)")
    base.add_argument("--answer", choices=BASELINES,
                      required=True, help="which reference model")  # fmt: skip
    base.add_argument("--out", type=Path, required=True, help="predictions file (.tsv)")
    base.add_argument("--seed", type=int, default=0, help="seed of the random baseline")
    base.add_argument("--unknown", default="알 수 없음", help='the "unknown" answer')

    score = ksub.add_parser(
        "score",
        help="accuracy and diff-bias of predictions, per category and template class",
        description="Score a model's predictions (a TSV, CSV, JSON Lines or Parquet table "
        "of sample_id and prediction: a choice's text or its index 0-2) on the samples: "
        "accuracy in ambiguous and disambiguated contexts, diff-bias in each and its "
        "maximum given the accuracy (KoBBQ 4), overall, per category and per template "
        "class. Writes DIR/scores.json and DIR/scores.md.",
    )
    score.add_argument("samples", type=Path, help="samples (.parquet, or the release's TSV)")
    score.add_argument("predictions", type=Path, help="sample_id -> prediction")
    score.add_argument("--out", type=Path, required=True, help="output folder")
    score.add_argument("--no-average", action="store_true",
                       help="score the samples directly instead of averaging over templates "
                            "(the paper averages over templates on all samples)")  # fmt: skip
    score.add_argument("--unknown", default="알 수 없음", help='the "unknown" answer')


def _settings(args: argparse.Namespace) -> object:
    from pipelines.families.kobbq.survey import SurveySettings

    chosen = {n.replace("-", "_"): getattr(args, n.replace("-", "_")) for n, _, _ in RULES}
    return SurveySettings(**{k: v for k, v in chosen.items() if v is not None})


def survey(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_json, write_parquet, write_text
    from pipelines.families.kobbq.survey import (
        SurveyError,
        apply_rules,
        read_survey,
        report,
        report_markdown,
        tally,
        with_item_types,
    )
    from pipelines.families.kobbq.templates import read_templates

    settings = _settings(args)
    templates = read_templates(args.templates) if args.templates else []
    if args.annotations is not None:
        if args.items is None:
            raise SurveyError("--annotations needs --items (the survey round's items)")
        items = _read_table(args.items)
        questions, invalid = tally(items, _read_table(args.annotations))
        settings = with_item_types(settings, items)
    else:
        questions, invalid = read_survey(args.survey, settings), None
    targets = apply_rules(questions, templates, settings)
    info = report(targets, templates)
    if invalid is not None:
        info["invalid_answers"] = invalid
    args.out.mkdir(parents=True, exist_ok=True)
    write_parquet(targets, args.out / "targets.parquet")
    write_json(info, args.out / "survey.json")
    write_text(report_markdown(info, targets), args.out / "survey.md")
    t1, t2 = info["per_type"]["type1"], info["per_type"]["type2"]
    print(f"{info['kept']}/{info['questions']} stereotypes kept; type 1 dropped {t1['dropped']}/"
          f"{t1['questions']} ({t1['dropped_share']}; paper 0.083), type 2 {t2['dropped']}/"
          f"{t2['questions']} ({t2['dropped_share']}; paper 0.136) -> {args.out}")  # fmt: skip
    return 0


def _read_table(path: Path) -> pd.DataFrame:
    name = path.name
    if name.endswith(".parquet"):
        return pd.read_parquet(path)
    if ".jsonl" in name:
        return pd.read_json(path, lines=True, dtype=False)
    return pd.read_csv(path, sep="\t" if ".tsv" in name else ",", dtype=str,
                       keep_default_na=False)  # fmt: skip


def expand(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_json, write_parquet, write_text
    from pipelines.core.markdown import table
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq import survey as sv
    from pipelines.families.kobbq import templates as tp

    started = time.perf_counter()
    templates = tp.read_templates(args.templates)
    every = tp.expand(templates, args.unknown)
    seconds = time.perf_counter() - started
    samples, dropped = every, every.head(0)
    if args.targets is not None:
        path = args.targets / "targets.parquet" if args.targets.is_dir() else args.targets
        if not path.is_file():
            raise tp.TemplateError(f"{path}: no targets.parquet (run `benchforge kobbq survey`)")
        samples, dropped = sv.limit_by_survey(every, templates, pd.read_parquet(path),
                                              args.unknown, args.stage)  # fmt: skip
    test = tp.evaluation_set(samples, args.seed)
    counts = tp.counts(samples, templates)
    args.out.mkdir(parents=True, exist_ok=True)
    write_parquet(samples, args.out / "samples.parquet")
    write_parquet(dropped, args.out / "dropped.parquet")
    write_parquet(test, args.out / "test_samples.parquet")
    for name, frame in (("all_samples", samples), ("test_samples", test)):
        records = tp.release_records(frame)
        write_text(tp.release_tsv(records, not args.raw_cells), args.out / f"{name}.tsv")
        write_text(jsonl(records), args.out / f"{name}.jsonl")
    info = {"templates": len({t.template_id for t in templates}), "template_rows":
            len(templates), "samples": len(samples), "dropped": len(dropped),
            "test_samples": len(test), "expand_seconds": round(seconds, 2),
            "counts": counts.to_dict(orient="records"), "warnings": tp.warnings_of(templates),
            "particles": tp.particle_report(templates)}  # fmt: skip
    write_json(info, args.out / "expand.json")
    write_text(table(list(counts.columns), counts.values.tolist()) + "\n", args.out / "counts.md")
    print(f"{len(templates)} template rows -> {len(samples):,} samples (Table 1: 76,048) in "
          f"{seconds:.1f} s; evaluation set {len(test):,} samples; -> {args.out}")  # fmt: skip
    return 0


def load_samples(path: Path, unknown: str = "알 수 없음") -> pd.DataFrame:
    """Samples from ``kobbq expand``'s Parquet, or the release layout (TSV or JSON
    Lines: the fields the scorer needs come from the sample id)."""
    from pipelines.families.kobbq.scoring import PredictionError

    if not path.is_file():
        raise PredictionError(f"{path}: file not found")
    frame = _read_table(path)
    if "template_id" in frame.columns:
        return frame
    from pipelines.families.kobbq.scoring import release_samples

    return release_samples(frame, unknown, str(path))


def baseline(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_text
    from pipelines.core.spreadsheet import delimited
    from pipelines.families.kobbq.scoring import baseline as make

    samples = load_samples(args.samples, args.unknown)
    pred = make(samples, args.answer, args.seed)
    # `kobbq score` compares each prediction with the options character for character
    text = delimited(pred.itertuples(index=False), list(pred.columns), spreadsheet_safe=False)
    write_text(text, args.out)
    print(f"{len(pred):,} predictions ({args.answer}) -> {args.out}")
    return 0


def score(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_json, write_text
    from pipelines.families.kobbq.scoring import markdown, read_predictions
    from pipelines.families.kobbq.scoring import score as compute

    samples = load_samples(args.samples, args.unknown)
    pred = read_predictions(args.predictions, samples)
    result = compute(samples, pred, averaged=not args.no_average)
    args.out.mkdir(parents=True, exist_ok=True)
    write_json(result, args.out / "scores.json")
    write_text(markdown(result, args.predictions.name), args.out / "scores.md")
    o = result["overall"]
    print(f"acc_amb {o['acc_amb']}, acc_dis {o['acc_dis']}, diff-bias amb {o['diff_bias_amb']} "
          f"(max {o['max_diff_bias_amb']}), dis {o['diff_bias_dis']} (max "
          f"{o['max_diff_bias_dis']}) on {result['scored']:,} samples -> {args.out}")  # fmt: skip
    return 0


def survey_items(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_text
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq.survey import (
        SurveySettings,
        apply_rules,
        first_per_category,
        read_survey,
    )
    from pipelines.families.kobbq.survey import survey_items as make
    from pipelines.families.kobbq.templates import read_templates

    settings = SurveySettings()
    questions = first_per_category(read_survey(args.survey, settings), args.per_category)
    templates = read_templates(args.templates) if args.templates else []
    targets = apply_rules(questions, templates, settings)
    items = make(questions, targets[targets["question_id"].isin({q.question_id for q in
                                                                 questions})])  # fmt: skip
    write_text(jsonl(items.to_dict(orient="records")), args.out)
    print(f"{len(items)} survey items -> {args.out} (config annotation_configs/kobbq_survey.xml)")
    return 0


def check_items(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_text
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq.templates import check_items as make
    from pipelines.families.kobbq.templates import reading_check_samples

    items = make(reading_check_samples(load_samples(args.samples)))
    write_text(jsonl(items.to_dict(orient="records")), args.out)
    print(f"{len(items)} check items -> {args.out} (config annotation_configs/kobbq_check.xml)")
    return 0


def eval_set(args: argparse.Namespace) -> int:
    from pipelines.core.io import write_json, write_text
    from pipelines.export.records import jsonl
    from pipelines.families.kobbq import evalset
    from pipelines.families.kobbq import templates as tp

    path = args.samples
    if (
        path.suffix == ".tsv"
        and "Ambiguous_context" in path.read_text(encoding="utf-8-sig").split("\n", 1)[0]
    ):
        samples = tp.expand(tp.read_templates(path), args.unknown)
    else:
        samples = load_samples(path, args.unknown)
    prompts = evalset.read_prompts(args.prompts) if args.prompts else evalset.PROMPTS
    chosen = tp.evaluation_set(samples, args.seed)
    quads = evalset.quadruples(chosen, prompts)
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(jsonl(quads.to_dict(orient="records")), args.out / "eval_set.jsonl")
    from pipelines.core.spreadsheet import delimited

    write_text(delimited(quads.itertuples(index=False), list(quads.columns),
                         spreadsheet_safe=False), args.out / "eval_set.tsv")  # fmt: skip
    info = evalset.summary(chosen, quads, prompts, args.seed)
    write_json(info, args.out / "eval_set.json")
    print(f"{info['templates']} templates, {info['samples']:,} samples x {len(prompts)} prompts "
          f"x 3 permutations -> {info['quadruples']:,} quadruples (KoBBQ 4.1: 32,160 for 268 "
          f"templates) -> {args.out}")  # fmt: skip
    return 0
