"""The simulated writers, linguists and revisers of the KoBEST demos (demos and tests
only; every output says the rounds are simulated). Their latent behaviour is written
into the prompts as ``sim_*`` columns, which ``pipelines.annotation.simulate`` answers
with:

COPA (from ``data/demo/kobest/copa_seeds.jsonl``, cause -> effect seeds written for
benchforge, each with a wrong cause and a wrong effect):

- a writer writes a seed in the prompt's direction (결과: premise = cause, answer =
  effect; 원인: the reverse) with the answer at the prompt's position and the seed's
  wrong alternative at the other;
- **planted swaps**: ``swaps`` seeds are written twice, the second time in the other
  direction (the premise of one is the answer of the other): the near-duplicate review
  must find them;
- **planted artifact**: in ``cue`` items the writer adds a number (두 번이나) to the
  answer only: the artifact review must find ``<NUM>`` as a cue; the reviser removes it;
- seeds marked ``present_tense`` / ``no_subject`` break the guideline (the checks drop
  them); ``review_reject`` seeds are ambiguous (the linguist rejects them);
  ``review_edit`` seeds carry a misspelling the linguist fixes (an edit, a new version).

BoolQ, WiC and HellaSwag (``data/demo/kobest/<task>_seeds.jsonl``, written for
benchforge): each seed holds the given field and what a writer writes for every label
(BoolQ: a ``yes`` and a ``no`` question on the paragraph; WiC: a context ``a``, a
context ``b`` using the word in the same sense and a context ``c`` in another sense;
HellaSwag: a context, its ``ending`` and three ``wrong_*`` endings of the same topic).
The writer writes the seed for the prompt's label (HellaSwag: the ending at the label's
position, the wrong endings in order at the others). **Planted**: ``guideline`` seeds
break the task's check (a wh-question, a missing question mark, a word that is not in
the context, a two-sentence context), ``review_reject`` and ``review_edit`` seeds as
for COPA (an edit's ``fixed`` fields), and the artifact: in ``cue`` items a BoolQ
writer starts a yes-question with 혹시, a HellaSwag writer starts the right ending with
결국 (the reviser removes it; WiC's partial input is the given word, so no writer cue).

SentiNeg (NSMC reviews): the writer takes the helper's draft; **planted**: ``copy``
writers hand the original back (not negated), ``brand`` writers add a cinema chain's
name, and in ``cue`` items of positive target the writer adds 진짜 (the artifact; the
reviser removes it). A draft the helper could not make (no predicate) is rejected by
the linguist.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.families.kobest.tasks import KobestTask

NUMBER_CUE = "두 번이나"
SENTINEG_CUE = "진짜"
BRAND_PREFIX = "CGV에서 본 "


# the fields of a task's seeds (besides ``id``, ``plant``, ``reason`` and ``fixed``)
SEED_FIELDS = {
    "copa": ("cause", "effect", "wrong_cause", "wrong_effect"),
    "boolq": ("paragraph", "yes", "no"),
    "wic": ("word", "a", "b", "c"),
    "hellaswag": ("topic", "context", "ending", "wrong_1", "wrong_2", "wrong_3"),
}
# the planted artifact: (the cue, the labels whose answer carries it)
CUES = {"boolq": ("혹시", (1,)), "hellaswag": ("결국", (0, 1, 2, 3))}


class SeedsError(BenchforgeError, ValueError):
    """A simulated writers' seeds file that cannot be used; the message names the file
    and the line (issue 51: a missing one was a traceback)."""


def read_seeds(path: Path, task: str = "copa") -> pd.DataFrame:
    """A task's seeds (``SEED_FIELDS``); a missing file, a malformed line, one missing a
    field or holding it empty, or a repeated ``id`` is a :class:`SeedsError` naming the
    file and line."""
    from pipelines.core.line_files import read_json_lines

    if task not in SEED_FIELDS:
        known = sorted(SEED_FIELDS)
        raise SeedsError(f"{path}: the KoBEST {task} demo has no seeds (only {known})")
    need = ("id", *SEED_FIELDS[task])
    rows = read_json_lines(path, need, SeedsError)
    seen: dict[str, int] = {}
    for row in rows:
        missing = [k for k in need if not str(row[k] or "").strip()]
        if missing:
            raise SeedsError(f"{path}:{row['line']}: missing {missing}")
        if str(row["id"]) in seen:
            raise SeedsError(f"{path}:{row['line']}: id {row['id']!r} repeats line "
                             f"{seen[str(row['id'])]}")  # fmt: skip
        seen[str(row["id"])] = row["line"]
    return pd.DataFrame(rows).drop(columns="line")


def with_number(sentence: str) -> str:
    """The sentence with 두 번이나 after its first word (the planted cue)."""
    head, _, rest = sentence.partition(" ")
    return f"{head} {NUMBER_CUE} {rest}" if rest else f"{NUMBER_CUE} {head}"


def copa_given(seeds: pd.DataFrame, swaps: int, seed: int) -> pd.DataFrame:
    """One prompt row per seed (question alternating over a seeded order), then the
    planted swaps: the first ``swaps`` plain seeds again with the other question."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(seeds))
    rows = [
        {"seed_id": seeds.iloc[i]["id"], "question": ("원인", "결과")[k % 2]}
        for k, i in enumerate(order)
    ]
    plant = plants_of(seeds)
    plain = [r for r in rows if not plant[r["seed_id"]]]
    for r in plain[:swaps]:
        rows.append(
            {
                "seed_id": r["seed_id"],
                "question": "결과" if r["question"] == "원인" else "원인",
                "swap_of": r["seed_id"],
            }
        )
    return pd.DataFrame(rows)


def plants_of(seeds: pd.DataFrame) -> dict[str, str]:
    """Each seed's ``plant`` ("" for a plain seed)."""
    if "plant" not in seeds:
        return dict.fromkeys(seeds["id"], "")
    return {
        i: "" if pd.isna(v) else str(v) for i, v in zip(seeds["id"], seeds["plant"], strict=True)
    }


def copa_latent(prompts: pd.DataFrame, seeds: pd.DataFrame, cue: int, seed: int) -> pd.DataFrame:
    """The prompts with the writers', linguists' and revisers' latent answers."""
    by_id = {r["id"]: r for r in seeds.to_dict("records")}
    planted = plants_of(seeds)
    rng = np.random.default_rng(seed + 1)
    records = prompts.to_dict("records")
    swapped = {r["swap_of"] for r in records if isinstance(r.get("swap_of"), str)}
    # the cue goes to seeds written once (a swap stays a swap, not a swap and an edit)
    plain = [
        i
        for i, r in enumerate(records)
        if not planted[r["seed_id"]] and r["seed_id"] not in swapped
    ]
    cued = set(rng.permutation(plain)[:cue].tolist())
    out = []
    for i, r in enumerate(prompts.to_dict("records")):
        s = by_id[r["seed_id"]]
        plant = planted[r["seed_id"]]
        if r["question"] == "결과":
            premise, answer, wrong, side = s["cause"], s["effect"], s["wrong_effect"], "effect"
        else:
            premise, answer, wrong, side = s["effect"], s["cause"], s["wrong_cause"], "cause"
        fixed = s.get(f"fixed_{side}") if plant == "review_edit" else None
        fixed_premise = (
            s.get("fixed_effect") if plant == "review_edit" and side == "cause" else None
        )
        clean = answer
        if i in cued:
            answer = with_number(answer)
        answer_field = "alternative_1" if int(r["label"]) == 0 else "alternative_2"
        wrong_field = "alternative_2" if answer_field == "alternative_1" else "alternative_1"
        row = {
            **r,
            "sim_premise": premise,
            f"sim_{answer_field}": answer,
            f"sim_{wrong_field}": wrong,
        }
        kinds = [
            k
            for k in (
                plant,
                "swap" if isinstance(r.get("swap_of"), str) else "",
                "cue" if i in cued else "",
            )
            if k
        ]
        row["sim_plant"] = ",".join(kinds)
        row["sim_review"] = {"review_reject": "reject", "review_edit": "edit"}.get(plant, "accept")
        row["sim_reason"] = str(s.get("reason") or "")
        row["sim_fix"] = json.dumps(
            {
                **({answer_field: fixed} if isinstance(fixed, str) else {}),
                **({"premise": fixed_premise} if isinstance(fixed_premise, str) else {}),
            },
            ensure_ascii=False,
        )
        row["sim_clean"] = json.dumps(
            {answer_field: clean} if i in cued else {}, ensure_ascii=False
        )
        out.append(row)
    return pd.DataFrame(out)


def sentineg_latent(
    prompts: pd.DataFrame, copy: int, brand: int, cue: int, seed: int
) -> pd.DataFrame:
    """The SentiNeg prompts with the latent answers (see the module docstring)."""
    rng = np.random.default_rng(seed + 2)
    n = len(prompts)
    order = rng.permutation(n).tolist()
    copies = set(order[:copy])
    brands = set(order[copy : copy + brand])
    positive = [
        i
        for i in order[copy + brand :]
        if int(prompts.iloc[i]["label"]) == 1 and prompts.iloc[i]["draft_method"] != "none"
    ]
    cued = set(positive[:cue])
    out = []
    for i, r in enumerate(prompts.to_dict("records")):
        text = r["draft"]
        kinds = []
        if i in copies:
            text, kinds = r["original"], ["copy"]
        elif i in brands:
            text, kinds = BRAND_PREFIX + r["draft"], ["brand"]
        elif i in cued:
            text, kinds = f"{SENTINEG_CUE} {r['draft']}", ["cue"]
        out.append(
            {
                **r,
                "sim_sentence": text,
                "sim_plant": ",".join(kinds),
                "sim_review": "reject" if r["draft_method"] == "none" else "accept",
                "sim_reason": "not_negated" if r["draft_method"] == "none" else "",
                "sim_fix": "{}",
                "sim_clean": json.dumps(
                    {"sentence": r["draft"]} if i in cued else {}, ensure_ascii=False
                ),
            }
        )
    return pd.DataFrame(out)


def review_latent(items: pd.DataFrame, task: KobestTask) -> pd.DataFrame:
    """The linguists' latent answers on the review items: ``sim_decision``,
    ``sim_reason`` and, per written field, the text an edit leaves (the fix where the
    seed has one, else the field as written)."""
    return _latent(items, task, "sim_fix", lambda r: r.get("sim_review", "accept"))


def revision_latent(items: pd.DataFrame, task: KobestTask) -> pd.DataFrame:
    """The revisers' latent answers: an item with a planted cue is edited to its clean
    text; any other flagged item is accepted as it is."""
    return _latent(
        items,
        task,
        "sim_clean",
        lambda r: "edit" if json.loads(r.get("sim_clean") or "{}") else "accept",
    )


def _latent(items: pd.DataFrame, task: KobestTask, column: str, decision) -> pd.DataFrame:  # noqa: ANN001
    rows = []
    for r in items.to_dict("records"):
        fix = json.loads(r.get(column) or "{}")
        new = {**r, "sim_decision": decision(r), "sim_reason": r.get("sim_reason") or ""}
        for f in task.written:
            new[f"sim_{f}"] = fix.get(f, r[f])
        rows.append(new)
    return pd.DataFrame(rows)


def written_for(task: KobestTask, seed: dict, label: int) -> dict[str, str]:
    """What a writer writes from ``seed`` (``SEED_FIELDS``) for ``label``."""
    if task.name == "boolq":
        return {"question": seed["yes"] if label == 1 else seed["no"]}
    if task.name == "wic":
        return {"context_1": seed["a"], "context_2": seed["b"] if label == 1 else seed["c"]}
    if task.name == "hellaswag":
        wrong = iter((seed["wrong_1"], seed["wrong_2"], seed["wrong_3"]))
        endings = {
            f"ending_{k + 1}": seed["ending"] if k == label else next(wrong) for k in range(4)
        }
        return {"context": seed["context"], **endings}
    raise ValueError(f"the KoBEST {task.name} demo is not written from seeds")


def answer_field(task: KobestTask, label: int) -> str:
    """The written field that carries the answer (where a cue goes)."""
    return f"ending_{label + 1}" if task.name == "hellaswag" else task.written[0]


def seeded_given(task: KobestTask, seeds: pd.DataFrame, seed: int) -> pd.DataFrame:
    """One prompt row per seed, in a seeded order: ``seed_id`` and the task's given
    fields."""
    order = np.random.default_rng(seed).permutation(len(seeds))
    rows = seeds.iloc[order]
    return pd.DataFrame(
        {"seed_id": rows["id"].tolist(), **{g: rows[g].tolist() for g in task.given}}
    )


def seeded_latent(
    task: KobestTask, prompts: pd.DataFrame, seeds: pd.DataFrame, cue: int, seed: int
) -> pd.DataFrame:
    """The BoolQ / WiC / HellaSwag prompts with the writers', linguists' and revisers'
    latent answers (see the module docstring)."""
    by_id = {r["id"]: r for r in seeds.to_dict("records")}
    planted = plants_of(seeds)
    word, labels = CUES.get(task.name, ("", ()))
    records = prompts.to_dict("records")
    open_ = [
        i for i, r in enumerate(records) if not planted[r["seed_id"]] and int(r["label"]) in labels
    ]
    cued = set(np.random.default_rng(seed + 3).permutation(open_)[:cue].tolist())
    out = []
    for i, r in enumerate(records):
        s, label, plant = by_id[r["seed_id"]], int(r["label"]), planted[r["seed_id"]]
        written = written_for(task, s, label)
        fixed = s.get("fixed") if plant == "review_edit" else None
        fix = {}
        if isinstance(fixed, dict):
            better = written_for(task, {**s, **fixed}, label)
            fix = {f: t for f, t in better.items() if t != written[f]}
        clean = {}
        if i in cued:
            field = answer_field(task, label)
            clean = {field: written[field]}
            written = {**written, field: f"{word} {written[field]}"}
        row = {**r, **{f"sim_{f}": t for f, t in written.items()}}
        row["sim_plant"] = ",".join(k for k in (plant, "cue" if i in cued else "") if k)
        row["sim_review"] = {"review_reject": "reject", "review_edit": "edit"}.get(plant, "accept")
        row["sim_reason"] = str(s.get("reason") or "")
        row["sim_fix"] = json.dumps(fix, ensure_ascii=False)
        row["sim_clean"] = json.dumps(clean, ensure_ascii=False)
        out.append(row)
    return pd.DataFrame(out)
