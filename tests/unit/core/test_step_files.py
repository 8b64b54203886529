"""Issue 33 item 3: steps declare what they read and write; the orchestrator checks the
inputs before a step runs (naming the step that writes a missing one) and the outputs
after it (pipelines.core.steps.declares, check_inputs, check_outputs)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pipelines.core.steps import (
    STEPS,
    RunContext,
    StepInputMissing,
    StepOutcome,
    check_inputs,
    check_outputs,
    declares,
    files_of,
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
    import flows.steps as shared

    for name in ("agree", "split", "export"):
        assert files_of(STEPS.get(name)) is not None, name
    assert files_of(STEPS.get("export")).reads is shared.export_reads
