"""Translated datasets (KorSTS/KorNLI, Ham et al. 2020): the MT trainer, the translation
memory, the translation QA figures and label-risk checks, the readers' bad-input errors,
and resuming a translation from the cache, on the shipped STS-B / KorSTS / KorNLI rows."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import sacrebleu
import yaml

from pipelines.core.recipe import load_recipe
from pipelines.families.kornlu import export as kornlu_export
from pipelines.families.kornlu import sources as kornlu
from pipelines.models.train_mt import MtSettings, train_mt
from pipelines.pairing.memory import (
    TranslationMemory,
    TranslationMemoryError,
    translate_with_memory,
)
from pipelines.pairing.translate import CachedTranslator, TransformersTranslator, TranslationError
from pipelines.quality import translation_qa as qa

ROOT = Path(__file__).resolve().parents[4]
DEMO = ROOT / "data" / "demo" / "korsts"
TINY = {"epochs": 2, "d_model": 32, "ffn_dim": 64, "layers": 1, "heads": 2, "vocab_size": 300,
        "limit": 300, "heldout": 20, "batch_size": 32}  # fmt: skip


@pytest.fixture(scope="module")
def tiny_mt(tmp_path_factory) -> tuple[Path, dict]:
    """One tiny en->ko Marian trained on the shipped STS-B/KorSTS parallel sentences."""
    out = tmp_path_factory.mktemp("mt")
    metrics = train_mt(DEMO / "stsb-train-images.en-ko.tsv", out, MtSettings(**TINY),
                       progress=True)  # fmt: skip
    return out, metrics


def _korsts_rows(n: int) -> list[list[str]]:
    with (DEMO / "korsts-dev.demo.tsv").open(encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1 : n + 1]


def test_trained_model_has_a_card_scores_from_sacrebleu_and_loads_as_a_translator(tiny_mt):
    out, metrics = tiny_mt
    assert (out / "README.md").is_file() and (out / "metrics.json").is_file()
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Held-out scores" in card and "weak" in card
    held = metrics["heldout"]
    assert held["sentences"] == 20 and {"chrf", "bleu", "ter"} <= set(held)
    ex = metrics["examples"]
    # the examples' own chrF agrees with sacrebleu on the same sentences (a subset)
    assert 0 <= sacrebleu.corpus_chrf([e["translation"] for e in ex],
                                      [[e["reference"] for e in ex]]).score <= 100  # fmt: skip
    # no held-out source was trained on
    assert metrics["data"]["train_pairs"] + metrics["data"]["heldout_sentences"] <= 300
    translator = TransformersTranslator(out, device="cpu")
    drafts = translator.translate(["A dog runs on the beach.", "Two men are talking."], "en", "ko")
    assert len(drafts) == 2 and all(isinstance(d, str) for d in drafts)


def test_memory_exact_then_fuzzy_then_mt_with_lineage(tiny_mt):
    table = pd.read_csv(DEMO / "stsb-train-images.en-ko.tsv", sep="\t", quoting=csv.QUOTE_NONE)
    memory = TranslationMemory(dict(zip(table["source"], table["target"], strict=True)), 90.0)
    exact = table["source"].iloc[5]
    fuzzy = exact.rstrip(".") + "!"  # one character off
    other = "An astronaut repairs a satellite in orbit."
    out = translate_with_memory([exact, fuzzy, other], memory,
                                TransformersTranslator(tiny_mt[0], device="cpu"), "en",
                                "ko")  # fmt: skip
    assert list(out["backend"]) == ["memory-exact", "memory-fuzzy", "transformers"]
    assert out["draft"].iloc[0] == table["target"].iloc[5] and out["tm_score"].iloc[0] == 100
    assert 90 <= out["tm_score"].iloc[1] < 100 and out["tm_source"].iloc[1] == exact
    assert pd.isna(out["tm_score"].iloc[2]) and out["model"].iloc[2].endswith(tiny_mt[0].name)


def test_memory_with_one_source_two_targets_names_both_lines(tmp_path):
    path = tmp_path / "tm.tsv"
    path.write_text("source\ttarget\nA cat.\t고양이.\nA dog.\t개.\nA cat.\t고양이 한 마리.\n",
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(TranslationMemoryError, match=r"tm.tsv: line 4: .*also on line 2"):
        TranslationMemory.load(path)


class _Short:
    """A backend that loses a translation (as a broken API may)."""

    backend, model = "short", "broken"

    def translate(self, texts, src, tgt):  # noqa: ANN001, ANN201
        return list(texts)[:-1]

    def options(self) -> dict:
        return {}


class _Failing:
    """The tiny model, crashing on its second call (a killed run)."""

    backend, model = "transformers", "tiny"

    def __init__(self, inner: TransformersTranslator, fail_on: int | None) -> None:
        self.inner, self.fail_on, self.calls, self.texts = inner, fail_on, 0, 0

    def translate(self, texts, src, tgt):  # noqa: ANN001, ANN201
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("killed")
        self.texts += len(texts)
        return self.inner.translate(texts, src, tgt)

    def options(self) -> dict:
        return {}


def test_translator_returning_fewer_outputs_is_an_error_and_caches_nothing(tmp_path):
    with pytest.raises(TranslationError, match="returned 1 translations for 2 texts"):
        translate_with_memory(["A cat.", "A dog."], None, _Short(), "en", "ko")
    cache = CachedTranslator(_Short(), tmp_path / "c.sqlite", chunk_size=2)
    with pytest.raises(TranslationError, match="short broken: returned 1 translations"):
        cache.translate(["A cat.", "A dog."], "en", "ko")
    assert CachedTranslator(_Short(), tmp_path / "c.sqlite").translate([], "en", "ko") == []


def test_a_crash_mid_translation_resumes_from_the_cache(tiny_mt, tmp_path):
    english = pd.read_csv(DEMO / "stsb-en-dev.demo.csv", header=None)[0].head(12).tolist()
    inner = TransformersTranslator(tiny_mt[0], device="cpu")
    crashing = CachedTranslator(_Failing(inner, fail_on=2), tmp_path / "c.sqlite", chunk_size=4)
    with pytest.raises(RuntimeError, match="killed"):
        crashing.translate(english, "en", "ko")
    again = _Failing(inner, fail_on=None)
    done = CachedTranslator(again, tmp_path / "c.sqlite", chunk_size=4).translate(english, "en",
                                                                                  "ko")  # fmt: skip
    assert len(done) == 12 and again.texts == 8  # the first chunk came from the cache


def test_edit_figures_are_sacrebleus_and_count_unchanged_sentences():
    rows = _korsts_rows(6)
    finals = [r[5] for r in rows]
    drafts = finals[:3] + [r[6] for r in rows[3:]]  # three left as they were
    f = qa.edit_figures(drafts, finals)
    assert f["unchanged"] == 3 and f["unchanged_share"] == 0.5
    assert f["bleu"] == round(sacrebleu.corpus_bleu(drafts, [finals]).score, 2)
    assert f["chrf"] == round(sacrebleu.corpus_chrf(drafts, [finals]).score, 2)
    assert f["ter"] == round(sacrebleu.corpus_ter(drafts, [finals]).score, 2)
    assert f["edit_distance"]["p10"] == 0.0 and sum(f["edit_distance"]["histogram"].values()) == 6
    assert qa.edit_figures(finals, finals)["bleu"] == 100.0


def _pairs(rows: list[list[str]], english: list[list[str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"pair_id": f"p{i}", "en1": e[0], "en2": e[1], "ko1": r[5], "ko2": r[6],
          "label": float(r[4])} for i, (r, e) in enumerate(zip(rows, english, strict=True))]
    )  # fmt: skip


def test_label_risk_checks_on_real_pairs():
    rows = _korsts_rows(40)
    with (DEMO / "stsb-en-dev.demo.csv").open(encoding="utf-8") as f:
        english = list(csv.reader(f))[:40]
    pairs = _pairs(rows, english)
    s = qa.QaSettings()
    assert qa.identical_translation(pairs, s) == []
    broken = pairs.copy()
    broken.loc[3, "ko2"] = broken.loc[3, "ko1"]  # a pair that became identical
    one_off = broken.loc[4, "ko1"].rstrip(".")
    broken.loc[4, "ko2"] = one_off[:-1] + ("어" if one_off[-1] != "어" else "아")  # near-identical
    broken.loc[5, "ko1"] = "a man is playing the guitar 가 있다."  # English left in place
    broken.loc[6, "ko1"] = broken.loc[6, "ko1"] * 6  # a runaway length
    s = qa.QaSettings(near_identical=0.9)
    flags = qa.run_checks(broken, list(qa.TRANSLATION_CHECKS.names()), s)
    by = {(f.pair_id, f.check) for f in flags.itertuples()}
    assert ("p3", "identical_translation") in by and ("p4", "near_identical_translation") in by
    assert ("p5", "untranslated_latin") in by and ("p6", "length_ratio") in by
    assert not any(c == "identical_translation" for p, c in by if p != "p3")


def test_gender_lost_or_added_in_translation():
    assert qa.gendered_english("Sir, your table is ready.") == ["sir"]
    assert qa.gendered_korean('그리고 그가 말했다, "엄마, 저 왔어요."') == ["그", "엄마"]
    assert qa.gendered_korean("그 사람이 딸기를 먹는다.") == []  # 그/MM is "that"; 딸기 no 딸
    assert qa.gendered_korean("그들은 학교에서 공연을 준비하고 있다.") == []  # they
    pairs = pd.DataFrame([
        {"pair_id": "lost", "en1": "Sir, your table is ready.", "en2": "A table is ready.",
         "ko1": "선생님, 자리가 준비되었습니다.", "ko2": "자리가 준비되었다.",
         "label": "entailment"},
        {"pair_id": "kept", "en1": "A woman plays the flute.", "en2": "Someone plays music.",
         "ko1": "한 여자가 플루트를 연주한다.", "ko2": "누군가 음악을 연주한다.",
         "label": "entailment"},
    ])  # fmt: skip
    flags = qa.gender_mismatch(pairs, qa.QaSettings())
    assert [(f.pair_id, f.detail) for f in flags] == [
        ("lost", "sentence1: sir -> no gendered Korean word")
    ]


def _translate_recipe(tmp_path: Path, **change: object) -> Path:
    recipe = yaml.safe_load((ROOT / "recipes" / "korsts-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        corpus["path"] = str((ROOT / "recipes" / corpus["path"]).resolve())
        corpus["limit"] = 8
    t = recipe["translation"]
    t["memory"]["path"] = str((ROOT / "recipes" / t["memory"]["path"]).resolve())
    t["train"] = {"parallel": str((ROOT / "recipes" / t["train"]["parallel"]).resolve()),
                  **{k: v for k, v in TINY.items()}}  # fmt: skip
    for key, value in change.items():
        section, _, field = key.partition("__")
        target = next(c for c in recipe["corpora"] if c["name"] == section) if field else recipe
        target[field or section] = value
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env=os.environ.copy())  # fmt: skip


def test_bad_inputs_fail_before_any_work_naming_file_and_line(tmp_path):
    # a reference that is not aligned with the English rows
    shifted = tmp_path / "shifted.tsv"
    lines = (DEMO / "korsts-dev.demo.tsv").read_text(encoding="utf-8").splitlines()
    shifted.write_text("\n".join([lines[0], *lines[2:]]) + "\n", encoding="utf-8")
    recipe = _translate_recipe(tmp_path, **{"korsts-dev__path": str(shifted)})
    out = tmp_path / "out"
    proc = _cli("translate", str(recipe), "--out", str(out))
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "shifted.tsv: line 2: label" in proc.stderr and "not aligned" in proc.stderr
    assert not (out / "translate").exists()
    # an English file with a missing column
    short = tmp_path / "short.csv"
    short.write_text("A cat sits.,A cat is sitting.,4.0\nA dog runs.,3.2\n", encoding="utf-8")
    recipe = _translate_recipe(tmp_path, **{"stsb-en-dev__path": str(short)})
    proc = _cli("translate", str(recipe), "--out", str(out))
    assert proc.returncode == 2
    assert "short.csv:2: expected 3 columns (sentence1, sentence2, score), found 2" in proc.stderr
    # a score that is not a number
    short.write_text("A cat sits.,A cat is sitting.,high\n", encoding="utf-8")
    proc = _cli("translate", str(recipe), "--out", str(out))
    assert proc.returncode == 2 and "short.csv: line 1: score 'high' is not a number" in (
        proc.stderr
    )


def test_kornli_layout_reads_nli_labels_and_refuses_unknown_ones(tmp_path):
    spec = (
        load_recipe(ROOT / "recipes" / "korsts-demo.yaml")
        .corpora[1]
        .model_copy(update={"limit": None})
    )
    pairs = kornlu.read_pairs(DEMO / "kornli-xnli-dev.head30.tsv", spec, "gold_label",
                              kornlu.NLI_LABELS)  # fmt: skip
    assert len(pairs) == 30 and set(pairs["label"]) <= set(kornlu.NLI_LABELS)
    pairs = pairs.rename(columns={"sentence1": "ko1", "sentence2": "ko2"}).assign(
        split="dev", license="CC-BY-SA-4.0"
    )
    records = kornlu_export.kornli_records(pairs)["dev"]
    assert list(records[0]) == ["sentence1", "sentence2", "gold_label", "license"]
    tsv = kornlu_export.tsv(records).splitlines()
    assert tsv[0] == "sentence1\tsentence2\tgold_label" and len(tsv) == 31
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence1\tsentence2\tgold_label\n가.\t나.\tcontradicts\n", encoding="utf-8")
    with pytest.raises(kornlu.SourceError, match="bad.tsv: line 2: label 'contradicts'"):
        kornlu.read_pairs(bad, spec, "gold_label", kornlu.NLI_LABELS)


def test_translate_command_writes_every_sentence_with_its_lineage(tmp_path):
    recipe = _translate_recipe(tmp_path)
    out = tmp_path / "out"
    proc = _cli("translate", str(recipe), "--out", str(out), "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout
    steps = json.loads(text[0 if text.startswith("{\n") else text.rindex("\n{\n") + 1 :])
    assert steps["mt-model"]["trained"] and steps["translate"]["pairs"] == 8
    sentences = pd.read_parquet(out / "translate" / "sentences.parquet")
    pairs = pd.read_parquet(out / "translate" / "pairs.parquet")
    assert set(pairs["s1"]) | set(pairs["s2"]) == set(sentences["sentence_id"])
    assert sentences["draft"].str.len().gt(0).all()
    assert set(sentences["backend"]) <= {"memory-exact", "memory-fuzzy", "transformers"}
    assert list(pairs["label"]) == [float(r[4]) for r in _korsts_rows(8)]  # carried over


def _votes(rows: list[tuple[str, str, str, str]], field: str = "similarity") -> pd.DataFrame:
    """A pulled relabel round: (item, annotation, value, report flags) per row."""
    return pd.DataFrame(
        [{"item_id": i, "annotation_id": a, "field": field, "value": v,
          "report_flags": f, "cancelled": False} for i, a, v, f in rows]
    )  # fmt: skip


def test_a_pair_a_relabeller_reported_is_dropped_with_its_flags_and_the_rest_relabelled():
    from pipelines.families.kornlu.qa import relabelled

    pairs = pd.DataFrame({"pair_id": ["p1", "p2", "p3"], "label": [1.0, 2.0, 3.0]})
    votes = _votes([("p1", "1", "4", ""), ("p1", "2", "5", ""),
                    ("p2", "3", "2", ""), ("p2", "4", "2", "translation_error")])  # fmt: skip
    kept, counts, lost = relabelled(pairs, votes, "korsts")
    assert kept["pair_id"].tolist() == ["p1", "p3"]  # p3 was not in the round
    assert kept.set_index("pair_id").at["p1", "label"] == 4.5
    assert not kept.set_index("pair_id").at["p3", "relabelled"]
    assert counts == {"relabel_report": 1}
    assert lost[["pair_id", "reason", "detail"]].values.tolist() == [
        ["p2", "relabel_report", "translation_error"]]  # fmt: skip
    assert len(kept) + len(lost) == len(pairs)  # rows in = kept + dropped


def test_an_nli_pair_without_a_majority_is_dropped_with_its_votes():
    from pipelines.families.kornlu.qa import relabelled

    pairs = pd.DataFrame({"pair_id": ["p1"], "label": ["entailment"]})
    votes = _votes([("p1", "1", "neutral", ""), ("p1", "2", "contradiction", "")], "label")
    kept, counts, lost = relabelled(pairs, votes, "kornli")
    assert kept.empty and counts == {"relabel_no_majority": 1}
    assert lost[["reason", "detail"]].values.tolist() == [
        ["relabel_no_majority", "neutral|contradiction"]]  # fmt: skip
