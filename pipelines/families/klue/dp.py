"""KLUE-DP (issue 57): the ``klue-dp`` task kind, a head and a label per word (eojeol),
pseudo-parsed and corrected by people.

Steps: ``ingest`` (the recipe's corpora: a formal and a colloquial source, KLUE 2.4's
balance of styles, KLUE 2.3's filters: noise, PII, dedup and the toxic-content
detectors) -> ``parser`` (the biaffine pseudo-parser trained on UD Korean trees
converted to KLUE's conventions, :mod:`.dp_parse`, or a checkpoint) -> ``items`` (runs
of spaces squeezed; the completeness rule, KLUE 2.4 "ensuring most of sentences ...
are complete": a sentence of ``dp.min_words`` to ``dp.max_words`` words whose last
morpheme that is not a symbol is a final ending (EF), else dropped as ``too_short``,
``too_long`` or ``incomplete``; MeCab's morphology in KLUE's form, :mod:`.dp_morph`;
the pseudo-parse pre-loaded as a prediction) -> the correction round (``dp.xml``: each
word a region, each arrow word -> head with its label; annotators fix heads and labels
or report the sentence) -> ``agree`` (the ``span_vote`` rule over (word, head, label)
arcs of the ``dependency_tree`` value type: UAS and LAS between annotators; a voted
structure that is not a tree drops the sentence) -> ``drafts`` -> the linguists' review
round (``dp_review.xml``, optional: ``dp.review``) -> ``gold`` (the reviewed tree, else
the vote; a tree whose head precedes its word drops as ``not_head_final``; the root's
label is its morphology's (:func:`~.dp_convert.klue_label`), as the root draws no
arrow; every version in ``gold/versions.parquet``; the correction and per-label
agreement figures) -> ``split`` (the ``balanced`` rule: formal and colloquial in equal
numbers in dev and test, KLUE-DP's 10k / 2k / 2.5k proportions) -> ``export`` (one
record per sentence as the Hub's ``klue/dp`` has them) -> ``release`` (the KLUE-DP
layout, :mod:`.dp_layout`, read back byte for byte, and its errata checks in
``release/errata.json``).

Simulated annotators (demos and tests only): a sentence's truth is its corpus's
reference tree where it has one (``dp.truth_field``: UD tokens, converted by the same
rules as the parser's training data), else its pseudo-parse; annotators re-attach arcs
at their error rate (:mod:`pipelines.annotation.values.tree`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.annotation.values import canonical_json
from pipelines.core.io import write_json, write_text
from pipelines.core.stage import split_by_reason, value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.evaluation.spec import Evaluation, field_of
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.data_card import annotation_round, inline
from pipelines.export.facts import CardFacts
from pipelines.export.records import SPLITS, split_rows
from pipelines.families.klue import dp_section  # noqa: F401 - the recipe section
from pipelines.families.klue.answer_rows import answers, reports
from pipelines.families.klue.dp_baseline import REFERENCE_NAME, right_branching_trees
from pipelines.families.klue.dp_metrics import METRICS, gold_tree, scorer
from pipelines.families.klue.hub import hub
from pipelines.families.klue.review_section import (
    REVIEW_STEPS,
    correction_rounds,
    review_config,
    with_review,
)
from pipelines.rebuild.kinds import ExportInputs, SharedSteps, TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.families.klue.dp_morph import Word
    from pipelines.families.klue.dp_section import DpSpec

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
PREDICTION = "ls_prediction"
SYMBOL_TAGS = frozenset(["SF", "SP", "SS", "SE", "SO", "SW"])


def _spec(ctx: RunContext) -> DpSpec:
    return ctx.recipe.dp


def dp_item_id(sent_id: str) -> str:
    return "d-" + hashlib.sha256(str(sent_id).encode()).hexdigest()[:16]


def tree_json(heads: list[int], labels: list[str]) -> str:
    """The ``dependency_tree`` value: ``[[head, label], ...]`` per word, the root's
    label ``ROOT`` as the interface gives it (it draws no arrow)."""
    return canonical_json([[h, "ROOT" if h == 0 else lab]
                           for h, lab in zip(heads, labels, strict=True)])  # fmt: skip


def tree_of(value: str) -> tuple[list[int], list[str]]:
    arcs = json.loads(value)
    return [int(h) for h, _ in arcs], [str(lab) for _, lab in arcs]


def prediction(words: list[str], heads: list[int], labels: list[str], version: str) -> str:
    """A Label Studio prediction: each word a ``W`` region (ids ``w1``...), each arc
    an arrow from the word to its head with its label; the root draws none."""
    result, start = [], 0
    for i, word in enumerate(words, start=1):
        end = start + len(word)
        result.append(
            {
                "id": f"w{i}",
                "from_name": "words",
                "to_name": "text",
                "type": "labels",
                "value": {"start": start, "end": end, "text": word, "labels": ["W"]},
            }
        )
        start = end + 1
    for i, (head, label) in enumerate(zip(heads, labels, strict=True), start=1):
        if head:
            result.append({"from_id": f"w{i}", "to_id": f"w{head}", "type": "relation",
                           "direction": "right", "labels": [label]})  # fmt: skip
    return json.dumps({"model_version": version, "result": result}, ensure_ascii=False)


def completeness(words: list[Word], spec: DpSpec) -> str | None:
    """Why a sentence is not one KLUE-DP keeps (``too_short``, ``too_long``,
    ``incomplete``), or None."""
    if len(words) < spec.min_words:
        return "too_short"
    if len(words) > spec.max_words:
        return "too_long"
    tags = [t for w in words for t in w.tags if t not in SYMBOL_TAGS]
    if not tags or tags[-1] not in spec.final_tags:
        return "incomplete"
    return None


# ---------------------------------------------------------------------------- parser


def _parser_dir(ctx: RunContext) -> Path:
    spec = _spec(ctx).parser
    return ctx.recipe.resolve(spec.checkpoint) if spec.checkpoint else ctx.out / "parser"


def _parser_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    spec = _spec(ctx).parser
    if spec.checkpoint:
        return {"checkpoint": _parser_dir(ctx) / "parser.json"}
    return {f"train{i}": ctx.recipe.resolve(p) for i, p in enumerate(spec.train)}


@STEPS.register("klue-dp:parser")
@declares(
    reads=_parser_reads,
    writes=out_files("parser/summary.json"),
    settings=lambda ctx, arg: [_spec(ctx).parser.model_dump()],
    code=lambda ctx, arg: [
        "pipelines.models.dep_parser",
        "pipelines.families.klue.dp_convert",
        "pipelines.families.klue.dp_morph",
    ],
)
def parser_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The pseudo-parser: trained on the recipe's UD files (every ``holdout``-th
    sentence held out; cached in benchforge's data folder, :func:`.dp_parse.cached_parser`),
    or the recipe's checkpoint -> OUT/parser (model, parser.json, summary.json)."""
    from pipelines.export.guards import guard_baseline
    from pipelines.families.klue.dp_parse import cached_parser, is_cached, parser_cache
    from pipelines.models.dep_parser import load_parser

    spec = _spec(ctx).parser
    if spec.checkpoint:
        info = dict(load_parser(_parser_dir(ctx), "cpu").info)
        info["trained"], info["checkpoint"] = False, str(_parser_dir(ctx))
    else:
        paths = [ctx.recipe.resolve(p) for p in spec.train]
        reused = is_cached(parser_cache(paths, spec.parser_settings(), spec.holdout))
        cache = cached_parser(paths, spec.parser_settings(), spec.holdout, spec.licence)
        target = _parser_dir(ctx)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(cache, target)
        info = {
            **json.loads((target / "parser.json").read_text(encoding="utf-8")),
            "trained": True,
            "checkpoint": "OUT/parser",
            "cache": cache.name,
            "reused": reused,
        }
    summary = {k: info.get(k) for k in ("trained", "checkpoint", "dev", "right_branching_dev_uas",
                                        "best_epoch", "train_sentences", "dev_sentences",
                                        "device", "sources", "labels")}  # fmt: skip
    summary["settings"] = info.get("settings")
    summary["parameters"] = None
    dev = summary.get("dev") or {}
    summary["learned"] = bool(
        dev.get("uas") is not None
        and summary["right_branching_dev_uas"] is not None
        and dev["uas"] > summary["right_branching_dev_uas"]
    )
    # issue 51's guard: a parser no better than attaching each word to the next
    guard_baseline("parser", "UAS", dev.get("uas"), summary["right_branching_dev_uas"],
                   ctx.recipe, f"{ctx.recipe_path}: dp.parser")  # fmt: skip
    write_json(summary, ctx.out / "parser" / "summary.json")
    how = "trained"
    if not summary["trained"]:
        how = "loaded"
    elif info.get("reused"):
        how = f"from the cache ({info['cache']})"
    return StepOutcome(
        f"parser {how}: held-out UAS "
        f"{dev.get('uas')}, LAS {dev.get('las')} (right-branching UAS "
        f"{summary['right_branching_dev_uas']})",
        {k: summary.get(k) for k in ("trained", "dev", "right_branching_dev_uas")},
    )


# ----------------------------------------------------------------------------- items


def _items_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    return {
        "sentences": ctx.out / "ingest" / "sentences.parquet",
        "documents": ctx.out / "ingest" / "documents.parquet",
        "parser": ctx.out / "parser" / "summary.json",
        "weights": _parser_dir(ctx) / "model.safetensors",
    }


def _reference(meta: object, text: str, field: str | None) -> tuple[list[int], list[str]] | None:
    """The corpus's reference tree of a sentence in KLUE's conventions, when it has one
    whose words are the sentence's (the ingest's cleaning may have changed them)."""
    from pipelines.families.klue.dp_convert import convert
    from pipelines.families.klue.ud import UdError, from_record

    if not field or not isinstance(meta, str):
        return None
    record = json.loads(meta).get(field)
    if not isinstance(record, list):
        return None
    try:
        tree = convert(from_record({"tokens": record}))
    except UdError:
        return None
    return (tree.heads, tree.labels) if tree.text == text else None


@STEPS.register("klue-dp:items")
@declares(
    reads=_items_reads,
    writes=out_files("items/items.parquet", "items/rejects.parquet", "items/items.json"),
    settings=lambda ctx, arg: [_spec(ctx).model_dump(exclude={"review"}), ctx.simulated],
    code=lambda ctx, arg: ["pipelines.models.dep_parser", "pipelines.families.klue.dp_morph",
                           "pipelines.families.klue.dp_convert"],
)  # fmt: skip
def items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every ingested sentence analysed (MeCab) and checked for completeness; the kept
    ones pseudo-parsed, the parse pre-loaded as a prediction."""
    from pipelines.families.klue.dp_morph import analyse
    from pipelines.families.klue.dp_parse import features
    from pipelines.models.attachment import attachment
    from pipelines.models.dep_parser import load_parser

    spec = _spec(ctx)
    reads = _items_reads(ctx, arg)

    def compute() -> tuple[dict, dict]:
        sentences = pd.read_parquet(reads["sentences"])
        docs = pd.read_parquet(reads["documents"], columns=["doc_id", "meta"])
        frame = sentences.merge(docs, on="doc_id", how="left", validate="many_to_one")
        texts = frame["text"].astype(str).map(lambda t: " ".join(t.split()))
        analysed = [analyse(t) if t else [] for t in texts]
        reason = pd.Series([completeness(w, spec) if w else "too_short" for w in analysed],
                           index=frame.index, dtype=object)  # fmt: skip
        keep = [i for i, r in enumerate(reason) if r is None]
        parser = load_parser(_parser_dir(ctx), "cpu")
        parsed = parser.parse([[features(w) for w in analysed[i]] for i in keep])
        version = f"biaffine-{json.loads(reads['parser'].read_text())['best_epoch']}"
        rows, ref_gold, ref_pred = [], [], []
        for i, (heads, labels) in zip(keep, parsed, strict=True):
            row, words, text = frame.iloc[i], analysed[i], texts.iloc[i]
            forms = [w.form for w in words]
            item = {"item_id": dp_item_id(row["sent_id"]), "text": text, "words": forms,
                    "lemmas": [w.lemma for w in words], "pos": [w.pos for w in words],
                    "source": str(row["corpus"]), "style": str(row.get("style", "")),
                    "head_final": True,
                    "license": str(row["license"]), "pseudo": tree_json(heads, labels),
                    "pseudo_labels": labels,
                    PREDICTION: prediction(forms, heads, labels, version)}  # fmt: skip
            if ctx.simulated:
                ref = _reference(row.get("meta"), text, spec.truth_field)
                truth = ref or (heads, labels)
                item["sim_relations"] = canonical_json(
                    [[h, lab] for h, lab in zip(*truth, strict=True)]
                )
                item["has_reference"] = ref is not None
                if ref:
                    ref_gold.append(ref)
                    ref_pred.append((heads, labels))
            rows.append(item)
        items = pd.DataFrame(rows).sort_values("item_id", kind="stable").reset_index(drop=True)
        rejects = split_by_reason("items", "sentence", frame, reason).rejects()
        per_source = {}
        for source, group in frame.groupby("corpus"):
            r = reason[group.index]
            per_source[str(source)] = {"sentences": len(group), "kept": int(r.isna().sum()),
                                       **value_counts(r.dropna())}  # fmt: skip
        check = None
        if ref_gold:
            s = attachment([g[0] for g in ref_gold], [g[1] for g in ref_gold],
                           [p[0] for p in ref_pred], [p[1] for p in ref_pred])  # fmt: skip
            check = {"sentences": len(ref_gold), **s}
        info = {
            "items": len(items), "sentences": len(frame),
            "dropped": value_counts(rejects["reason"]), "per_source": per_source,
            "words": int(sum(len(w) for w in items["words"])) if len(items) else 0,
            "per_style": value_counts(items["style"]) if len(items) else {},
            "reference_check": check, "min_words": spec.min_words, "max_words": spec.max_words,
            "final_tags": spec.final_tags,
        }  # fmt: skip
        return {"items.parquet": items, "rejects.parquet": rejects}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['items']:,} of {info['sentences']:,} sentences complete and pseudo-parsed",
        Rows("sentence", info["sentences"], info["items"], info["dropped"]),
        after=f"; dropped {info['dropped']}",
    )


# ---------------------------------------------------------------------------- rounds


def _review_config(recipe: Recipe) -> Path:
    return review_config(recipe, recipe.dp.review, CONFIGS / "dp_review.xml")


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The correction round (``""``) and, with ``dp.review``, the linguists' round."""
    return correction_rounds(ctx, _spec(ctx).review, CONFIGS / "dp_review.xml")


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    return [("dp.review.config", _review_config(recipe))] if recipe.dp.review else []


@STEPS.register("klue-dp:drafts")
@declares(
    reads=out_files("agree/gold.parquet", "items/items.parquet"),
    writes=out_files("linguists/items.parquet", "linguists/drafts.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def drafts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The linguists' review items: each voted tree pre-loaded as a prediction."""

    def compute() -> tuple[dict, dict]:
        gold = pd.read_parquet(ctx.out / "agree" / "gold.parquet")
        items = pd.read_parquet(ctx.out / "items" / "items.parquet").set_index("item_id")
        rows = []
        for item, label in zip(gold["item_id"].astype(str), gold["label"], strict=True):
            src = items.loc[item]
            heads, labels = tree_of(str(label))
            words = list(src["words"])
            row = {
                "item_id": item,
                "text": str(src["text"]),
                "words": words,
                "source": src["source"],
                "head_final": True,
                PREDICTION: prediction(words, heads, labels, "annotators-tree-vote"),
            }
            if "sim_relations" in items.columns:
                row["sim_relations"] = str(src["sim_relations"])
            rows.append(row)
        frame = pd.DataFrame(
            rows,
            columns=["item_id", "text", "words", "source", "head_final", PREDICTION]
            + (["sim_relations"] if "sim_relations" in items.columns else []),
        )
        return {"items.parquet": frame}, {"drafts": len(frame)}

    done = cached(ctx, compute)
    return done.outcome(
        f"{done.info['drafts']:,} drafts for the linguists",
        Rows("item", done.info["drafts"], done.info["drafts"]),
        merge=False,
    )


# ------------------------------------------------------------------------------ gold


def _gold_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    reads = {
        "gold": ctx.out / "agree" / "gold.parquet",
        "dropped": ctx.out / "agree" / "dropped.parquet",
        "items": ctx.out / "items" / "items.parquet",
        "annotations": ctx.out / "annotate" / "annotations.parquet",
    }
    if _spec(ctx).review is not None:
        reads["reviews"] = ctx.out / "annotate" / "linguists.parquet"
    return reads


def _answers(table: pd.DataFrame, field: str = "relations") -> pd.DataFrame:
    return answers(table, field)


def _reports(table: pd.DataFrame) -> dict[str, list[str]]:
    return reports(table)


def correction_figures(items: pd.DataFrame, answers: pd.DataFrame) -> dict:
    """How much annotators changed the pseudo-parse (suggestion acceptance, as for
    NER): of the pseudo-parsed arcs (the root's aside) in every annotation, the share
    kept (same head and label), relabelled (same head), re-attached (another head);
    and the share of annotations that left the whole parse as it was."""
    pseudo = dict(zip(items["item_id"].astype(str), items["pseudo"], strict=True))
    kept = relabelled = moved = arcs = unchanged = n = 0
    for item, value in zip(answers["item_id"].astype(str), answers["value"].astype(str),
                           strict=True):  # fmt: skip
        if item not in pseudo:
            continue
        n += 1
        ph, pl = tree_of(pseudo[item])
        ah, al = tree_of(value)
        same = True
        for h, lab, h2, lab2 in zip(ph, pl, ah, al, strict=False):
            if h == 0:
                same &= h2 == 0
                continue
            arcs += 1
            if h2 == h and lab2 == lab:
                kept += 1
            elif h2 == h:
                relabelled += 1
                same = False
            else:
                moved += 1
                same = False
        unchanged += same and len(ph) == len(ah)

    def share(x: int, of: int) -> float | None:
        return round(x / of, 4) if of else None

    return {"annotations": n, "pseudo_arcs_seen": arcs, "kept": share(kept, arcs),
            "relabelled": share(relabelled, arcs), "reattached": share(moved, arcs),
            "correction_rate": share(arcs - kept, arcs),
            "annotations_unchanged": share(unchanged, n)}  # fmt: skip


def label_agreement(answers: pd.DataFrame) -> dict:
    """Per label, between every pair of annotators of a sentence: of the words one of
    them gave this label, the share the other gave the same head and label (LAS per
    label, symmetric), and how often the label was given; a word both left as the root
    (no arrow) is not counted."""
    from itertools import combinations

    given: Counter = Counter()
    agreed: Counter = Counter()
    for _, group in answers.groupby("item_id", sort=True):
        trees = [tree_of(str(v)) for v in group["value"]]
        for (ah, al), (bh, bl) in combinations(trees, 2):
            for x in zip(ah, al, bh, bl, strict=False):
                if x[0] == 0 and x[2] == 0:
                    continue  # the root: no arrow drawn, nothing to agree on
                for lab in {x[1], x[3]}:
                    given[lab] += 1
                    agreed[lab] += x[0] == x[2] and x[1] == x[3]
    return {lab: {"pairs": given[lab], "las": round(agreed[lab] / given[lab], 4)}
            for lab, _ in given.most_common()}  # fmt: skip


def final_gold(
    agreed: pd.DataFrame,
    items: pd.DataFrame,
    reviews: pd.DataFrame | None,
    review_reports: dict[str, list[str]],
) -> tuple[list[dict], list[dict], list[dict]]:
    """(gold rows, dropped rows, versions) of the sentences that passed agreement: the
    linguist's last review (else the vote), head-final, the root labelled by its
    morphology."""
    from pipelines.families.klue.dp_convert import klue_label
    from pipelines.families.klue.dp_morph import Word

    rows, dropped, versions = [], [], []
    for g in agreed.itertuples(index=False):
        item, draft = str(g.item_id), str(g.label)
        src = items.loc[item]
        versions.append({"item_id": item, "version": "draft", "who": "tree_vote", "tree": draft})
        final, reviewed = draft, False
        if reviews is not None:
            mine = reviews[reviews["item_id"].astype(str) == item]
            if item in review_reports:
                dropped.append({"kind": "item", "id": item, "reason": "reported_in_review",
                                "detail": ", ".join(sorted(review_reports[item]))})  # fmt: skip
                continue
            if mine.empty:
                dropped.append({"kind": "item", "id": item, "reason": "not_reviewed",
                                "detail": "no linguist's review"})  # fmt: skip
                continue
            final, reviewed = str(mine.iloc[-1]["value"]), True
            versions.append({"item_id": item, "version": "reviewed",
                             "who": str(mine.iloc[-1]["annotator_id"]), "tree": final})  # fmt: skip
        heads, labels = tree_of(final)
        n = len(src["words"])
        if len(heads) != n or any(not (h > i or (h == 0 and i == n)) for i, h in
                                  enumerate(heads, start=1)):  # fmt: skip
            dropped.append({"kind": "item", "id": item, "reason": "not_head_final",
                            "detail": "a head before its word, or the root not last"})  # fmt: skip
            continue
        word = Word(src["words"][-1], tuple(str(src["lemmas"][-1]).split(" ")),
                    tuple(str(src["pos"][-1]).split("+")))  # fmt: skip
        labels[-1] = klue_label(word, "root")
        rows.append(
            {
                "item_id": item,
                "label": canonical_json([[h, lab] for h, lab in zip(heads, labels, strict=True)]),
                "n_annotations": int(g.n_annotations),
                "n_words": n,
                "reviewed": reviewed,
                "changed_in_review": reviewed and tree_of(final) != tree_of(draft),
            }
        )
    return rows, dropped, versions


@STEPS.register("klue-dp:gold")
@declares(
    reads=_gold_reads,
    writes=out_files("gold/gold.parquet", "gold/dropped.parquet", "gold/versions.parquet",
                     "gold/gold.json"),
    settings=lambda ctx, arg: [_spec(ctx).review is not None],
)  # fmt: skip
def gold_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The gold trees (module docstring), every version kept, the correction and
    per-label agreement figures."""
    reads = _gold_reads(ctx, arg)

    def compute() -> tuple[dict, dict]:
        agreed = pd.read_parquet(reads["gold"])
        items = pd.read_parquet(reads["items"]).set_index("item_id", drop=False)
        answers = _answers(pd.read_parquet(reads["annotations"]))
        review_table = pd.read_parquet(reads["reviews"]) if "reviews" in reads else None
        reviews = _answers(review_table) if review_table is not None else None
        reports = _reports(review_table) if review_table is not None else {}
        versions = [{"item_id": i, "version": "pseudo", "who": "parser", "tree": p}
                    for i, p in zip(items["item_id"], items["pseudo"], strict=True)]  # fmt: skip
        versions += [{"item_id": str(i), "version": "annotation", "who": str(w), "tree": str(v)}
                     for i, w, v in zip(answers["item_id"], answers["annotator_id"],
                                        answers["value"], strict=True)]  # fmt: skip
        rows, dropped, drafts = final_gold(agreed, items, reviews, reports)
        versions += drafts
        gold = pd.DataFrame(rows, columns=["item_id", "label", "n_annotations", "n_words",
                                           "reviewed", "changed_in_review"])  # fmt: skip
        before = pd.read_parquet(reads["dropped"])
        # the figures count the annotations that counted: not those of an account the
        # pilot or the screening excluded (all of them stay in versions.parquet)
        out = set(before.loc[before["kind"] == "annotator", "id"].astype(str))
        counted = answers[~answers["annotator_id"].astype(str).isin(out)]
        mine = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        all_dropped = pd.concat([before, mine.reindex(columns=before.columns)], ignore_index=True)
        info = {
            "items": len(agreed), "gold_items": len(gold), "dropped": value_counts(mine["reason"]),
            "reviewed": int(gold["reviewed"].sum()),
            "changed_in_review": int(gold["changed_in_review"].sum()),
            "correction": correction_figures(items.reset_index(drop=True), counted),
            "label_agreement": label_agreement(counted),
            "excluded_annotators": sorted(out),
        }  # fmt: skip
        return {"gold.parquet": gold, "dropped.parquet": all_dropped,
                "versions.parquet": pd.DataFrame(versions)}, info  # fmt: skip

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['gold_items']:,} of {info['items']:,} sentences gold",
        Rows("item", info["items"], info["gold_items"], info["dropped"]),
        after=f"; correction rate {info['correction']['correction_rate']}",
    )


# ---------------------------------------------------------------------------- export


def klue_dp_records(gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame,
                    prefix: str) -> dict[str, list[dict]]:  # fmt: skip
    """One record per sentence, as the Hub's ``klue/dp`` has them::

    {"guid": "<prefix>_<split>_00000_<source>", "sentence": ..., "index": [1, ...],
     "word_form": [...], "lemma": ["흘리 었 다 .", ...], "pos": ["VV+EP+EF+SF", ...],
     "head": [...], "deprel": [...], "source": ..., "style": ...}"""
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in split_rows(gold, items, splits):
        heads, labels = tree_of(str(row.label))
        source = str(row.source).replace("_", "-")
        out[split].append({
            "guid": f"{prefix}_{split}_{n:05d}_{source}", "sentence": str(row.text),
            "index": list(range(1, len(heads) + 1)), "word_form": list(row.words),
            "lemma": list(row.lemmas), "pos": list(row.pos), "head": heads, "deprel": labels,
            "source": str(row.source), "style": str(row.style),
        })  # fmt: skip
    return out


def records(inputs: ExportInputs) -> dict[str, list[dict]]:
    return klue_dp_records(inputs.gold, inputs.items, inputs.splits, inputs.prefix)


def layout(records: list[dict], header: list[str], safe: bool) -> tuple[object, str]:
    """The KLUE-DP release of one split's records and its text."""
    from pipelines.families.klue.dp_layout import DpRelease, DpSentence, DpWord, write_layout

    sentences = []
    for r in records:
        words = [
            DpWord(f, lem, p, h, d)
            for f, lem, p, h, d in zip(
                r["word_form"], r["lemma"], r["pos"], r["head"], r["deprel"], strict=True
            )
        ]
        sentences.append(DpSentence(r["guid"], r["sentence"], words))
    release = DpRelease(header, sentences, spreadsheet_safe=safe)
    return release, write_layout(release)


def errata_of(text: str, name: str) -> dict:
    """The errata checks' counts (and first examples) of one release file's text."""
    from pipelines.families.klue.dp_layout import errata_counts, parse

    release, problems = parse(text, name)
    return {"sentences": len(release.sentences),
            "words": sum(len(s.words) for s in release.sentences),
            "problems": errata_counts(problems),
            "examples": [{"kind": p.kind, "line": p.line, "detail": p.detail}
                         for p in problems[:5]]}  # fmt: skip


def _header(ctx: RunContext, split: str) -> list[str]:
    from pipelines.families.klue.dp_layout import COLUMN_LINE

    return [f"## KLUE-DP layout, {split}: rebuilt by benchforge from recipe {ctx.recipe.name}",
            COLUMN_LINE]  # fmt: skip


@STEPS.register("klue-dp:release")
@declares(
    reads=out_files("dataset/train.jsonl", "dataset/dev.jsonl", "dataset/test.jsonl"),
    writes=lambda ctx, arg: {
        **{s: ctx.out / "release" / f"{_spec(ctx).guid_prefix}_{s}.tsv" for s in SPLITS},
        "errata": ctx.out / "release" / "errata.json",
    },
)  # fmt: skip
def release_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dataset in the KLUE-DP layout (:mod:`.dp_layout`): one
    ``release/<prefix>_<split>.tsv`` per split, read back and checked equal, and the
    errata checks of every file in ``release/errata.json``."""
    from pipelines.families.klue.dp_layout import read_layout

    counts, errata = {}, {}
    for split in SPLITS:
        lines = (ctx.out / "dataset" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        release, text = layout([json.loads(x) for x in lines], _header(ctx, split),
                               ctx.recipe.export.spreadsheet_safe)  # fmt: skip
        if read_layout(text, split) != release:
            raise AssertionError(f"the {split} release does not read back as written")
        path = ctx.out / "release" / f"{_spec(ctx).guid_prefix}_{split}.tsv"
        write_text(text, path)
        errata[split] = errata_of(text, path.name)
        counts[split] = len(lines)
    write_json(errata, ctx.out / "release" / "errata.json")
    found = {s: e["problems"] for s, e in errata.items() if e["problems"]}
    return StepOutcome(f"KLUE-DP layout: {counts} -> {ctx.out / 'release'}; errata "
                       f"{found or 'none'}", {"files": counts, "errata": found})  # fmt: skip


# ------------------------------------------------------------------------------ card


def tree_table(gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame) -> dict:
    """Sentences and words per split and style, and the labels' counts."""
    frame = gold.merge(splits[["item_id", "split"]], on="item_id").merge(
        items[["item_id", "style", "source"]], on="item_id"
    )
    rows = []
    for (split, style), g in frame.groupby(["split", "style"], sort=True):
        rows.append({"split": split, "style": style, "sentences": len(g),
                     "words": int(g["n_words"].sum())})  # fmt: skip
    labels = Counter(lab for v in gold["label"] for _, lab in json.loads(v))
    return {"rows": sorted(rows, key=lambda r: (SPLITS.index(r["split"]), r["style"])),
            "labels": dict(labels.most_common())}  # fmt: skip


@STEPS.register("klue-dp:trees")
@declares(
    reads=out_files("gold/gold.parquet", "split/splits.parquet", "items/items.parquet"),
    writes=out_files("split/trees.json"),
    settings=lambda ctx, arg: [ctx.recipe.export.guid_prefix, ctx.recipe.export.spreadsheet_safe],
)
def trees_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Sentences and words per split and style, the labels, and the errata checks of
    the release this gold makes (the records the export writes, in the KLUE-DP layout:
    on the card before the files exist) -> OUT/split/trees.json."""
    gold = pd.read_parquet(ctx.out / "gold" / "gold.parquet")
    items = pd.read_parquet(ctx.out / "items" / "items.parquet")
    splits = pd.read_parquet(ctx.out / "split" / "splits.parquet")
    table = tree_table(gold, items, splits)
    prefix = ctx.recipe.export.guid_prefix or ctx.recipe.name
    table["errata"] = {}
    for split, recs in klue_dp_records(gold, items, splits, prefix).items():
        _, text = layout(recs, _header(ctx, split), ctx.recipe.export.spreadsheet_safe)
        table["errata"][split] = errata_of(text, f"{_spec(ctx).guid_prefix}_{split}.tsv")
    write_json(table, ctx.out / "split" / "trees.json")
    found = {s: e["problems"] for s, e in table["errata"].items() if e["problems"]}
    return StepOutcome(f"trees per split and style: {len(table['rows'])} rows; errata "
                       f"{found or 'none'}", {"errata": found})  # fmt: skip


def card(facts: CardFacts) -> CardSection:
    """The parser's scores, the selection, the correction, agreement and review figures,
    the per-style counts and the errata (``dp.card.md.j2``)."""
    return from_template(Path(__file__).with_name("dp.card.md.j2"), {
        "parser": facts["dp_parser"], "items": facts["dp_items"], "gold": facts["dp_gold"],
        "trees": facts["dp_trees"], "inline": inline,
        "annotation_round": annotation_round, "annotation": facts["annotation"],
        "linguists": facts.get("linguists"),
    })  # fmt: skip


ALL_STEPS: list[PlanEntry] = [
    "ingest", "parser", "items", LabelStudioRound(), "agree",
    *REVIEW_STEPS, "gold", "split", "trees", "export", "release",
]  # fmt: skip


def _plan(recipe: Recipe) -> list[PlanEntry]:
    return with_review(ALL_STEPS, recipe.dp.review)


def check_inputs(recipe: Recipe) -> None:
    """The UD files of ``dp.parser.train``, read whole before any work: a malformed
    line is an error naming the file and the line."""
    from pipelines.families.klue.ud import read_conllu

    for value in recipe.dp.parser.train:
        read_conllu(recipe.resolve(value))


register_task(TaskKind(
    name="klue-dp",
    title="KLUE-DP: a head and a label per word, pseudo-parsed and corrected (issue 57)",
    layout="klue-dp",
    hub=hub("token-classification", {"head": "annotated", "deprel": "annotated",
                                     "word_form": "derived", "lemma": "derived",
                                     "pos": "derived", "index": "derived",
                                     "source": "derived", "style": "derived"}),
    steps=ALL_STEPS,
    plan=_plan,
    rounds=rounds,
    card=card,
    needs=["annotation", "agreement", "split", "dp"],
    configs=configs,
    preflight=check_inputs,
    shared=SharedSteps(
        records=records,
        export_inputs={"dp_parser": "parser/summary.json", "dp_items": "items/items.json",
                       "dp_gold": "gold/gold.json", "dp_trees": "split/trees.json"},
        card_json={"dp_parser": "dp_parser", "dp_items": "dp_items", "dp_gold": "dp_gold",
                   "dp_trees": "dp_trees"},
        gold_dir="gold",
    ),
    # UAS and LAS (KLUE 1.1), per style, and KLUE's baseline variant (.dp_metrics)
    evaluation=Evaluation(
        "tree", "guid", gold_tree, field_of("sentence"), METRICS,
        "KLUE (Park et al. 2021) 1.1; KLUE's baseline code for the klue_* variants",
        scorer=scorer, gold_field="head", reference=right_branching_trees,
        reference_name=REFERENCE_NAME,
    ),
))  # fmt: skip
