"""The reading-comprehension steps (JSQuAD, JGLUE 3.3; KLUE-MRC, KLUE 3.7).

``paragraphs`` (articles read, scored and drawn; :mod:`.sources`) -> ``writing-items``
(``questions_per_paragraph`` writing tasks per paragraph, KLUE-MRC's question type
drawn per task, an unanswerable task shown its most similar other paragraph) -> the
writing round -> ``questions`` (every written question through the checks of
:mod:`.checks`, each drop with its reason) -> ``split`` (the recipe's rule, grouped by
article: no article in two splits) -> ``validation-items`` (the dev and test questions)
-> the validation round (JSQuAD: "two additional answers for the dev and test sets")
-> ``answers`` (exact match and character F1 between the writer's and each
validator's answer; the ``min_validator_answers`` rule) -> ``export`` (:mod:`.export`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.rebuild.rounds import spec_config, spec_round
from pipelines.rebuild.split import split_over

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.families.reading.section import ReadingSpec
    from pipelines.lang import Language

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
ROUND_CONFIGS = {
    ("jsquad", "writing"): "jsquad_writing.xml",
    ("klue-mrc", "writing"): "klue_mrc_writing.xml",
    ("jsquad", "validation"): "jsquad_validation.xml",
    ("klue-mrc", "validation"): "klue_mrc_validation.xml",
}
ROUND_POOLS = {"writing": "writer", "validation": "validator"}

INSTRUCTIONS = {
    "answerable": "文章を読んで、文章中の語句を答えとする質問を1つ書き、"
    "答えの範囲を文章中で選択してください。",
    "paraphrase": "문단의 한 문장을 다른 말로 바꾸어(어휘를 그대로 베끼지 말고) 질문을 쓰고, "
    "답을 문단에서 선택하세요.",
    "multi_sentence": "문단의 두 문장 이상을 종합해야 답할 수 있는 질문을 쓰고, "
    "답을 문단에서 선택하세요.",
    "unanswerable": "아래 '비슷한 문단'의 내용으로 질문을 쓰세요. 위 문단으로는 답할 수 없어야 "
    "하며, 답은 선택하지 마세요.",
}


def spec_of(ctx: RunContext) -> ReadingSpec:
    return ctx.recipe.reading


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The writing round (``reading.writing_round``) and the validation round."""
    from pipelines.annotation.settings import SimulateSpec

    found = {}
    for name in ("writing", "validation"):
        r = getattr(spec_of(ctx), f"{name}_round")
        found[name] = spec_round(
            ctx, name, r, ctx.out / name / "items.parquet",
            CONFIGS / ROUND_CONFIGS[(ctx.task.name, name)], ROUND_POOLS[name],
            SimulateSpec(annotators=max(3, r.people)),
        )  # fmt: skip
    return found


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    return [
        (f"reading.{name}_round.config",
         spec_config(recipe, getattr(recipe.reading, f"{name}_round"),
                     CONFIGS / ROUND_CONFIGS[(recipe.task, name)]))
        for name in ("writing", "validation")
    ]  # fmt: skip


def preflight(recipe: Recipe) -> None:
    """Every source reads as articles (a bad file fails here, naming it)."""
    from pipelines.families.reading.sources import read_sources

    read_sources(recipe, recipe.reading)
    sim = recipe.reading.simulation
    if sim.reference:
        from pipelines.families.reading.simulate import read_references

        read_references(recipe.resolve(sim.reference))


def _source_paths(ctx: RunContext, arg: str) -> dict[str, Path]:
    by_name = {c.name: c for c in ctx.recipe.corpora}
    spec = spec_of(ctx)
    paths = {s.corpus: ctx.recipe.corpus_path(by_name[s.corpus]) for s in spec.sources}
    if spec.scorer == "list":
        paths["scores"] = ctx.recipe.resolve(spec.scores)
    return paths


# ------------------------------------------------------------------------ paragraphs


@declares(
    reads=_source_paths,
    writes=out_files(
        "paragraphs/paragraphs.parquet",
        "paragraphs/dropped.parquet",
        "paragraphs/articles.parquet",
        "paragraphs/paragraphs.json",
    ),
    settings=lambda ctx, arg: [
        spec_of(ctx).model_dump(
            include={
                "sources",
                "scorer",
                "articles",
                "top_share",
                "paragraphs_per_article",
                "min_chars",
                "max_chars",
                "pack",
                "seed",
            }
        )
    ],
)
def paragraphs_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Articles read from ``reading.sources``, scored (``reading.scorer``), drawn at
    random from the top share, split into paragraphs and drawn per article; every
    paragraph not kept in paragraphs/dropped.parquet with its reason."""
    from pipelines.families.reading.sources import SCORERS, read_sources, select_paragraphs

    spec = spec_of(ctx)
    licences = {c.name: c.license for c in ctx.recipe.corpora}

    def compute() -> tuple[dict, dict]:
        articles = read_sources(ctx.recipe, spec)
        scores = SCORERS.get(spec.scorer)([a for _, a in articles], spec, ctx.recipe)
        kept, dropped, table = select_paragraphs(articles, scores, spec)
        kept["license"] = kept["source"].map(licences)
        total = len(kept) + len(dropped)
        info = {
            "articles": len(table),
            "articles_drawn": int((table["status"] == "drawn").sum()),
            "scorer": spec.scorer,
            "paragraphs_in": total,
            "paragraphs": len(kept),
            "dropped": value_counts(dropped["reason"]),
            "per_source": value_counts(kept["source"]),
            "mean_chars": round(float(kept["paragraph"].str.len().mean()), 1)
            if len(kept)
            else None,
            "drawn_titles": sorted(kept["title"].unique().tolist()),
        }
        return {
            "paragraphs.parquet": kept,
            "dropped.parquet": dropped,
            "articles.parquet": table,
        }, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['paragraphs']:,} paragraphs of {info['articles_drawn']} drawn articles "
        f"({info['articles']} read)",
        Rows("paragraph", info["paragraphs_in"], info["paragraphs"], info["dropped"]),
        after=f"; dropped {info['dropped']}",
    )


# --------------------------------------------------------------------- writing items


def draw_types(n: int, shares: dict[str, float], rng: np.random.Generator) -> list[str]:
    """``n`` question types in the proportions of ``shares`` (largest remainder), in a
    seeded order (KLUE-MRC: the type is set per writing task)."""
    names = sorted(shares)
    total = sum(shares.values())
    exact = [n * shares[t] / total for t in names]
    counts = [int(x) for x in exact]
    for i in sorted(range(len(names)), key=lambda i: counts[i] - exact[i])[: n - sum(counts)]:
        counts[i] += 1
    out = [t for t, c in zip(names, counts, strict=True) for _ in range(c)]
    return [out[i] for i in rng.permutation(len(out))]


def similar_paragraphs(texts: list[str], groups: list[str]) -> list[int]:
    """For each text, the most similar text of another group (TF-IDF over character 2-3
    grams, cosine; scikit-learn): KLUE-MRC's unanswerable questions are written from a
    similar paragraph; -1 when there is none."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    if len(texts) < 2:
        return [-1] * len(texts)
    matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3)).fit_transform(texts)
    sims = cosine_similarity(matrix)
    g = np.asarray(groups)
    sims[g[:, None] == g[None, :]] = -1.0
    best = sims.argmax(axis=1)
    return [int(b) if sims[i, b] > -1 else -1 for i, b in enumerate(best)]


def context_of(spec: ReadingSpec, title: str, paragraph: str) -> tuple[str, int]:
    """The context shown and released (``reading.context_format``) and where the
    paragraph starts in it."""
    context = spec.context_format.format(title=title, paragraph=paragraph)
    head = spec.context_format.split("{paragraph}")[0].format(title=title)
    return context, len(head)


@declares(
    reads=lambda ctx, arg: {
        "paragraphs": ctx.out / "paragraphs" / "paragraphs.parquet",
        **(
            {"reference": ctx.recipe.resolve(spec_of(ctx).simulation.reference)}
            if ctx.simulated and spec_of(ctx).simulation.reference
            else {}
        ),
    },
    writes=out_files("writing/items.parquet", "writing/items.json"),
    settings=lambda ctx, arg: [
        spec_of(ctx).model_dump(
            include={
                "questions_per_paragraph",
                "question_types",
                "context_format",
                "seed",
                "simulation",
            }
        ),
        ctx.simulated,
        ctx.recipe.language,
        ctx.task.name,
    ],
)
def writing_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """``questions_per_paragraph`` writing tasks per paragraph (item ``<paragraph>-q<k>``),
    each with its question type (KLUE-MRC's drawn in the recipe's shares) and, for an
    unanswerable one, the most similar paragraph of another article."""
    from pipelines.families.reading.simulate import (
        paragraph_references,
        read_references,
        writer_truth,
    )
    from pipelines.lang import language

    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        paras = pd.read_parquet(ctx.out / "paragraphs" / "paragraphs.parquet")
        rng = np.random.default_rng(spec.seed)
        n = spec.questions_per_paragraph
        types = draw_types(len(paras) * n, spec.question_types, rng)
        similar = similar_paragraphs(paras["paragraph"].tolist(), paras["article_id"].tolist())
        lang = language(ctx.recipe.language)
        hand = (
            read_references(ctx.recipe.resolve(spec.simulation.reference))
            if ctx.simulated and spec.simulation.reference
            else []
        )
        rows, used = [], set()
        records = paras.to_dict("records")
        contexts = [context_of(spec, r["title"], r["paragraph"]) for r in records]
        for i, row in enumerate(records):
            context, offset = contexts[i]
            for k in range(n):
                qtype = types[i * n + k]
                item = {
                    "item_id": f"{row['paragraph_id']}-q{k}",
                    "paragraph_id": row["paragraph_id"],
                    "article_id": row["article_id"],
                    "title": row["title"],
                    "context": context,
                    "question_type": qtype,
                    "instruction": INSTRUCTIONS[qtype],
                    "similar_title": "",
                    "similar": "",
                    "source": row["source"],
                    "license": row["license"],
                }
                j = similar[i] if qtype == "unanswerable" else -1
                if qtype == "unanswerable":
                    if j < 0:
                        raise ValueError(
                            "an unanswerable task needs a paragraph of another "
                            "article: the run has one article"
                        )
                    item["similar_title"] = records[j]["title"]
                    item["similar"] = contexts[j][0]
                if ctx.simulated:
                    src = records[j] if j >= 0 else row
                    src_context, src_offset = contexts[j] if j >= 0 else (context, offset)
                    refs = paragraph_references(src, hand, src_context, src_offset)
                    task = {
                        "question_type": qtype,
                        "context": context,
                        "source_context": src_context,
                    }
                    item.update(writer_truth(task, refs, used, lang, spec.simulation, rng))
                rows.append(item)
        items = pd.DataFrame(rows)
        info = {
            "items": len(items),
            "paragraphs": len(paras),
            "per_type": value_counts(items["question_type"]) if len(items) else {},
            "simulated_from": value_counts(items["sim_source"]) if "sim_source" in items else None,
        }
        return {"items.parquet": items}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} writing tasks on {info['paragraphs']:,} paragraphs",
        Rows("task", info["items"], info["items"]),
        after=f": {info['per_type']}",
    )


# ------------------------------------------------------------------------- questions


def _answer(value: object) -> dict | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    text = str(value)
    if not text or text == "no_answer":
        return None
    return json.loads(text)


def written_questions(
    writing: pd.DataFrame, items: pd.DataFrame, spec: ReadingSpec, lang: Language
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(questions, dropped): one question per writing task that its writer submitted
    and that passed every check (:mod:`.checks`), with its lexical overlap; every other
    task with its reason (``skipped``, ``reported:<flag>``, ``not_written``, a check's
    reason)."""
    from pipelines.families.reading.checks import lexical_overlap, run_checks

    done = writing
    if "cancelled" in done.columns:
        skipped = set(done.loc[done["cancelled"].fillna(False).astype(bool), "item_id"].astype(str))
        done = done[~done["cancelled"].fillna(False).astype(bool)]
    else:
        skipped = set()
    done = done.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")
    first = {}
    for item, group in done.groupby(done["item_id"].astype(str), sort=False):
        a = group[group["annotation_id"] == group["annotation_id"].iloc[0]]
        first[item] = (
            dict(zip(a["field"], a["value"], strict=True)),
            str(a["annotator_id"].iloc[0]),
        )
    kept, dropped, seen = [], [], {}
    for row in items.to_dict("records"):
        item = row["item_id"]
        if item not in first:
            reason = "skipped" if item in skipped else "not_written"
            dropped.append({"kind": "question", "id": item, "reason": reason, "detail": ""})
            continue
        fields, writer = first[item]
        report = fields.get("report")
        if report and str(report) not in ("None", "nan"):
            dropped.append(
                {
                    "kind": "question",
                    "id": item,
                    "reason": f"reported:{report}",
                    "detail": str(report),
                }
            )
            continue
        answer = _answer(fields.get("answer"))
        question = str(fields.get("question") or "").strip()
        q = {
            "question": question,
            "answer": answer,
            "context": row["context"],
            "question_type": row["question_type"],
            "paragraph_id": row["paragraph_id"],
            "language": lang.code,
        }
        q["overlap"] = (
            lexical_overlap(question, row["context"], answer["start"] if answer else None, lang)
            if question
            else None
        )
        reason = run_checks(q, seen, spec)
        if reason:
            dropped.append(
                {"kind": "question", "id": item, "reason": reason, "detail": question[:80]}
            )
            continue
        kept.append(
            {
                "item_id": item,
                "paragraph_id": row["paragraph_id"],
                "article_id": row["article_id"],
                "title": row["title"],
                "context": row["context"],
                "question": question,
                "question_type": row["question_type"],
                "is_impossible": answer is None,
                "answer_start": answer["start"] if answer else None,
                "answer_text": answer["text"] if answer else None,
                "writer": writer,
                "overlap": q["overlap"],
                "overlap_flagged": q["overlap"] is not None and q["overlap"] >= spec.overlap_max,
                "source": row["source"],
                "license": row["license"],
                **(
                    {"sim_validation": row["sim_validation"], "sim_source": row["sim_source"]}
                    if "sim_validation" in row
                    else {}
                ),
            }
        )
    return (pd.DataFrame(kept), pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"]))


def reference_figures(paragraphs: pd.DataFrame, spec: ReadingSpec, lang: Language) -> dict | None:
    """The same figures on the source file's own questions of the drawn paragraphs
    (JSQuAD's release): how many, the share the question check passes, their lexical
    overlap, and exact match and character F1 between the writer's answer and each
    validator's (JGLUE 3.3.1's measure)."""
    from pipelines.annotation.values.spans import answer_f1
    from pipelines.families.reading.checks import is_question, lexical_overlap

    qs = []
    for row in paragraphs.to_dict("records"):
        context, offset = context_of(spec, row["title"], row["paragraph"])
        for q in json.loads(row["questions"] or "[]"):
            qs.append((q, context, offset))
    if not qs:
        return None
    overlaps, passing, em, f1, pairs, answers = [], 0, 0.0, 0.0, 0, []
    for q, context, offset in qs:
        passing += is_question(q["question"], lang.code)
        start = q["answers"][0]["answer_start"] + offset if q["answers"] else None
        o = lexical_overlap(q["question"], context, start, lang)
        if o is not None:
            overlaps.append(o)
        rows = [json.dumps({"text": a["text"]}) for a in q["answers"]]
        answers.append(len(rows))
        for other in rows[1:]:
            pairs += 1
            em += json.loads(rows[0])["text"] == json.loads(other)["text"]
            f1 += answer_f1(rows[0], other)
    o = np.asarray(overlaps)
    return {
        "questions": len(qs),
        "question_check_pass": round(passing / len(qs), 4),
        "overlap_mean": round(float(o.mean()), 4) if len(o) else None,
        "overlap_flagged": round(float((o >= spec.overlap_max).mean()), 4) if len(o) else None,
        "answers_per_question": value_counts(pd.Series(answers)),
        "exact_match": round(em / pairs, 4) if pairs else None,
        "character_f1": round(f1 / pairs, 4) if pairs else None,
        "pairs": pairs,
    }


@declares(
    reads=out_files(
        "annotate/writing.parquet", "writing/items.parquet", "paragraphs/paragraphs.parquet"
    ),
    writes=out_files(
        "questions/questions.parquet", "questions/dropped.parquet", "questions/questions.json"
    ),
    settings=lambda ctx, arg: [
        spec_of(ctx).model_dump(
            include={"checks", "overlap_max", "drop_overlap", "context_format"}
        ),
        ctx.recipe.language,
    ],
    code=lambda ctx, arg: ["pipelines.families.reading.checks"],
)
def questions_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The written questions through the checks (``reading.checks``, in order); every
    task without a kept question in questions/dropped.parquet with its reason; the same
    figures on the source's own questions beside them (``reference``)."""
    from pipelines.lang import language

    spec = spec_of(ctx)
    lang = language(ctx.recipe.language)

    def compute() -> tuple[dict, dict]:
        items = pd.read_parquet(ctx.out / "writing" / "items.parquet")
        writing = pd.read_parquet(ctx.out / "annotate" / "writing.parquet")
        kept, dropped = written_questions(writing, items, spec, lang)
        paras = pd.read_parquet(ctx.out / "paragraphs" / "paragraphs.parquet")
        o = kept["overlap"].dropna() if len(kept) else pd.Series(dtype=float)
        info = {
            "tasks": len(items),
            "questions": len(kept),
            "dropped": value_counts(dropped["reason"]),
            "per_type": value_counts(kept["question_type"]) if len(kept) else {},
            "overlap_mean": round(float(o.mean()), 4) if len(o) else None,
            "overlap_flagged": int(kept["overlap_flagged"].sum()) if len(kept) else 0,
            "overlap_flagged_share": round(float((o >= spec.overlap_max).mean()), 4)
            if len(o)
            else None,
            "overlap_max": spec.overlap_max,
            "drop_overlap": spec.drop_overlap,
            "reference": reference_figures(paras, spec, lang),
            "simulated_from": value_counts(kept["sim_source"]) if "sim_source" in kept else None,
        }
        return {"questions.parquet": kept, "dropped.parquet": dropped}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['questions']:,} of {info['tasks']:,} written questions kept",
        Rows("question", info["tasks"], info["questions"], info["dropped"]),
        after=f"; dropped {info['dropped']}; lexical overlap mean "
        f"{info['overlap_mean']}, {info['overlap_flagged']} at or over {info['overlap_max']}",
    )


# ----------------------------------------------------------------------------- split


def split_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The recipe's split rule over the kept questions (grouped by ``article_id`` in
    the demos: JSQuAD and KLUE-MRC keep an article in one split) -> OUT/split."""
    return split_over(ctx, ctx.out / "questions" / "questions.parquet", "question")


# ------------------------------------------------------------------- validation items


@declares(
    reads=out_files("questions/questions.parquet", "split/splits.parquet"),
    writes=out_files("validation/items.parquet", "validation/items.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def validation_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dev and test questions, for the validators to answer (context and question;
    the writer's answer is not shown)."""

    def compute() -> tuple[dict, dict]:
        qs = pd.read_parquet(ctx.out / "questions" / "questions.parquet")
        splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")[["item_id", "split"]]
        qs = qs.merge(splits, on="item_id", validate="one_to_one")
        evals = qs[qs["split"].isin(["dev", "test"])]
        cols = ["item_id", "title", "context", "question", "source"]
        items = evals[cols].copy()
        if ctx.simulated and "sim_validation" in evals:
            items["sim_answer"] = evals["sim_validation"].to_numpy()
        items = items.sort_values("item_id", kind="stable").reset_index(drop=True)
        return {"items.parquet": items}, {
            "items": len(items),
            "train": int((qs["split"] == "train").sum()),
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} dev/test questions to validate",
        Rows("question", info["items"], info["items"]),
    )


# --------------------------------------------------------------------------- answers


def validated(
    questions: pd.DataFrame, splits: pd.DataFrame, validation: pd.DataFrame, min_answers: int
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(final questions, dropped, figures): each dev/test question with its validators'
    answers (``answers``: the writer's first, then each validator's span, in the order
    given; JSQuAD's dev has 3 or 2). An answerable question fewer than ``min_answers``
    validators could answer (marked a span) is dropped as ``no_validator_answer``; an
    unanswerable one (KLUE-MRC) a validator found an answer to as
    ``answered_by_validator``. Figures: exact match and character F1 between the
    writer's answer and each validator's (JGLUE 3.3.1; no answer matches only no
    answer), over every validator answer given."""
    from pipelines.annotation.values.spans import NO_ANSWER, answer_f1

    qs = questions.merge(splits[["item_id", "split"]], on="item_id", validate="one_to_one")
    rows = validation
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    rows = rows[rows["field"] == "answer"].sort_values(
        ["item_id", "created_at", "annotation_id"], kind="stable"
    )
    given = {str(k): g for k, g in rows.groupby("item_id", sort=False)}
    out, dropped, pairs, em, f1 = [], [], 0, 0.0, 0.0
    per_split = {}
    for q in qs.to_dict("records"):
        q["answers"] = (
            []
            if q["is_impossible"]
            else [{"text": q["answer_text"], "answer_start": int(q["answer_start"])}]
        )
        q["validators"] = 0
        if q["split"] in ("dev", "test"):
            mine = given.get(q["item_id"])
            values = [] if mine is None else [str(v) for v in mine["value"]]
            writer = (
                NO_ANSWER
                if q["is_impossible"]
                else json.dumps({"text": q["answer_text"]}, ensure_ascii=False)
            )
            spans = [json.loads(v) for v in values if v != NO_ANSWER]
            for v in values:
                pairs += 1
                other = (
                    v
                    if v == NO_ANSWER
                    else json.dumps({"text": json.loads(v)["text"]}, ensure_ascii=False)
                )
                em += writer == other
                f1 += answer_f1(writer, other)
            q["validators"] = len(values)
            if q["is_impossible"] and spans:
                dropped.append(
                    {
                        "kind": "question",
                        "id": q["item_id"],
                        "reason": "answered_by_validator",
                        "detail": f"{len(spans)} of {len(values)} validators marked a span",
                    }
                )
                continue
            if not q["is_impossible"] and len(spans) < min_answers:
                reason = "not_validated" if not values else "no_validator_answer"
                dropped.append(
                    {
                        "kind": "question",
                        "id": q["item_id"],
                        "reason": reason,
                        "detail": f"{len(spans)} of {len(values)} validators answered",
                    }
                )
                continue
            q["answers"] += [{"text": s["text"], "answer_start": int(s["start"])} for s in spans]
        per_split[q["split"]] = per_split.get(q["split"], 0) + 1
        out.append(q)
    figures = {
        "validator_answers": pairs,
        "exact_match": round(em / pairs, 4) if pairs else None,
        "character_f1": round(f1 / pairs, 4) if pairs else None,
        "per_split": per_split,
    }
    return (
        pd.DataFrame(out),
        pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"]),
        figures,
    )


@declares(
    reads=out_files(
        "questions/questions.parquet", "split/splits.parquet", "annotate/validation.parquet"
    ),
    writes=out_files("final/questions.parquet", "final/dropped.parquet", "final/answers.json"),
    settings=lambda ctx, arg: [spec_of(ctx).min_validator_answers],
)
def answers_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The validators' answers joined to the dev/test questions; the
    ``min_validator_answers`` rule (JSQuAD's dev: every question has two or three
    answers); exact match and character F1 between writer and validators."""
    spec = spec_of(ctx)

    def compute() -> tuple[dict, dict]:
        qs = pd.read_parquet(ctx.out / "questions" / "questions.parquet")
        splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")
        validation = pd.read_parquet(ctx.out / "annotate" / "validation.parquet")
        final, dropped, figures = validated(qs, splits, validation, spec.min_validator_answers)
        final = final.assign(
            answers=final["answers"].map(lambda a: json.dumps(a, ensure_ascii=False))
        )
        evals = int(splits["split"].isin(["dev", "test"]).sum())
        info = {
            "questions": len(qs),
            "evaluation_questions": evals,
            "kept": len(final),
            "dropped": value_counts(dropped["reason"]),
            "min_validator_answers": spec.min_validator_answers,
            **figures,
        }
        return {"questions.parquet": final, "dropped.parquet": dropped}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['questions']:,} questions kept",
        Rows("question", info["questions"], info["kept"], info["dropped"]),
        after=f"; dropped {info['dropped']}; writer vs validators "
        f"EM {info['exact_match']}, char F1 {info['character_f1']}",
    )
