"""Issue 53 item 3: the card's facts are typed (``pipelines.export.facts.CardFacts``).
A release's facts are checked against the types once, in ``write_release``, before any
file is written (a wrong type or a missing required key names its key path; the dict
written is the one built), and ``benchforge card check`` names each fact of a card.json
whose type is wrong.

The facts come from a real release: ``recipes/korsts-demo.yaml`` on its first rows,
translated from a translation memory (no model, no Label Studio; the rebuild of the
KorNLU tests, a few seconds), run once for the module.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from pipelines.core.recipe import load_recipe
from pipelines.export.card_check import check_card
from pipelines.export.facts import CardFactsError, check_facts, problems
from pipelines.export.manifest import refresh_release_manifest
from pipelines.rebuild.export import write_release
from pipelines.rebuild.kinds import task_kind

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "unit" / "families" / "kornlu"))
from test_mt_only_splits import _rebuild, _recipe  # noqa: E402 - the KorSTS recipe on 8 rows

# added by write_release itself, from the release tables and the guard
RELEASE_ADDED = ("duplicates", "release", "hub", "public_eval", "degenerate")


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the recipe, the rebuild's output folder) of a small real KorSTS release."""
    tmp = tmp_path_factory.mktemp("korsts")
    recipe = _recipe(tmp, split="train")
    out = tmp / "out"
    _rebuild(recipe, out)
    return recipe, out


def _facts(out: Path) -> dict:
    return json.loads((out / "dataset" / "card.json").read_text(encoding="utf-8"))


def test_a_real_releases_facts_match_their_types(release):
    _, out = release
    facts = _facts(out)
    assert problems(facts) == []
    check_facts(facts)  # no error


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda f: f["annotation"].update(overlap="3"), "annotation.overlap"),
        (lambda f: f["export"].update(files=[["train.tsv", 7]]), "export.files"),
        (lambda f: f["funnel"][0].update(count=1.5), "funnel.0.count"),
        (lambda f: f["provenance"].update({"git commit": 7}), "provenance.git commit"),
        (lambda f: f.pop("task_kind"), "task_kind"),
        (lambda f: f["export"]["licence"].pop("release"), "export.licence.release"),
        (lambda f: f.update(paper_sizes=["dev", 3]), "paper_sizes"),  # a family's fact
    ],
)
def test_a_wrong_type_or_a_missing_key_is_refused_naming_its_key_path(release, change, key):
    _, out = release
    facts = _facts(out)
    change(facts)
    found = problems(facts)
    assert key in [p.key for p in found], found
    assert all(p.key == key or p.key.startswith(key + ".") for p in found), found
    with pytest.raises(CardFactsError, match=rf"(?m)^  {re.escape(key)}: "):
        check_facts(facts, "here")


def _ctx(recipe: Path, folder: Path) -> SimpleNamespace:
    """What write_release reads of a step's context: the cache folder and key, the task
    kind (its hub metadata and card), the recipe and its path."""
    return SimpleNamespace(cache=SimpleNamespace(key="k", folder=folder), task=task_kind("korsts"),
                           recipe=load_recipe(recipe), recipe_path=recipe)  # fmt: skip


def test_write_release_refuses_mistyped_facts_before_any_write_and_writes_the_dict_built(
    release, tmp_path
):
    recipe, out = release
    built = _facts(out)
    for name in RELEASE_ADDED:
        built.pop(name)
    tables = {"train.parquet": pd.read_parquet(out / "dataset" / "train.parquet")}
    texts = {"train.tsv": (out / "dataset" / "train.tsv").read_text(encoding="utf-8")}

    wrong = copy.deepcopy(built)
    wrong["split"]["splits"]["train"] = "7"
    with pytest.raises(CardFactsError, match=r"split\.splits\.train"):
        write_release(_ctx(recipe, tmp_path / "refused"), wrong, tables, texts, {})
    assert not (tmp_path / "refused").exists()  # nothing written

    # the same facts, typed right: the card.json written is the one the rebuild wrote
    write_release(_ctx(recipe, tmp_path / "written"), copy.deepcopy(built), tables, texts, {})
    assert (tmp_path / "written" / "card.json").read_bytes() == (
        out / "dataset" / "card.json"
    ).read_bytes()


def test_card_check_names_a_mistyped_fact_of_card_json(release, tmp_path):
    _, out = release
    dataset = tmp_path / "dataset"
    subprocess.run(["cp", "-r", str(out / "dataset"), str(dataset)], check=True)
    assert check_card(dataset).ok
    facts = _facts(tmp_path)
    facts["annotation"]["overlap"] = "three"  # no count reads it: only its type is wrong
    facts["provenance"]["git commit"] = None
    (dataset / "card.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    refresh_release_manifest(dataset, ["card.json"])  # the types, not the hash, differ
    result = check_card(dataset)
    got = [str(m) for m in result.mismatches]
    assert len(got) == 2, got
    assert got[0].startswith("card.json annotation.overlap: Input should be a valid integer")
    assert '(card.json holds "three"' in got[0]
    assert got[1].startswith("card.json provenance.git commit: Input should be a valid string")
    cli = subprocess.run([sys.executable, "-m", "flows.cli", "card", "check", str(dataset)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert cli.returncode == 1 and "MISMATCH card.json annotation.overlap" in cli.stdout
