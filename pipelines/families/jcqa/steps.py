"""JCommonsenseQA's steps (JGLUE 3.4.2), five crowdsourcing steps after CommonsenseQA:

1. ``question-sets``: a source concept and three targets sharing a relation, from the
   triples (:mod:`.concepts`); sets with spelling-variant targets removed; then the
   ``synonyms`` round (people judge whether two targets mean the same; a set a
   majority says so of is dropped, ``synonyms_in_targets``).
2. ``writing-items`` -> the ``writing`` round: one question per target, the target its
   answer and the other two targets distractors -> ``questions``: the three question
   filters of JGLUE's guideline (``no_question_mark``: the question ends with ？;
   ``contains_choice``: no choice word in it; ``xx_characters``: no "X文字" question
   that needs no knowledge); a task whose writer submitted the report ``cannot_write``
   (no quiz separates the three choices) is dropped as ``reported:cannot_write``.
3. ``distractor-items`` -> the ``distractors`` round: two more wrong choices, written as
   ``a@b`` -> ``distractors``: the guideline's two filters (``existing_choice``: not a
   choice already there, spelling variants and identical words included;
   ``distractor_in_question``: not a word of the question); the five choices shuffled.
4. ``answer-items`` -> the ``answers`` round: three people answer (the five choices and
   わからない) -> ``answers``: kept when at least ``min_correct`` (2) of them are right.
5. ``split`` and ``export`` (JGLUE's layout: ``q_id``, ``question``, ``choice0..4``,
   ``label``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import dynamic_options
from pipelines.annotation.rounds import Round
from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.rebuild.rounds import spec_config, spec_round
from pipelines.rebuild.split import split_over

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.families.jcqa.section import JcqaSpec

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
ROUNDS = {  # round -> (config, pool, items folder)
    "synonyms": ("jcqa_synonyms.xml", "judge", "question-sets"),
    "writing": ("jcqa_writing.xml", "writer", "writing"),
    "distractors": ("jcqa_distractors.xml", "writer", "distractor-items"),
    "answers": ("jcqa_answer.xml", "answerer", "answer-items"),
    "check": ("jcqa_check.xml", "checker", "check-items"),  # the last filter (.check)
}
UNKNOWN = "わからない"  # the answer round's "I don't know" (JGLUE's guideline)


def spec_of(ctx: RunContext) -> JcqaSpec:
    return ctx.recipe.jcqa


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The four rounds (``jcqa.<name>_round``), and the final check's with
    ``jcqa.final_check``."""
    from pipelines.annotation.settings import SimulateSpec

    spec = spec_of(ctx)
    found = {}
    for name, (config, pool, folder) in ROUNDS.items():
        if name == "check" and not spec.final_check:
            continue
        r = getattr(spec, f"{name}_round")
        found[name] = spec_round(
            ctx, name, r, ctx.out / folder / "items.parquet", CONFIGS / config, pool,
            spec.simulate or SimulateSpec(annotators=max(3, r.people + 1)),
        )  # fmt: skip
    return found


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    return [
        (f"jcqa.{name}_round.config",
         spec_config(recipe, getattr(recipe.jcqa, f"{name}_round"), CONFIGS / config))
        for name, (config, _, _) in ROUNDS.items()
    ]  # fmt: skip


def preflight(recipe: Recipe) -> None:
    """The triples file reads and yields a question set, and the simulated writers'
    file reads (a bad line fails here, naming it)."""
    from pipelines.families.jcqa.concepts import (
        TriplesError,
        check_triples,
        read_triples,
        read_writers,
    )
    from pipelines.families.jcqa.section import triples_path

    spec, path = recipe.jcqa, triples_path(recipe)
    try:
        check_triples(read_triples(path, spec.language), spec.relations, path)
    except TriplesError as exc:
        raise TriplesError(f"jcqa.triples ({spec.triples}): {exc}") from None
    try:
        if spec.writers:  # issue 51: a missing one gave "[Errno None] None" after 3 steps
            read_writers(recipe.resolve(spec.writers))
    except TriplesError as exc:
        raise TriplesError(f"jcqa.writers: {exc}") from None


def answers_of(table: pd.DataFrame, field: str) -> tuple[dict[str, list[str]], set[str]]:
    """(item -> the values of ``field`` in the order given, items only skipped)."""
    cancelled = table["cancelled"].fillna(False).astype(bool) if "cancelled" in table else False
    done = table[~cancelled] if "cancelled" in table else table
    skipped = set(table.loc[cancelled, "item_id"].astype(str)) if "cancelled" in table else set()
    done = done[done["field"] == field].sort_values(
        ["item_id", "created_at", "annotation_id"], kind="stable"
    )
    given = {str(k): [str(v) for v in g["value"]] for k, g in done.groupby("item_id", sort=False)}
    return given, skipped - set(given)


def first_reports(table: pd.DataFrame) -> dict[str, str]:
    """item -> the report flags (``|``-joined) of its first submitted annotation, for
    the items whose first annotation reported (the ``report`` field; skipped ones do not
    count: a skip passes the task on to another person)."""
    if "field" not in table or table.empty:
        return {}
    done = table
    if "cancelled" in done:
        done = done[~done["cancelled"].fillna(False).astype(bool)]
    done = done.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")
    out = {}
    for item, group in done.groupby(done["item_id"].astype(str), sort=False):
        first = group[group["annotation_id"] == group["annotation_id"].iloc[0]]
        flags = [str(v) for v in first.loc[first["field"] == "report", "value"]
                 if v is not None and str(v) not in ("", "None", "nan")]  # fmt: skip
        if flags:
            out[item] = "|".join(flags)
    return out


def _writers(ctx: RunContext) -> dict[tuple, dict]:
    spec = spec_of(ctx)
    if not (ctx.simulated and spec.writers):
        return {}
    from pipelines.families.jcqa.concepts import read_writers

    return read_writers(ctx.recipe.resolve(spec.writers))


# --------------------------------------------------------------------- question sets


def _triples(ctx: RunContext) -> Path:
    from pipelines.families.jcqa.section import triples_path

    return triples_path(ctx.recipe)


@declares(
    reads=lambda ctx, arg: {
        "triples": _triples(ctx),
        **(
            {"writers": ctx.recipe.resolve(spec_of(ctx).writers)}
            if ctx.simulated and spec_of(ctx).writers
            else {}
        ),
    },
    writes=out_files(
        "question-sets/items.parquet", "question-sets/dropped.parquet", "question-sets/sets.json"
    ),
    settings=lambda ctx, arg: [
        spec_of(ctx).model_dump(
            include={"language", "relations", "sets_per_group", "max_sets", "seed"}
        ),
        ctx.simulated,
    ],
)
def question_sets_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Question sets (a source and three targets sharing a relation, both sides) from
    the triples; groups with fewer than three targets, unused relations and sets with
    spelling-variant targets dropped with the reason. The sets are the synonym round's
    items."""
    from pipelines.families.jcqa.concepts import question_sets, read_triples

    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        triples = read_triples(_triples(ctx), spec.language)
        sets, dropped = question_sets(
            triples, spec.relations, spec.sets_per_group, spec.seed, spec.max_sets
        )
        sets["shown"] = sets["targets"].map(lambda t: "、".join(t))
        writers = _writers(ctx)
        if ctx.simulated:
            sets["sim_synonyms"] = [
                "yes"
                if any(
                    (writers.get((r.source, r.relation, t)) or {}).get("synonym_of") in r.targets
                    for t in r.targets
                )
                else "no"
                for r in sets.itertuples()
            ]
        sets = sets.rename(columns={"set_id": "item_id"})
        info = {
            "triples": len(triples),
            "relations": value_counts(triples["relation"]),
            "sets": len(sets),
            "dropped": value_counts(dropped["reason"]),
            "per_relation": value_counts(sets["relation"]) if len(sets) else {},
        }
        return {"items.parquet": sets, "dropped.parquet": dropped}, info

    done = cached(ctx, compute)
    info = done.info
    n = info["sets"] + sum(info["dropped"].values())
    return done.outcome(
        f"{info['sets']:,} question sets from {info['triples']:,} triples",
        Rows("group or set", n, info["sets"], info["dropped"]),
        after=f"; dropped {info['dropped']}",
    )


@declares(
    reads=out_files("question-sets/items.parquet", "annotate/synonyms.parquet"),
    writes=out_files("sets/sets.parquet", "sets/dropped.parquet", "sets/sets.json"),
    settings=lambda ctx, arg: [],
)
def synonyms_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """A set a majority of its judges says holds two synonyms is dropped
    (``synonyms_in_targets``); one nobody judged too (``not_judged``)."""

    def compute() -> tuple[dict, dict]:
        sets = pd.read_parquet(ctx.out / "question-sets" / "items.parquet")
        given, _ = answers_of(
            pd.read_parquet(ctx.out / "annotate" / "synonyms.parquet"), "synonyms"
        )
        keep, dropped = [], []
        for row in sets.itertuples():
            votes = given.get(row.item_id, [])
            if not votes:
                dropped.append(
                    {"kind": "set", "id": row.item_id, "reason": "not_judged", "detail": row.shown}
                )
            elif votes.count("yes") * 2 > len(votes):
                dropped.append(
                    {
                        "kind": "set",
                        "id": row.item_id,
                        "reason": "synonyms_in_targets",
                        "detail": f"{votes.count('yes')} of {len(votes)}: {row.shown}",
                    }
                )
            else:
                keep.append(row.item_id)
        kept = sets[sets["item_id"].isin(keep)].reset_index(drop=True)
        out = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        return {"sets.parquet": kept, "dropped.parquet": out}, {
            "sets": len(sets),
            "kept": len(kept),
            "dropped": value_counts(out["reason"]),
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['sets']:,} question sets without synonyms",
        Rows("set", info["sets"], info["kept"], info["dropped"]),
    )


# -------------------------------------------------------------------------- writing


def shown_choices(answer: str, others: list[str]) -> str:
    """The choices as JGLUE's writing task shows them: the answer in 【】."""
    return ", ".join([f"【{answer}】", *others])


@declares(
    reads=out_files("sets/sets.parquet"),
    writes=out_files("writing/items.parquet", "writing/items.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def writing_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Three writing tasks per question set: each target once the answer, the other
    two its distractors."""
    writers = _writers(ctx)

    def compute() -> tuple[dict, dict]:
        sets = pd.read_parquet(ctx.out / "sets" / "sets.parquet")
        rows = []
        for s in sets.itertuples():
            targets = list(s.targets)
            for k, answer in enumerate(targets):
                others = [t for t in targets if t != answer]
                row = {
                    "item_id": f"{s.item_id}-t{k}",
                    "set_id": s.item_id,
                    "source": s.source,
                    "relation": s.relation,
                    "answer": answer,
                    "others": others,
                    "shown": shown_choices(answer, others),
                }
                if ctx.simulated:
                    w = writers.get((s.source, s.relation, answer)) or {}
                    row["sim_question"] = w.get("question") or f"{s.source}と関係があるものは？"
                rows.append(row)
        items = pd.DataFrame(rows)
        return {"items.parquet": items}, {"items": len(items), "sets": len(sets)}

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} writing tasks on {info['sets']:,} sets",
        Rows("task", info["items"], info["items"]),
    )


QUESTION_FILTERS = ("no_question_mark", "contains_choice", "xx_characters")


def _as_question(question: str, choices: list[str]) -> dict:
    padded = [*choices, "", "", "", "", ""][:5]
    return {"question": question, **{f"choice{i}": c for i, c in enumerate(padded)}}


@declares(
    reads=out_files("writing/items.parquet", "annotate/writing.parquet"),
    writes=out_files(
        "questions/questions.parquet", "questions/dropped.parquet", "questions/questions.json"
    ),
    settings=lambda ctx, arg: [list(QUESTION_FILTERS)],
)
def questions_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The written questions through the three question filters (JGLUE's writing
    guideline); each task without a kept question has its reason (a task its writer
    reported ``reported:<flag>``)."""
    from pipelines.families.jcqa.filters import JCQA_FILTERS

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(ctx.out / "writing" / "items.parquet")
        writing = pd.read_parquet(ctx.out / "annotate" / "writing.parquet")
        given, skipped = answers_of(writing, "question")
        reported = first_reports(writing)
        kept, dropped = [], []
        for row in items.to_dict("records"):
            if row["item_id"] in reported:
                flag = reported[row["item_id"]]
                dropped.append({"kind": "task", "id": row["item_id"],
                                "reason": f"reported:{flag}", "detail": row["shown"]})  # fmt: skip
                continue
            texts = given.get(row["item_id"])
            if not texts:
                reason = "skipped" if row["item_id"] in skipped else "not_written"
                dropped.append(
                    {"kind": "task", "id": row["item_id"], "reason": reason, "detail": row["shown"]}
                )
                continue
            question = texts[0].strip()
            q = _as_question(question, [row["answer"], *row["others"]])
            why = next(((n, d) for n in QUESTION_FILTERS if (d := JCQA_FILTERS.get(n)(q))), None)
            if not question or why:
                reason, detail = why or ("empty_question", "")
                dropped.append(
                    {
                        "kind": "task",
                        "id": row["item_id"],
                        "reason": reason,
                        "detail": f"{detail}: {question[:60]}",
                    }
                )
                continue
            kept.append(
                {**{k: v for k, v in row.items() if not k.startswith("sim_")}, "question": question}
            )
        out = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        frame = pd.DataFrame(kept)
        return {"questions.parquet": frame, "dropped.parquet": out}, {
            "tasks": len(items),
            "questions": len(frame),
            "dropped": value_counts(out["reason"]),
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['questions']:,} of {info['tasks']:,} questions pass the filters",
        Rows("task", info["tasks"], info["questions"], info["dropped"]),
        after=f"; dropped {info['dropped']}",
    )


# ---------------------------------------------------------------------- distractors


@declares(
    reads=out_files("questions/questions.parquet"),
    writes=out_files("distractor-items/items.parquet", "distractor-items/items.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def distractor_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Each kept question with its three choices, for two more distractors."""
    writers = _writers(ctx)

    def compute() -> tuple[dict, dict]:
        qs = pd.read_parquet(ctx.out / "questions" / "questions.parquet")
        items = qs[["item_id", "question", "answer", "shown", "source", "relation"]].copy()
        if ctx.simulated:
            items["sim_distractors"] = [
                "@".join(
                    (writers.get((r.source, r.relation, r.answer)) or {}).get("distractors")
                    or ["ほか", "その他"]
                )
                for r in qs.itertuples()
            ]
        return {"items.parquet": items}, {"items": len(items)}

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} questions for distractors",
        Rows("question", info["items"], info["items"]),
    )


def check_distractors(
    question: str, choices: list[str], written: str
) -> tuple[list[str], str | None]:
    """(the two distractors, why they fail or None): ``malformed_distractors`` unless
    two ``@``-separated words; ``existing_choice`` when one repeats a choice already there
    or a spelling variant of it (the same UniDic lemmas); ``distractor_in_question``
    when one is a word of the question (JGLUE's distractor guideline)."""
    from pipelines.families.jcqa.filters import spelling_variants

    parts = [p.strip() for p in written.replace("＠", "@").split("@")]
    if len(parts) != 2 or not all(parts):
        return parts, "malformed_distractors"
    why = spelling_variants(_as_question(question, [*choices, *parts]))
    if why or parts[0] == parts[1]:
        return parts, "existing_choice"
    if any(p in question for p in parts):
        return parts, "distractor_in_question"
    return parts, None


@declares(
    reads=out_files("questions/questions.parquet", "annotate/distractors.parquet"),
    writes=out_files(
        "distractors/questions.parquet",
        "distractors/dropped.parquet",
        "distractors/distractors.json",
    ),
    settings=lambda ctx, arg: [spec_of(ctx).seed],
)
def distractors_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The written distractors through the two filters; a kept question's five choices
    shuffled (seeded), its label the answer's index."""
    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        qs = pd.read_parquet(ctx.out / "questions" / "questions.parquet")
        given, skipped = answers_of(
            pd.read_parquet(ctx.out / "annotate" / "distractors.parquet"), "distractors"
        )
        rng = np.random.default_rng(spec.seed)
        kept, dropped = [], []
        for row in qs.to_dict("records"):
            written = given.get(row["item_id"])
            if not written:
                reason = "skipped" if row["item_id"] in skipped else "not_written"
                dropped.append(
                    {"kind": "question", "id": row["item_id"], "reason": reason, "detail": ""}
                )
                continue
            choices = [row["answer"], *row["others"]]
            parts, why = check_distractors(row["question"], choices, written[0])
            if why:
                dropped.append(
                    {
                        "kind": "question",
                        "id": row["item_id"],
                        "reason": why,
                        "detail": "@".join(parts),
                    }
                )
                continue
            five = [*choices, *parts]
            order = rng.permutation(5)
            shuffled = [five[i] for i in order]
            kept.append(
                {
                    "item_id": row["item_id"],
                    "set_id": row["set_id"],
                    "question": row["question"],
                    "answer": row["answer"],
                    **{f"choice{i}": c for i, c in enumerate(shuffled)},
                    "label": shuffled.index(row["answer"]),
                    "source": row["source"],
                    "relation": row["relation"],
                }
            )
        out = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        frame = pd.DataFrame(kept)
        return {"questions.parquet": frame, "dropped.parquet": out}, {
            "questions": len(qs),
            "kept": len(frame),
            "dropped": value_counts(out["reason"]),
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['questions']:,} questions with five choices",
        Rows("question", info["questions"], info["kept"], info["dropped"]),
        after=f"; dropped {info['dropped']}",
    )


# --------------------------------------------------------------------------- answers


def answer_options(question: dict) -> list[dict]:
    """The answer round's options of one question (``<Choices value="$answer_options">``):
    its five choices in their order, then わからない, each stored as itself, with the
    hotkeys 1-6 (:func:`~pipelines.annotation.label_config.dynamic_options`)."""
    return dynamic_options([*(str(question[f"choice{i}"]) for i in range(5)), UNKNOWN])


@declares(
    reads=out_files("distractors/questions.parquet"),
    writes=out_files("answer-items/items.parquet", "answer-items/items.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def answer_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Each question with its five choices and わからない, for the answerers."""

    def compute() -> tuple[dict, dict]:
        qs = pd.read_parquet(ctx.out / "distractors" / "questions.parquet")
        items = pd.DataFrame(
            {
                "item_id": qs["item_id"],
                "question": qs["question"],
                "answer_options": [answer_options(r) for r in qs.to_dict("records")],
            }
        )
        if ctx.simulated:
            items["sim_answer"] = qs["answer"].to_numpy()
        return {"items.parquet": items}, {"items": len(items)}

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} questions to answer",
        Rows("question", info["items"], info["items"]),
    )


def answer_rule(
    qs: pd.DataFrame, given: dict[str, list[str]], min_correct: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(kept, dropped, figures): a question is kept when at least ``min_correct`` of
    its answerers chose its answer (JGLUE 3.4.2: 2 of 3); figures: the answerers'
    accuracy and the share of わからない."""
    kept, dropped, right, total, unknown = [], [], 0, 0, 0
    for row in qs.to_dict("records"):
        votes = given.get(row["item_id"], [])
        correct = votes.count(row["answer"])
        right += correct
        total += len(votes)
        unknown += votes.count(UNKNOWN)
        if correct >= min_correct:
            kept.append({**row, "correct_votes": correct, "votes": len(votes)})
        else:
            reason = "not_answered" if not votes else "too_few_correct"
            dropped.append(
                {
                    "kind": "question",
                    "id": row["item_id"],
                    "reason": reason,
                    "detail": f"{correct} of {len(votes)} right",
                }
            )
    figures = {
        "answers": total,
        "accuracy": round(right / total, 4) if total else None,
        "unknown_share": round(unknown / total, 4) if total else None,
    }
    return (
        pd.DataFrame(kept),
        pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"]),
        figures,
    )


@declares(
    reads=out_files("distractors/questions.parquet", "annotate/answers.parquet"),
    writes=out_files("final/questions.parquet", "final/dropped.parquet", "final/answers.json"),
    settings=lambda ctx, arg: [spec_of(ctx).min_correct],
)
def answers_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Kept when at least ``min_correct`` of the answerers are right."""
    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        qs = pd.read_parquet(ctx.out / "distractors" / "questions.parquet")
        given, _ = answers_of(pd.read_parquet(ctx.out / "annotate" / "answers.parquet"), "answer")
        kept, dropped, figures = answer_rule(qs, given, spec.min_correct)
        return {"questions.parquet": kept, "dropped.parquet": dropped}, {
            "questions": len(qs),
            "kept": len(kept),
            "dropped": value_counts(dropped["reason"]),
            "min_correct": spec.min_correct,
            **figures,
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['questions']:,} questions answered right by "
        f"{info['min_correct']}+",
        Rows("question", info["questions"], info["kept"], info["dropped"]),
        after=f"; answerers' accuracy {info['accuracy']}",
    )


def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule over the kept questions (after the final check, when the
    recipe runs it; ``group_columns: [set_id]`` keeps a question set in one split) ->
    OUT/split."""
    return split_over(ctx, kept_questions(ctx.out, ctx.recipe), "question")


def kept_questions(out: Path, recipe: Recipe) -> Path:
    """The questions the release is made of: ``check/`` after the final check, else
    ``final/``."""
    folder = "check" if recipe.jcqa.final_check else "final"
    return out / folder / "questions.parquet"
