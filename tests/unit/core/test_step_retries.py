"""Issue 53: a step's retries are declared on the step (``pipelines.core.steps.retried``)
and applied by whoever runs it: the orchestrator as Prefect task retries
(``flows.rebuild.task_retries``), or ``run_retried`` for a step run inside another (a
round a step runs only when it has work for it). A Label Studio round's four steps
declare 3 retries, 10 s apart, after an error a retry can change."""

from __future__ import annotations

import httpx
import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed

from flows.rebuild import task_retries
from flows.steps import AnnotationsPending
from pipelines.annotation.annotate import AnnotationError
from pipelines.core.steps import STEPS, StepOutcome, retried, retries_of, run_retried


def _flaky(failures: list[BaseException]):
    """A step that raises each of ``failures`` in turn, then succeeds."""
    calls = []

    @retried(2, 0.0, lambda exc: isinstance(exc, httpx.TransportError))
    def step(ctx, arg=""):
        calls.append(arg)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return StepOutcome(f"done after {len(calls)}", {})

    return step, calls


def test_the_round_steps_declare_their_retries_and_what_is_worth_one():
    import flows.steps  # noqa: F401 - registers the round's steps

    for name in ("push", "simulate", "wait", "pull"):
        declared = retries_of(STEPS.get(name))
        assert (declared.times, declared.delay_s) == (3, 10.0), name
        retry = task_retries(STEPS.get(name))["retry_condition_fn"]
        assert retry(None, None, Failed(data=httpx.ConnectError("connection refused")))
        assert not retry(None, None, Failed(data=AnnotationError("other settings")))
        assert not retry(None, None, Failed(data=AnnotationsPending("3 of 10 tasks")))
    assert task_retries(STEPS.get("agree")) == {}  # a step that declares none


def test_run_retried_runs_a_step_again_only_after_an_error_worth_it():
    step, calls = _flaky([httpx.ConnectError("down"), httpx.ReadTimeout("slow")])
    slept = []
    assert run_retried(step, None, "x", sleep=slept.append).summary == "done after 3"
    assert calls == ["x", "x", "x"] and slept == [0.0, 0.0]
    step, calls = _flaky([ValueError("a setting")])
    with pytest.raises(ValueError, match="a setting"):
        run_retried(step, None, "x", sleep=slept.append)
    assert calls == ["x"]  # not retried
    step, calls = _flaky([httpx.ConnectError("down")] * 3)
    with pytest.raises(httpx.ConnectError):
        run_retried(step, None, "x", sleep=slept.append)
    assert len(calls) == 3  # the first run and its 2 retries


def test_the_orchestrator_applies_a_steps_declared_retries_as_prefect_retries():
    """The options ``run_steps`` gives the step's Prefect task: a real Prefect run
    retries the step after a transport error and not after a ValueError."""
    step, calls = _flaky([httpx.ConnectError("down")])

    @flow
    def run_once(fn):
        return task(name="rebuild-flaky", cache_policy=NO_CACHE, **task_retries(fn))(fn)(None, "")

    assert run_once(step).summary == "done after 2"
    step, calls = _flaky([ValueError("refused")])
    with pytest.raises(ValueError, match="refused"):
        run_once(step)
    assert len(calls) == 1
