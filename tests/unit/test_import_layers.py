"""Issue 53, item 6: no import runs back up the layers and no package cycle.

``scripts/import_layers.py`` reads the layers contract of ``pyproject.toml`` and counts,
on the import graph (grimp, function-level imports included), the imports from a lower
layer to a higher one, those between siblings of a layer declared independent (``a |
b``), and the package cycles. On the repository all are zero, and every package of
``pipelines`` is in a layer; an order the code breaks, and a cycle, are found."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("import_layers", ROOT / "scripts/import_layers.py")
import_layers = importlib.util.module_from_spec(_spec)
sys.modules["import_layers"] = import_layers
_spec.loader.exec_module(import_layers)


@pytest.fixture(scope="module")
def graph():  # noqa: ANN201 - (layers, module import pairs) of the repository
    layers = import_layers.read_layers(ROOT / "pyproject.toml")
    return layers, import_layers.package_imports(layers)


def test_no_import_runs_up_the_layers_and_no_package_cycle(graph):
    """The repository against its own contract: zero upward imports, zero imports
    between independent siblings, no package cycle (``flows`` and ``pipelines`` as a
    whole included), every package of ``pipelines`` named by a layer."""
    layers, pairs = graph
    assert len(layers.layers) >= 5 and any(len(x) > 1 for x in layers.layers)
    assert all(layers.independent), "a layer of siblings declared with ':' may import within"
    up, siblings = import_layers.upward(layers, pairs)
    assert up == [], "imports from a lower layer to a higher one"
    assert siblings == [], "imports between independent siblings"
    groups, two_way = import_layers.cycles(layers, pairs)
    assert groups == [] and two_way == []
    assert import_layers.unlayered(layers, pairs) == []
    assert import_layers.main([]) == 0


def test_an_order_the_code_breaks_is_counted(graph, tmp_path):
    """The counts can fail: with ``models`` put above ``quality`` (the toxicity filter
    and the translation checks import models), those imports run up; with the two
    merged into one independent layer, they run between siblings; and ``main`` exits 1."""
    _, pairs = graph
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"annotation | quality",' in text and '"measures | models",' in text
    flipped = tmp_path / "flipped.toml"
    flipped.write_text(text.replace('"annotation | quality",', '"annotation | models",')
                       .replace('"measures | models",', '"measures | quality",'),
                       encoding="utf-8")  # fmt: skip
    up, _ = import_layers.upward(import_layers.read_layers(flipped), pairs)
    assert ("pipelines.quality.toxic", "pipelines.models.classifier") in up
    assert all(i.startswith("pipelines.models.") for _, i in up)
    assert import_layers.main(["--pyproject", str(flipped)]) == 1
    merged = tmp_path / "merged.toml"
    merged.write_text(text.replace('"annotation | quality",', '"annotation | quality | models",')
                      .replace('"measures | models",', '"measures",'),
                      encoding="utf-8")  # fmt: skip
    _, siblings = import_layers.upward(import_layers.read_layers(merged), pairs)
    assert ("pipelines.quality.toxic", "pipelines.models.classifier") in siblings


def test_a_package_cycle_and_a_two_way_pair_are_found():
    """Three packages in a ring are one cycle with no two-way pair; ``flows`` and a
    package of ``pipelines`` importing each other are a cycle and the pair ``flows`` <->
    ``pipelines``."""
    layers = import_layers.Layers("pipelines", [["a"], ["b"], ["c"]], [True] * 3, ["pipelines"])
    ring = Counter({("pipelines.a.x", "pipelines.b.y"): 1, ("pipelines.b.y", "pipelines.c.z"): 1,
                    ("pipelines.c.z", "pipelines.a.x"): 1})  # fmt: skip
    groups, two_way = import_layers.cycles(layers, ring)
    assert groups == [["pipelines.a", "pipelines.b", "pipelines.c"]] and two_way == []
    assert import_layers.upward(layers, ring)[0] == [("pipelines.c.z", "pipelines.a.x")]
    back = Counter({("flows.run", "pipelines.a.x"): 1, ("pipelines.a.x", "flows.run"): 1})
    groups, two_way = import_layers.cycles(layers, back)
    assert groups == [["flows", "pipelines.a"]]
    assert ("flows", "pipelines") in two_way
    assert import_layers.upward(layers, back)[0] == [("pipelines.a.x", "flows.run")]
