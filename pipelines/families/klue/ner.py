"""KLUE-NER (KLUE 3.4.1): the ``klue-ner`` task kind, named entities as character spans
of six types (PS, LC, OG, DT, TI, QT), pseudo-labelled by a tagger and corrected by
people.

Steps: ``ingest`` (the recipe's corpora: formal sentences split with kss and colloquial
reviews kept whole, each review one unit; the noise, PII and dedup filters, and KLUE
2.3's toxic-content filter, on by default with the built-in gender-bias and hate
detectors (:mod:`pipelines.quality.toxic`), dropped sentences in ``rejects.parquet``
with reason ``gender_bias`` / ``hate`` and their scores; KLUE 3.4.1's manual removal of
"sentences that contain hate speech or socially biased terms" is the annotators'
``hate_or_bias`` report) -> ``tagger`` (the
character tagger trained on a KMOU-format corpus, or a checkpoint:
:mod:`pipelines.models.char_tagger`) -> ``items`` (sentences over ``ner.max_chars``
(400) characters dropped as ``too_long``; every other one pseudo-labelled; those with no
pseudo-labelled entity dropped as ``no_pseudo_entity``: KLUE kept about 80% of news and
41% of reviews) -> the correction round (push, simulate, wait, pull: the pseudo-labels
pre-loaded as a prediction, ``ner.xml``; annotators fix spans and types or report the
sentence) -> ``agree`` (the ``span_vote`` rule: entity F1 between annotators and alpha
over character tags; reported sentences dropped with the report as reason) -> ``drafts``
-> the linguists' review round (``push-linguists`` ...: each draft pre-loaded; a
reviewer accepts or corrects it, ``ner_review.xml``; optional, ``ner.review``) ->
``gold`` (the reviewed annotation is gold, every version kept in
``gold/versions.parquet``; spans outside the text, overlapping or of an unknown type
drop the sentence with the reason; the PII rule) -> ``split`` (the ``ner`` rule: test
holds entities unseen in train) -> ``export`` (one record per sentence: guid, the
inline-tagged sentence, its characters and BIO tags, as the Hub's ``klue/ner`` has them)
-> ``release`` (the KLUE-NER release layout, ``release/<prefix>_<split>.tsv``,
:mod:`.ner_layout`).

PII (KLUE 3.4.1: sentences with personal information were removed, keeping "the ones
that contain the name of public figures"): a sentence with a gold entity of a
``ner.pii_types`` type (PS) whose text is not on the recipe's public-figure list
(``ner.public_figures``, one name a line) is dropped as ``pii``; the dropped row names
the item, never the person.

Simulated annotators (demos and tests only): a sentence's truth is its corpus's
reference spans where the corpus has them (``ner.truth_field``, a ``keep_fields`` field:
the KMOU test sentences of the demo), re-anchored to the cleaned text, else its
pseudo-labels; annotators miss, shorten and mis-type spans at their accuracy
(:mod:`pipelines.annotation.values.spans`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.annotation.values import canonical_json, spans_of
from pipelines.core.io import TextFileError, read_text, write_json, write_text
from pipelines.core.stage import split_by_reason, value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.evaluation.spec import tagging
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.data_card import annotation_round, inline
from pipelines.export.facts import CardFacts
from pipelines.export.records import SPLITS, split_rows
from pipelines.families.klue import ner_section  # noqa: F401 - the recipe section
from pipelines.families.klue.answer_rows import answers, reports
from pipelines.families.klue.hub import hub
from pipelines.families.klue.kmou import train_on_kmou
from pipelines.families.klue.ner_layout import NerRelease, NerSentence, write_layout
from pipelines.families.klue.review_section import (
    REVIEW_STEPS,
    correction_rounds,
    review_config,
    with_review,
)
from pipelines.models.char_tagger import TYPES, bio_tags
from pipelines.rebuild.kinds import ExportInputs, SharedSteps, TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.families.klue.ner_section import NerSpec

CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
PREDICTION = "ls_prediction"


def _spec(ctx: RunContext) -> NerSpec:
    return ctx.recipe.ner


def spans_json(spans: list[tuple[int, int, str]], text: str) -> str:
    """The canonical span-set value (``span_set``'s row) of ``spans`` over ``text``."""
    rows = [{"start": s, "end": e, "label": lab, "text": text[s:e]} for s, e, lab in sorted(spans)]
    return canonical_json(rows)


def spans_from(value: str) -> list[tuple[int, int, str]]:
    """The sorted ``(start, end, label)`` spans of a span-set value."""
    return sorted(spans_of(value))


def prediction(spans: list[tuple[int, int, str]], text: str, version: str,
               field: str = "entities", to: str = "text") -> str:  # fmt: skip
    """A Label Studio prediction of ``spans`` (``ls_prediction``: pre-loaded in the
    task, for the annotator to correct)."""
    result = [{"id": f"p{s}-{e}-{lab}", "from_name": field, "to_name": to, "type": "labels",
               "value": {"start": s, "end": e, "text": text[s:e], "labels": [lab]}}
              for s, e, lab in sorted(spans)]  # fmt: skip
    return json.dumps({"model_version": version, "result": result}, ensure_ascii=False)


def anchor(text: str, entities: list[dict]) -> list[tuple[int, int, str]]:
    """Reference spans re-anchored to ``text`` (the ingest's cleaning may move them):
    kept where their text still stands at their offsets, else at the first place their
    text occurs at or after the previous span; a span whose text is gone is left out."""
    out, at = [], 0
    for e in sorted(entities, key=lambda e: int(e["start"])):
        start, end, word = int(e["start"]), int(e["end"]), str(e.get("text", ""))
        if not word:
            continue
        if text[start:end] != word:
            found = text.find(word, at)
            if found < 0:
                continue
            start, end = found, found + len(word)
        if start >= at:
            out.append((start, end, str(e["label"])))
            at = end
    return out


def length_reasons(texts: pd.Series, max_chars: int) -> pd.Series:
    """``too_long`` for a sentence over ``max_chars`` characters, else None (KLUE
    3.4.1: "we remove sentences longer than 400 characters"; exactly 400 stays)."""
    reason = pd.Series([None] * len(texts), index=texts.index, dtype=object)
    reason[texts.astype(str).str.len() > max_chars] = "too_long"
    return reason


def ner_item_id(sent_id: str) -> str:
    return "n-" + hashlib.sha256(str(sent_id).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------- tagger


def _tagger_dir(ctx: RunContext) -> Path:
    spec = _spec(ctx).tagger
    return ctx.recipe.resolve(spec.checkpoint) if spec.checkpoint else ctx.out / "tagger"


def _tagger_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    spec = _spec(ctx).tagger
    if spec.checkpoint:
        return {"checkpoint": _tagger_dir(ctx) / "config.json"}
    return {"train": ctx.recipe.resolve(spec.train), "dev": ctx.recipe.resolve(spec.dev)}


@STEPS.register("klue-ner:tagger")
@declares(reads=_tagger_reads, writes=out_files("tagger/tagger.json"))
def tagger_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The pseudo-labeller: a character tagger trained on the recipe's KMOU-format corpus
    (resumable by epoch, reused when trained on the same data and settings), or the
    recipe's checkpoint -> OUT/tagger (model, MODEL_CARD.md, metrics.json)."""
    from pipelines.export.guards import guard_model
    from pipelines.models.char_tagger import TYPES, saved_metrics

    spec = _spec(ctx).tagger
    folder = _tagger_dir(ctx)
    if spec.checkpoint:
        info = {"checkpoint": str(folder), "trained": False, **saved_metrics(folder)}
    else:
        sources = {
            "train": Path(spec.train).name + (f" (first {spec.train_limit})"
                                              if spec.train_limit else ""),
            "dev": Path(spec.dev).name,
            "licence": spec.licence,
            "mapping": ", ".join(f"{k}->{v}" for k, v in spec.mapping.items()
                                 if v is not None and k != v) or "identity",
        }  # fmt: skip
        metrics, read = train_on_kmou(
            ctx.recipe.resolve(spec.train), ctx.recipe.resolve(spec.dev), spec.mapping,
            spec.train_limit, spec.tagger_settings(), folder, sources, TYPES,
        )  # fmt: skip
        info = {"checkpoint": "OUT/tagger", "trained": True, **metrics, **read}
    info.pop("fingerprint", None)
    # issue 51: a tagger whose loss went NaN or that learnt nothing labels no sentence
    guard_model("tagger", info, ctx.recipe, f"{ctx.recipe_path}: ner.tagger")
    write_json(info, ctx.out / "tagger" / "tagger.json")
    dev = info.get("dev") or {}
    return StepOutcome(
        f"tagger {'trained' if info['trained'] else 'loaded'}: dev entity F1 "
        f"{dev.get('entity_f1')}, char macro F1 {dev.get('char_macro_f1')}",
        {k: info.get(k) for k in ("trained", "dev", "best_epoch", "device")},
    )


# ----------------------------------------------------------------------------- items


def _items_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    return {
        "sentences": ctx.out / "ingest" / "sentences.parquet",
        "documents": ctx.out / "ingest" / "documents.parquet",
        "tagger": ctx.out / "tagger" / "tagger.json",
        "weights": _tagger_dir(ctx) / "model.safetensors",
    }


@STEPS.register("klue-ner:items")
@declares(
    reads=_items_reads,
    writes=out_files("items/items.parquet", "items/rejects.parquet", "items/items.json"),
    settings=lambda ctx, arg: [_spec(ctx).model_dump(exclude={"review"}), ctx.simulated],
    code=lambda ctx, arg: ["pipelines.models.char_tagger"],
)
def items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every ingested sentence within ``ner.max_chars`` pseudo-labelled; those with no
    entity dropped (``no_pseudo_entity``); the others are the correction round's items,
    their pseudo-labels pre-loaded as a prediction."""
    from pipelines.models.char_tagger import load_tagger

    spec = _spec(ctx)
    reads = _items_reads(ctx, arg)

    def compute() -> tuple[dict, dict]:
        sentences = pd.read_parquet(reads["sentences"])
        docs = pd.read_parquet(reads["documents"], columns=["doc_id", "meta"])
        frame = sentences.merge(docs, on="doc_id", how="left", validate="many_to_one")
        texts = frame["text"].astype(str)
        reason = length_reasons(texts, spec.max_chars)
        todo = reason.isna()
        tagger = load_tagger(_tagger_dir(ctx))
        pseudo = pd.Series([[]] * len(frame), index=frame.index, dtype=object)
        pseudo[todo] = pd.Series(tagger.spans(list(texts[todo])), index=frame.index[todo])
        reason[todo & (pseudo.map(len) == 0)] = "no_pseudo_entity"
        kept = frame[reason.isna()]
        version = f"char-tagger-{json.loads(reads['tagger'].read_text())['best_epoch']}"
        rows = []
        for idx, row in kept.iterrows():
            text = str(row["text"])
            spans = pseudo[idx]
            item = {"item_id": ner_item_id(row["sent_id"]), "text": text,
                    "source": str(row["corpus"]), "style": str(row.get("style", "")),
                    "license": str(row["license"]), "pseudo": spans_json(spans, text),
                    PREDICTION: prediction(spans, text, version)}  # fmt: skip
            if ctx.simulated:
                meta = json.loads(row["meta"]) if isinstance(row.get("meta"), str) else {}
                ref = meta.get(spec.truth_field) if spec.truth_field else None
                truth = anchor(text, ref) if isinstance(ref, list) else spans
                item["sim_entities"] = [{"start": s, "end": e, "label": lab}
                                        for s, e, lab in truth]  # fmt: skip
                item["has_reference"] = isinstance(ref, list)
            rows.append(item)
        items = pd.DataFrame(rows).sort_values("item_id", kind="stable").reset_index(drop=True)
        rejects = split_by_reason("items", "sentence", frame, reason).rejects()
        per_source = {}
        for source, group in frame.groupby("corpus"):
            r = reason[group.index]
            tagged = int((r != "too_long").sum())
            per_source[str(source)] = {
                "sentences": len(group), "too_long": int((r == "too_long").sum()),
                "pseudo_labelled": tagged, "kept": int(r.isna().sum()),
                "keep_rate": round(float(r.isna().sum()) / tagged, 4) if tagged else None,
            }  # fmt: skip
        entities = [s for spans in pseudo[reason.isna()] for s in spans]
        info = {
            "items": len(items),
            "sentences": len(frame),
            "dropped": value_counts(rejects["reason"]),
            "per_source": per_source,
            "pseudo_entities": len(entities),
            "pseudo_per_type": value_counts(pd.Series([lab for _, _, lab in entities])),
            "reference_check": _reference_check(items) if ctx.simulated else None,
            "max_chars": spec.max_chars,
        }
        return {"items.parquet": items, "rejects.parquet": rejects}, info

    done = cached(ctx, compute)
    info = done.info
    rates = {s: v["keep_rate"] for s, v in info["per_source"].items()}
    return done.outcome(
        f"{info['items']:,} of {info['sentences']:,} sentences pseudo-labelled with entities",
        Rows("sentence", info["sentences"], info["items"], info["dropped"]),
        after=f"; keep rate per source {rates}",
    )


def _reference_check(items: pd.DataFrame) -> dict | None:
    """The pseudo-labels' entity F1 against the reference spans of the items that have
    them (the demo's KMOU test sentences): the tagger's quality on the round's own
    sentences (sentences it left without entity are not items, so recall is over
    those kept)."""
    from pipelines.models.char_tagger import scores

    ref = items[items.get("has_reference", pd.Series(False, index=items.index)).astype(bool)]
    if ref.empty:
        return None
    gold = [bio_tags(len(t), [(e["start"], e["end"], e["label"]) for e in s])
            for t, s in zip(ref["text"], ref["sim_entities"], strict=True)]  # fmt: skip
    pred = [bio_tags(len(t), spans_from(p)) for t, p in zip(ref["text"], ref["pseudo"],
                                                            strict=True)]  # fmt: skip
    s = scores(gold, pred)
    return {"sentences": len(ref), "entity_f1": s["entity_f1"],
            "char_macro_f1": s["char_macro_f1"]}  # fmt: skip


# ---------------------------------------------------------------------------- rounds


def rounds(ctx: RunContext) -> dict[str, Round]:
    """The correction round (``""``, the recipe's ``annotation``) and, with
    ``ner.review``, the linguists' review round."""
    return correction_rounds(ctx, _spec(ctx).review, CONFIGS / "ner_review.xml")


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
    review = recipe.ner.review
    if review is None:
        return []
    return [("ner.review.config", review_config(recipe, review, CONFIGS / "ner_review.xml"))]


@STEPS.register("klue-ner:drafts")
@declares(
    reads=out_files("agree/gold.parquet", "items/items.parquet"),
    writes=out_files("linguists/items.parquet", "linguists/drafts.json"),
    settings=lambda ctx, arg: [ctx.simulated],
)
def drafts_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The linguists' review items: each kept sentence with its draft (the annotators'
    span vote) pre-loaded as a prediction."""

    def compute() -> tuple[dict, dict]:
        gold = pd.read_parquet(ctx.out / "agree" / "gold.parquet")
        items = pd.read_parquet(ctx.out / "items" / "items.parquet").set_index("item_id")
        rows = []
        for item, label in zip(gold["item_id"].astype(str), gold["label"], strict=True):
            src = items.loc[item]
            text = str(src["text"])
            row = {
                "item_id": item,
                "text": text,
                "source": src["source"],
                PREDICTION: prediction(spans_from(label), text, "annotators-span-vote"),
            }
            if "sim_entities" in items.columns:
                row["sim_entities"] = list(src["sim_entities"])
            rows.append(row)
        frame = pd.DataFrame(
            rows,
            columns=["item_id", "text", "source", PREDICTION]
            + (["sim_entities"] if "sim_entities" in items.columns else []),
        )
        return {"items.parquet": frame}, {"drafts": len(frame)}

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['drafts']:,} drafts for the linguists",
        Rows("item", info["drafts"], info["drafts"]),
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
    if _spec(ctx).public_figures:
        reads["public_figures"] = ctx.recipe.resolve(_spec(ctx).public_figures)
    return reads


def public_figures(path: Path) -> set[str]:
    """The names of a public-figure file: one a line, ``#`` starts a comment."""
    names = set()
    for line in read_text(path).splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.add(" ".join(name.split()))
    return names


def span_problem(spans: list[tuple[int, int, str]], text: str) -> str | None:
    """Why a span set cannot be gold (KLUE-NER is flat over six types), or None."""
    last = 0
    for start, end, label in sorted(spans):
        if label not in TYPES:
            return "unknown_entity_type"
        if not 0 <= start < end <= len(text):
            return "span_outside_text"
        if start < last:
            return "overlapping_spans"
        last = end
    return None


def final_gold(
    agreed: pd.DataFrame,
    texts: dict[str, str],
    reviews: pd.DataFrame | None,
    review_reports: dict[str, list[str]],
    figures: set[str] | None,
    pii_types: list[str],
    drop_without_entity: bool = True,
) -> tuple[list[dict], list[dict], list[dict], int]:
    """(gold rows, dropped rows, the draft and reviewed versions, drafts the reviewer
    changed) of the sentences that passed agreement (``agreed``: the span vote, the
    draft). With ``reviews`` the linguist's last review is gold; a sentence the
    reviewer reported or nobody reviewed is dropped. Without, the draft is gold. Then
    the scheme check (:func:`span_problem`); with ``drop_without_entity`` a sentence
    left without any entity is dropped as ``no_entity`` (KLUE 3.4.1: "35 sentences are
    removed after the inspection by the researchers because all annotations are false
    positives"); and, with ``figures``, the PII rule: an
    entity of ``pii_types`` whose text (spaces squeezed) is not a public figure drops
    the sentence as ``pii`` (KLUE 3.4.1)."""
    rows, dropped, versions = [], [], []
    changed = 0
    for g in agreed.itertuples(index=False):
        item, draft = str(g.item_id), str(g.label)
        text = texts[item]
        versions.append({"item_id": item, "version": "draft", "who": "span_vote", "spans": draft})
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
            last = mine.iloc[-1]
            final, reviewed = str(last["value"]), True
            versions.append({"item_id": item, "version": "reviewed",
                             "who": str(last["annotator_id"]), "spans": final})  # fmt: skip
            changed += spans_from(final) != spans_from(draft)
        spans = spans_from(final)
        problem = span_problem(spans, text)
        if problem:
            dropped.append({"kind": "item", "id": item, "reason": problem,
                            "detail": "the gold spans break KLUE-NER's scheme"})  # fmt: skip
            continue
        if drop_without_entity and not spans:
            dropped.append({"kind": "item", "id": item, "reason": "no_entity",
                            "detail": "no entity left: every pseudo-labelled one was a "
                                      "false positive (KLUE 3.4.1)"})  # fmt: skip
            continue
        if figures is not None:
            private = [s for s in spans if s[2] in pii_types
                       and " ".join(text[s[0] : s[1]].split()) not in figures]  # fmt: skip
            if private:
                dropped.append({"kind": "item", "id": item, "reason": "pii",
                                "detail": f"{len(private)} {'/'.join(pii_types)} "
                                          "entity(ies) not on the public-figure list"})  # fmt: skip
                continue
        rows.append({"item_id": item, "label": spans_json(spans, text),
                     "n_annotations": int(g.n_annotations), "elements": len(spans),
                     "reviewed": reviewed,
                     "changed_in_review": reviewed and spans != spans_from(draft)})  # fmt: skip
    return rows, dropped, versions, changed


def _answers(table: pd.DataFrame, field: str = "entities") -> pd.DataFrame:
    return answers(table, field)


def _reports(table: pd.DataFrame) -> dict[str, list[str]]:
    return reports(table)


def correction_figures(items: pd.DataFrame, answers: pd.DataFrame) -> dict:
    """How much annotators changed the pseudo-labels (the suggestion acceptance of
    ``pipelines.agreement.suggestions``, over every annotation of a pseudo-labelled
    sentence): of the pseudo-labelled entities, the share an annotator kept exactly
    (same span and type), retyped (same span, another type), reshaped (another span
    overlapping it) or removed; the entities they added; and the share of annotations
    that left the pseudo-labels as they were."""
    from pipelines.agreement.suggestions import suggestion_table
    from pipelines.annotation.values import VALUE_TYPES

    pseudo = dict(zip(items["item_id"].astype(str), items["pseudo"], strict=True))
    rows = answers.assign(item_id=answers["item_id"].astype(str))
    rows = rows[rows["item_id"].isin(set(pseudo))]
    rows = rows.assign(suggested=rows["item_id"].map(pseudo),
                       value=rows["value"].astype(str), annotator_id="all")  # fmt: skip
    table = suggestion_table(rows, VALUE_TYPES.get("span_set")) if len(rows) else None
    total = table.iloc[-1] if table is not None else None

    def share(column: str, of: str = "suggested") -> float | None:
        if total is None or not total[of]:
            return None
        return round(float(total[column]) / float(total[of]), 4)

    return {
        "annotations": int(len(rows)),
        "pseudo_entities_seen": int(total["suggested"]) if total is not None else 0,
        "kept": share("accepted"), "retyped": share("relabelled"),
        "reshaped": share("reshaped"), "removed": share("deleted"),
        "correction_rate": (round(1 - share("accepted"), 4)
                            if share("accepted") is not None else None),
        "added_entities": int(total["added"]) if total is not None else 0,
        "annotations_unchanged": share("unchanged_items", "items"),
    }  # fmt: skip


@STEPS.register("klue-ner:gold")
@declares(
    reads=_gold_reads,
    writes=out_files(
        "gold/gold.parquet", "gold/dropped.parquet", "gold/versions.parquet", "gold/gold.json"
    ),
    settings=lambda ctx, arg: [_spec(ctx).pii_types, _spec(ctx).review is not None,
                               _spec(ctx).drop_without_entity],
)  # fmt: skip
def gold_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The gold spans: the linguist's reviewed annotation (else the annotators' span
    vote), checked (flat, inside the text, six types), a sentence left without an
    entity dropped (``ner.drop_without_entity``), then the PII rule; every version
    of every sentence (pseudo-labels, each annotator's, the draft, the reviewed) in
    gold/versions.parquet; agree's dropped rows and this step's in gold/dropped.parquet."""
    spec = _spec(ctx)
    reads = _gold_reads(ctx, arg)

    def compute() -> tuple[dict, dict]:
        agreed = pd.read_parquet(reads["gold"])
        items = pd.read_parquet(reads["items"]).set_index("item_id", drop=False)
        table = pd.read_parquet(reads["annotations"])
        answers = _answers(table)
        figures = public_figures(reads["public_figures"]) if "public_figures" in reads else None
        review_table = pd.read_parquet(reads["reviews"]) if "reviews" in reads else None
        reviews = _answers(review_table) if review_table is not None else None
        review_reports = _reports(review_table) if review_table is not None else {}
        versions = [{"item_id": i, "version": "pseudo", "who": "tagger", "spans": p}
                    for i, p in zip(items["item_id"], items["pseudo"], strict=True)]  # fmt: skip
        versions += [{"item_id": str(i), "version": "annotation", "who": str(w), "spans": str(v)}
                     for i, w, v in zip(answers["item_id"], answers["annotator_id"],
                                        answers["value"], strict=True)]  # fmt: skip
        texts = dict(zip(items["item_id"].astype(str), items["text"].astype(str), strict=True))
        rows, dropped, drafts, changed = final_gold(agreed, texts, reviews, review_reports,
                                                    figures, spec.pii_types,
                                                    spec.drop_without_entity)  # fmt: skip
        versions += drafts
        gold = pd.DataFrame(
            rows,
            columns=[
                "item_id",
                "label",
                "n_annotations",
                "elements",
                "reviewed",
                "changed_in_review",
            ],
        )
        before = pd.read_parquet(reads["dropped"])
        mine = pd.DataFrame(dropped, columns=["kind", "id", "reason", "detail"])
        all_dropped = pd.concat([before, mine.reindex(columns=before.columns)], ignore_index=True)
        info = {
            "items": len(agreed),
            "gold_items": len(gold),
            "dropped": value_counts(mine["reason"]),
            "reviewed": int(gold["reviewed"].sum()),
            "changed_in_review": int(gold["changed_in_review"].sum()),
            "review_change_rate": round(changed / len(agreed), 4)
            if reviews is not None and len(agreed)
            else None,
            "correction": correction_figures(items.reset_index(drop=True), answers),
            "public_figures": len(figures) if figures is not None else None,
        }
        return {"gold.parquet": gold, "dropped.parquet": all_dropped,
                "versions.parquet": pd.DataFrame(versions)}, info  # fmt: skip

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['gold_items']:,} of {info['items']:,} sentences gold",
        Rows("item", info["items"], info["gold_items"], info["dropped"]),
        after=f"; dropped {info['dropped']}; "
        f"correction rate {info['correction']['correction_rate']}",
    )


# ---------------------------------------------------------------------------- export


def _sentence(text: str, label: str, guid: str) -> NerSentence:
    return NerSentence(guid, text, spans_from(label))


def klue_ner_records(
    gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame, prefix: str
) -> dict[str, list[dict]]:
    """One record per sentence, as the Hub's ``klue/ner`` has them::

        {"guid": "<prefix>_<split>_00000", "sentence": "<한국:LC>에서 ...",
         "tokens": ["한", "국", ...], "ner_tags": ["B-LC", "I-LC", ...],
         "entities": [{"start", "end", "label", "text"}], "source": ...}

    ``tokens`` are the characters (a space is one), ``ner_tags`` their BIO tags."""
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in split_rows(gold, items, splits):
        s = _sentence(str(row.text), str(row.label), f"{prefix}_{split}_{n:05d}")
        out[split].append({
            "guid": s.guid, "sentence": s.tagged(), "tokens": list(s.text),
            "ner_tags": s.tags(), "entities": json.loads(row.label), "source": str(row.source),
        })  # fmt: skip
    return out


def records(inputs: ExportInputs) -> dict[str, list[dict]]:
    return klue_ner_records(inputs.gold, inputs.items, inputs.splits, inputs.prefix)


@STEPS.register("klue-ner:release")
@declares(
    reads=out_files("dataset/train.jsonl", "dataset/dev.jsonl", "dataset/test.jsonl"),
    writes=lambda ctx, arg: {
        s: ctx.out / "release" / f"{_spec(ctx).guid_prefix}_{s}.tsv" for s in SPLITS
    },  # fmt: skip
)
def release_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dataset in the KLUE-NER release layout (:mod:`.ner_layout`): one
    ``release/<prefix>_<split>.tsv`` per split, read back and checked equal."""
    from pipelines.families.klue.ner_layout import read_layout

    counts = {}
    for split in SPLITS:
        lines = (ctx.out / "dataset" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()
        sentences = []
        for line in lines:
            rec = json.loads(line)
            text = "".join(rec["tokens"])
            spans = [(int(e["start"]), int(e["end"]), str(e["label"])) for e in rec["entities"]]
            sentences.append(NerSentence(rec["guid"], text, sorted(spans)))
        header = [
            f"# KLUE-NER layout (KLUE 3.4), {split}: rebuilt by benchforge from recipe "
            f"{ctx.recipe.name}"
        ]
        # a sentence a spreadsheet would run as a formula gets a leading ' (issue 51)
        release = NerRelease(header, sentences, spreadsheet_safe=ctx.recipe.export.spreadsheet_safe)
        text = write_layout(release)
        if read_layout(text, split) != release:
            raise AssertionError(f"the {split} release does not read back as written")
        write_text(text, ctx.out / "release" / f"{_spec(ctx).guid_prefix}_{split}.tsv")
        counts[split] = len(sentences)
    return StepOutcome(f"KLUE-NER layout: {counts} -> {ctx.out / 'release'}", {"files": counts})


# ------------------------------------------------------------------------------ card


def entity_table(gold: pd.DataFrame, splits: pd.DataFrame) -> dict:
    """KLUE Table 9's shape: entities per type and split, and distinct entity strings
    (``splits``: the split's names in order; ``rows``: one per type)."""
    frame = gold.merge(splits[["item_id", "split"]], on="item_id", how="inner")
    names = [s for s in SPLITS if (frame["split"] == s).any()]
    rows = []
    for typ in TYPES:
        row: dict = {"type": typ}
        for split in names:
            ents = [e["text"] for v in frame.loc[frame["split"] == split, "label"]
                    for e in json.loads(v) if e["label"] == typ]  # fmt: skip
            row[split], row[f"{split}_distinct"] = len(ents), len(set(ents))
        rows.append(row)
    return {"splits": names, "rows": rows}


@STEPS.register("klue-ner:entities")
@declares(
    reads=out_files("gold/gold.parquet", "split/splits.parquet"),
    writes=out_files("split/entities.json"),
)
def entities_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Entities per type and split, with distinct entity strings (KLUE Table 9) ->
    OUT/split/entities.json, for the card."""
    table = entity_table(pd.read_parquet(ctx.out / "gold" / "gold.parquet"),
                         pd.read_parquet(ctx.out / "split" / "splits.parquet"))  # fmt: skip
    write_json(table, ctx.out / "split" / "entities.json")
    totals = {s: sum(r[s] for r in table["rows"]) for s in table["splits"]}
    return StepOutcome(f"entities per split: {totals}", {"entities": totals})


def card(facts: CardFacts) -> CardSection:
    """The tagger's scores, the keep rates, the correction and review figures and the
    entity counts (``ner.card.md.j2``)."""
    return from_template(Path(__file__).with_name("ner.card.md.j2"), {
        "tagger": facts["tagger"], "items": facts["ner_items"], "gold": facts["ner_gold"],
        "entities": facts["ner_entities"], "inline": inline,
        "annotation_round": annotation_round, "annotation": facts["annotation"],
        "linguists": facts.get("linguists"),
    })  # fmt: skip


ALL_STEPS: list[PlanEntry] = [
    "ingest", "tagger", "items", LabelStudioRound(), "agree",
    *REVIEW_STEPS, "gold", "split", "entities", "export", "release",
]  # fmt: skip


def _plan(recipe: Recipe) -> list[PlanEntry]:
    """The steps, without the review round's when the recipe has no ``ner.review``."""
    return with_review(ALL_STEPS, recipe.ner.review)


def check_inputs(recipe: Recipe) -> None:
    """The files of the ``ner:`` section, before any work (issue 51: an undecodable
    file was a traceback after minutes): the tagger's KMOU ``train`` and ``dev`` files
    (:func:`~pipelines.families.klue.kmou.check_kmou`) and the public-figure list,
    which must name someone. Errors name the setting, the file and the line."""
    from pipelines.families.klue.kmou import check_kmou

    spec = recipe.ner
    if not spec.tagger.checkpoint:
        for name in ("train", "dev"):
            check_kmou(recipe.resolve(getattr(spec.tagger, name)), spec.tagger.mapping,
                       f"ner.tagger.{name}")  # fmt: skip
    if spec.public_figures:
        path = recipe.resolve(spec.public_figures)
        try:
            names = public_figures(path)
        except TextFileError as exc:
            raise TextFileError(f"ner.public_figures: {exc}") from None
        if not names:
            raise TextFileError(f"ner.public_figures: {path}: no names (one a line)")


register_task(TaskKind(
    name="klue-ner",
    title="KLUE-NER: named entities as character spans, pseudo-labelled and corrected "
          "(KLUE 3.4.1)",
    layout="klue-ner",
    hub=hub("token-classification", {"entities": "annotated", "ner_tags": "derived",
                                     "tokens": "derived", "source": "derived"}),
    steps=ALL_STEPS,
    plan=_plan,
    rounds=rounds,
    card=card,
    needs=["annotation", "agreement", "split", "ner"],
    configs=configs,
    preflight=check_inputs,
    shared=SharedSteps(
        records=records,
        export_inputs={"tagger": "tagger/tagger.json", "ner_items": "items/items.json",
                       "ner_gold": "gold/gold.json", "ner_entities": "split/entities.json"},
        card_json={"tagger": "tagger", "ner_items": "ner_items", "ner_gold": "ner_gold",
                   "ner_entities": "ner_entities"},
        gold_dir="gold",
    ),
    # KLUE 3.4.2: entity-level and character-level macro-F1
    evaluation=tagging("guid", ["entity_macro_f1", "char_macro_f1"],
                       "KLUE (Park et al. 2021) 3.4.2", types=TYPES),
))  # fmt: skip
