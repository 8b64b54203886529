"""Qualification (pilot) rounds and control items for any family (issue 35), added by
the recipe, never by the family: ``annotation.pilot`` puts a pilot before the main
round, ``annotation.controls`` shuffles control items into it.

Every crowdsourced KLUE task began with a pilot that chose its workers (KLUE 3.1.1: 13
passed; 3.2.1: 19 of 20; 3.3.1: 684 of 2,604 applicants; 3.5.1: at least 4 of 5
right). A :class:`~pipelines.rebuild.kinds.TaskKind` asks this module for

- its steps (:func:`with_people_steps`): ``pilot`` (the gold items checked and
  written as the pilot's items), the pilot's round (``push-pilot``, ``simulate-pilot``,
  ``wait-pilot``, ``pull-pilot``) and ``qualify`` (each applicant's result under the
  pass rule, and the qualified set), all before the first round of the rebuild; and
  ``controls`` (the control items shuffled into the main round's items) just before
  the main round's ``push``;
- its rounds (:func:`with_people_rounds`): the ``pilot`` round (every applicant answers
  every gold item: the overlap is the number of applicants), and the main round
  (``""``) showing the mixed items when there are control items.

The shared ``agree`` step then excludes the annotations of accounts that did not
qualify and screens by control accuracy (``pipelines.agreement.screening``), and the
card shows applicants, passed, the rule, the controls and who was screened.

On a Label Studio you run (the community edition), every member of the organization
sees every project: a pilot cannot hide the main round from those who failed it. Their
annotations are excluded (reason ``not_qualified``), so they only cost work; to keep
them out, invite the qualified annotators to a separate organization or server for the
main round (docs/commands/labelstudio.md, "Who sees a project"), or use Label Studio
Enterprise's project membership.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.agreement.controls import mix_controls
from pipelines.agreement.qualification import PassRule, pilot_results
from pipelines.agreement.screening import PeopleScreen, answer_rows
from pipelines.annotation.configs import CONFIG_DIR
from pipelines.annotation.gold_items import read_gold_items
from pipelines.annotation.label_config import parse_label_config
from pipelines.annotation.rounds import Round
from pipelines.annotation.settings import ReviewSpec, SimulateSpec
from pipelines.core.io import write_text
from pipelines.core.steps import (
    STEPS,
    RunContext,
    StepOutcome,
    cached,
    declares,
    out_files,
)
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

MAIN_ROUND = LabelStudioRound("")
PILOT_STEPS: list[PlanEntry] = ["pilot", LabelStudioRound("pilot"), "qualify"]
REVIEW_STEPS: list[PlanEntry] = ["reports", LabelStudioRound("review")]
HUMAN_STEPS: list[PlanEntry] = ["human-sample", LabelStudioRound("human"), "human-score"]


def with_people_steps(recipe: Recipe, plan: list[PlanEntry]) -> list[PlanEntry]:
    """``plan`` with what the recipe asks for: the pilot round before the plan's first
    round (:class:`LabelStudioRound`), ``controls`` before the main round
    (``LabelStudioRound("")``), the review round after it and the human performance
    round after ``split``."""
    ann = getattr(recipe, "annotation", None)
    if ann is None:
        return plan
    out = list(plan)
    if ann.controls is not None and MAIN_ROUND in out:
        out.insert(out.index(MAIN_ROUND), "controls")
    if ann.pilot is not None:
        first = next((i for i, e in enumerate(out)
                      if isinstance(e, LabelStudioRound) or e == "controls"), len(out))  # fmt: skip
        out[first:first] = PILOT_STEPS
    if reviews_reports(recipe) and MAIN_ROUND in out:
        at = out.index(MAIN_ROUND) + 1
        out[at:at] = REVIEW_STEPS
    if ann.human is not None and "split" in out:
        at = out.index("split") + 1
        out[at:at] = HUMAN_STEPS
    return out


def reviews_reports(recipe: object) -> bool:
    """Whether the recipe sends reported items to a review round (``reports: review``)."""
    return getattr(getattr(recipe, "agreement", None), "reports", "auto") == "review"


def pilot_dir(ctx: RunContext) -> Path:
    return ctx.out / "pilot"


# the review round's guideline (its interface is written per run: ``review_config``)
REVIEW_GUIDELINE = CONFIG_DIR / "guidelines" / "review.md"


def review_dir(ctx: RunContext) -> Path:
    return ctx.out / "review"


def human_dir(ctx: RunContext) -> Path:
    return ctx.out / "human"


def with_people_rounds(ctx: RunContext, rounds: dict[str, Round]) -> dict[str, Round]:
    """The family's ``rounds`` with what the recipe's ``annotation`` adds: the
    guideline, the pilot, review and human performance rounds, and the main round's
    control items."""
    ann = ctx.recipe.annotation
    review = reviews_reports(ctx.recipe)
    if ann is None or "" not in rounds:
        return rounds
    out = dict(rounds)
    main = rounds[""]
    if ann.guideline:
        main = out[""] = replace(main, guideline=ctx.recipe.resolve(ann.guideline))
    if review:
        spec = ann.review or ReviewSpec()
        sim = spec.simulate or (SimulateSpec(annotators=1, seed=main.simulate.seed, careless=0)
                                if main.simulate else None)  # fmt: skip
        out["review"] = Round(
            review_dir(ctx) / "items.parquet", review_dir(ctx) / "review.xml",
            spec.project or f"{ctx.project}-review", 1, sim if ctx.simulated else None,
            "reviewer", review_dir(ctx) / "annotations.parquet", main.timeout, main.poll,
            guideline=REVIEW_GUIDELINE,
        )  # fmt: skip
    if ann.human is not None:
        spec = ann.human
        sim = spec.simulate or (SimulateSpec(annotators=spec.overlap + 1, seed=spec.seed,
                                             careless=0) if main.simulate else None)  # fmt: skip
        out["human"] = Round(
            human_dir(ctx) / "items.parquet", main.config, spec.project or f"{ctx.project}-human",
            spec.overlap, sim if ctx.simulated else None, "human",
            human_dir(ctx) / "annotations.parquet", main.timeout, main.poll,
            guideline=main.guideline,
        )  # fmt: skip
    if ann.controls is not None:
        out[""] = replace(main, items=ctx.out / "controls" / "items.parquet")
    if ann.pilot is not None:
        pilot = ann.pilot
        applicants = pilot.applicants or (main.simulate.annotators if main.simulate else None)
        if applicants is None:
            raise ValueError(
                "annotation.pilot.applicants: how many people take the pilot (every one of "
                "them answers every gold item); needed with real annotators"
            )
        out["pilot"] = Round(
            pilot_dir(ctx) / "items.parquet",
            interface(ctx, pilot=True) if pilot.config else main.config,
            pilot.project or f"{ctx.project}-pilot",
            applicants, main.simulate, main.pool, pilot_dir(ctx) / "annotations.parquet",
            main.timeout, main.poll, phase="pilot", guideline=main.guideline,
        )  # fmt: skip
    return out


def _answer_field(ctx: RunContext) -> str | None:
    return answer_field(ctx.recipe)


def answer_field(recipe: object) -> str | None:
    """The recipe's ``agreement.answer_field`` (None: the interface's only answer)."""
    return getattr(getattr(recipe, "agreement", None), "answer_field", None)


def interface(ctx: RunContext, pilot: bool = False) -> Path:
    """The interface of the main round, or of the pilot (its own ``config`` when given)."""
    ann = ctx.recipe.annotation
    own = ann.pilot.config if pilot and ann.pilot is not None else None
    return ctx.recipe.resolve(own or ann.config)


def known_items(ctx: RunContext, path: str, pilot: bool = False) -> pd.DataFrame:
    """A recipe's file of known-answer items, checked against the interface of the round
    that shows them (``pipelines.annotation.gold_items``)."""
    config = parse_label_config(interface(ctx, pilot))
    return read_gold_items(ctx.recipe.resolve(path), config, _answer_field(ctx))


def _shown(ctx: RunContext, items: pd.DataFrame, pilot: bool = False) -> pd.DataFrame:
    """The items as the round shows them: the known answer left out of the task data;
    with simulated annotators it is their latent truth (``sim_<field>``), as the main
    items' is."""
    config = parse_label_config(interface(ctx, pilot))
    control = config.answer_control(_answer_field(ctx))
    shown = items.drop(columns=["value"])
    if ctx.simulated:
        value = items["value"]
        numeric = pd.to_numeric(value, errors="coerce")
        shown[f"sim_{control.name}"] = numeric if numeric.notna().all() else value
    return shown


@STEPS.register("pilot")
@declares(
    reads=lambda ctx, arg: {"gold_file": ctx.recipe.resolve(ctx.recipe.annotation.pilot.gold)},
    writes=out_files("pilot/items.parquet", "pilot/gold.parquet", "pilot/pilot.json"),
    settings=lambda ctx, arg: [
        ctx.simulated,
        _answer_field(ctx),
        ctx.recipe.annotation.pilot.model_dump(),
    ],  # fmt: skip
)
def pilot_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The pilot's gold items, checked against the interface -> OUT/pilot/items.parquet
    (what the applicants see) and OUT/pilot/gold.parquet (the known answers)."""

    def compute() -> tuple[dict, dict]:
        gold = known_items(ctx, ctx.recipe.annotation.pilot.gold, pilot=True)
        info = {"items": len(gold), "gold": ctx.recipe.annotation.pilot.gold}
        return {"items.parquet": _shown(ctx, gold, pilot=True),
                "gold.parquet": gold[["item_id", "value"]]}, info  # fmt: skip

    done = cached(ctx, compute)
    return done.outcome(f"{done.info['items']} gold items", merge=False)


def pass_rule(spec: object) -> PassRule:
    """The pass rule of a recipe's ``annotation.pilot.rule``."""
    return PassRule(spec.kind, spec.threshold, spec.of)


@STEPS.register("qualify")
@declares(
    reads=out_files("pilot/annotations.parquet", "pilot/gold.parquet"),
    writes=out_files("pilot/results.parquet", "pilot/qualification.json"),
    settings=lambda ctx, arg: [_answer_field(ctx), ctx.recipe.annotation.pilot.rule.model_dump()],
)
def qualify_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Each applicant's pilot result under the recipe's pass rule
    (``pipelines.agreement.qualification``) -> OUT/pilot/results.parquet and the
    qualified set in OUT/pilot/qualification.json."""
    rule = pass_rule(ctx.recipe.annotation.pilot.rule)

    def compute() -> tuple[dict, dict]:
        table = pd.read_parquet(pilot_dir(ctx) / "annotations.parquet")
        gold = pd.read_parquet(pilot_dir(ctx) / "gold.parquet")
        results = pilot_results(answer_rows(table, _answer_field(ctx)), rule, gold)
        passed = sorted(results.loc[results["passed"], "annotator_id"].astype(str))
        info = {
            "rule": rule.kind,
            "threshold": rule.threshold,
            "of": rule.of,
            "describe": rule.describe(),
            "gold_items": len(gold),
            "applicants": len(results),
            "passed": len(passed),
            "qualified": passed,
            "annotators": json.loads(results.to_json(orient="records")),
        }
        return {"results.parquet": results}, info

    done = cached(ctx, compute)
    info = done.info
    failed = [a["annotator_id"] for a in info["annotators"] if not a["passed"]]
    return StepOutcome(
        f"{info['passed']} of {info['applicants']} applicants passed ({info['describe']})"
        + (f"; failed: {', '.join(failed)}" if failed else "")
        + done.mark,
        {k: v for k, v in info.items() if k != "annotators"},
    )


@STEPS.register("controls")
@declares(
    reads=lambda ctx, arg: {
        "items": ctx.out / "items" / "items.parquet",
        "controls_file": ctx.recipe.resolve(ctx.recipe.annotation.controls.items),
    },
    writes=out_files(
        "controls/items.parquet", "controls/controls.parquet", "controls/controls.json"
    ),
    settings=lambda ctx, arg: [
        ctx.simulated,
        _answer_field(ctx),
        ctx.recipe.annotation.controls.model_dump(),
    ],  # fmt: skip
)
def controls_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The main round's items with the recipe's control items shuffled in
    (``pipelines.agreement.controls.mix_controls``) -> OUT/controls/items.parquet (what
    the round shows; the known answers are not in the task data) and
    OUT/controls/controls.parquet (the controls shown and their answers)."""
    spec = ctx.recipe.annotation.controls

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(ctx.out / "items" / "items.parquet")
        known = known_items(ctx, spec.items)
        mixed = mix_controls(items, known, spec.share, spec.seed)
        chosen = mixed[mixed["is_control"]].rename(columns={"control_value": "value"})
        shown = (
            pd.concat([mixed[~mixed["is_control"]], _shown(ctx, chosen)], ignore_index=True)
            .set_index("item_id")
            .loc[mixed["item_id"]]
            .reset_index()
        )
        shown = shown.drop(columns=["is_control", "control_value"], errors="ignore")
        info = {"items": len(items), "controls": len(chosen), "available": len(known),
                "share": spec.share}  # fmt: skip
        return {"items.parquet": shown,
                "controls.parquet": chosen[["item_id", "value"]]}, info  # fmt: skip

    done = cached(ctx, compute)
    info = done.info
    share = info["controls"] / (info["items"] + info["controls"])
    return done.outcome(
        f"{info['controls']} control items shuffled among {info['items']:,} items ({share:.1%})",
        merge=False,
    )


def check_people(recipe: object, path: Path | str) -> None:
    """Before any work (issue 35's bad input): the pilot's gold items and the control
    items fit the interface (``pipelines.annotation.gold_items``), the pass rule can be
    met by the pilot's gold items, and a pilot without simulated annotators says how
    many applicants take it; the guideline file exists. Raises ``ValueError`` naming
    the recipe and the key."""
    ann = getattr(recipe, "annotation", None)
    if ann is not None and ann.guideline and not recipe.resolve(ann.guideline).is_file():
        raise ValueError(f"{path}: annotation.guideline: {recipe.resolve(ann.guideline)} not found")
    if ann is None or (ann.pilot is None and ann.controls is None):
        return
    field = answer_field(recipe)
    main = parse_label_config(recipe.resolve(ann.config))
    if ann.pilot is not None:
        pilot = ann.pilot
        config = parse_label_config(recipe.resolve(pilot.config)) if pilot.config else main
        try:
            gold = read_gold_items(recipe.resolve(pilot.gold), config, field)
            rule = pass_rule(pilot.rule)
        except ValueError as exc:
            raise ValueError(f"{path}: annotation.pilot: {exc}") from None
        if rule.kind == "min_correct" and max(rule.threshold, rule.of or 0) > len(gold):
            raise ValueError(
                f"{path}: annotation.pilot.rule: {rule.describe()} can never be met with "
                f"the {len(gold)} gold items of {pilot.gold}"
            )
        if (
            rule.kind == "min_pearson"
            and pd.to_numeric(gold["value"], errors="coerce").isna().any()
        ):
            raise ValueError(
                f"{path}: annotation.pilot.rule: min_pearson needs numeric gold values "
                f"({pilot.gold} has labels); use min_correct"
            )
        if pilot.applicants is None and ann.simulate is None:
            raise ValueError(
                f"{path}: annotation.pilot.applicants: how many people take the pilot (each "
                "answers every gold item); needed with real annotators"
            )
    if ann.controls is not None:
        try:
            read_gold_items(recipe.resolve(ann.controls.items), main, field)
        except ValueError as exc:
            raise ValueError(f"{path}: annotation.controls: {exc}") from None


def review_config(fields: list[str]) -> str:
    """The review round's Label Studio interface for items with ``fields``: the reports,
    the item, a decision (keep / drop / fix), a reason, and each field again, editable
    and prefilled with its text, for a fix."""
    shown = "\n".join(
        f'  <Header value="{f}"/>\n  <Text name="shown_{f}" value="${f}"/>' for f in fields
    )
    edits = "\n".join(
        f'  <TextArea name="{f}" toName="reports_shown" maxSubmissions="1" rows="2" '
        f'editable="true" value="${f}"/>'
        for f in fields
    )
    return f"""<!-- benchforge: the review round of reported items (issue 35, agreement.reports:
     review). decision keep / drop / fix; reason; a fix edits the fields below. -->
<View>
  <Header value="신고 내용 / What the annotators reported"/>
  <Text name="reports_shown" value="$reports"/>
{shown}
  <Header value="결정 / Decision"/>
  <Choices name="decision" toName="reports_shown" choice="single-radio" required="true">
    <Choice value="유지: 문제가 없어 그대로 둔다" alias="keep" hotkey="1"
            hint="keep the item as it is"/>
    <Choice value="삭제: 신고가 맞아 데이터에서 뺀다" alias="drop" hotkey="2" hint="drop the item"/>
    <Choice value="수정: 아래 글을 고쳐서 남긴다" alias="fix" hotkey="3"
            hint="fix the text below and keep the item"/>
  </Choices>
  <Header value="이유 / Reason"/>
  <TextArea name="reason" toName="reports_shown" maxSubmissions="1" rows="2"/>
  <Header value="수정 (fix일 때) / The fixed text (for fix)"/>
{edits}
</View>
"""


def _agreement_settings(ctx: RunContext) -> dict:
    from dataclasses import asdict

    from pipelines.agreement.settings import recipe_agreement_settings

    return asdict(recipe_agreement_settings(ctx.recipe))


def _item_fields(ctx: RunContext) -> list[str]:
    config = parse_label_config(ctx.recipe.resolve(ctx.recipe.annotation.config))
    return list(config.data_fields)


def _main_annotations(ctx: RunContext) -> Path:
    return ctx.task.rounds(ctx)[""].annotations


@STEPS.register("reports")
@declares(
    reads=lambda ctx, arg: {
        "annotations": _main_annotations(ctx),
        "items": ctx.out / "items" / "items.parquet",
        **people_files(ctx),
    },  # fmt: skip
    writes=out_files("review/items.parquet", "review/reports.json"),
    settings=lambda ctx, arg: [ctx.simulated, _agreement_settings(ctx)],
)
def reports_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The items annotators reported (``report_min`` of them on one of
    ``report_flags``, counted after the pilot's and the controls' screening) ->
    OUT/review/items.parquet, the review round's items, and its interface
    OUT/review/review.xml (``agreement.reports: review``; KLUE-STS 3.2.1 inspected the
    reported sentences before removing them)."""
    from pipelines.agreement.review import reported_items
    from pipelines.agreement.screening import screen_people
    from pipelines.agreement.settings import recipe_agreement_settings

    fields = _item_fields(ctx)

    def compute() -> tuple[dict, dict]:
        settings = recipe_agreement_settings(ctx.recipe)
        frame = pd.read_parquet(_main_annotations(ctx))
        screen = people_screen(ctx)
        if screen is not None:
            frame = screen_people(frame, screen, settings.answer_field)[0]
        reported = reported_items(frame, settings)
        items = pd.read_parquet(ctx.out / "items" / "items.parquet")
        items = items.assign(item_id=items["item_id"].astype(str))
        table = reported.merge(items[["item_id", *fields]], on="item_id", how="left")
        if ctx.simulated:
            table = _simulated_review(table, fields)
        info = {"reported": len(table), "flags": value_counts_of(reported)}
        return {"items.parquet": table}, info

    done = cached(ctx, compute)
    config = review_dir(ctx) / "review.xml"
    text = review_config(fields)
    if not config.is_file() or config.read_text(encoding="utf-8") != text:
        write_text(text, config)
    return done.outcome(
        f"{done.info['reported']} reported items go to the review round {done.info['flags']}",
        merge=False,
    )


def value_counts_of(reported: pd.DataFrame) -> dict[str, int]:
    counts: dict[str, int] = {}
    for flags in reported["flags"]:
        for flag in json.loads(flags):
            counts[flag] = counts.get(flag, 0) + 1
    return dict(sorted(counts.items()))


def _simulated_review(table: pd.DataFrame, fields: list[str]) -> pd.DataFrame:
    """The simulated reviewer's latent answers: a report several annotators raised is
    confirmed (``drop``); a lone report of personal information on a text with digits
    is fixed by masking the digits (``fix``); any other lone report is not confirmed
    (``keep``)."""
    import re

    def confirmed(flags: str) -> bool:
        return max(json.loads(flags).values()) >= 2

    def decision(flags: str, texts: list[str]) -> str:
        if confirmed(flags):
            return "drop"
        pii = "personal_information" in json.loads(flags)
        return "fix" if pii and any(re.search(r"\d", t) for t in texts) else "keep"

    out = table.copy()
    texts = out[fields].astype(str).to_numpy().tolist()
    out["sim_decision"] = [decision(f, t) for f, t in zip(out["flags"], texts, strict=True)]
    why = {
        "drop": "신고 내용이 맞다 (confirmed)",
        "keep": "문제를 찾지 못했다 (nothing wrong)",
        "fix": "숫자를 가렸다 (digits masked)",
    }
    out["sim_reason"] = [why[d] for d in out["sim_decision"]]
    for f in fields:
        out[f"sim_{f}"] = [re.sub(r"\d", "*", str(v)) for v in out[f]]
    return out


def reviews_of(ctx: RunContext) -> pd.DataFrame | None:
    """The review round's decisions (``pipelines.agreement.review.review_table``), or
    None when the recipe does not review reports."""
    from pipelines.agreement.review import review_table

    if not reviews_reports(ctx.recipe):
        return None
    annotations = pd.read_parquet(review_dir(ctx) / "annotations.parquet")
    items = pd.read_parquet(review_dir(ctx) / "items.parquet")
    return review_table(annotations, items, _item_fields(ctx))


@STEPS.register("human-sample")
@declares(
    reads=out_files("split/splits.parquet", "items/items.parquet"),
    writes=out_files("human/items.parquet", "human/sample.json"),
    settings=lambda ctx, arg: [ctx.simulated, ctx.recipe.annotation.human.model_dump()],
)
def human_sample_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """A seeded sample of ``annotation.human.sample`` test items -> OUT/human/items.parquet:
    what the human performance round shows (the items as the annotators saw them)."""
    spec = ctx.recipe.annotation.human

    def compute() -> tuple[dict, dict]:
        splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")
        test = sorted(splits.loc[splits["split"] == "test", "item_id"].astype(str))
        chosen = pd.Series(test).sample(n=min(spec.sample, len(test)), random_state=spec.seed)
        items = pd.read_parquet(ctx.out / "items" / "items.parquet")
        items = items[items["item_id"].astype(str).isin(set(chosen))]
        if not ctx.simulated:
            items = items.drop(columns=[c for c in items.columns if c.startswith("sim_")])
        return {"items.parquet": items}, {"test_items": len(test), "sampled": len(items)}

    done = cached(ctx, compute)
    return done.outcome(
        f"{done.info['sampled']} of {done.info['test_items']} test items sampled", merge=False
    )


@STEPS.register("human-score")
@declares(
    reads=out_files("human/annotations.parquet", "human/items.parquet", "agree/gold.parquet"),
    writes=out_files("human/scores.parquet", "human/performance.json"),
    settings=lambda ctx, arg: [_answer_field(ctx), ctx.recipe.annotation.human.model_dump()],
)
def human_score_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The human round's answers scored against the gold labels
    (``pipelines.agreement.human``) -> OUT/human/performance.json, for the card."""
    from pipelines.agreement.human import human_scores

    def compute() -> tuple[dict, dict]:
        table = pd.read_parquet(human_dir(ctx) / "annotations.parquet")
        gold = pd.read_parquet(ctx.out / "agree" / "gold.parquet")
        shown = set(pd.read_parquet(human_dir(ctx) / "items.parquet")["item_id"].astype(str))
        gold = gold[gold["item_id"].astype(str).isin(shown)]
        scores = human_scores(answer_rows(table, _answer_field(ctx)), gold)
        spec = ctx.recipe.annotation.human
        info = {**scores, "overlap": spec.overlap, "simulated": bool(
            table["simulated"].astype(bool).any()) if "simulated" in table else False}  # fmt: skip
        return {"scores.parquet": pd.DataFrame(scores["people"])}, info

    done = cached(ctx, compute)
    return done.outcome(
        f"{done.info['items']} test items answered by people: {done.info['combined']}",
        merge=False,
    )


def human_files(ctx: RunContext) -> dict[str, Path]:
    """The human performance figures the export reads (none without the round)."""
    ann = ctx.recipe.annotation
    if ann is None or ann.human is None:
        return {}
    return {"human_performance": human_dir(ctx) / "performance.json"}


def people_screen(ctx: RunContext) -> PeopleScreen | None:
    """What the agreement step screens by, from the pilot's and the controls' outputs
    (None when the recipe has neither)."""
    ann = ctx.recipe.annotation
    if ann is None or (ann.pilot is None and ann.controls is None):
        return None
    screen = PeopleScreen()
    if ann.pilot is not None:
        facts = json.loads((pilot_dir(ctx) / "qualification.json").read_text(encoding="utf-8"))
        screen.qualified = set(facts["qualified"])
        screen.pilot = facts
    if ann.controls is not None:
        spec = ann.controls
        screen.controls = pd.read_parquet(ctx.out / "controls" / "controls.parquet")
        screen.min_accuracy, screen.min_answered = spec.min_accuracy, spec.min_answered
        screen.tolerance, screen.share = spec.tolerance, spec.share
    return screen


def people_files(ctx: RunContext) -> dict[str, Path]:
    """The files :func:`people_screen` reads (the agreement step's extra inputs)."""
    ann = ctx.recipe.annotation
    files = {}
    if ann is not None and ann.pilot is not None:
        files["qualification"] = pilot_dir(ctx) / "qualification.json"
    if ann is not None and ann.controls is not None:
        files["controls"] = ctx.out / "controls" / "controls.parquet"
    return files


def review_files(ctx: RunContext) -> dict[str, Path]:
    """The review round's files the agreement step reads (none without a review)."""
    if not reviews_reports(ctx.recipe):
        return {}
    return {"review": review_dir(ctx) / "annotations.parquet",
            "reviewed_items": review_dir(ctx) / "items.parquet"}  # fmt: skip


__all__ = [
    "people_files",
    "people_screen",
    "review_files",
    "reviews_of",
    "with_people_rounds",
    "with_people_steps",
]
