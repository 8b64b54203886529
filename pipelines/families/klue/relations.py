"""KLUE-RE (KLUE 3.5.1): the ``klue-re`` task kind, the relation between a subject and
an object entity of a sentence, one of 30 classes (``re_relations.json``).

Steps: ``ingest`` (sentences split with kss; KLUE 3.5.1 step 1 filters out hate speech
and social bias "using a classifier trained on the Korean hate speech dataset": the
ingest's toxic-content filter does that, on by default with the built-in gender-bias
and hate detectors, :mod:`pipelines.quality.toxic`; a pair the annotators report as
``hate_or_bias`` is dropped at ``agree`` as well) ->
``taggers`` (two character taggers trained on different corpora, KLUE 3.5.1's two NER
resources: :mod:`pipelines.models.char_tagger`) -> ``candidates`` (every sentence within
``re.max_chars`` tagged by both; their entities **unioned**, mapped to KLUE-RE's types
PER, ORG, LOC, DAT, POH, NOH; a sentence without two entities or without a PER/ORG
subject dropped with its reason) -> ``items`` (the entity pairs: **KB-based**, pairs
whose strings are a triple of the recipe's knowledge base, each KB pair used at most
``kb_max_per_pair`` times, up to ``kb_share`` of the pairs; the rest **uniform** over
every other pair; subjects PER or ORG only; each item lists the candidate relations for
its types first) -> (with ``annotation.pilot``: the pilot round, workers who get
``min_correct`` of the gold right qualify, KLUE 3.5.1: 4 of 5) -> the relation round
(``re.xml``, 3 annotators) -> ``votes`` (the answer: a candidate relation, or the one
chosen under "show all") -> ``agree`` (``majority``, 2 of 3; Fleiss' kappa and nominal
alpha) -> ``split`` -> ``export`` (the KLUE-RE layout: ``guid``, ``sentence``,
``subject_entity`` / ``object_entity`` with ``word``, ``start_idx``, ``end_idx``
(inclusive, as KLUE-RE's release has them), ``type``, then ``label`` and ``source``).

Simulated annotators (demos and tests only): a KB pair's latent relation is its
triple's, any other pair's ``no_relation``; annotators give it at their accuracy.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.annotation.label_config import dynamic_options
from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, control_character_line, read_text, write_json
from pipelines.core.stage import split_by_reason, value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.evaluation.spec import Evaluation, field_of
from pipelines.export.card_section import CardSection, from_template
from pipelines.export.data_card import annotation_round, inline
from pipelines.export.facts import CardFacts
from pipelines.export.records import SPLITS, split_rows
from pipelines.families.klue import re_section  # noqa: F401 - the recipe section
from pipelines.families.klue.hub import hub
from pipelines.families.klue.kmou import train_on_kmou
from pipelines.families.klue.ner import length_reasons
from pipelines.families.klue.re_section import RE_TYPES
from pipelines.rebuild.kinds import ExportInputs, SharedSteps, TaskKind, register_task
from pipelines.rebuild.rounds import LabelStudioRound, one_round

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.families.klue.re_section import ReSpec, ReTaggerSpec

RELATIONS = Path(__file__).with_name("re_relations.json")
OTHER = "other"  # the answer that sends an annotator to "show all relations"
Entity = tuple[int, int, str]


class ReInputError(BenchforgeError, ValueError):
    """A relation list or knowledge-base file that cannot be used; the message names
    the file, the line or entry, and the problem."""


@cache
def _relations(path: str) -> dict:
    return read_relations(Path(path))


def read_relations(path: Path) -> dict:
    """A relation list (``re_relations.json``'s layout): ``relations``, a list of objects
    with a ``label`` (text, unique), ``subject`` and ``object`` (lists of KLUE-RE's
    entity types) and an optional ``description``. Checked before any work: an entry
    without ``label``, ``subject`` or ``object``, an unknown type, a repeated label, a
    control character, or a list with no relation a subject of ``PER``/``ORG`` can take
    besides ``no_relation`` is a :class:`ReInputError` naming the file and the entry."""
    try:
        data = json.loads(read_text(path))
    except TextFileError as exc:
        raise ReInputError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ReInputError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    relations = data.get("relations") if isinstance(data, dict) else None
    if not isinstance(relations, list):
        raise ReInputError(f"{path}: expected an object with a 'relations' list")
    seen: dict[str, int] = {}
    for n, entry in enumerate(relations):
        where = f"{path}: relations[{n}]"
        if not isinstance(entry, dict):
            raise ReInputError(f"{where}: expected an object with label, subject and object")
        missing = [k for k in ("label", "subject", "object") if k not in entry]
        if missing:
            raise ReInputError(f"{where}: no {', '.join(missing)} (fields: {sorted(entry)})")
        label = entry["label"]
        if not isinstance(label, str) or not label.strip() or control_character_line(label):
            raise ReInputError(f"{where}: label {label!r} is not a relation name")
        if label in seen:
            raise ReInputError(f"{where}: label {label!r} repeats relations[{seen[label]}]")
        seen[label] = n
        for side in ("subject", "object"):
            types = entry[side]
            if not isinstance(types, list) or not types:
                raise ReInputError(f"{where} ({label}): {side} is a list of entity types")
            bad = sorted({str(t) for t in types} - set(RE_TYPES))
            if bad:
                raise ReInputError(
                    f"{where} ({label}): {side}: unknown types {bad} (KLUE-RE's: {list(RE_TYPES)})"
                )
    if not any(r["label"] != "no_relation" and {"PER", "ORG"} & set(r["subject"])
               for r in relations):  # fmt: skip
        raise ReInputError(
            f"{path}: no relation besides no_relation that a PER or ORG subject can take: "
            "nothing to annotate"
        )
    return data


OTHER_SHOWN = "목록에 없음: 아래 '모든 관계 보기'에서 고르기"


def relation_options(candidates: list[str], schema: list[dict] | None = None) -> list[dict]:
    """The candidate relations of a pair as the interface's dynamic options, then
    no_relation and "other": each shown with its Korean name (``ko`` of the relation
    list) and stored as its code, with the hotkeys 1-9 and 0 in order (issue 55)."""
    names = {r["label"]: r.get("ko") for r in (schema or relation_schema())}
    codes = [*candidates, "no_relation", OTHER]
    shown = {c: f"{names[c]} {c}" if names.get(c) else c for c in codes}
    shown[OTHER] = OTHER_SHOWN
    return dynamic_options(codes, shown)


def relation_schema(recipe: Recipe | None = None) -> list[dict]:
    """The 30 classes: ``label``, ``description``, allowed ``subject`` and ``object``
    types (``re.relations`` or the shipped ``re_relations.json``)."""
    spec = getattr(recipe, "re", None)
    path = recipe.resolve(spec.relations) if spec is not None and spec.relations else RELATIONS
    return _relations(str(path))["relations"]


def candidates_for(subject_type: str, object_type: str, schema: list[dict]) -> list[str]:
    """The relations the pair's types allow, in the schema's order (``no_relation`` is
    always allowed and listed apart)."""
    return [r["label"] for r in schema if r["label"] != "no_relation"
            and subject_type in r["subject"] and object_type in r["object"]]  # fmt: skip


def union_entities(found: list[list[Entity]]) -> list[Entity]:
    """The entities of several taggers unioned: every span, and of two overlapping ones
    the longer (then the earlier tagger's, then the earlier span)."""
    ranked = sorted(((e, k) for k, spans in enumerate(found) for e in spans),
                    key=lambda ek: (-(ek[0][1] - ek[0][0]), ek[1], ek[0][0]))  # fmt: skip
    kept: list[Entity] = []
    for (start, end, label), _ in ranked:
        if any(start < e and s < end for s, e, _ in kept):
            continue
        kept.append((start, end, label))
    return sorted(set(kept))


def read_kb(path: Path, labels: set[str]) -> dict[tuple[str, str], str]:
    """(subject, object) -> relation from a TSV of ``subject<TAB>relation<TAB>object``
    (``#`` lines are comments). A line with another number of fields, an empty field,
    an unknown relation, a control character, a pair given twice (the same triple, or
    two relations for one pair) or a file without a triple is a :class:`ReInputError`
    naming the file and the line (checked before any work: :func:`check_inputs`)."""
    kb: dict[tuple[str, str], str] = {}
    lines: dict[tuple[str, str], int] = {}
    try:
        text = read_text(path)
    except TextFileError as exc:
        raise ReInputError(str(exc)) from None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ReInputError(f"{path}:{n}: expected subject<TAB>relation<TAB>object, "
                               f"got {len(parts)} field(s)")  # fmt: skip
        if control_character_line(line):
            raise ReInputError(f"{path}:{n}: a control character (such as NUL) in the line")
        subject, relation, obj = (p.strip() for p in parts)
        if not subject or not obj:
            raise ReInputError(f"{path}:{n}: an empty subject or object")
        if relation not in labels:
            raise ReInputError(f"{path}:{n}: unknown relation {relation!r}")
        if (subject, obj) in kb:
            same = "repeats the triple" if kb[(subject, obj)] == relation else (
                f"gives the pair a second relation ({kb[(subject, obj)]!r})")  # fmt: skip
            raise ReInputError(f"{path}:{n}: {subject!r} {relation} {obj!r} {same} "
                               f"on line {lines[(subject, obj)]}")  # fmt: skip
        kb[(subject, obj)] = relation
        lines[(subject, obj)] = n
    if not kb:
        raise ReInputError(f"{path}: no triples (subject<TAB>relation<TAB>object lines)")
    return kb


def kb_note(path: Path) -> str:
    """What a knowledge-base file says of itself: its leading ``#`` lines, joined (the
    card quotes them; the demo's says it was written by hand)."""
    lines = []
    for line in read_text(path).splitlines():
        if not line.startswith("#"):
            break
        text = line.lstrip("#").strip()
        if text and "<TAB>" not in text:
            lines.append(text)
    return " ".join(lines)


def check_inputs(recipe: Recipe) -> None:
    """The files of the ``re:`` section, before any work (issue 51: a bad relation list
    gave a ``KeyError``, a bad KB line a ``ValueError`` after the taggers' training, an
    empty one an error deep in a step): the relation list (:func:`read_relations`), the
    knowledge base (:func:`read_kb`) and each tagger's KMOU ``train`` and ``dev`` files
    (:func:`~pipelines.families.klue.kmou.check_kmou`). Errors name the setting."""
    from pipelines.families.klue.kmou import check_kmou

    spec = recipe.re
    try:
        labels = {r["label"] for r in relation_schema(recipe)}
    except ReInputError as exc:
        raise ReInputError(f"re.relations: {exc}") from None
    try:
        read_kb(recipe.resolve(spec.kb), labels)
    except ReInputError as exc:
        raise ReInputError(f"re.kb: {exc}") from None
    for t in spec.taggers:
        if not t.checkpoint:
            for name in ("train", "dev"):
                check_kmou(recipe.resolve(getattr(t, name)), t.mapping,
                           f"re.taggers[{t.name}].{name}")  # fmt: skip


def pair_id(sentence_id: str, s: Entity, o: Entity) -> str:
    key = f"{sentence_id}|{s[0]}-{s[1]}|{o[0]}-{o[1]}"
    return "r-" + hashlib.sha256(key.encode()).hexdigest()[:16]


def marked(text: str, s: Entity, o: Entity) -> str:
    """The sentence with the subject in ``[S: ...]`` and the object in ``[O: ...]``."""
    out, at = [], 0
    for start, end, tag in sorted([(s[0], s[1], "S"), (o[0], o[1], "O")]):
        out += [text[at:start], f"[{tag}: {text[start:end]}]"]
        at = end
    return "".join([*out, text[at:]])


def sample_pairs(
    sentences: pd.DataFrame, kb: dict, spec: ReSpec, schema: list[dict]
) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(sampled pairs, the others with their reason, figures): every ordered pair of a
    sentence's entities whose subject is of ``spec.subject_types``; in one seeded
    order, the KB pairs first (a pair whose strings are a KB triple; each at most
    ``kb_max_per_pair`` times, ``kb_share`` of ``pairs`` at most), then uniform pairs
    until ``pairs`` (KLUE 3.5.1)."""
    rng = np.random.default_rng(spec.seed)
    rows = []
    for row in sentences.itertuples(index=False):
        ents = [tuple(e) for e in json.loads(row.entities)]
        for s in ents:
            if s[2] not in spec.subject_types:
                continue
            for o in ents:
                if o == s:
                    continue
                words = (row.text[s[0] : s[1]], row.text[o[0] : o[1]])
                rows.append({"pair_id": pair_id(row.sentence_id, s, o),
                             "sentence_id": row.sentence_id, "s": s, "o": o,
                             "words": words, "kb": kb.get(words)})  # fmt: skip
    pairs = pd.DataFrame(rows, columns=["pair_id", "sentence_id", "s", "o", "words", "kb"])
    order = rng.permutation(len(pairs)).tolist()
    want_kb = int(round(spec.pairs * spec.kb_share))
    in_kb = [isinstance(r["kb"], str) for r in rows]
    reason: dict[str, str] = {}
    chosen: list[int] = []
    used: Counter = Counter()
    for i in order:  # KB-based first
        if not in_kb[i]:
            continue
        words = rows[i]["words"]
        if len(chosen) >= want_kb:
            reason[rows[i]["pair_id"]] = "kb_share_reached"
        elif used[words] >= spec.kb_max_per_pair:
            reason[rows[i]["pair_id"]] = "kb_pair_cap"
        else:
            used[words] += 1
            chosen.append(i)
    uniform = [i for i in order if not in_kb[i]]
    room = max(0, spec.pairs - len(chosen))
    chosen += uniform[:room]
    picked = pairs.loc[sorted(chosen)].copy()
    picked["sampling"] = ["kb" if in_kb[i] else "uniform" for i in picked.index]
    rest = pairs.drop(index=picked.index).copy()
    rest["reason"] = rest["pair_id"].map(reason).fillna("not_sampled")
    figures = {
        "pairs_possible": len(pairs),
        "kb_pairs_possible": int(sum(in_kb)),
        "sampled": len(picked),
        "kb": int((picked["sampling"] == "kb").sum()),
        "uniform": int((picked["sampling"] == "uniform").sum()),
        "kb_share_setting": spec.kb_share,
        "kb_max_per_pair": spec.kb_max_per_pair,
        "pairs_setting": spec.pairs,
    }
    return picked, rest, figures


# ---------------------------------------------------------------------------- taggers


def _spec(ctx: RunContext) -> ReSpec:
    return ctx.recipe.re


def _tagger_dir(ctx: RunContext, tagger: ReTaggerSpec) -> Path:
    if tagger.checkpoint:
        return ctx.recipe.resolve(tagger.checkpoint)
    return ctx.out / "taggers" / tagger.name


def _taggers_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    out = {}
    for t in _spec(ctx).taggers:
        if t.checkpoint:
            out[f"{t.name}-checkpoint"] = _tagger_dir(ctx, t) / "config.json"
        else:
            out[f"{t.name}-train"] = ctx.recipe.resolve(t.train)
            out[f"{t.name}-dev"] = ctx.recipe.resolve(t.dev)
    return out


@STEPS.register("klue-re:taggers")
@declares(reads=_taggers_reads, writes=out_files("taggers/taggers.json"))
def taggers_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """KLUE 3.5.1's two entity taggers, each trained on its own corpus with its types
    mapped to KLUE-RE's (reused when trained on the same data and settings), or loaded
    -> OUT/taggers/<name> (model, MODEL_CARD.md, metrics.json)."""
    from pipelines.export.guards import guard_model
    from pipelines.models.char_tagger import saved_metrics

    info = {}
    for t in _spec(ctx).taggers:
        folder = _tagger_dir(ctx, t)
        if t.checkpoint:
            info[t.name] = {"trained": False, "checkpoint": str(folder), **saved_metrics(folder)}
        else:
            sources = {"train": Path(t.train).name, "dev": Path(t.dev).name,
                       "licence": t.licence}  # fmt: skip
            metrics, _ = train_on_kmou(
                ctx.recipe.resolve(t.train), ctx.recipe.resolve(t.dev), t.mapping,
                t.train_limit, t.tagger_settings(), folder, sources, RE_TYPES,
            )  # fmt: skip
            info[t.name] = {"trained": True, **metrics}
        info[t.name].pop("fingerprint", None)
        # issue 51: a tagger whose loss went NaN or that learnt nothing is refused
        guard_model(t.name, info[t.name], ctx.recipe, f"{ctx.recipe_path}: re.taggers")
    write_json(info, ctx.out / "taggers" / "taggers.json")
    scores = {n: (v.get("dev") or {}).get("entity_f1") for n, v in info.items()}
    return StepOutcome(f"taggers' dev entity F1: {scores}",
                       {n: v.get("dev") for n, v in info.items()})  # fmt: skip


# ------------------------------------------------------------------------ candidates


def _candidates_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    reads = {"sentences": ctx.out / "ingest" / "sentences.parquet",
             "taggers": ctx.out / "taggers" / "taggers.json"}  # fmt: skip
    for t in _spec(ctx).taggers:
        reads[f"{t.name}-weights"] = _tagger_dir(ctx, t) / "model.safetensors"
    return reads


@STEPS.register("klue-re:candidates")
@declares(
    reads=_candidates_reads,
    writes=out_files("candidates/sentences.parquet", "candidates/rejects.parquet",
                     "candidates/candidates.json"),
    settings=lambda ctx, arg: [[t.name for t in _spec(ctx).taggers], _spec(ctx).max_chars,
                               _spec(ctx).subject_types],
    code=lambda ctx, arg: ["pipelines.models.char_tagger"],
)  # fmt: skip
def candidates_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Every sentence tagged by both taggers, their entities unioned; sentences without
    two entities or a PER/ORG subject dropped with the reason."""
    from pipelines.models.char_tagger import load_tagger

    spec = _spec(ctx)
    reads = _candidates_reads(ctx, arg)

    def compute() -> tuple[dict, dict]:
        frame = pd.read_parquet(reads["sentences"])
        texts = frame["text"].astype(str)
        reason = length_reasons(texts, spec.max_chars)
        todo = list(frame.index[reason.isna()])
        found = []
        per_tagger = {}
        for t in spec.taggers:
            spans = load_tagger(_tagger_dir(ctx, t)).spans(list(texts[todo]))
            found.append(dict(zip(todo, spans, strict=True)))
            per_tagger[t.name] = int(sum(len(s) for s in spans))
        rows = []
        agreed = total = 0
        for idx in todo:
            lists = [f[idx] for f in found]
            ents = union_entities(lists)
            total += len(ents)
            agreed += sum(all(e in f for f in lists) for e in ents)
            if len(ents) < 2:
                reason[idx] = "fewer_than_two_entities"
            elif not any(e[2] in spec.subject_types for e in ents):
                reason[idx] = "no_per_or_org_subject"
            else:
                row = frame.loc[idx]
                rows.append(
                    {
                        "sentence_id": str(row["sent_id"]),
                        "text": str(row["text"]),
                        "entities": json.dumps([list(e) for e in ents]),
                        "source": str(row["corpus"]),
                        "license": str(row["license"]),
                    }
                )
        kept = pd.DataFrame(rows, columns=["sentence_id", "text", "entities", "source",
                                           "license"])  # fmt: skip
        rejects = split_by_reason("candidates", "sentence", frame, reason).rejects()
        types = Counter(e[2] for v in kept["entities"] for e in json.loads(v))
        info = {
            "sentences": len(frame), "kept": len(kept), "dropped": value_counts(rejects["reason"]),
            "entities_per_tagger": per_tagger, "entities_unioned": total,
            "found_by_every_tagger": round(agreed / total, 4) if total else None,
            "entity_types": dict(sorted(types.items())),
        }  # fmt: skip
        return {"sentences.parquet": kept, "rejects.parquet": rejects}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['kept']:,} of {info['sentences']:,} sentences hold a PER/ORG entity and "
        f"another; {info['entities_unioned']:,} entities unioned ({info['entities_per_tagger']})",
        Rows("sentence", info["sentences"], info["kept"], info["dropped"]),
    )


# ----------------------------------------------------------------------------- items


@STEPS.register("klue-re:items")
@declares(
    reads=lambda ctx, arg: {"candidates": ctx.out / "candidates" / "sentences.parquet",
                            "kb": ctx.recipe.resolve(_spec(ctx).kb)},
    writes=out_files("items/items.parquet", "items/rejects.parquet", "items/items.json"),
    settings=lambda ctx, arg: [_spec(ctx).model_dump(exclude={"taggers"}), ctx.simulated],
)  # fmt: skip
def items_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The entity pairs sent to annotators: KB-based and uniform (see the module); the
    pairs not sampled kept with their reason."""
    spec = _spec(ctx)
    schema = relation_schema(ctx.recipe)
    labels = {r["label"] for r in schema}

    def compute() -> tuple[dict, dict]:
        sentences = pd.read_parquet(ctx.out / "candidates" / "sentences.parquet")
        kb = read_kb(ctx.recipe.resolve(spec.kb), labels)
        picked, rest, figures = sample_pairs(sentences, kb, spec, schema)
        text = dict(zip(sentences["sentence_id"], sentences["text"], strict=True))
        meta = sentences.set_index("sentence_id")
        rows = []
        for p in picked.itertuples(index=False):
            sentence = text[p.sentence_id]
            s, o = tuple(p.s), tuple(p.o)
            cands = candidates_for(s[2], o[2], schema)
            row = {
                "item_id": p.pair_id, "sentence_id": p.sentence_id, "sentence": sentence,
                "marked": marked(sentence, s, o),
                "subject": sentence[s[0] : s[1]], "subject_start": int(s[0]),
                "subject_end": int(s[1]), "subject_type": s[2],
                "object": sentence[o[0] : o[1]], "object_start": int(o[0]),
                "object_end": int(o[1]), "object_type": o[2],
                "candidates": ", ".join(cands) or "(none for these types)",
                "relation_options": relation_options(cands, schema),
                "sampling": p.sampling, "source": meta.loc[p.sentence_id, "source"],
                "license": meta.loc[p.sentence_id, "license"],
            }  # fmt: skip
            if ctx.simulated:
                truth = p.kb if isinstance(p.kb, str) else "no_relation"
                row["sim_relation"] = truth if truth in (*cands, "no_relation") else OTHER
                row["sim_relation_all"] = truth
            rows.append(row)
        items = pd.DataFrame(rows).sort_values("item_id", kind="stable").reset_index(drop=True)
        rejects = rest.rename(columns={"pair_id": "id"})[["id", "sentence_id", "reason"]]
        info = {**figures, "dropped": value_counts(rejects["reason"]),
                "per_source": value_counts(items["source"]) if len(items) else {},
                "kb_triples": len(kb), "subject_types": spec.subject_types,
                "kb_file": Path(spec.kb).name,
                "kb_note": kb_note(ctx.recipe.resolve(spec.kb))}  # fmt: skip
        return {"items.parquet": items, "rejects.parquet": rejects}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['sampled']:,} of {info['pairs_possible']:,} entity pairs: {info['kb']} KB-based, "
        f"{info['uniform']} uniform",
        Rows("pair", info["pairs_possible"], info["sampled"], info["dropped"]),
    )


# ----------------------------------------------------------------------------- votes


@STEPS.register("klue-re:votes")
@declares(reads=out_files("annotate/annotations.parquet"),
          writes=out_files("annotate/votes.parquet", "annotate/votes.json"),
          settings=lambda ctx, arg: [OTHER])  # fmt: skip
def votes_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Each annotation's answer as one ``relation`` row: the candidate relation chosen,
    or, when the annotator chose ``other``, the relation chosen under "show all"
    (``relation_all``); an ``other`` with nothing chosen there has no answer (blank)."""

    def compute() -> tuple[dict, dict]:
        table = pd.read_parquet(ctx.out / "annotate" / "annotations.parquet")
        table, resolved = merge_other(table)
        return {"votes.parquet": table}, resolved

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['from_show_all']} answers chosen under 'show all'",
        merge=False,
    )


def merge_other(table: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The pulled table with ``relation_all`` folded into ``relation`` (see votes_step)."""
    key = ["item_id", "annotation_id"]
    alls = table[table["field"] == "relation_all"].set_index(key)["value"]
    rel = table["field"] == "relation"
    table = table.copy()
    other = rel & (table["value"].astype(str) == OTHER)
    picked = [
        alls.get((i, a))
        for i, a in zip(table.loc[other, "item_id"], table.loc[other, "annotation_id"], strict=True)
    ]
    table.loc[other, "value"] = [p if isinstance(p, str) and p else "" for p in picked]
    out = table[table["field"] != "relation_all"].reset_index(drop=True)
    return out, {"from_show_all": int(sum(bool(p) for p in picked)),
                 "other_without_choice": int(sum(not p for p in picked))}  # fmt: skip


# ---------------------------------------------------------------------------- export


def klue_re_records(gold: pd.DataFrame, items: pd.DataFrame, splits: pd.DataFrame,
                    prefix: str) -> dict[str, list[dict]]:  # fmt: skip
    """The KLUE-RE layout, one object per pair::

        {"guid": "<prefix>_<split>_00000", "sentence": ...,
         "subject_entity": {"word", "start_idx", "end_idx", "type"},
         "object_entity": {...}, "label": "per:employee_of", "source": ...}

    ``end_idx`` is inclusive, as in KLUE-RE's release."""
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for split, n, row in split_rows(gold, items, splits):
        out[split].append({
            "guid": f"{prefix}_{split}_{n:05d}", "sentence": row.sentence,
            "subject_entity": {"word": row.subject, "start_idx": int(row.subject_start),
                               "end_idx": int(row.subject_end) - 1, "type": row.subject_type},
            "object_entity": {"word": row.object, "start_idx": int(row.object_start),
                              "end_idx": int(row.object_end) - 1, "type": row.object_type},
            "label": str(row.label), "source": str(row.source),
        })  # fmt: skip
    return out


def records(inputs: ExportInputs) -> dict[str, list[dict]]:
    return klue_re_records(inputs.gold, inputs.items, inputs.splits, inputs.prefix)


@STEPS.register("klue-re:mix")
@declares(reads=out_files("agree/gold.parquet", "items/items.parquet"),
          writes=out_files("agree/mix.json"))  # fmt: skip
def mix_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The gold pairs' KB/uniform mix, the ``no_relation`` share per sampling and the
    relation distribution -> OUT/agree/mix.json, for the card."""
    gold = pd.read_parquet(ctx.out / "agree" / "gold.parquet")
    items = pd.read_parquet(ctx.out / "items" / "items.parquet", columns=["item_id", "sampling"])
    frame = gold.merge(items, on="item_id")
    mix = {
        "gold_pairs": len(frame),
        "per_sampling": value_counts(frame["sampling"]),
        "no_relation_share": round(float((frame["label"] == "no_relation").mean()), 4)
        if len(frame) else None,
        "no_relation_share_per_sampling": {
            s: round(float((g["label"] == "no_relation").mean()), 4)
            for s, g in frame.groupby("sampling")},
        "relations": value_counts(frame["label"]),
    }  # fmt: skip
    write_json(mix, ctx.out / "agree" / "mix.json")
    return StepOutcome(f"no_relation share {mix['no_relation_share']}; {mix['per_sampling']}", mix)


def card(facts: CardFacts) -> CardSection:
    """The taggers, the candidates, the KB/uniform mix and the relations (``re.card.md.j2``)."""
    return from_template(Path(__file__).with_name("re.card.md.j2"), {
        "taggers": facts["re_taggers"], "candidates": facts["re_candidates"],
        "pairs": facts["re_items"], "mix": facts["re_mix"], "inline": inline,
        "annotation_round": annotation_round, "annotation": facts["annotation"],
    })  # fmt: skip


def marked_sentence(record: dict) -> str:
    """The sentence with its two entities marked by type (``[S:PER] ... [/S]``,
    ``[O:ORG] ... [/O]``), the input of the baseline's relation classifier (typed
    entity markers, Zhou and Chen 2021)."""
    text = str(record["sentence"])
    marks = []
    for tag, ent in (("S", record["subject_entity"]), ("O", record["object_entity"])):
        start, end = int(ent["start_idx"]), int(ent["end_idx"]) + 1
        marks += [(start, 1, f" [{tag}:{ent['type']}] "), (end, 0, f" [/{tag}] ")]
    for at, _, mark in sorted(marks, key=lambda m: (m[0], m[1]), reverse=True):
        text = text[:at] + mark + text[at:]
    return " ".join(text.split())


register_task(TaskKind(
    name="klue-re",
    title="KLUE-RE: the relation between two entities of a sentence (KLUE 3.5.1)",
    layout="klue-re",
    hub=hub("text-classification"),
    steps=["ingest", "taggers", "candidates", "items", LabelStudioRound(), "votes", "agree",
           "mix", "split", "export"],
    rounds=one_round,
    card=card,
    needs=["annotation", "agreement", "split", "re"],
    preflight=check_inputs,
    shared=SharedSteps(
        records=records,
        votes=lambda ctx: ctx.out / "annotate" / "votes.parquet",
        export_inputs={"re_taggers": "taggers/taggers.json",
                       "re_candidates": "candidates/candidates.json",
                       "re_items": "items/items.json", "re_mix": "agree/mix.json"},
        card_json={"re_taggers": "re_taggers", "re_candidates": "re_candidates",
                   "re_items": "re_items", "re_mix": "re_mix"},
    ),
    # KLUE 3.5.2: micro-F1 without no_relation, AUPRC over all 30 classes
    evaluation=Evaluation(
        "label", "guid", field_of("label"), marked_sentence, ("re_micro_f1", "auprc"),
        "KLUE (Park et al. 2021) 3.5.2", gold_field="label", labels=tuple(
            r["label"] for r in json.loads(RELATIONS.read_text(encoding="utf-8"))["relations"]),
        prompt="문장: {{sentence}}\n주어: {{subject_entity.word}}\n목적어: "
               "{{object_entity.word}}\n관계:",
    ),
))  # fmt: skip
