"""JCommonsenseQA's last filter (JGLUE 3.4.2): "Finally, we filtered out 14 questions
based on automatic pattern matching and manual checking."

The paper names no pattern. benchforge's automatic pattern matching (``check-items``)
runs JGLUE's own question filters (:mod:`pipelines.families.jcqa.filters`: ``contains_choice``,
``xx_characters``, ``no_question_mark``, ``spelling_variants``) over each kept question
with its five final choices, and adds ``repeated_question`` (the same question text,
after NFKC and without spaces, as a question kept before it). The matched questions go to
a person in the ``check`` round (``annotation_configs/jcqa_check.xml``), who keeps or
removes each; ``check`` removes a question most of its checkers remove (reason
``manual_check``, the match in ``detail``; a tie keeps it). ``jcqa.final_check: false``
skips the three (a departure the card states). Simulated checkers remove what matched.
"""

from __future__ import annotations

import unicodedata

import pandas as pd

from pipelines.core.stage import value_counts
from pipelines.core.steps import Rows, RunContext, StepOutcome, cached, declares, out_files

ITEM_COLUMNS = ["item_id", "question", "choices", "answer", "match"]


def _text(s: str) -> str:
    return "".join(unicodedata.normalize("NFKC", str(s)).split())


def pattern_matches(questions: pd.DataFrame) -> pd.Series:
    """What matched each question (``""``: nothing): the first of JGLUE's question
    filters it fails, else ``repeated_question``."""
    from pipelines.families.jcqa.filters import JCQA_FILTERS

    seen: set[str] = set()
    out = []
    for row in questions.to_dict("records"):
        q = {"question": row["question"], **{f"choice{i}": row[f"choice{i}"] for i in range(5)}}
        failed = next((name for name, rule in JCQA_FILTERS.items() if rule(q)), "")
        text = _text(row["question"])
        out.append(failed or ("repeated_question" if text in seen else ""))
        seen.add(text)
    return pd.Series(out, index=questions.index, dtype=object)


def check_items(questions: pd.DataFrame, simulated: bool = False) -> pd.DataFrame:
    """The check round's items: the matched questions with their five choices, answer and
    match; ``simulated``: ``sim_decision`` remove (the checker confirms the match)."""
    match = pattern_matches(questions)
    picked = questions[match != ""]
    items = pd.DataFrame(
        {
            "item_id": picked["item_id"].astype(str),
            "question": picked["question"],
            "choices": [
                " / ".join(str(r[f"choice{i}"]) for i in range(5))
                for r in picked.to_dict("records")
            ],
            "answer": picked["answer"].astype(str),
            "match": match[match != ""],
        },
        columns=ITEM_COLUMNS,
    ).reset_index(drop=True)
    if simulated:
        items["sim_decision"] = ["remove"] * len(items)
    return items


def checked(annotations: pd.DataFrame, items: pd.DataFrame) -> tuple[set[str], list[dict]]:
    """(removed item ids, dropped rows): a checked question is removed when more of its
    checkers say ``remove`` than ``keep``."""
    if items.empty:
        return set(), []
    done = annotations[~annotations["cancelled"].fillna(False).astype(bool)]
    done = done[done["field"] == "decision"]
    votes = done.groupby("item_id")["value"].apply(lambda v: list(map(str, v))).to_dict()
    removed, dropped = set(), []
    for r in items.itertuples(index=False):
        said = votes.get(r.item_id, [])
        if said.count("remove") > said.count("keep"):
            removed.add(r.item_id)
            dropped.append({"kind": "question", "id": r.item_id, "reason": "manual_check",
                            "detail": f"matched {r.match}; {said.count('remove')} of "
                                      f"{len(said)} checkers say remove"})  # fmt: skip
    return removed, dropped


@declares(
    reads=out_files("final/questions.parquet"),
    writes=out_files("check-items/items.parquet", "check-items/items.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def check_items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE 3.4.2's automatic pattern matching over the kept questions: the matched
    ones are the check round's items."""

    def compute() -> tuple[dict, dict]:
        questions = pd.read_parquet(ctx.out / "final" / "questions.parquet")
        items = check_items(questions, ctx.simulated)
        return {"items.parquet": items}, {
            "questions": len(questions),
            "matched": value_counts(items["match"]),
        }

    done = cached(ctx, compute)
    info = done.info
    n = sum(info["matched"].values())
    return done.outcome(
        f"{n} of {info['questions']:,} questions matched for the manual check"
        + (f" {info['matched']}" if n else ""),
    )


@declares(
    reads=out_files(
        "final/questions.parquet", "check-items/items.parquet", "annotate/check.parquet"
    ),
    writes=out_files("check/questions.parquet", "check/dropped.parquet", "check/check.json"),
    settings=lambda ctx, arg: ["keep", "remove"],
)
def check_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """JGLUE 3.4.2's manual checking: a matched question most of its checkers remove is
    dropped (``manual_check``); the others go on to the split."""

    def compute() -> tuple[dict, dict]:
        questions = pd.read_parquet(ctx.out / "final" / "questions.parquet")
        items = pd.read_parquet(ctx.out / "check-items" / "items.parquet")
        annotations = (
            pd.read_parquet(ctx.out / "annotate" / "check.parquet") if len(items) else None
        )
        removed, dropped = checked(annotations, items) if len(items) else (set(), [])
        kept = questions[~questions["item_id"].astype(str).isin(removed)].reset_index(drop=True)
        frame = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        return {"questions.parquet": kept, "dropped.parquet": frame}, {
            "questions": len(questions),
            "checked": len(items),
            "removed": len(removed),
            "matched": value_counts(items["match"]),
            "dropped": value_counts(frame["reason"]),
            "paper": 14,
        }

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['removed']} of {info['checked']} checked questions removed",
        Rows("question", info["questions"], info["questions"] - info["removed"], info["dropped"]),
    )
