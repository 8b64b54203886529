"""A long piece of work shows its progress where no terminal watches it (issue 51, item
13): a line every BENCHFORGE_PROGRESS_SECONDS, and one at the end, never a flood."""

from __future__ import annotations

import logging
import time

import pytest

from pipelines.core.progress import LogProgress, ProgressSettingError, interval, progress


def test_lines_come_at_the_interval_and_one_at_the_end(caplog, monkeypatch):
    monkeypatch.setenv("BENCHFORGE_PROGRESS_SECONDS", "0.05")
    caplog.set_level(logging.INFO)
    bar = progress(total=6, desc="translate en->ko", unit="sentence")
    assert isinstance(bar, LogProgress)  # stderr is no terminal under pytest
    for _ in range(3):
        time.sleep(0.06)
        bar.update(2)
    bar.close()
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("translate en->ko: 2/6 sentences (33%, ")
    assert lines[1].startswith("translate en->ko: 4/6 sentences (67%, ")
    assert lines[-1].startswith("translate en->ko: 6/6 sentences (done, 100%, ")
    assert len(lines) == 3


def test_quick_work_says_nothing_and_an_iterable_is_counted(caplog, monkeypatch):
    monkeypatch.setenv("BENCHFORGE_PROGRESS_SECONDS", "10")
    caplog.set_level(logging.INFO)
    assert list(progress(range(1000), desc="quick", unit="item")) == list(range(1000))
    assert caplog.records == []
    monkeypatch.setenv("BENCHFORGE_PROGRESS_SECONDS", "0")
    assert sum(progress(range(3), desc="slow", unit="item")) == 3
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "slow: 1/3 items", "slow: 2/3 items", "slow: 3/3 items"]  # fmt: skip
    caplog.clear()
    bar = progress(total=3, desc="hidden", show=False)
    bar.update(3)
    bar.close()
    assert caplog.records == []


@pytest.mark.parametrize("value", ["ten", "-1", "nan", "inf"])
def test_an_interval_that_is_not_seconds_is_an_error_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("BENCHFORGE_PROGRESS_SECONDS", value)
    with pytest.raises(ProgressSettingError, match=f"BENCHFORGE_PROGRESS_SECONDS={value}"):
        interval()
