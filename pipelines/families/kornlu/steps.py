"""KorSTS and KorNLI (Ham et al. 2020): a benchmark translated from English, the
``korsts`` and ``kornli`` task kinds.

Steps: ``mt-model`` (train the translator here when the recipe says ``translation.train``)
-> ``translate`` (every English sentence on its own: translation memory first, then the
machine translator, through the SQLite cache) -> ``postedit`` (the items of two
post-editors, each half of the pairs) -> the two post-editing rounds (``postedit-a``,
``postedit-b``) -> ``crosscheck`` (each half goes to the other post-editor) -> the two
cross-check rounds (``crosscheck-a``, ``crosscheck-b``) -> ``qa`` (translation QA and the
label-risk checks, ``pipelines.quality.translation_qa``) -> ``export`` (the KorSTS or
KorNLI layout, Parquet and JSON Lines, and the data card).

Ham et al. 2020, 3: the training sets were machine-translated; the dev and test sets were
machine-translated, then post-edited by two professional translators, each of whom
post-edited half and cross-checked the other half. The labels are the English pairs'
(label carry-over): post-editors never see them. Every pair keeps its row in the English
file, its split, and, per sentence, how it was translated (memory exact/fuzzy with its
score, or the model), who post-edited and who reviewed it.

Each round is a Label Studio project of its own (``<prefix>-postedit-a`` ...), so that
each translator is given exactly their half. Simulated post-editors (demos and tests,
``translation.postedit.simulate``) have the reference corpus's human translation
(``translation.reference``, e.g. the KorSTS release aligned row by row with STS-B) as
their latent target: a draft whose chrF against it is at least ``close_chrf`` is left as
it is with probability ``keep_close_rate``, else replaced by the target; the reviewer
does the same with the post-edit. The card says so.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipelines.core.errors import BenchforgeError
from pipelines.core.markdown import settings_table, table
from pipelines.core.stage import value_counts
from pipelines.core.steps import STEPS, Rows, RunContext, StepOutcome, cached
from pipelines.families import CardSection, ExportInputs, Round, TaskKind, register_task

HALVES = ("a", "b")
NLI_LABELS = ("entailment", "neutral", "contradiction")
KORSTS_META = ["genre", "filename", "year", "id"]
LABELS = {"korsts": None, "kornli": NLI_LABELS}  # None: a 0-5 score


class SourceError(BenchforgeError, ValueError):
    """An English dataset that cannot be read; the message names the file and the line."""


# ------------------------------------------------------------------ reading the source


def read_pairs(path: Path, corpus: object, label_field: str, labels: tuple[str, ...] | None
               ) -> pd.DataFrame:  # fmt: skip
    """The pairs of an English (or reference) dataset: ``row`` (1-based), ``line``,
    ``sentence1``, ``sentence2``, ``label`` and any other column of the file. STS
    (``labels`` None): the score is a number from 0 to 5; NLI: one of ``labels``. A
    missing column, a wrong number of fields, an empty sentence or a bad label names the
    file and the line."""
    from pipelines.ingest.readers import iter_rows

    if not path.is_file():
        raise SourceError(f"{path}: file not found")
    body = [(line, record) for line, record in iter_rows(path, corpus.format, corpus.encoding,
                                                         corpus.has_header, corpus.columns)
            if record is not None]  # fmt: skip
    need = ["sentence1", "sentence2", label_field]
    out = []
    for n, (line, record) in enumerate(body, start=1):
        missing = [f for f in need if f not in record]
        if missing:
            raise SourceError(f"{path}: line {line}: no field {missing[0]!r} "
                              f"(fields: {list(record)})")  # fmt: skip
        for f in ("sentence1", "sentence2"):
            if not str(record[f] or "").strip():
                raise SourceError(f"{path}: line {line}: empty {f}")
        value = str(record[label_field]).strip()
        if labels is None:
            try:
                score = float(value)
            except ValueError:
                raise SourceError(f"{path}: line {line}: score {value!r} is not a number") from None
            if not 0 <= score <= 5 or math.isnan(score):
                raise SourceError(f"{path}: line {line}: score {score} outside 0-5")
            label: object = score
        else:
            if value not in labels:
                raise SourceError(f"{path}: line {line}: label {value!r} is not one of {labels}")
            label = value
        extra = {k: str(v) for k, v in record.items() if k not in need}
        out.append(
            {
                "row": n,
                "line": line,
                "sentence1": str(record["sentence1"]).strip(),
                "sentence2": str(record["sentence2"]).strip(),
                "label": label,
                **extra,
            }
        )
        if corpus.limit and n >= corpus.limit:
            break
    if not out:
        raise SourceError(f"{path}: no pairs")
    return pd.DataFrame(out)


def aligned_reference(source: pd.DataFrame, reference: pd.DataFrame, src_path: Path,
                      ref_path: Path, numeric: bool) -> pd.DataFrame:  # fmt: skip
    """The reference rows of the source's rows, checked row by row: the same number of
    rows and the same label on every row (a misaligned file names the first row)."""
    if len(reference) < len(source):
        raise SourceError(f"{ref_path}: {len(reference)} rows for the {len(source)} of "
                          f"{src_path}: the files are not aligned")  # fmt: skip
    ref = reference.head(len(source)).reset_index(drop=True)
    for s, r in zip(source.itertuples(index=False), ref.itertuples(index=False), strict=True):
        same = abs(float(s.label) - float(r.label)) < 1e-6 if numeric else s.label == r.label
        if not same:
            raise SourceError(
                f"{ref_path}: line {r.line}: label {r.label} but {src_path} line {s.line} has "
                f"{s.label}: the files are not aligned row by row"
            )
    return ref


def preflight(recipe: object, numeric: bool, label_field: str) -> None:
    """Read the English pairs, check the reference's alignment and load the translation
    memory: bad input fails here, before any server starts or any output is written."""
    from pipelines.pairing.memory import TranslationMemory

    source_tables(recipe, numeric, label_field)
    m = recipe.translation.memory
    if m:
        TranslationMemory.load(recipe.resolve(m.path), m.fuzzy_threshold, m.source_column,
                               m.target_column)  # fmt: skip


def sentence_id(text: str) -> str:
    return "s-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def source_tables(recipe: object, numeric: bool, label_field: str
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """(pairs, sentences) of the recipe's English dataset: one row per pair (its split,
    the English sentences and their ids, the label, the reference's translations and
    metadata when given) and one per distinct English sentence (``half``: the half of the
    pairs where it first occurs)."""
    t = recipe.translation
    corpora = {c.name: c for c in recipe.corpora}
    src = corpora[t.source]
    labels = None if numeric else NLI_LABELS
    pairs = read_pairs(recipe.corpus_path(src), src, label_field, labels)
    pairs = pairs.rename(columns={"sentence1": "en1", "sentence2": "en2"})
    if t.reference:
        ref_spec = corpora[t.reference]
        ref = aligned_reference(
            pairs,
            read_pairs(recipe.corpus_path(ref_spec), ref_spec, label_field, labels),
            recipe.corpus_path(src),
            recipe.corpus_path(ref_spec),
            numeric,
        )
        pairs["ref1"], pairs["ref2"] = ref["sentence1"], ref["sentence2"]
        for col in KORSTS_META:
            if col in ref.columns:
                pairs[col] = ref[col]
    pairs.insert(0, "pair_id", [f"{t.split}-{r:05d}" for r in pairs["row"]])
    pairs["split"] = t.split
    pairs["source"] = src.name
    pairs["license"] = src.license
    pairs["s1"] = [sentence_id(x) for x in pairs["en1"]]
    pairs["s2"] = [sentence_id(x) for x in pairs["en2"]]
    half = np.where(np.arange(len(pairs)) < (len(pairs) + 1) // 2, "a", "b")
    pairs["half"] = half
    rows: dict[str, dict] = {}
    for p in pairs.itertuples(index=False):
        for k in (1, 2):
            sid = getattr(p, f"s{k}")
            if sid not in rows:
                rows[sid] = {"sentence_id": sid, "english": getattr(p, f"en{k}"),
                             "reference": getattr(p, f"ref{k}", None), "half": p.half,
                             "first_pair": p.pair_id, "source": p.source,
                             "license": p.license}  # fmt: skip
    return pairs, pd.DataFrame(list(rows.values()))


# ------------------------------------------------------------------------------ steps


def _trained_dir(ctx: RunContext) -> Path:
    return ctx.out / "mt-model"


def mt_model_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Train the translator (``translation.train``) into OUT/mt-model, once: a rerun with
    the same data and settings keeps it (pipelines.models.train_mt)."""
    from pipelines.core.io import sha256_file
    from pipelines.models.train_mt import MtSettings, train_mt

    spec = ctx.recipe.translation.train
    if spec is None:
        model = ctx.recipe.translation.translator
        return StepOutcome(f"no training: {model.backend if model else 'memory only'}",
                           {"trained": False})  # fmt: skip
    out = _trained_dir(ctx)
    parallel = ctx.recipe.resolve(spec.parallel)
    settings = MtSettings(**{k: v for k, v in spec.model_dump().items()
                             if k in MtSettings.__dataclass_fields__})  # fmt: skip
    from pipelines.core.steps import code_hash

    key = json.dumps([sha256_file(parallel) if parallel.is_file() else None, spec.model_dump(),
                      code_hash(train_mt)],
                     sort_keys=True)  # fmt: skip
    stamp = out / "trained-with.json"
    if (out / "metrics.json").is_file() and stamp.is_file() and stamp.read_text() == key:
        metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        cached_ = True
    else:
        metrics = train_mt(parallel, out, settings, spec.source_column, spec.target_column,
                           (ctx.recipe.translation.source_lang,
                            ctx.recipe.translation.target_lang))  # fmt: skip
        stamp.write_text(key)
        cached_ = False
    h = metrics["heldout"]
    return StepOutcome(
        f"{metrics['parameters']:,}-parameter Marian{' (cached)' if cached_ else ''}: held-out "
        f"chrF {h.get('chrf')}, BLEU {h.get('bleu')} ({metrics['seconds']} s on "
        f"{metrics['device']})",
        {"trained": True, "cached": cached_, "heldout": h, "seconds": metrics["seconds"],
         "model": "OUT/" + out.name},
    )  # fmt: skip


def translator_of(ctx: RunContext) -> object | None:
    """The machine translator of the recipe (the trained one, or ``translator``) behind
    the SQLite cache."""
    from pipelines.core.recipe import TranslatorSpec
    from pipelines.pairing.translate import make_translator

    t = ctx.recipe.translation
    cache = ctx.recipe.resolve(t.cache) if t.cache else ctx.out / "translate" / "cache.sqlite"
    if t.train:
        spec = TranslatorSpec(backend="transformers", model=str(_trained_dir(ctx)),
                              device=t.train.device, batch_size=t.train.batch_size_translate,
                              num_beams=t.train.num_beams)  # fmt: skip
        return make_translator(spec, "/", cache)
    if t.translator:
        return make_translator(t.translator, ctx.recipe.base_dir, cache)
    return None


def translate_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Read the English dataset (and its aligned reference), translate every distinct
    sentence (memory, then the machine translator, cached per sentence: a crash resumes
    without translating again) -> OUT/translate/pairs.parquet, sentences.parquet."""
    from pipelines.pairing.memory import TranslationMemory, translate_with_memory

    kind, t = ctx.task, ctx.recipe.translation
    corpora = {c.name: c for c in ctx.recipe.corpora}
    inputs = [ctx.recipe.corpus_path(corpora[t.source])]
    if t.reference:
        inputs.append(ctx.recipe.corpus_path(corpora[t.reference]))
    if t.memory:
        inputs.append(ctx.recipe.resolve(t.memory.path))
    if t.train:
        inputs.append(_trained_dir(ctx) / "model.safetensors")
    for path in inputs:
        if not path.is_file():
            raise SourceError(f"{path}: file not found")
    settings = [t.model_dump(exclude={"postedit", "qa"}),
                [c.model_dump() for c in ctx.recipe.corpora]]  # fmt: skip

    def compute() -> tuple[dict, dict]:
        pairs, sentences = source_tables(ctx.recipe, LABELS[kind.name] is None, kind.label_field)
        memory = (TranslationMemory.load(ctx.recipe.resolve(t.memory.path),
                                         t.memory.fuzzy_threshold, t.memory.source_column,
                                         t.memory.target_column) if t.memory else None)  # fmt: skip
        lineage = translate_with_memory(
            sentences["english"].tolist(), memory, translator_of(ctx), t.source_lang, t.target_lang
        )
        sentences = pd.concat([sentences, lineage.drop(columns=["text"])], axis=1)
        info = {
            "pairs": len(pairs),
            "sentences": len(sentences),
            "per_backend": value_counts(sentences["backend"]),
            "per_split": value_counts(pairs["split"]),
            "fuzzy_scores": sentences.loc[sentences["backend"] == "memory-fuzzy", "tm_score"]
            .describe().round(2).to_dict() if (sentences["backend"] == "memory-fuzzy").any()
            else {},
            "reference": t.reference,
        }  # fmt: skip
        return {"pairs.parquet": pairs, "sentences.parquet": sentences}, info

    info, hit = cached(ctx.out / "translate", inputs, settings, compute, "translate.json",
                       ["pairs.parquet", "sentences.parquet"])  # fmt: skip
    return StepOutcome(
        f"{info['pairs']:,} pairs, {info['sentences']:,} sentences{' (cached)' if hit else ''}: "
        f"{info['per_backend']}",
        {**info, "cached": hit},
        Rows("pair", info["pairs"], info["pairs"]),
    )


def _close(a: str, b: str) -> float:
    import sacrebleu

    return float(sacrebleu.sentence_chrf(a, [b]).score)


def simulated_edit(text: str, target: object, rate: float, close: float, key: str,
                   seed: int) -> str:  # fmt: skip
    """A simulated editor's output: ``text`` when it is the target, or when it is close to
    it (chrF >= ``close``) and a seeded draw falls under ``rate``; else the target."""
    if target is None or (isinstance(target, float) and math.isnan(target)):
        raise ValueError("simulated post-editors need translation.reference (their target)")
    target = str(target)
    if text.strip() == target.strip():
        return text
    draw = np.random.default_rng([seed, int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)])
    if _close(text, target) >= close and draw.random() < rate:
        return text
    return target


def _sim(ctx: RunContext) -> object | None:
    return ctx.recipe.translation.postedit.simulate if ctx.simulated else None


def postedit_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The post-editing items of each half (OUT/postedit/items-a.parquet, -b): the
    English sentence and its draft, never the label."""
    sentences = ctx.out / "translate" / "sentences.parquet"
    sim = _sim(ctx)

    def compute() -> tuple[dict, dict]:
        s = pd.read_parquet(sentences)
        items = pd.DataFrame({"item_id": s["sentence_id"], "english": s["english"],
                              "translation": s["draft"], "half": s["half"],
                              "backend": s["backend"], "source": s["source"],
                              "license": s["license"]})  # fmt: skip
        if sim:
            items["sim_postedit"] = [
                simulated_edit(d, r, sim.keep_close_rate, sim.close_chrf, f"pe:{i}", sim.seed)
                for i, d, r in zip(s["sentence_id"], s["draft"], s["reference"], strict=True)
            ]
        tables = {f"items-{h}.parquet": items[items["half"] == h].reset_index(drop=True)
                  for h in HALVES}  # fmt: skip
        info = {"items": {h: len(tables[f"items-{h}.parquet"]) for h in HALVES},
                "simulated": sim is not None}  # fmt: skip
        return tables, info

    info, hit = cached(
        ctx.out / "postedit",
        [sentences],
        [sim.model_dump() if sim else None],
        compute,
        "postedit.json",
        [f"items-{h}.parquet" for h in HALVES],
    )
    n = sum(info["items"].values())
    return StepOutcome(f"{info['items']} sentences per post-editor{' (cached)' if hit else ''}",
                       {**info, "cached": hit}, Rows("sentence", n, n))  # fmt: skip


def _answers(table: pd.DataFrame, field: str) -> pd.DataFrame:
    """item_id -> the first completed annotation's ``field`` text, annotator and report
    flags."""
    done = table[~table["cancelled"].fillna(False).astype(bool)]
    done = done.sort_values(["item_id", "annotation_id"], kind="stable")
    first = done.drop_duplicates("item_id")[["item_id", "annotation_id"]]
    rows = done.merge(first, on=["item_id", "annotation_id"])
    text = rows[rows["field"] == field].set_index("item_id")["value"]
    meta = rows.drop_duplicates("item_id").set_index("item_id")
    return pd.DataFrame({"text": text, "annotator": meta["annotator_id"],
                         "report": meta["report_flags"].fillna("")}).reset_index()  # fmt: skip


def crosscheck_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The cross-check items: each half's post-edits, for the other post-editor
    (OUT/crosscheck/items-a.parquet is half a, reviewed by b's post-editor). A sentence
    nobody post-edited (skipped) keeps its draft and is marked."""
    pulls = [ctx.out / "annotate" / f"postedit-{h}.parquet" for h in HALVES]
    items_in = [ctx.out / "postedit" / f"items-{h}.parquet" for h in HALVES]
    sim = _sim(ctx)
    sentences = ctx.out / "translate" / "sentences.parquet"

    def compute() -> tuple[dict, dict]:
        refs = pd.read_parquet(sentences).set_index("sentence_id")["reference"]
        tables, info = {}, {"items": {}, "not_postedited": {}}
        for h, pull, items_path in zip(HALVES, pulls, items_in, strict=True):
            items = pd.read_parquet(items_path).drop(columns=["sim_postedit"], errors="ignore")
            answers = _answers(pd.read_parquet(pull), "postedit")
            items = items.merge(answers, on="item_id", how="left")
            missing = items["text"].isna()
            items["postedit"] = items["text"].where(~missing, items["translation"])
            items["posteditor"] = items["annotator"].fillna("")
            items["postedit_report"] = items["report"].fillna("")
            items["postedited"] = ~missing
            items = items.drop(columns=["text", "annotator", "report"])
            if sim:
                items["sim_revision"] = [
                    simulated_edit(p, refs.get(i), sim.keep_close_rate, sim.close_chrf,
                                   f"cc:{i}", sim.seed)
                    for i, p in zip(items["item_id"], items["postedit"], strict=True)
                ]  # fmt: skip
            tables[f"items-{h}.parquet"] = items
            info["items"][h] = len(items)
            info["not_postedited"][h] = int(missing.sum())
        return tables, info

    info, hit = cached(ctx.out / "crosscheck", [*pulls, *items_in, sentences],
                       [sim.model_dump() if sim else None], compute, "crosscheck.json",
                       [f"items-{h}.parquet" for h in HALVES])  # fmt: skip
    n = sum(info["items"].values())
    return StepOutcome(f"{info['items']} post-edits to cross-check{' (cached)' if hit else ''}",
                       {**info, "cached": hit}, Rows("sentence", n, n))  # fmt: skip


def final_sentences(ctx: RunContext) -> pd.DataFrame:
    """Every sentence with its draft, post-edit, final text (after the cross-check) and
    who did what: ``accepted`` when the reviewer left the post-edit unchanged."""
    s = pd.read_parquet(ctx.out / "translate" / "sentences.parquet")
    parts = []
    for h in HALVES:
        items = pd.read_parquet(ctx.out / "crosscheck" / f"items-{h}.parquet")
        answers = _answers(pd.read_parquet(ctx.out / "annotate" / f"crosscheck-{h}.parquet"),
                           "revision")  # fmt: skip
        items = items.merge(answers, on="item_id", how="left")
        items["reviewed"] = items["text"].notna()
        items["final"] = items["text"].where(items["reviewed"], items["postedit"])
        items["reviewer"] = items["annotator"].fillna("")
        items["review_report"] = items["report"].fillna("")
        parts.append(items[["item_id", "postedit", "posteditor", "postedited", "postedit_report",
                            "final", "reviewer", "reviewed", "review_report"]])  # fmt: skip
    done = pd.concat(parts, ignore_index=True).rename(columns={"item_id": "sentence_id"})
    out = s.merge(done, on="sentence_id", how="left")
    out["final"] = out["final"].astype(str).str.strip()
    out["accepted"] = out["reviewed"] & (out["final"] == out["postedit"].astype(str).str.strip())
    out["unchanged"] = out["final"] == out["draft"].astype(str).str.strip()
    return out


def qa_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Translation QA (pipelines.quality.translation_qa) and the label-risk checks ->
    OUT/qa: ``pairs.parquet`` (kept, with the final Korean sentences and the English
    label), ``dropped.parquet`` (flagged pairs when ``on_flag: drop``, pairs a translator
    reported, with the reason), ``review.parquet`` (every flagged pair with its checks),
    ``sentences.parquet`` (every sentence's lineage) and ``qa.json``."""
    from pipelines.quality.translation_qa import QaSettings, edit_figures, run_checks

    kind, qa = ctx.task, ctx.recipe.translation.qa
    inputs = [ctx.out / "translate" / "pairs.parquet", ctx.out / "translate" / "sentences.parquet"]
    inputs += [ctx.out / d / f"items-{h}.parquet" for d in ("crosscheck",) for h in HALVES]
    inputs += [ctx.out / "annotate" / f"crosscheck-{h}.parquet" for h in HALVES]
    names = qa.checks or kind.checks
    settings = QaSettings(near_identical=qa.near_identical, latin_min_words=qa.latin_min_words,
                          length_ratio_z=qa.length_ratio_z)  # fmt: skip

    def compute() -> tuple[dict, dict]:
        s = final_sentences(ctx)
        final = s.set_index("sentence_id")["final"]
        pairs = pd.read_parquet(inputs[0])
        pairs["ko1"], pairs["ko2"] = pairs["s1"].map(final), pairs["s2"].map(final)
        flags = run_checks(pairs, names, settings)
        joined = lambda c: "|".join(dict.fromkeys(c))  # noqa: E731 - first-seen order
        grouped = flags.groupby("pair_id").agg(checks=("check", joined),
                                               details=("detail", " ; ".join))  # fmt: skip
        review = pairs.merge(grouped, left_on="pair_id", right_index=True)
        review = review[["pair_id", "split", "checks", "details", "label", "en1", "en2",
                         "ko1", "ko2"]]  # fmt: skip
        reports = s.set_index("sentence_id")
        flagged_report = {}
        for p in pairs.itertuples(index=False):
            for sid in (p.s1, p.s2):
                flag = "|".join(x for x in (reports.at[sid, "postedit_report"],
                                            reports.at[sid, "review_report"]) if x)  # fmt: skip
                if flag:
                    flagged_report.setdefault(p.pair_id, "report:" + flag.split("|")[0])
        reason = pd.Series(flagged_report, dtype=object)
        if qa.on_flag == "drop" and len(review):
            first = review.set_index("pair_id")["checks"].str.split("|").str[0]
            reason = pd.concat([reason, first[~first.index.isin(reason.index)]])
        dropped = pairs[pairs["pair_id"].isin(reason.index)].copy()
        dropped["reason"] = dropped["pair_id"].map(reason)
        kept = pairs[~pairs["pair_id"].isin(reason.index)].reset_index(drop=True)
        figures = {
            "per_split": {
                split: {
                    "mt_vs_final": edit_figures(part["draft"].tolist(), part["final"].tolist()),
                    "mt_vs_postedit": edit_figures(part["draft"].tolist(),
                                                   part["postedit"].tolist()),
                    "postedit_vs_final": edit_figures(part["postedit"].tolist(),
                                                      part["final"].tolist()),
                }
                for split, part in _sentences_per_split(s, pairs).items()
            },
            "per_posteditor": {
                who: {**edit_figures(part["draft"].tolist(), part["postedit"].tolist()),
                      "half": sorted(part["half"].unique().tolist())}
                for who, part in s[s["postedited"].fillna(False)].groupby("posteditor")
            },
            "per_reviewer": {
                who: {"reviewed": len(part), "accepted": int(part["accepted"].sum()),
                      "accepted_share": round(float(part["accepted"].mean()), 4),
                      "edit_distance_mean": round(float(np.mean([
                          _dist(a, b) for a, b in zip(part["postedit"], part["final"],
                                                      strict=True)])), 4)}
                for who, part in s[s["reviewed"].fillna(False)].groupby("reviewer")
            },
            "per_backend": {
                b: edit_figures(part["draft"].tolist(), part["final"].tolist())
                for b, part in s.groupby("backend")
            },
            "not_postedited": int((~s["postedited"].fillna(False).astype(bool)).sum()),
            "not_reviewed": int((~s["reviewed"].fillna(False).astype(bool)).sum()),
        }  # fmt: skip
        info = {
            "pairs": len(pairs),
            "kept": len(kept),
            "dropped": value_counts(dropped["reason"]),
            "flags": value_counts(flags["check"]),
            "flagged_pairs": len(review),
            "checks": names,
            "settings": {**settings.__dict__, "on_flag": qa.on_flag},
            "figures": figures,
        }
        return {"pairs.parquet": kept, "dropped.parquet": dropped, "review.parquet": review,
                "sentences.parquet": s}, info  # fmt: skip

    info, hit = cached(ctx.out / "qa", inputs, [names, settings.__dict__, qa.on_flag],
                       compute, "qa.json", ["pairs.parquet", "dropped.parquet",
                                            "review.parquet", "sentences.parquet"])  # fmt: skip
    overall = {k: v["mt_vs_final"] for k, v in info["figures"]["per_split"].items()}
    summary = ", ".join(
        f"{k}: BLEU {v.get('bleu')}, chrF {v.get('chrf')}, unchanged "
        f"{v.get('unchanged_share', 0):.0%}"
        for k, v in overall.items()
    )
    return StepOutcome(
        f"{summary}; {info['flagged_pairs']} pairs flagged {info['flags']}"
        f"{' (cached)' if hit else ''}",
        {**info, "cached": hit},
        Rows("pair", info["pairs"], info["kept"], info["dropped"]),
    )


def _dist(a: str, b: str) -> float:
    from pipelines.quality.translation_qa import edit_distance

    return edit_distance(str(a), str(b))


def _sentences_per_split(s: pd.DataFrame, pairs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    out = {}
    for split, part in pairs.groupby("split"):
        ids = set(part["s1"]) | set(part["s2"])
        out[str(split)] = s[s["sentence_id"].isin(ids)]
    return out


# ---------------------------------------------------------------------------- relabel

# the relabel round per family: interface, the fields the pair fills, the answer control
RELABEL = {
    "korsts": {"config": "sts.xml", "fields": ("sentence1", "sentence2"), "answer": "similarity"},
    "kornli": {"config": "nli_validation.xml", "fields": ("premise", "hypothesis"),
               "answer": "label"},
}  # fmt: skip


def relabel_items(pairs: pd.DataFrame, review: pd.DataFrame, kind: str,
                  simulated: bool) -> pd.DataFrame:  # fmt: skip
    """The relabel round's items: every flagged pair still in the release, as the family's
    interface shows a pair (the Korean sentences; the English label is not shown). For
    simulated annotators the English label is the latent answer (``sim_<answer>``)."""
    spec = RELABEL[kind]
    flagged = pairs[pairs["pair_id"].isin(set(review["pair_id"]))]
    first, second = spec["fields"]
    items = pd.DataFrame({"item_id": flagged["pair_id"], first: flagged["ko1"],
                          second: flagged["ko2"], "source": flagged["source"],
                          "license": flagged["license"]}).reset_index(drop=True)  # fmt: skip
    if simulated:
        items[f"sim_{spec['answer']}"] = flagged["label"].to_numpy()
    return items


def relabelled(pairs: pd.DataFrame, votes: pd.DataFrame, kind: str) -> tuple[pd.DataFrame, dict]:
    """(pairs, dropped counts): each relabelled pair takes the mean of its ratings (STS)
    or the label more than half of its votes chose (NLI; without one the pair is dropped,
    ``relabel_no_majority``); ``label_en`` keeps the English label."""
    answer = RELABEL[kind]["answer"]
    done = votes[~votes["cancelled"].fillna(False).astype(bool) & (votes["field"] == answer)]
    out = pairs.assign(label_en=pairs["label"], relabelled=False, relabel_votes="")
    dropped: list[str] = []
    for pair_id, group in done.groupby("item_id"):
        values = group["value"].astype(str).tolist()
        at = out.index[out["pair_id"] == pair_id]
        if LABELS[kind] is None:
            new: object = round(float(np.mean([float(v) for v in values])), 2)
        else:
            top, n = (
                pd.Series(values).value_counts().index[0],
                pd.Series(values).value_counts().iloc[0],
            )
            if n * 2 <= len(values):
                dropped.append(pair_id)
                continue
            new = top
        out.loc[at, "label"] = new
        out.loc[at, "relabelled"] = True
        out.loc[at, "relabel_votes"] = "|".join(values)
    kept = out[~out["pair_id"].isin(dropped)].reset_index(drop=True)
    return kept, ({"relabel_no_majority": len(dropped)} if dropped else {})


def relabel_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """``on_flag: relabel``: the flagged pairs go through a Label Studio round of their own
    (push, simulate, wait, pull, as every round) and take its label; otherwise the QA's
    pairs pass as they are. -> OUT/relabel/pairs.parquet (the pairs the export releases)."""
    from pipelines.core.io import write_parquet

    kind, qa = ctx.task, ctx.recipe.translation.qa
    pairs_path, review_path = ctx.out / "qa" / "pairs.parquet", ctx.out / "qa" / "review.parquet"
    folder = ctx.out / "relabel"
    folder.mkdir(parents=True, exist_ok=True)
    pairs = pd.read_parquet(pairs_path)
    lines: list[str] = []
    info: dict = {"round": qa.on_flag == "relabel"}
    if qa.on_flag == "relabel":
        items = relabel_items(pairs, pd.read_parquet(review_path), kind.name, ctx.simulated)
        info["items"] = len(items)
        if len(items):
            items_path = folder / "items.parquet"
            if not items_path.is_file() or not pd.read_parquet(items_path).equals(items):
                write_parquet(items, items_path)
            from pipelines.core.steps import step_function

            for op in ("push", "simulate", "wait", "pull"):
                fn, _ = step_function(kind.name, op)
                lines.append(f"{op}: {fn(ctx, 'relabel').summary}")
            votes = pd.read_parquet(ctx.out / "annotate" / "relabel.parquet")
            final, dropped = relabelled(pairs, votes, kind.name)
        else:
            final, dropped = pairs.assign(label_en=pairs["label"], relabelled=False), {}
    else:
        final, dropped = pairs.assign(label_en=pairs["label"], relabelled=False), {}
    changed = final[final["relabelled"]]
    info.update(relabelled=len(changed), dropped=dropped)
    if len(changed) and LABELS[kind.name] is None:
        info["mean_abs_change"] = round(
            float(
                (changed["label"].astype(float) - changed["label_en"].astype(float)).abs().mean()
            ),
            3,
        )
    elif len(changed):
        info["label_changed"] = int((changed["label"] != changed["label_en"]).sum())
    target = folder / "pairs.parquet"
    if not target.is_file() or not pd.read_parquet(target).equals(final):
        write_parquet(final, target)
    from pipelines.core.io import write_json

    write_json(info, folder / "relabel.json")
    summary = (f"{len(changed)} flagged pairs relabelled ({'; '.join(lines)})" if info["round"]
               else f"no relabel round (on_flag: {qa.on_flag})")  # fmt: skip
    return StepOutcome(summary, info, Rows("pair", len(pairs), len(final), dropped))


# ----------------------------------------------------------------------------- export


def korsts_records(pairs: pd.DataFrame) -> dict[str, list[dict]]:
    """The KorSTS layout (``genre filename year id score sentence1 sentence2``, the
    release's TSV columns) per split, plus ``license``; metadata the source lacks is
    empty."""
    out: dict[str, list[dict]] = {}
    for r in pairs.sort_values("row").itertuples(index=False):
        out.setdefault(r.split, []).append({
            **{k: str(getattr(r, k, "") or "") for k in KORSTS_META},
            "score": float(r.label), "sentence1": r.ko1, "sentence2": r.ko2,
            "license": r.license,
        })  # fmt: skip
    return out


def kornli_records(pairs: pd.DataFrame) -> dict[str, list[dict]]:
    """The KorNLI layout (``sentence1 sentence2 gold_label``) per split, plus
    ``license``."""
    out: dict[str, list[dict]] = {}
    for r in pairs.sort_values("row").itertuples(index=False):
        out.setdefault(r.split, []).append(
            {
                "sentence1": r.ko1,
                "sentence2": r.ko2,
                "gold_label": str(r.label),
                "license": r.license,
            }
        )
    return out


def tsv(records: list[dict], spreadsheet_safe: bool = True) -> str:
    """Records as the releases' TSV: a header, tab-separated, no quoting (a tab or a
    line break inside a field becomes a blank; with ``spreadsheet_safe`` a text cell a
    spreadsheet would run as a formula gets a leading ``'``, pipelines.core.spreadsheet)."""
    from pipelines.core.spreadsheet import safe_cell

    if not records:
        return ""
    cols = [c for c in records[0] if c != "license"]

    def clean(v: object) -> str:
        text = f"{v:.3f}" if isinstance(v, float) else str(v)
        text = " ".join(text.replace("\t", " ").split())
        return safe_cell(text) if spreadsheet_safe and isinstance(v, str) else text

    return "".join("\t".join(clean(r[c]) for c in cols) + "\n"
                   for r in [dict(zip(cols, cols, strict=True)), *records])  # fmt: skip


def export_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The dataset in the KorSTS or KorNLI layout per split (``<split>.tsv`` as the
    release, ``.jsonl`` and ``.parquet`` with ``license``) and the data card ->
    OUT/dataset."""
    from pipelines.core.io import outputs_current, sha256_file, write_outputs
    from pipelines.core.steps import code_hash
    from pipelines.export import card_facts, data_card
    from pipelines.export.records import jsonl

    kind, out = ctx.task, ctx.out
    inputs = {n: out / "qa" / f"{n}.parquet" for n in ("dropped", "review", "sentences")}
    inputs["pairs"] = out / "relabel" / "pairs.parquet"
    inputs["relabel"] = out / "relabel" / "relabel.json"
    inputs["qa"] = out / "qa" / "qa.json"
    inputs["translate"] = out / "translate" / "translate.json"
    for h in HALVES:
        for r in ("postedit", "crosscheck"):
            inputs[f"{r}-{h}"] = out / "annotate" / f"{r}-{h}.parquet"
    hashes = {k: sha256_file(p) for k, p in inputs.items()}
    code = [code_hash(f) for f in (export_step, data_card.render_card, card_facts.label_facts)]
    key = json.dumps([hashes, code, ctx.recipe.model_dump(exclude={"base_dir"}),
                      sha256_file(data_card.TEMPLATE), ctx.steps.get("mt-model", {})
                      .get("heldout")], sort_keys=True, default=str)  # fmt: skip
    dataset = out / "dataset"
    pairs = pd.read_parquet(inputs["pairs"])
    records = kind.records(ExportInputs(gold=pairs, items=pairs, splits=pairs,
                                        annotations=pd.DataFrame(), dropped=pd.DataFrame(),
                                        prefix=""))  # fmt: skip
    names = [f"{s}.{e}" for s in records for e in ("tsv", "jsonl", "parquet")]
    names += ["DATA_CARD.md", "DATA_CARD.html", "card.json"]
    if outputs_current(dataset, key, names):
        facts = json.loads((dataset / "card.json").read_text(encoding="utf-8"))
        hit = True
    else:
        facts = card_facts_of(ctx, pairs, records, hashes)
        card = data_card.render_card(facts, kind.card(facts))
        safe = ctx.recipe.export.spreadsheet_safe
        texts = {f"{s}.tsv": tsv(rows, safe) for s, rows in records.items()}
        texts.update({f"{s}.jsonl": jsonl(rows) for s, rows in records.items()})
        texts.update({"DATA_CARD.md": card.markdown, "DATA_CARD.html": card.html})
        tables = {f"{s}.parquet": pd.DataFrame(rows) for s, rows in records.items()}
        write_outputs(dataset, key, tables, {"card.json": facts}, texts, card.figures)
        hit = False
    n = len(pairs)
    files = facts["export"]["files"]
    return StepOutcome(f"{files} -> {dataset}{' (cached)' if hit else ''}",
                       {**facts["export"], "cached": hit}, Rows("pair", n, n))  # fmt: skip


def card_facts_of(ctx: RunContext, pairs: pd.DataFrame, records: dict[str, list[dict]],
                  hashes: dict[str, str]) -> dict:  # fmt: skip
    """The card's facts, in the shape the shared card reads (``pipelines.export``)."""
    from pipelines.export import card_facts
    from pipelines.export.card_facts import annotation_facts, licence_facts, round_server

    recipe, out, kind = ctx.recipe, ctx.out, ctx.task
    qa = json.loads((out / "qa" / "qa.json").read_text(encoding="utf-8"))
    translate = json.loads((out / "translate" / "translate.json").read_text(encoding="utf-8"))
    dropped = pd.read_parquet(out / "qa" / "dropped.parquet")
    review = pd.read_parquet(out / "qa" / "review.parquet")
    all_pairs = pd.read_parquet(out / "translate" / "pairs.parquet")
    stages = [
        {"stage": "read", "unit": "pair", "in": len(all_pairs), "kept": len(all_pairs),
         "dropped_total": 0, "dropped": {}},
        {"stage": "qa", "unit": "pair", "in": len(all_pairs), "kept": len(pairs),
         "dropped_total": len(dropped), "dropped": value_counts(dropped["reason"]),
         "corpora": {s: {"in": int((all_pairs["source"] == s).sum()),
                         "kept": int((pairs["source"] == s).sum()),
                         "dropped": value_counts(dropped.loc[dropped["source"] == s, "reason"])}
                     for s in all_pairs["source"].unique()}},
    ]  # fmt: skip
    ingest = {"stages": stages, "corpora": {translate_src: {
        "documents_in": len(all_pairs), "sentences_kept": translate["sentences"]}
        for translate_src in all_pairs["source"].unique()}}  # fmt: skip
    rounds = kind.rounds(ctx)
    released = sum(len(v) for v in records.values())
    gold = pairs.rename(columns={"pair_id": "item_id"})
    facts = {
        "task": kind.title,
        "task_kind": kind.name,
        "paper_agreement": None,
        "recipe": recipe.model_dump(mode="json", exclude={"base_dir"}),
        "ingest": ingest,
        "dates": {},
        "classifier_cards": {},
        "items": translate,
        "translation_qa": qa,
        "review": review.head(30).astype(str).to_dict(orient="records"),
        "mt_model": ctx.steps.get("mt-model", {}),
        "split": {"rule": "source", "splits": {s: len(v) for s, v in records.items()},
                  "settings": {}},  # fmt: skip
        "agreement": {},
        "labels": card_facts.label_facts(gold, gold, gold),
        "funnel": card_facts.funnel(ingest, ctx.steps, released),
        "export": {"layout": kind.layout, "files": {f"{s}.tsv": len(v) for s, v in
                                                    records.items()},
                   # the reference's sentences are released too (the targets of post-editing)
                   "licence": licence_facts(recipe, pd.DataFrame(
                       {"source": [recipe.translation.source, recipe.translation.reference]}
                   ).dropna())},
        "provenance": {
            "recipe": recipe.name,
            **card_facts.provenance(ctx.recipe_path,
                                    {name: round_server(r) for name, r in rounds.items()}),
            "models": str(ctx.steps.get("mt-model", {}).get("model") or
                          (recipe.translation.translator.model if recipe.translation.translator
                           else "translation memory only")),
            "benchforge rebuild": "flows/rebuild.py, pipelines/families/kornlu/steps.py",
            "inputs (sha256, first 12)": ", ".join(f"{k} {h[:12]}" for k, h in hashes.items()),
        },
    }  # fmt: skip
    facts["relabelling"] = json.loads(
        (out / "relabel" / "relabel.json").read_text(encoding="utf-8")
    )
    for name, r in rounds.items():
        if not r.annotations.is_file():  # a relabel round with no flagged pair
            continue
        table_ = pd.read_parquet(r.annotations)
        facts[name or "annotation"] = annotation_facts(r, table_, ctx.simulated)
    facts["annotation"] = facts.pop("postedit-a")
    return facts


# ------------------------------------------------------------------------ rounds, card


CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"


def configs(recipe: object) -> list[tuple[str, Path]]:
    """The post-editing and cross-check interfaces: the recipe's, else benchforge's."""
    pe = recipe.translation.postedit
    return [
        ("translation.postedit.config",
         recipe.resolve(pe.config) if pe.config else CONFIGS / "mt_postedit.xml"),
        ("translation.postedit.crosscheck_config",
         recipe.resolve(pe.crosscheck_config) if pe.crosscheck_config
         else CONFIGS / "mt_crosscheck.xml"),
    ]  # fmt: skip


def rounds(ctx: RunContext) -> dict[str, Round]:
    """Four Label Studio projects: each post-editor's half, then the cross-checks (half a
    reviewed by b's post-editor, and the reverse)."""
    from pipelines.core.recipe import SimulateSpec

    pe, out = ctx.recipe.translation.postedit, ctx.out
    prefix = pe.project or ctx.recipe.name
    sim = _sim(ctx)
    spec = SimulateSpec(annotators=1, seed=sim.seed) if sim else None
    other = {"a": "b", "b": "a"}
    (_, postedit_xml), (_, crosscheck_xml) = configs(ctx.recipe)
    out_rounds = {}
    for h in HALVES:
        out_rounds[f"postedit-{h}"] = Round(
            out / "postedit" / f"items-{h}.parquet", postedit_xml,
            f"{prefix}-postedit-{h}", 1, spec, f"posteditor-{h}",
            out / "annotate" / f"postedit-{h}.parquet", pe.timeout, pe.poll)  # fmt: skip
    for h in HALVES:
        out_rounds[f"crosscheck-{h}"] = Round(
            out / "crosscheck" / f"items-{h}.parquet", crosscheck_xml,
            f"{prefix}-crosscheck-{h}", 1, spec, f"posteditor-{other[h]}",
            out / "annotate" / f"crosscheck-{h}.parquet", pe.timeout, pe.poll)  # fmt: skip
    qa = ctx.recipe.translation.qa
    if qa.on_flag == "relabel":
        r = qa.relabel
        config = (ctx.recipe.resolve(r.config) if r.config
                  else CONFIGS / RELABEL[ctx.task.name]["config"])  # fmt: skip
        out_rounds["relabel"] = Round(
            out / "relabel" / "items.parquet", config, r.project or f"{ctx.recipe.name}-relabel",
            r.overlap, SimulateSpec(annotators=r.overlap, seed=sim.seed) if sim else None,
            "relabeller", out / "annotate" / "relabel.parquet", r.timeout, r.poll)  # fmt: skip
    return out_rounds


PAPER = {"korsts": {"bleu": 73.26, "unchanged": 0.53}, "kornli": {"bleu": 63.30, "unchanged": 0.47}}


def card(facts: dict) -> CardSection:
    """Translation, post-editing, cross-check and QA; the QA table beside the paper's."""
    from pipelines.export.data_card import annotation_round

    kind = facts["task_kind"]
    qa, tr = facts["translation_qa"], facts["items"]
    paper = PAPER[kind]
    rows = []
    for split, f in qa["figures"]["per_split"].items():
        m = f["mt_vs_final"]
        rows.append([split, m["sentences"], m.get("bleu"), m.get("chrf"), m.get("ter"),
                     f"{m.get('unchanged_share', 0):.0%}", m["edit_distance"]["p50"],
                     paper["bleu"], f"{paper['unchanged']:.0%}"])  # fmt: skip
    qa_table = table(
        [
            "split",
            "sentences",
            "BLEU",
            "chrF",
            "TER",
            "unchanged",
            "median edit distance",
            "paper's BLEU",
            "paper's unchanged",
        ],
        rows,
    )
    editors = table(["post-editor", "half", "sentences", "BLEU MT vs post-edit", "chrF",
                     "unchanged"],
                    [[w, ",".join(f["half"]), f["sentences"], f.get("bleu"), f.get("chrf"),
                      f"{f.get('unchanged_share', 0):.0%}"]
                     for w, f in qa["figures"]["per_posteditor"].items()])  # fmt: skip
    reviewers = table(["reviewer", "reviewed", "accepted unchanged", "mean edit distance"],
                      [[w, f["reviewed"], f"{f['accepted']} ({f['accepted_share']:.0%})",
                        f["edit_distance_mean"]]
                       for w, f in qa["figures"]["per_reviewer"].items()])  # fmt: skip
    backends = table(["translated by", "sentences", "BLEU vs final", "chrF", "unchanged"],
                     [[b, f["sentences"], f.get("bleu"), f.get("chrf"),
                       f"{f.get('unchanged_share', 0):.0%}"]
                      for b, f in qa["figures"]["per_backend"].items()])  # fmt: skip
    mt = facts.get("mt_model") or {}
    h = mt.get("heldout") or {}
    model_line = (f"The machine translator was trained here (`benchforge translators train`, "
                  f"{mt.get('model')}): held-out chrF {h.get('chrf')}, BLEU {h.get('bleu')} "
                  f"on {h.get('sentences')} sentences (its model card: README.md in that "
                  "folder)." if mt.get("trained") else "The machine translator: the recipe's "
                  "`translation.translator`.")  # fmt: skip
    construction = "\n".join([
        f"English pairs: {tr['pairs']} (`{facts['recipe']['translation']['source']}`, split "
        f"`{facts['recipe']['translation']['split']}`), {tr['sentences']} distinct sentences, "
        "each translated on its own (Ham et al. 2020, 3). How each was translated:",
        "",
        table(["backend", "sentences"], list(tr["per_backend"].items())),
        "",
        model_line,
        "",
        "Translation settings (the recipe's `translation`):",
        "",
        settings_table({k: v for k, v in facts["recipe"]["translation"].items()
                        if k not in ("postedit", "qa")}),
        "",
        "Labels are carried over from the English pairs; post-editors never saw them.",
    ])  # fmt: skip
    rounds = [(k, v) for k, v in facts.items() if isinstance(v, dict) and "overlap" in v]
    annotation = "\n\n".join(
        annotation_round(v, f"Round `{'postedit-a' if k == 'annotation' else k}`:")
        for k, v in sorted(rounds, key=lambda kv: kv[1]["project"])
    )  # fmt: skip
    sim = facts["recipe"]["translation"]["postedit"].get("simulate")
    if facts["annotation"]["simulated"] and sim:
        annotation += (
            "\n\nThe post-editors and reviewers are **simulated**: their latent target is the "
            "human translation of the reference corpus "
            f"`{facts['recipe']['translation']['reference']}` "
            f"(the released KorSTS/KorNLI sentence); a draft with chrF >= {sim['close_chrf']} "
            f"against it is left unchanged with probability {sim['keep_close_rate']}, else "
            "replaced by it."
        )  # fmt: skip
    agreement = "\n".join([
        "Two post-editors each post-edited half of the pairs and cross-checked the other "
        "half (Ham et al. 2020, 3). There is no label agreement to measure: labels come "
        "from the English pairs.",
        "",
        "Post-editors (MT draft against their post-edit):",
        "",
        editors,
        "",
        "Cross-check (the reviewer left the colleague's post-edit unchanged = accepted):",
        "",
        reviewers,
        "",
        f"Sentences nobody post-edited: {qa['figures']['not_postedited']}; not reviewed: "
        f"{qa['figures']['not_reviewed']}.",
    ])  # fmt: skip
    review_rows = [[r["pair_id"], r["checks"], r["details"], r["en1"], r["en2"], r["ko1"],
                    r["ko2"], r["label"]] for r in facts.get("review", [])]  # fmt: skip
    artifacts = "\n".join([
        "### Translation QA (MT draft against the final, cross-checked translation)",
        "",
        qa_table,
        "",
        "The paper's figures are BLEU between MT and post-edit and the share of sentences "
        "left unchanged on its dev and test sets (Ham et al. 2020, 3); sacrebleu here, "
        "tokenizer `13a`.",
        "",
        "Per backend:",
        "",
        backends,
        "",
        "### Label-risk checks",
        "",
        f"Checks: {', '.join(qa['checks'])} (settings: "
        + ", ".join(f"{k} {v}" for k, v in qa["settings"].items())
        + f"). Pairs flagged: {qa['flagged_pairs']}; flags per check: "
        + (", ".join(f"{k} {v}" for k, v in sorted(qa["flags"].items())) or "none")
        + ". Pairs dropped per reason: "
        + (", ".join(f"{k} {v}" for k, v in sorted(qa["dropped"].items())) or "none")
        + " (`qa/review.parquet`, `qa/dropped.parquet`).",
        "",
        table(["pair", "checks", "details", "English 1", "English 2", "Korean 1", "Korean 2",
               "label"], review_rows) if review_rows else "",
    ])  # fmt: skip
    rl = facts.get("relabelling") or {}
    if rl.get("round"):
        change = (
            f"mean absolute change of the score {rl['mean_abs_change']}"
            if "mean_abs_change" in rl
            else f"labels changed {rl.get('label_changed', 0)}"
        )
        artifacts += (
            f"\n\nRelabel round (`qa.on_flag: relabel`): {rl.get('items', 0)} flagged pairs "
            f"sent to annotators, {rl['relabelled']} relabelled ({change}); dropped "
            + (", ".join(f"{k} {v}" for k, v in rl["dropped"].items()) or "none")
            + ". The released label of a relabelled pair is the round's; `label_en` in "
            "`relabel/pairs.parquet` keeps the English one."
        )
    splits = ("The splits are the English dataset's (KorSTS and KorNLI keep STS-B's and "
              "XNLI's): " + ", ".join(f"{k} {v} pairs" for k, v in facts["split"]["splits"]
                                      .items()) + ".")  # fmt: skip
    limitations = (
        [
            "The machine translator is a small model trained here; its drafts needed "
            "heavy post-editing (see the QA table)."
        ]
        if mt.get("trained")
        else []
    )
    if facts["annotation"]["simulated"]:
        limitations.append("The post-edits are **simulated** from the released human "
                           "translation: the QA figures describe the simulator, not "
                           "translators.")  # fmt: skip
    return CardSection(
        item=(
            "One item is an English sentence pair translated into Korean, with the "
            "English pair's label"
            + (
                " (a 0-5 similarity score)."
                if kind == "korsts"
                else " (entailment, neutral, contradiction)."
            )
        ),  # fmt: skip
        construction=construction,
        annotation=annotation,
        limitations=limitations,
        sections={
            "agreement": agreement,
            "artifacts": artifacts,
            "splits": splits,
            "filters": _filters(facts),
        },  # fmt: skip
    )


def _filters(facts: dict) -> str:
    rows = [[s["stage"], s["unit"], s["in"], s["kept"], s["dropped_total"],
             ", ".join(f"{k}: {v}" for k, v in sorted(s["dropped"].items())) or "none"]
            for s in facts["ingest"]["stages"]]  # fmt: skip
    return (table(["stage", "unit", "in", "kept", "dropped", "dropped per reason"], rows)
            + "\n\nNo sentence filter runs on a translated dataset: the English pairs are "
            "taken as released; the QA step's label-risk checks are its filter.")  # fmt: skip


STEP_NAMES = ["mt-model", "translate", "postedit",
              *[f"{op}-postedit-{h}" for h in HALVES for op in ("push", "simulate", "wait",
                                                                "pull")],
              "crosscheck",
              *[f"{op}-crosscheck-{h}" for h in HALVES for op in ("push", "simulate", "wait",
                                                                  "pull")],
              "qa", "relabel", "export"]  # fmt: skip

for _name, _title, _field, _records_fn, _checks in (
    ("korsts", "KorSTS-style translated semantic textual similarity (Ham et al. 2020)",
     "score", korsts_records,
     ["identical_translation", "near_identical_translation", "gender_mismatch",
      "untranslated_latin", "length_ratio"]),
    ("kornli", "KorNLI-style translated natural language inference (Ham et al. 2020)",
     "gold_label", kornli_records, ["gender_mismatch", "untranslated_latin", "length_ratio"]),
):  # fmt: skip
    for _step, _fn in (("mt-model", mt_model_step), ("translate", translate_step),
                       ("postedit", postedit_step), ("crosscheck", crosscheck_step),
                       ("qa", qa_step), ("relabel", relabel_step),
                       ("export", export_step)):  # fmt: skip
        STEPS.add(f"{_name}:{_step}", _fn, (_fn.__doc__ or "").split("\n")[0])
    register_task(TaskKind(
        name=_name, title=_title, layout=_name, steps=STEP_NAMES, rounds=rounds,
        records=lambda inputs, fn=_records_fn: fn(inputs.gold), card=card,
        needs=["translation"], label_field=_field, checks=_checks,
        simulated=lambda recipe: bool(recipe.translation and recipe.translation.postedit.simulate),
        preflight=lambda recipe, n=_name, f=_field: preflight(recipe, LABELS[n] is None, f),
        configs=configs,
    ))  # fmt: skip
