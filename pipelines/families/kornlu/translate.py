"""Translation and post-editing (Ham et al. 2020, 3.1 and 3.1.1): the rounds, ``mt-model``,
``translate``, ``postedit`` and ``crosscheck``."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core.stage import value_counts
from pipelines.core.steps import Cached, Rows, RunContext, StepOutcome, cached, declares, out_files
from pipelines.families.kornlu.sources import (
    HALVES,
    LABEL_FIELDS,
    LABELS,
    source_tables,
)
from pipelines.rebuild.rounds import LabelStudioRound, PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

# ------------------------------------------------------------------------------ steps


CONFIGS = Path(__file__).resolve().parents[3] / "annotation_configs"
# the relabel round per family: interface, the fields the pair fills, the answer control
RELABEL = {
    "korsts": {"config": "sts.xml", "fields": ("sentence1", "sentence2"), "answer": "similarity"},
    "kornli": {"config": "nli_validation.xml", "fields": ("premise", "hypothesis"),
               "answer": "label"},
}  # fmt: skip


def configs(recipe: Recipe) -> list[tuple[str, Path]]:
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
    from pipelines.annotation.settings import SimulateSpec

    pe, out = ctx.recipe.translation.postedit, ctx.out
    prefix = pe.project or ctx.project_base
    sim = _sim(ctx)
    spec = SimulateSpec(annotators=1, seed=sim.seed) if sim else None
    other = {"a": "b", "b": "a"}
    (_, postedit_xml), (_, crosscheck_xml) = configs(ctx.recipe)
    out_rounds = {}
    # a recipe of machine-translated-only splits (Ham et al. 2020, 3.1: train) has none
    halves = HALVES if ctx.recipe.translation.any_postedit else ()
    for h in halves:
        out_rounds[f"postedit-{h}"] = Round(
            out / "postedit" / f"items-{h}.parquet", postedit_xml,
            f"{prefix}-postedit-{h}", 1, spec, f"posteditor-{h}",
            out / "annotate" / f"postedit-{h}.parquet", pe.timeout, pe.poll)  # fmt: skip
    for h in halves:
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
            out / "relabel" / "items.parquet", config, r.project or f"{ctx.project_base}-relabel",
            r.overlap, SimulateSpec(annotators=r.overlap, seed=sim.seed) if sim else None,
            "relabeller", out / "annotate" / "relabel.parquet", r.timeout, r.poll)  # fmt: skip
    return out_rounds


# the post-editing steps and rounds (Ham et al. 2020, 3.1), left out of a rebuild whose
# splits are all machine translated only
POSTEDIT_STEPS = ("postedit", "crosscheck")


def _posts(entry: PlanEntry) -> bool:
    """Whether a plan entry belongs to the post-editing: its steps or its rounds."""
    if isinstance(entry, LabelStudioRound):
        return entry.name.split("-", 1)[0] in POSTEDIT_STEPS
    return entry in POSTEDIT_STEPS


def plan(recipe: Recipe, steps: list[PlanEntry]) -> list[PlanEntry]:
    """The rebuild's steps: ``steps`` without the post-editing and cross-check rounds when
    every split of the recipe is machine translated only (Ham et al. 2020, 3.1: the
    training sets are; no Label Studio round then)."""
    if recipe.translation is None or recipe.translation.any_postedit:
        return list(steps)
    return [s for s in steps if not _posts(s)]


def _trained_dir(ctx: RunContext) -> Path:
    return ctx.out / "mt-model"


def mt_model_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Train the translator (``translation.train``) into OUT/mt-model, once: a rerun with
    the same data and settings keeps it (pipelines.models.train_mt)."""
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
    from pipelines.core.code import cache_key

    key = cache_key({"parallel": parallel} if parallel.is_file() else {}, spec.model_dump(),
                    ["pipelines.models.train_mt"])  # fmt: skip
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
    info = {"trained": True, "cached": cached_, "heldout": h, "seconds": metrics["seconds"],
            "model": "OUT/" + out.name}  # fmt: skip
    return Cached(info, cached_).outcome(
        f"{metrics['parameters']:,}-parameter Marian",
        after=f": held-out chrF {h.get('chrf')}, BLEU {h.get('bleu')} ({metrics['seconds']} s "
        f"on {metrics['device']})",
        merge=False,
    )


def translator_of(ctx: RunContext) -> object | None:
    """The machine translator of the recipe (the trained one, or ``translator``) behind
    the SQLite cache."""
    from pipelines.pairing.settings import TranslatorSpec
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


def _translate_reads(ctx: RunContext, arg: str) -> dict[str, Path]:
    t = ctx.recipe.translation
    corpora = {c.name: c for c in ctx.recipe.corpora}
    inputs = {"source": ctx.recipe.corpus_path(corpora[t.source])}
    if t.reference:
        inputs["reference"] = ctx.recipe.corpus_path(corpora[t.reference])
    if t.memory:
        inputs["memory"] = ctx.recipe.resolve(t.memory.path)
    if t.train:
        inputs["mt-model"] = _trained_dir(ctx) / "model.safetensors"
    return inputs


@declares(
    reads=_translate_reads,
    writes=out_files(
        "translate/pairs.parquet", "translate/sentences.parquet", "translate/translate.json"
    ),
    settings=lambda ctx, arg: [
        ctx.recipe.translation.model_dump(exclude={"postedit", "qa"}),
        [c.model_dump() for c in ctx.recipe.corpora],
    ],
)
def translate_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """Read the English dataset (and its aligned reference), translate every distinct
    sentence (memory, then the machine translator, cached per sentence: a crash resumes
    without translating again) -> OUT/translate/pairs.parquet, sentences.parquet."""
    from pipelines.pairing.memory import TranslationMemory, translate_with_memory

    kind, t = ctx.task, ctx.recipe.translation

    def compute() -> tuple[dict, dict]:
        pairs, sentences = source_tables(
            ctx.recipe, LABELS[kind.name] is None, LABEL_FIELDS[kind.name]
        )
        memory = (TranslationMemory.load(ctx.recipe.resolve(t.memory.path),
                                         t.memory.fuzzy_threshold, t.memory.source_column,
                                         t.memory.target_column) if t.memory else None)  # fmt: skip
        lineage = translate_with_memory(
            sentences["english"].tolist(), memory, translator_of(ctx), t.source_lang, t.target_lang
        )
        sentences = pd.concat([sentences, lineage.drop(columns=["text"])], axis=1)
        per_split = value_counts(pairs["split"])
        info = {
            "pairs": len(pairs),
            "sentences": len(sentences),
            # Ham et al. 2020, 3.1: the splits machine translated only, and those post-edited
            "mt_only": {k: v for k, v in per_split.items() if not t.postedited(k)},
            "postedited": {k: v for k, v in per_split.items() if t.postedited(k)},
            "per_backend": value_counts(sentences["backend"]),
            "per_split": value_counts(pairs["split"]),
            "fuzzy_scores": sentences.loc[sentences["backend"] == "memory-fuzzy", "tm_score"]
            .describe().round(2).to_dict() if (sentences["backend"] == "memory-fuzzy").any()
            else {},
            "reference": t.reference,
        }  # fmt: skip
        return {"pairs.parquet": pairs, "sentences.parquet": sentences}, info

    done = cached(ctx, compute)
    info = done.info
    return done.outcome(
        f"{info['pairs']:,} pairs, {info['sentences']:,} sentences",
        Rows("pair", info["pairs"], info["pairs"]),
        after=f": {info['per_backend']}",
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


def _sim_settings(ctx: RunContext, arg: str) -> list:
    sim = _sim(ctx)
    return [sim.model_dump() if sim else None]


@declares(
    reads=out_files("translate/sentences.parquet"),
    writes=out_files(*(f"postedit/items-{h}.parquet" for h in HALVES), "postedit/postedit.json"),
    settings=_sim_settings,
)
def postedit_step(ctx: RunContext, arg: str = "") -> StepOutcome:
    """The post-editing items of each half (OUT/postedit/items-a.parquet, -b): the
    English sentence and its draft, never the label; only the sentences of post-edited
    splits (Ham et al. 2020, 3.1: dev and test, never train)."""
    sentences = ctx.out / "translate" / "sentences.parquet"
    sim = _sim(ctx)

    def compute() -> tuple[dict, dict]:
        s = pd.read_parquet(sentences)
        s = s[s["postedit"]].reset_index(drop=True)
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

    done = cached(ctx, compute)
    info = done.info
    n = sum(info["items"].values())
    return done.outcome(
        f"{info['items']} sentences per post-editor",
        Rows("sentence", n, n),
    )


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


@declares(
    reads=out_files(
        *(f"annotate/postedit-{h}.parquet" for h in HALVES),
        *(f"postedit/items-{h}.parquet" for h in HALVES),
        "translate/sentences.parquet",
    ),
    writes=out_files(
        *(f"crosscheck/items-{h}.parquet" for h in HALVES), "crosscheck/crosscheck.json"
    ),
    settings=_sim_settings,
)
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

    done = cached(ctx, compute)
    info = done.info
    n = sum(info["items"].values())
    return done.outcome(
        f"{info['items']} post-edits to cross-check",
        Rows("sentence", n, n),
    )


def final_sentences(ctx: RunContext) -> pd.DataFrame:
    """Every sentence with its draft, post-edit, final text (after the cross-check) and
    who did what: ``accepted`` when the reviewer left the post-edit unchanged. A sentence
    of a machine-translated-only split (Ham et al. 2020, 3.1: train) keeps its draft as
    its final text, with no post-editor and no reviewer."""
    s = pd.read_parquet(ctx.out / "translate" / "sentences.parquet")
    parts = []
    for h in HALVES if ctx.recipe.translation.any_postedit else ():
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
    columns = ["sentence_id", "postedit", "posteditor", "postedited", "postedit_report",
               "final", "reviewer", "reviewed", "review_report"]  # fmt: skip
    done = (pd.concat(parts, ignore_index=True).rename(columns={"item_id": "sentence_id"})
            if parts else pd.DataFrame(columns=columns))  # fmt: skip
    out = s.rename(columns={"postedit": "postedit_split"}).merge(done, on="sentence_id",
                                                                 how="left")  # fmt: skip
    mt = ~out["postedit_split"].astype(bool)
    out["postedit"] = out["postedit"].astype(object).where(~mt, out["draft"])
    out["final"] = out["final"].astype(object).where(~mt, out["draft"])
    for col in ("posteditor", "postedit_report", "reviewer", "review_report"):
        out[col] = out[col].astype(object).where(~mt, "")
    for col in ("postedited", "reviewed"):
        out[col] = out[col].astype(object).where(~mt, False).astype(bool)
    out["final"] = out["final"].astype(str).str.strip()
    out["accepted"] = out["reviewed"] & (out["final"] == out["postedit"].astype(str).str.strip())
    out["unchanged"] = out["final"] == out["draft"].astype(str).str.strip()
    return out
