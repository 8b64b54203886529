"""Issue 53 item 4: the epilogue of a cached step in one place
(``pipelines.core.steps.Cached.outcome``): the summary carries `` (cached)`` where the
step puts it when its outputs were current, and the info says ``cached``."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from pipelines.core.steps import (
    Cached,
    Rows,
    RunContext,
    StepOutcome,
    cached,
    declares,
    out_files,
    step_cache,
)


@declares(writes=out_files("made/rows.parquet", "made/made.json"),
          settings=lambda ctx, arg: [ctx.recipe.n])  # fmt: skip
def make(ctx: RunContext, arg: str = "") -> StepOutcome:
    def compute() -> tuple[dict, dict]:
        return {"rows.parquet": pd.DataFrame({"n": range(ctx.recipe.n)})}, {"rows": ctx.recipe.n}

    done = cached(ctx, compute)
    return done.outcome(f"{done.info['rows']} rows", Rows("row", 3, done.info["rows"],
                        {"short": 3 - done.info["rows"]}), after=" made")  # fmt: skip


def _run(ctx: RunContext) -> StepOutcome:
    """What the orchestrator does around a cached step (its key from its declaration)."""
    ctx.cache = step_cache(ctx, make, "")
    try:
        return make(ctx)
    finally:
        ctx.cache = None


def test_a_cached_step_ends_with_its_mark_and_its_info(tmp_path):
    ctx = RunContext(SimpleNamespace(n=2), tmp_path / "r.yaml", tmp_path,
                     SimpleNamespace(name="t"), False)  # fmt: skip
    first, again = _run(ctx), _run(ctx)
    assert (first.summary, first.info) == ("2 rows made", {"rows": 2, "cached": False})
    assert (again.summary, again.info) == ("2 rows (cached) made", {"rows": 2, "cached": True})
    assert again.rows == Rows("row", 3, 2, {"short": 1})
    ctx.recipe.n = 3  # a setting: computed again
    assert _run(ctx).summary == "3 rows made"


def test_the_outcome_keeps_the_info_or_the_summary_as_they_are_when_asked():
    done = Cached({"rows": 1}, True)
    info, hit = done  # a (info, hit) pair, as cached() returned before
    assert (info, hit) == ({"rows": 1}, True) and done.mark == " (cached)"
    assert done.outcome("1 row", merge=False) == StepOutcome("1 row (cached)", {"rows": 1})
    assert done.outcome("1 row", mark=False).summary == "1 row"
    assert Cached({}, False).outcome("x", after=": y") == StepOutcome("x: y", {"cached": False})
