"""The card's figures draw what the facts say (pipelines.export.figures)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from pipelines.export.figures import funnel  # noqa: E402 - after the backend


def test_funnel_steps_of_one_name_keep_their_own_bars_and_labels():
    """Issue 34: the KorSTS funnel had a stage and a step both called `qa`; on a
    categorical axis they shared one row, and every count label shifted (176 written on
    a bar of 200)."""
    steps = [
        {"step": "raw", "unit": "pair", "count": 200},
        {"step": "qa", "unit": "pair", "count": 176},
        {"step": "translate", "unit": "pair", "count": 200},
        {"step": "qa", "unit": "pair", "count": 176},
        {"step": "released", "unit": "row", "count": 176},
    ]
    fig = funnel({"funnel": steps})
    ax = fig.axes[0]
    bars = [(round(p.get_y() + p.get_height() / 2), p.get_width()) for p in ax.patches]
    texts = {round(t.get_position()[1]): t.get_text().strip() for t in ax.texts}
    assert len(bars) == len(steps)  # one bar per step
    for y, width in bars:  # each count label sits on its own bar
        assert texts[y] == f"{int(width):,}"
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{s['step']} ({s['unit']})" for s in steps][::-1]
