"""Issue 33 item 3: steps declare what they read and write; the orchestrator checks the
inputs before a step runs (naming the step that writes a missing one) and the outputs
after it (pipelines.core.steps.declares, check_inputs, check_outputs), and derives a
cached step's key from the declaration (step_cache, cached)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from pipelines.core.steps import (
    STEPS,
    RunContext,
    StepInputMissing,
    StepOutcome,
    cached,
    check_inputs,
    check_outputs,
    declares,
    files_of,
    out_files,
    step_cache,
)


@pytest.fixture
def toy_steps():
    @declares(writes=lambda ctx, arg: {"table": ctx.out / "first" / f"table{arg}.txt"})
    def first(ctx, arg=""):
        (ctx.out / "first").mkdir(exist_ok=True)
        return StepOutcome("written")

    @declares(reads=lambda ctx, arg: {"table": ctx.out / "first" / "table.txt"})
    def second(ctx, arg=""):
        return StepOutcome("read")

    STEPS.add("files-toy:first", first)
    STEPS.add("files-toy:second", second)
    yield first, second
    STEPS.remove("files-toy:first")
    STEPS.remove("files-toy:second")


def test_a_missing_input_names_the_step_that_writes_it(tmp_path, toy_steps):
    first, second = toy_steps
    ctx = RunContext(None, tmp_path / "r.yaml", tmp_path, SimpleNamespace(name="files-toy"), False)
    names = ["first", "second"]
    with pytest.raises(StepInputMissing) as err:
        check_inputs(ctx, "second", second, "", names)
    message = str(err.value)
    assert "step 'second' needs its input 'table'" in message
    assert str(tmp_path / "first" / "table.txt") in message
    assert "which step 'first' writes" in message
    assert err.value.exit_code == 2  # a BenchforgeError: one line from the CLI

    first(ctx)
    with pytest.raises(AssertionError, match="declared outputs it did not write"):
        check_outputs(ctx, "first", first, "")
    (tmp_path / "first" / "table.txt").write_text("x", encoding="utf-8")
    check_outputs(ctx, "first", first, "")
    assert check_inputs(ctx, "second", second, "", names) == {"table": "2d711642b726"}
    assert check_inputs(ctx, "first", first, "", names) == {}  # reads nothing
    assert files_of(lambda ctx, arg="": None) is None  # an undeclared step is not checked


def test_the_shared_export_takes_its_inputs_from_its_declaration():
    import pipelines.rebuild.export as shared

    for name in ("agree", "split", "export"):
        assert files_of(STEPS.get(name)) is not None, name
    assert files_of(STEPS.get("export")).reads is shared.export_reads


@pytest.fixture
def cached_step():
    """A cached step as a family writes one: its declaration gives the key."""
    runs = []

    @declares(
        reads=out_files("in/table.txt"),
        writes=out_files("made/rows.parquet", "made/made.json"),
        settings=lambda ctx, arg: [ctx.recipe.threshold],
    )
    def make(ctx, arg=""):
        def compute():
            runs.append(1)
            text = (ctx.out / "in" / "table.txt").read_text(encoding="utf-8")
            rows = [w for w in text.split() if len(w) >= ctx.recipe.threshold]
            return {"rows.parquet": pd.DataFrame({"word": rows})}, {"kept": len(rows)}

        info, hit = cached(ctx, compute)
        return StepOutcome(f"{info['kept']}", {**info, "cached": hit})

    return make, runs


def _run(ctx, fn):
    """What the orchestrator does around a step (flows/rebuild.run_steps)."""
    check_inputs(ctx, "make", fn, "", ["make"])
    ctx.cache = step_cache(ctx, fn, "")
    try:
        return fn(ctx)
    finally:
        ctx.cache = None


def test_a_cached_step_reruns_when_its_input_or_settings_change_and_not_otherwise(
    tmp_path, cached_step
):
    make, runs = cached_step
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "table.txt").write_text("a bb ccc", encoding="utf-8")
    recipe = SimpleNamespace(threshold=2)
    ctx = RunContext(recipe, tmp_path / "r.yaml", tmp_path, SimpleNamespace(name="t"), False)
    assert _run(ctx, make).info == {"kept": 2, "cached": False}
    manifest = json.loads((tmp_path / "made" / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(manifest["files"]) == ["made.json", "rows.parquet"]
    assert _run(ctx, make).info == {"kept": 2, "cached": True} and len(runs) == 1
    recipe.threshold = 3  # a setting
    assert _run(ctx, make).info == {"kept": 1, "cached": False} and len(runs) == 2
    (tmp_path / "in" / "table.txt").write_text("a bb ccc dddd", encoding="utf-8")  # an input
    assert _run(ctx, make).info == {"kept": 2, "cached": False} and len(runs) == 3
    assert _run(ctx, make).info["cached"] and len(runs) == 3
    (tmp_path / "made" / "rows.parquet").write_bytes(b"damaged")  # an output changed
    assert not _run(ctx, make).info["cached"] and len(runs) == 4


def test_cached_refuses_outputs_that_are_not_the_declared_ones(tmp_path):
    @declares(writes=out_files("made/a.parquet", "made/made.json"), settings=lambda c, a: [])
    def make(ctx, arg=""):
        return cached(ctx, lambda: ({"b.parquet": pd.DataFrame()}, {}))

    ctx = RunContext(None, tmp_path / "r.yaml", tmp_path, SimpleNamespace(name="t"), False)
    with pytest.raises(AssertionError, match=r"computed \['b.parquet'\] and declared"):
        _run(ctx, make)
    assert not (tmp_path / "made").exists()  # nothing written
    with pytest.raises(RuntimeError, match="declares its settings"):
        make(ctx)  # outside the orchestrator: no key

    @declares(
        writes=lambda ctx, arg: {"a": ctx.out / "x" / "a.json", "b": ctx.out / "y" / "b.json"},
        settings=lambda c, a: [],
    )
    def two_folders(ctx, arg=""):
        return None

    with pytest.raises(ValueError, match="writes into one folder"):
        step_cache(ctx, two_folders, "")


def test_a_steps_pulls_are_not_checked_before_it_runs_and_are_in_its_key(tmp_path):
    pulled = tmp_path / "annotate" / "round.parquet"

    @declares(
        writes=out_files("made/a.parquet", "made/made.json"),
        settings=lambda ctx, arg: [],
        pulls=lambda ctx, arg: {"annotations": pulled},
    )
    def make(ctx, arg=""):
        pulled.parent.mkdir(exist_ok=True)
        pulled.write_text(ctx.recipe.answer, encoding="utf-8")  # its round, run inside
        return cached(ctx, lambda: ({"a.parquet": pd.DataFrame({"x": [1]})}, {"n": 1}))

    recipe = SimpleNamespace(answer="yes")
    ctx = RunContext(recipe, tmp_path / "r.yaml", tmp_path, SimpleNamespace(name="t"), False)
    assert _run(ctx, make) == ({"n": 1}, False)
    assert _run(ctx, make) == ({"n": 1}, True)
    recipe.answer = "no"  # the annotators answered otherwise
    assert _run(ctx, make) == ({"n": 1}, False)
