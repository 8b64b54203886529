"""Issue 51 item 3: no release is written with an empty split, a single class or a
degenerate model's labels unless the recipe says so (``export.allow_degenerate``), and
the card then says it (pipelines.export.guards).

The probe's cases: JSQuAD released train 35, valid 0, test 0; MARC-ja with
``labels.negative: []`` released only ``positive``; a KLUE-RE tagger trained to NaN
while the release silently used the other; a KLUE-NER tagger at dev F1 0.0018
pseudo-labelled every sentence. The guards are checked on the facts each export
computes (the same dicts the card is rendered from), and one real rebuild shows a
tagger that learnt nothing stopping the run before any sentence is labelled."""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipelines.export.guards import (
    ReleaseRefused,
    guard_model,
    guard_release,
    model_problem,
    release_problems,
)

ROOT = Path(__file__).resolve().parents[2]


class _Export:
    def __init__(self, allow: list[str] | None = None, gain: float = 0.05) -> None:
        self.allow_degenerate, self.min_model_gain = allow or [], gain


class _Recipe:
    """What the guards read of a recipe: its ``export`` section."""

    def __init__(self, allow: list[str] | None = None) -> None:
        self.export = _Export(allow)


def _tagger(losses: list[float], f1: float) -> dict:
    history = [{"epoch": i, "train_loss": x} for i, x in enumerate(losses, 1)]
    return {"trained": True, "dev": {"entity_f1": f1, "char_macro_f1": f1}, "history": history}


JSQUAD = {  # the probe's JSQuAD release: min_validator_answers above the people
    "export": {"files": {"train.jsonl": 35, "valid.jsonl": 0, "test.jsonl": 0}},
    "split": {"splits": {"train.jsonl": 35, "valid.jsonl": 0, "test.jsonl": 0}},
    "labels": {},
}
MARC = {  # labels.negative: [] -> every review positive
    "export": {"files": {"train.json": 80, "valid.json": 10}},
    "split": {"splits": {"train": 80, "dev": 10}},
    "labels": {"numeric": False, "elements": False, "order": ["positive"],
               "per_split": {"train": {"positive": 80}, "dev": {"positive": 10}}},
}  # fmt: skip
RE = {  # KLUE-RE's two taggers, one trained to NaN (lr: .inf)
    "export": {"files": {"train.jsonl": 40, "dev.jsonl": 10, "test.jsonl": 10}},
    "re_taggers": {"kmou-2016": _tagger([1.2, 0.8, 0.6], 0.33),
                   "kmou-later": _tagger([1.1, math.nan, math.nan], 0.0)},
}  # fmt: skip
NER = {  # epochs: -1 -> an untrained tagger, dev F1 0.0018
    "export": {"files": {"train.jsonl": 100, "dev.jsonl": 20, "test.jsonl": 20}},
    "tagger": _tagger([], 0.0018),
    "labels": {"numeric": False, "elements": True, "order": ["LC", "PS"],
               "per_split": {"train": {"PS": 100}}},  # span labels: never "single class"
}  # fmt: skip


def test_a_nan_or_infinite_loss_or_a_trivial_dev_score_is_degenerate():
    assert "went nan at epoch 2" in model_problem(_tagger([1.0, math.nan], 0.4)["history"],
                                                  0.4, "entity_f1", 0.05)  # fmt: skip
    assert "went inf at epoch 1" in model_problem([{"epoch": 1, "train_loss": math.inf}],
                                                  0.4, "entity_f1", 0.05)  # fmt: skip
    assert "0.0018 is not above the trivial model's 0.0 by export.min_model_gain 0.05" in (
        model_problem([], 0.0018, "entity_f1", 0.05)
    )
    assert "is nan" in model_problem([], math.nan, "entity_f1", 0.05)
    assert model_problem(_tagger([1.0, 0.5], 0.33)["history"], 0.33, "entity_f1", 0.05) is None


@pytest.mark.parametrize(
    ("facts", "guard", "named"),
    [
        (JSQUAD, "empty_split", ["file valid.jsonl: 0 records", "file test.jsonl: 0 records"]),
        (MARC, "single_class", ["class positive: every one of the release's 90 items"]),
        (RE, "degenerate_model", ["model re_taggers.kmou-later: its training loss went nan"]),
        (NER, "degenerate_model", ["model tagger: its dev entity_f1 0.0018 is not above"]),
    ],
    ids=["jsquad-empty-eval", "marc-one-class", "re-nan-tagger", "ner-untrained-tagger"],
)
def test_each_probe_case_is_refused_naming_it_and_how_to_allow_it(facts, guard, named):
    with pytest.raises(ReleaseRefused) as caught:
        guard_release(copy.deepcopy(facts), _Recipe(), "recipe.yaml: OUT/dataset")
    message = str(caught.value)
    assert message.startswith("recipe.yaml: OUT/dataset: refused (")
    for part in named:
        assert part in message, message
    assert f"`export.allow_degenerate: [{guard}]`" in message
    assert "Nothing was written to the release" in message
    assert ReleaseRefused.exit_code == 2


@pytest.mark.parametrize("facts", [JSQUAD, MARC, RE, NER])
def test_an_allowed_problem_passes_and_the_card_warns_of_it(facts):
    from pipelines.export.warnings import CARD_WARNINGS, degenerate_release

    kinds = sorted({p.guard for p in release_problems(facts, 0.05)})
    found = guard_release(copy.deepcopy(facts), _Recipe(kinds), "r")
    assert found and {d["guard"] for d in found} == set(kinds)
    assert "degenerate-release" in CARD_WARNINGS.names()  # every card runs the rule
    lines = degenerate_release({"degenerate": found}, {})
    assert len(lines) == len(found)
    assert all(line.startswith("**Degenerate release, allowed by the recipe**") for line in lines)
    assert all("Its figures are not results." in line for line in lines)
    # allowing another guard does not allow this one
    other = [g for g in ("empty_split", "single_class", "degenerate_model") if g not in kinds]
    with pytest.raises(ReleaseRefused):
        guard_release(copy.deepcopy(facts), _Recipe(other), "r")


def test_a_sound_release_passes_untouched():
    facts = {
        "export": {"files": {"train.jsonl": 30, "dev.jsonl": 5, "test.jsonl": 5}},
        "split": {"splits": {"train": 30, "dev": 5, "test": 5}},
        "labels": {"numeric": False, "order": ["negative", "positive"],
                   "per_split": {"train": {"negative": 15, "positive": 15},
                                 "dev": {"negative": 5}, "test": {"positive": 5}}},
        "tagger": _tagger([1.0, 0.6], 0.35),
        "family": {"text-model": {"history": [{"train_loss": 0.4}], "dev": {"macro_f1": 0.5}}},
    }  # fmt: skip
    # a split of one class is the card's split-label-share warning, not a refusal (the
    # KLUE-RE demo's test split: 22 no_relation); a classifier's metrics (no entity F1)
    # are not a tagger's
    assert guard_release(facts, _Recipe(), "r") == []
    facts["labels"]["per_split"]["test"] = {"positive": 22}
    assert guard_release(facts, _Recipe(), "r") == []


def test_labels_that_are_not_the_gold_classes_are_not_one_class():
    """JSQuAD's card counts question types (every demo question is answerable); its
    target is an answer, so one type is no degenerate class. MARC-ja's are its classes."""
    types = {"numeric": False, "elements": False, "order": ["answerable"],
             "per_split": {"train": {"answerable": 30}, "dev": {"answerable": 10}}}  # fmt: skip
    jsquad = {"task_kind": "jsquad", "labels": types}
    assert guard_release(jsquad, _Recipe(), "r") == []
    with pytest.raises(ReleaseRefused, match="class answerable"):
        guard_release({**jsquad, "task_kind": "marc-ja"}, _Recipe(), "r")


def test_the_tagger_guard_runs_right_after_training():
    bad = _tagger([2.0, math.inf], 0.0)
    with pytest.raises(ReleaseRefused, match=r"ner.tagger: refused \(model tagger: its "
                       r"training loss went inf at epoch 2\)"):  # fmt: skip
        guard_model("tagger", bad, _Recipe(), "recipe.yaml: ner.tagger")
    allowed = guard_model("tagger", bad, _Recipe(["degenerate_model"]), "r")
    assert allowed["guard"] == "degenerate_model"
    assert guard_model("tagger", _tagger([1.0], 0.4), _Recipe(), "r") is None
    # a loaded checkpoint that records neither training nor a dev score: nothing to judge
    assert guard_model("tagger", {"trained": False}, _Recipe(), "r") is None


def test_the_setting_is_checked_at_recipe_load(tmp_path):
    from pipelines.core.recipe import load_recipe

    recipe = yaml.safe_load((ROOT / "recipes" / "sts-demo.yaml").read_text(encoding="utf-8"))
    recipe["export"] = {**(recipe.get("export") or {}), "allow_degenerate": ["empty_splits"]}
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    with pytest.raises(Exception, match="allow_degenerate") as caught:
        load_recipe(path)
    assert "empty_split" in str(caught.value)


# ---------------------------------------------------------------------- a real rebuild


def _ner_recipe(folder: Path, settings: dict) -> Path:
    recipe = yaml.safe_load((ROOT / "recipes" / "klue-ner-demo.yaml").read_text(encoding="utf-8"))
    for corpus in recipe["corpora"]:
        for key in ("path", "license_file"):
            if corpus.get(key):
                corpus[key] = str((ROOT / "recipes" / corpus[key]).resolve())
        corpus["limit"] = 40 if corpus["name"] == "kmou-test" else 60
    ner = recipe["ner"]
    for key in ("train", "dev"):
        ner["tagger"][key] = str((ROOT / "recipes" / ner["tagger"][key]).resolve())
    ner["public_figures"] = str((ROOT / "recipes" / ner["public_figures"]).resolve())
    ner["tagger"]["train_limit"] = 200
    ner["tagger"]["settings"] = settings
    # its own project names: a server's older klue-ner-demo project (another interface)
    # would refuse the run before the tagger is judged
    recipe["name"] = f"guard-ner-{folder.name[-12:]}-{os.getpid()}"
    recipe.pop("project_prefix", None)  # the projects are named after this test's recipe
    recipe["annotation"]["config"] = str(ROOT / "annotation_configs" / "ner.xml")
    path = folder / "klue-ner.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
    return path


def test_a_ner_tagger_that_learnt_nothing_stops_the_rebuild_before_any_label(tmp_path):
    """Valid settings (one epoch at lr 1e-9: the range checks pass) give a tagger at
    chance: the rebuild stops at the tagger step with exit 2, naming the model, its dev
    F1 and the setting that would allow it; no sentence is pseudo-labelled, no dataset or
    release folder written."""
    path = _ner_recipe(tmp_path, {"hidden": 32, "layers": 1, "heads": 2, "intermediate": 64,
                                  "epochs": 1, "lr": 1e-9})  # fmt: skip
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "flows.cli", "rebuild", str(path), "--out", str(out),
         "--stop-server"],  # a Label Studio this run starts is not left running
        cwd=ROOT, capture_output=True, text=True, timeout=900, env=os.environ.copy(),
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"benchforge: error: {path}: ner.tagger: refused (model tagger: "
                           "its dev entity_f1 "), last  # fmt: skip
    assert "is not above the trivial model's 0.0 by export.min_model_gain 0.05" in last
    assert "`export.allow_degenerate: [degenerate_model]`" in last
    assert (out / "tagger" / "metrics.json").is_file()  # trained, then judged
    for folder in ("items", "dataset", "release"):
        assert not (out / folder).exists(), folder
