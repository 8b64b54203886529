"""benchmarks/paper_scale.py builds recipes that benchforge accepts (issue 38): the
demos' recipes with the full corpora swapped in and the papers' sizes, written outside
recipes/ with every relative path made absolute. Built here on a corpora folder laid out
as ../shared/corpora is, from the demo data, so that the test needs no ../shared."""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import shutil
from pathlib import Path

import yaml

from pipelines.core.recipe import load_recipe
from pipelines.preflight import check_rebuild_recipe

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo"


def _module():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(
        "paper_scale", ROOT / "benchmarks" / "paper_scale.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _corpora(base: Path) -> Path:
    """A corpora folder with ../shared/corpora's layout, filled from data/demo."""
    c = base / "corpora"
    for name in ("nsmc", "parakqc", "korsts-kornli", "jglue", "kobbq"):
        (c / name).mkdir(parents=True)
    shutil.copy(DEMO / "nsmc" / "reviews.sample3000.jsonl.gz", c / "nsmc" / "reviews.jsonl.gz")
    shutil.copy(DEMO / "parakqc" / "paraKQC_v1.txt", c / "parakqc")
    shutil.copy(DEMO / "korsts" / "korsts-dev.demo.tsv", c / "korsts-kornli" / "sts-train.tsv")
    for split in ("train", "valid"):
        shutil.copy(DEMO / "jglue" / "jsts-v1.3_valid-v1.3.json",
                    c / "jglue" / f"jsts-v1.3_{split}-v1.3.json")  # fmt: skip
    for name in ("KoBBQ_templates.tsv", "KoBBQ_survey_result.json"):
        shutil.copy(DEMO / "kobbq" / name, c / "kobbq")
    shutil.copy(DEMO / "kobbq" / "LICENSE.kobbq", c / "kobbq" / "LICENSE")
    return c


def test_paper_scale_recipes_load_and_carry_the_papers_sizes(tmp_path):
    ps = _module()
    args = argparse.Namespace(corpora=_corpora(tmp_path), sts_pairs=13224, nsmc_reviews=500,
                              jsts_pairs=12000)  # fmt: skip
    work = tmp_path / "inputs"
    work.mkdir()
    built = {}
    for key, (_, make) in ps.DATASETS.items():
        recipe = make(args, work)
        path = tmp_path / "recipes" / f"{recipe['name']}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(recipe, allow_unicode=True), encoding="utf-8")
        loaded = load_recipe(path)  # every section validated
        check_rebuild_recipe(loaded, path)
        built[key] = (recipe, loaded)
    sts, _ = built["klue-sts"]
    assert sts["items"]["sample"] == 13224
    nsmc = next(c for c in sts["corpora"] if c["name"] == "nsmc")
    with gzip.open(nsmc["path"], "rt", encoding="utf-8") as f:
        assert sum(1 for _ in f) == 500  # the first N reviews of the crawl
    controls = [line for line in Path(sts["annotation"]["controls"]["items"]).read_text(
        encoding="utf-8").splitlines() if line]  # fmt: skip
    share = sts["annotation"]["controls"]["share"]
    assert len(controls) >= 13224 * share / (1 - share)  # enough for the share at 13,224
    jsts, _ = built["jsts"]
    assert jsts["jglue"]["same_image"] + jsts["jglue"]["other_image"] == 12000
    for recipe, _ in built.values():  # nothing relative is left to resolve against recipes/
        text = yaml.safe_dump(recipe)
        assert "../" not in text
