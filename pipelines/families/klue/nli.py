"""KLUE-NLI (KLUE 3.3): the ``klue-nli`` task kind.

Steps: ``ingest`` -> ``premises`` (KLUE 3.3.1's premise rules, ``nli_premises.py``) ->
the writing round (``push-writing`` ... ``pull-writing``: one writer per premise, project
``<name>-writing``) -> ``hypotheses`` -> the validation round (push ... pull) -> ``agree``
(the ``majority`` rule, the writer's label as a vote) -> ``split`` (the ``nli`` rule) ->
``export``.

Items: premises for the writing round, hypotheses for validation.

KLUE-NLI built its pairs in two rounds: a writer reads a premise and writes one
hypothesis that is true (entailment), one that is false (contradiction) and one that
may be either (neutral), or skips and reports the premise; four validators then label
every premise-hypothesis pair, and the writer's label counts as a fifth vote.

- ``premise_items``: the writing round's items (``item_id``, ``premise``, the sentence's
  provenance).
- ``hypothesis_items``: the validation round's items from the pulled writing round,
  three per written premise (``item_id`` = premise item id + ``-e``/``-c``/``-n``), with
  the writer (``author_id``) and the writer's label (``author_label``); every premise
  without hypotheses is returned with its reason (skipped, reported, empty field).
- ``with_authors``: the validation round's long table plus one ``role = author`` row
  per item holding the writer's label, the input of the ``majority`` rule (KLUE: 3 of 5
  votes including the author's).

Simulated writers (demos and tests only, ``simulate_truth: nli-templates``): each
premise item carries ``sim_entailment``, ``sim_contradiction`` and ``sim_neutral``, a
few templated rewrites of the premise per label (``templated_hypotheses``), of which a
simulated writer picks one. Templates are not people: they are often stilted, and
they plant exactly the label cues (a negating phrase in contradictions, a hedge in
neutrals) that KLUE's hypothesis-only split rule and the artifact report exist to
catch, so the demo's report shows them. The columns never reach the released data.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.stage import value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.evaluation.spec import classification
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.data_card import annotation_round, inline, table
from pipelines.export.facts import CardFacts
from pipelines.export.records import SPLITS, split_rows
from pipelines.families.klue.hub import hub
from pipelines.rebuild.kinds import ExportInputs, SharedSteps, TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, simulation

LABELS = ("entailment", "contradiction", "neutral")
# KLUE Table 5 (validation statistics), as printed: figure -> (its name in the table,
# SNLI, MNLI, KLUE-NLI), in percent; the keys are the agreement step's
# (pipelines.agreement.rules.nli_validation_table)
TABLE_5 = {
    "unanimous_gold_label": ("Unanimous Gold Label", 58.30, 58.20, 76.29),
    "individual_label_eq_gold": ("Individual Label = Gold Label", 89.00, 88.70, 92.63),
    "individual_label_eq_author": ("Individual Label = Author's Label", 85.80, 85.20, 90.92),
    "gold_label_eq_author": ("Gold Label = Author's Label", 91.20, 92.60, 96.76),
    "gold_label_ne_author": ("Gold Label ≠ Author's Label", 6.80, 5.60, 2.71),
    "no_gold_label": ("No Gold Label (No 3 Labels Match)", 2.00, 1.80, 0.53),
}
SUFFIX = {"entailment": "e", "contradiction": "c", "neutral": "n"}
_TRAILING = re.compile(r"[\s.!~…\"'”’」』)\]]+$")

TEMPLATES = {
    "entailment": ["{plain}고 한다.", "{plain}는 이야기다.", "{plain}는 내용이다."],
    "contradiction": [
        "{plain}는 것은 사실이 아니다.",
        "{plain}는 말은 거짓이다.",
        "{plain}는 일은 결코 없었다.",
    ],
    "neutral": [
        "{plain}고 어제 한 친구가 말했다.",
        "많은 사람이 {plain}고 생각한다.",
        "{plain}는 소식이 다음 주에 또 나올 것이다.",
    ],
}


def plain_form(sentence: str) -> str:
    """The premise without its closing marks, in the plain ``-다`` style where the
    polite ``-습니다``/``-ㅂ니다`` ending can be turned back (``살겠습니다`` -> ``살겠다``,
    ``합니다`` -> ``한다``); other endings are left as written."""
    core = _TRAILING.sub("", sentence.strip())
    if core.endswith("습니다"):
        return core[: -len("습니다")] + "다"
    if core.endswith("니다") and len(core) >= 3:
        syllable = ord(core[-3]) - 0xAC00
        if 0 <= syllable < 11172 and syllable % 28 == 17:  # final consonant ㅂ
            return core[:-3] + chr(0xAC00 + syllable - 17 + 4) + "다"  # ㅂ -> ㄴ, + 다
    return core


def templated_hypotheses(premise: str) -> dict[str, list[str]]:
    """The simulated writers' variants per label (see the module docstring)."""
    plain = plain_form(premise)
    return {label: [t.format(plain=plain) for t in TEMPLATES[label]] for label in LABELS}


def _short_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def premise_items(
    premises: pd.DataFrame, simulate_truth: str | None, simulated: bool
) -> pd.DataFrame:
    """The writing round's items from selected premise sentences (``sent_id``, ``text``,
    ``corpus``, ``doc_id``, ``style``, ``domain``, ``license``)."""
    items = pd.DataFrame(
        {
            "item_id": ["p-" + _short_id(s) for s in premises["sent_id"].astype(str)],
            "premise": premises["text"].astype(str).str.strip(),
            "source": premises["corpus"].astype(str),
            "style": premises["style"].astype(str),
            "domain": premises["domain"].astype(str),
            "license": premises["license"].astype(str),
            "doc_id": premises["doc_id"].astype(str),
            "sent_id": premises["sent_id"].astype(str),
        }
    )
    if simulated and simulate_truth == "nli-templates":
        variants = [templated_hypotheses(p) for p in items["premise"]]
        for label in LABELS:
            items[f"sim_{label}"] = [v[label] for v in variants]
    return items.sort_values("item_id", kind="stable").reset_index(drop=True)


def _flags(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)


def hypothesis_items(
    writing: pd.DataFrame, premises: pd.DataFrame, simulated: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, dropped): three validation items per premise that its writer wrote all
    three hypotheses for; ``dropped`` has one row per other premise with ``reason``
    (``skipped``, ``report:<flag>``, ``empty_hypothesis``, ``not_written``)."""
    rows, dropped = [], []
    done = writing[~writing["cancelled"].fillna(False).astype(bool)]
    by_item = {k: g for k, g in done.groupby(done["item_id"].astype(str), sort=False)}
    skipped = set(writing.loc[writing["cancelled"].fillna(False).astype(bool), "item_id"])
    for premise in premises.itertuples(index=False):
        group = by_item.get(premise.item_id)
        if group is None:
            reason = "skipped" if premise.item_id in skipped else "not_written"
            dropped.append({"item_id": premise.item_id, "reason": reason, "detail": ""})
            continue
        first = group[group["annotation_id"] == group["annotation_id"].min()]
        flags = _flags(first["report_flags"].iloc[0])
        if flags:
            dropped.append({"item_id": premise.item_id, "reason": f"report:{flags.split('|')[0]}",
                            "detail": flags})  # fmt: skip
            continue
        texts = {f: str(v).strip() for f, v in zip(first["field"], first["value"], strict=True)
                 if f in LABELS and v is not None}  # fmt: skip
        missing = [label for label in LABELS if not texts.get(label)]
        if missing:
            dropped.append({"item_id": premise.item_id, "reason": "empty_hypothesis",
                            "detail": ",".join(missing)})  # fmt: skip
            continue
        for label in LABELS:
            rows.append(
                {
                    "item_id": f"{premise.item_id}-{SUFFIX[label]}",
                    "premise_id": premise.item_id,
                    "premise": premise.premise,
                    "hypothesis": texts[label],
                    "author_label": label,
                    "author_id": str(first["annotator_id"].iloc[0]),
                    "author_simulated": bool(first["simulated"].iloc[0]),
                    "source": premise.source,
                    "style": premise.style,
                    "license": premise.license,
                }
            )
    items = pd.DataFrame(rows)
    if simulated and len(items):
        items["sim_label"] = items["author_label"]
    return items, pd.DataFrame(dropped, columns=["item_id", "reason", "detail"])


def with_authors(validation: pd.DataFrame, hypotheses: pd.DataFrame) -> pd.DataFrame:
    """The validation round's table (``role = validator``) plus one ``role = author``
    row per item with the writer's label (KLUE-NLI counts it as a vote)."""
    validators = validation.assign(role="validator")
    authors = pd.DataFrame(
        {
            "item_id": hypotheses["item_id"].astype(str),
            "annotator_id": hypotheses["author_id"].astype(str),
            "field": "label",
            "value": hypotheses["author_label"].astype(str),
            "cancelled": False,
            "report_flags": "",
            "simulated": hypotheses["author_simulated"].astype(bool),
            "role": "author",
        }
    )
    return pd.concat([validators, authors], ignore_index=True)


@STEPS.register("klue-nli:premises")
@declares(
    reads=out_files("ingest/sentences.parquet"),
    writes=out_files(
        "premises/premises.parquet", "premises/rejected.parquet", "premises/premises.json"
    ),
    settings=lambda ctx, arg: [ctx.recipe.items.model_dump(), ctx.simulated, ctx.recipe.language],
)
def premises_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """KLUE 3.3.1's premise rules over the ingested sentences and a seeded sample of
    those that pass; every other sentence kept with its reason in
    premises/rejected.parquet."""
    from pipelines.families.klue.nli_premises import select_premises

    sentences = ctx.out / "ingest" / "sentences.parquet"
    spec = ctx.recipe.items

    def compute() -> tuple[dict, dict]:
        chosen, rejected = select_premises(pd.read_parquet(sentences), spec.premises,
                                           spec.sample, spec.stratify, spec.seed,
                                           ctx.recipe.language)  # fmt: skip
        items = premise_items(chosen, spec.simulate_truth, ctx.simulated)
        passing = pd.concat(
            [chosen["corpus"], rejected.loc[rejected["reason"] == "not_sampled", "corpus"]]
        )
        info = {
            "premises": len(items),
            "sentences": len(chosen) + len(rejected),
            "rules": spec.premises.model_dump(),
            "spec": spec.model_dump(exclude={"premises"}),
            "rejected": value_counts(rejected["reason"]),
            "passing_per_source": value_counts(passing),
            "per_source": value_counts(items["source"]),
            "simulated_truth": "sim_entailment" in items.columns,
        }
        return {"premises.parquet": items, "rejected.parquet": rejected}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['premises']:,} premises of {info['sentences']:,} sentences",
        Rows("sentence", info["sentences"], info["premises"], info["rejected"]),
        after=f": {info['per_source']}",
    )


@STEPS.register("klue-nli:hypotheses")
@declares(
    reads=out_files("annotate/writing.parquet", "premises/premises.parquet"),
    writes=out_files("items/items.parquet", "items/dropped_premises.parquet", "items/items.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def hypotheses_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Three premise-hypothesis pairs per written premise; premises skipped, reported or
    left incomplete kept with their reason in items/dropped_premises.parquet."""
    writing = ctx.out / "annotate" / "writing.parquet"
    premises = ctx.out / "premises" / "premises.parquet"

    def compute() -> tuple[dict, dict]:
        items, dropped = hypothesis_items(pd.read_parquet(writing), pd.read_parquet(premises),
                                          ctx.simulated)  # fmt: skip
        info = {
            "items": len(items),
            "premises_written": int(items["premise_id"].nunique()) if len(items) else 0,
            "premises_dropped": {k: int(v) for k, v in dropped["reason"].value_counts().items()},
            "per_source": value_counts(items["source"]),
            "per_method": {k: int(v) for k, v in items["author_label"].value_counts().items()},
            # KLUE Table 6: mean premise and hypothesis length per source
            "lengths": lengths_per_source(items),
        }
        return {"items.parquet": items, "dropped_premises.parquet": dropped}, info

    done = cached(ctx, compute)
    info = done.info
    n_premises = len(pd.read_parquet(premises, columns=["item_id"]))
    return done.outcome(
        f"{info['items']:,} pairs from {info['premises_written']:,} premises; premises "
        f"dropped {info['premises_dropped']}",
        Rows("premise", n_premises, info["premises_written"], info["premises_dropped"]),
        mark=False,
    )


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The writing round (one writer per premise) and the validation round. Each shows
    its interface's guideline (``annotation_configs/guidelines/nli_hypothesis.md``:
    KLUE 3.3.1's criteria and Dos and Don'ts; ``nli_validation.md``); the recipe's
    ``annotation.guideline`` replaces the validation round's."""
    ann, recipe, out = ctx.recipe.annotation, ctx.recipe, ctx.out
    writing = ann.writing
    return {
        "writing": Round(
            out / "premises" / "premises.parquet", recipe.resolve(writing.config),
            writing.project or f"{ctx.project_base}-writing", 1,
            simulation(writing.simulate, ctx.simulated, 1), "writer",
            out / "annotate" / "writing.parquet", ann.timeout, ann.poll,
        ),
        "": Round(
            out / "items" / "items.parquet", recipe.resolve(ann.config), ctx.project,
            ann.overlap, simulation(ann.simulate, ctx.simulated, ann.overlap), "annotator",
            out / "annotate" / "validation.parquet", ann.timeout, ann.poll,
        ),
    }  # fmt: skip


def votes(ctx: RunContext) -> Path:
    """The agreement step's input: the validators' labels plus the writer's as a vote
    (``with_authors``), rewritten only when it changed."""
    out = ctx.out / "annotate" / "annotations.parquet"
    table = with_authors(pd.read_parquet(ctx.out / "annotate" / "validation.parquet"),
                         pd.read_parquet(ctx.out / "items" / "items.parquet"))  # fmt: skip
    if not out.is_file() or not pd.read_parquet(out).equals(table):
        from pipelines.core.io import write_parquet

        write_parquet(table, out)
    return out


def _validator_labels(annotations: pd.DataFrame) -> dict[str, list[str]]:
    """item_id -> the validators' labels (not cancelled), in the order they were given."""
    rows = annotations
    if "cancelled" in rows.columns:
        rows = rows[~rows["cancelled"].fillna(False).astype(bool)]
    rows = rows[(rows["field"] == "label") & (rows.get("role", "validator") != "author")]
    rows = rows.sort_values(["item_id", "created_at", "annotation_id"], kind="stable")
    return {str(k): g["value"].astype(str).tolist() for k, g in rows.groupby("item_id", sort=False)}


def klue_nli_records(
    gold: pd.DataFrame,
    items: pd.DataFrame,
    splits: pd.DataFrame,
    annotations: pd.DataFrame,
    prefix: str,
) -> dict[str, list[dict]]:
    """The records of every split in the KLUE-NLI v1.1 layout (one object per
    premise-hypothesis pair)::

        {"guid": "<prefix>_<split>_00000", "source": "<corpus>", "premise": ...,
         "hypothesis": ..., "gold_label": "entailment", "author": "entailment",
         "label2": "entailment", "label3": "neutral", "label4": ..., "label5": ...}

    ``author`` is the writer's label and ``label2``... the validators' labels in the order
    they were given (four in KLUE; as many as the recipe's overlap here)."""
    labels = _validator_labels(annotations)
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in split_rows(gold, items, splits):
        record = {
            "guid": f"{prefix}_{split}_{n:05d}",
            "source": row.source,
            "premise": row.premise,
            "hypothesis": row.hypothesis,
            "gold_label": str(row.label),
            "author": row.author_label,
        }
        for k, value in enumerate(labels.get(str(row.item_id), []), start=2):
            record[f"label{k}"] = value
        out[split].append(record)
    return out


def records(inputs: ExportInputs) -> dict[str, list[dict]]:
    return klue_nli_records(inputs.gold, inputs.items, inputs.splits, inputs.annotations,
                            inputs.prefix)  # fmt: skip


# KLUE Table 6, as printed: source -> (Avg Len Prem, Avg Len Hyp), mean characters
TABLE_6 = {"WIKITREE": (52.81, 26.86), "POLICY": (56.73, 32.93), "WIKINEWS": (64.17, 29.11),
           "WIKIPEDIA": (57.45, 23.70), "NSMC": (27.48, 21.49), "AIRBNB": (24.28, 18.65),
           "Overall": (47.15, 25.46)}  # fmt: skip


def lengths_per_source(items: pd.DataFrame) -> dict[str, dict]:
    """KLUE Table 6's "mean character counts of premise and hypothesis sentences", per
    source and overall, over the pairs ``items`` (``premise``, ``hypothesis``,
    ``source``)."""

    def means(frame: pd.DataFrame) -> dict:
        def mean(column: str) -> float:
            return round(float(frame[column].astype(str).str.len().mean()), 2)

        return {"pairs": len(frame), "premise": mean("premise"), "hypothesis": mean("hypothesis")}

    if not len(items):
        return {}
    out = {str(s): means(g) for s, g in items.groupby("source", sort=True)}
    return {**out, "overall": means(items)}


def table_6(lengths: dict | None) -> str:
    """The pairs' mean lengths per source (``lengths_per_source``) and KLUE's Table 6
    beside them; "" for a run whose hypotheses step did not measure them."""
    if not lengths:
        return ""
    rows = [[s, v["pairs"], f"{v['premise']:.2f}", f"{v['hypothesis']:.2f}"]
            for s, v in lengths.items()]  # fmt: skip
    paper = "; ".join(f"{s} {p:.2f} and {h:.2f}" for s, (p, h) in TABLE_6.items())
    return (
        table(["source", "pairs written", "mean premise length", "mean hypothesis length"], rows)
        + f"\n\nKLUE's Table 6 (mean premise and hypothesis length, characters): {paper}."
    )


def table_5(validation: dict | None) -> str:
    """KLUE's Table 5 with this rebuild's figures beside it (``validation``: the agreement
    step's ``nli_validation``, computed from the run's votes); "" when there is none."""
    if not validation:
        return ""
    rows = []
    for key, (name, snli, mnli, klue) in TABLE_5.items():
        v = validation.get(key) or {}
        ours = "n/a" if v.get("share") is None else (
            f"{100 * v['share']:.2f}% ({v['count']} of {v['of']})")  # fmt: skip
        rows.append([name, ours, f"{klue:.2f}%", f"{snli:.2f}%", f"{mnli:.2f}%"])
    return table(["figure", "this rebuild", "KLUE-NLI", "SNLI", "MNLI"], rows)


def card(facts: CardFacts) -> CardSection:
    """Premises by KLUE's rules, the hypotheses written, the two rounds
    (``nli.card.md.j2``)."""
    p, items = facts["premises"], facts["items"]
    return from_template(Path(__file__).with_name("nli.card.md.j2"), {
        "p": p, "items": items, "inline": inline, "annotation_round": annotation_round,
        "source_table": table(
            ["source", "sentences passing the rules", "premises chosen"],
            [[k, v, p["per_source"].get(k, 0)] for k, v in p["passing_per_source"].items()]),
        "rejected": ", ".join(f"{k}: {v}" for k, v in sorted(p["rejected"].items())) or "none",
        "dropped": ", ".join(f"{k}: {v}" for k, v in sorted(items["premises_dropped"].items())),
        "per_method": dict(sorted(items["per_method"].items())),
        "writing": facts["writing"], "validation": facts["annotation"],
        "table_5": table_5((facts.get("agreement") or {}).get("nli_validation")),
        "table_6": table_6(items.get("lengths")),
    })  # fmt: skip


register_task(TaskKind(
    name="klue-nli",
    title="KLUE-NLI-style natural language inference (KLUE 3.3)",
    layout="klue-nli",
    hub=hub("text-classification"),
    steps=["ingest", "premises", LabelStudioRound("writing"), "hypotheses", LabelStudioRound(),
           "agree", "split", "export"],
    needs=["annotation", "agreement", "split", "items.premises", "annotation.writing"],
    rounds=rounds,
    card=card,
    shared=SharedSteps(
        records=records,
        items_step="hypotheses",
        export_inputs={"premises": "premises/premises.json", "hypotheses": "items/items.json",
                       "writing": "annotate/writing.parquet"},
        card_json={"premises": "premises"},
        votes=votes,
    ),
    # KLUE 3.3.2: accuracy
    evaluation=classification(
        "guid", "gold_label", "premise", ["accuracy"], "KLUE (Park et al. 2021) 3.3.2",
        text_pair="hypothesis", labels=("contradiction", "entailment", "neutral"),
        prompt="전제: {{premise}}\n가설: {{hypothesis}}\n관계:",
        harness_choices=("모순", "함의", "중립"),
    ),
))  # fmt: skip
