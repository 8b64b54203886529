"""The data card's figures: matplotlib PNGs drawn from the card's facts (``card.json``).

A figure is one registration (``@CARD_FIGURES.register("name")``): a function
``draw(facts) -> Figure | None`` (None when it does not apply, e.g. no score histogram
for a classification task) with a caption (``CAPTIONS``). :func:`render_figures` draws
every registered figure and returns its PNG bytes under ``figures/<name>.png``. Figures
are deterministic: the same facts give byte-identical files (fixed size and DPI, no
timestamp or software name in the PNG, fonts shipped with a pinned package).
Korean text is set in NanumGothic (the ``koreanize-matplotlib`` package ships it).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from pipelines.core.registry import Registry  # noqa: E402
from pipelines.export.facts import CardFacts

Draw = Callable[[dict], Figure | None]
CARD_FIGURES: Registry[Draw] = Registry("card figure", None, "data card figures")
CAPTIONS: dict[str, str] = {}
SPLIT_COLOURS = {"all gold": "#999999", "train": "#4C72B0", "dev": "#DD8452", "test": "#55A868",
                 "dev+test": "#C44E52"}  # fmt: skip
_STYLE = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.hashsalt": "benchforge",
}


def figure(name: str, caption: str) -> Callable[[Draw], Draw]:
    """Register ``draw`` as the card figure ``name`` with its caption."""

    def add(draw: Draw) -> Draw:
        CAPTIONS[name] = caption
        return CARD_FIGURES.register(name, caption)(draw)

    return add


def nanum_gothic(name: str = "NanumGothic.ttf") -> Path:
    """A NanumGothic font file (SIL Open Font License) that the pinned
    ``koreanize-matplotlib`` package ships: the figures' and the HTML card's font."""
    import koreanize_matplotlib

    return Path(koreanize_matplotlib.__file__).parent / "fonts" / name


@functools.cache
def _fonts() -> tuple[str, ...]:
    """Register NanumGothic with matplotlib once per process; the font families to use."""
    for path in sorted(nanum_gothic().parent.glob("NanumGothic*.ttf")):
        font_manager.fontManager.addfont(str(path))
    return ("NanumGothic", "DejaVu Sans")


def render_figures(facts: CardFacts) -> dict[str, bytes]:
    """``figures/<name>.png`` -> PNG bytes for every registered figure that applies."""
    out: dict[str, bytes] = {}
    with plt.rc_context({**_STYLE, "font.family": list(_fonts())}):
        for name, draw in CARD_FIGURES.items():
            fig = draw(facts)
            if fig is None:
                continue
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None})
            plt.close(fig)
            out[f"figures/{name}.png"] = buf.getvalue()
    return out


def _bars(ax: plt.Axes, series: dict[str, list[float]], ticks: list[str]) -> None:
    """Grouped bars: one group per tick, one bar per series (its values, tick order)."""
    width = 0.8 / max(1, len(series))
    for k, (name, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(ticks))]
        ax.bar(xs, values, width, label=name, color=SPLIT_COLOURS.get(name.split(" (")[0]))
    many = len(ticks) > 5 or max(map(len, ticks), default=0) > 8
    ax.set_xticks(range(len(ticks)), ticks, rotation=30 if many else 0,
                  ha="right" if many else "center")  # fmt: skip


def _shares(groups: dict[str, dict[str, int]], order: list[str]) -> dict[str, list[float]]:
    """Counts per category as shares of each group, named ``group (total)``."""
    out = {}
    for name, counts in groups.items():
        total = sum(counts.values())
        out[f"{name} ({total})"] = [counts.get(c, 0) / (total or 1) for c in order]
    return out


@figure("labels", "Gold labels per split (share of the split's items) and per source.")
def labels(facts: CardFacts) -> Figure | None:
    lab = facts.get("labels")
    if not lab or not lab["order"]:
        return None
    sources = lab["per_source"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6),
                                      gridspec_kw={"width_ratios": [3, 2]})  # fmt: skip
    _bars(left, _shares(lab["per_split"], lab["order"]), lab["order"])
    left.legend(frameon=False, fontsize=8)
    left.set_ylabel("share of the split's items")
    left.set_title("gold label per split" + (" (score bins)" if lab["numeric"] else ""))
    bottom = [0.0] * len(sources)
    names = list(sources)
    cmap = plt.get_cmap("tab10")
    for k, label in enumerate(lab["order"]):
        shares = [sources[s].get(label, 0) / (sum(sources[s].values()) or 1) for s in names]
        right.barh(names, shares, left=bottom, label=label, color=cmap(k % 10))
        bottom = [b + v for b, v in zip(bottom, shares, strict=True)]
    right.set_xlim(0, 1)
    right.set_xlabel("share of the source's items")
    right.set_title("label mix per source")
    right.legend(frameon=False, fontsize=7, ncol=2, loc="upper center",
                 bbox_to_anchor=(0.5, -0.22))  # fmt: skip
    fig.tight_layout()
    return fig


@figure("scores", "Gold scores before the split rule (all gold items) and after it "
        "(train, and dev and test), as shares of each part.")  # fmt: skip
def scores(facts: CardFacts) -> Figure | None:
    lab = facts.get("labels")
    if not lab or not lab["numeric"]:
        return None
    per = lab["per_split"]
    parts = {"all gold": _sum(per.values()), "train": per.get("train", {}),
             "dev+test": _sum([per.get("dev", {}), per.get("test", {})])}  # fmt: skip
    fig, ax = plt.subplots(figsize=(7, 3.2))
    _bars(ax, _shares(parts, lab["order"]), lab["order"])
    ax.legend(frameon=False, fontsize=8)
    ax.set_xlabel("gold score")
    ax.set_ylabel("share of items")
    ax.set_title("score histogram before and after the split rule")
    fig.tight_layout()
    return fig


def _sum(counts: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


@figure("annotators", "Per-annotator agreement; dashed lines are the screening "
        "thresholds of the agreement rule, where it screens annotators.")  # fmt: skip
def annotators(facts: CardFacts) -> Figure | None:
    g = facts["agreement"]
    screened = g.get("annotators_table")
    table = screened or g.get("annotator_label_agreement")
    if not table:
        return None
    ids = [str(a["annotator_id"]) for a in table]
    if screened:
        series = {"Pearson r vs others": "pearson", "alpha vs others": "alpha"}
        settings = g["settings"]
        lines = {"pearson_min": settings.get("pearson_min"), "alpha_min": settings.get("alpha_min")}
    else:
        series = {"agrees with gold": "gold_agreement", "agrees with others' majority":
                  "others_agreement"}  # fmt: skip
        lines = {}
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(ids) + 2), 3.8))
    _bars(ax, {label: [a.get(key) or 0 for a in table] for label, key in series.items()}, ids)
    for (name, value), style in zip(lines.items(), ("--", ":"), strict=False):
        if value is not None:
            ax.axhline(value, color="black", linestyle=style, linewidth=1,
                       label=f"{name} {value}")  # fmt: skip
    ax.set_ylim(min(0, *(a.get(key) or 0 for a in table for key in series.values())), 1)
    title = f"annotators, rule {g['rule']}"
    if not screened:
        title += " (screens no annotator)"
    if facts["annotation"]["simulated"]:
        title += "\nsimulated annotators: the simulator's noise, not people"
    ax.set_title(title, fontsize=9)
    ax.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25),
              ncol=2)  # fmt: skip
    fig.tight_layout()
    return fig


@figure("funnel", "Rows kept by each step, from the raw documents to the released "
        "rows (log scale; the unit changes where the step says so).")  # fmt: skip
def funnel(facts: CardFacts) -> Figure | None:
    steps = facts.get("funnel")
    if not steps:
        return None
    names = [f"{s['step']} ({s['unit']})" for s in steps][::-1]
    counts = [s["count"] for s in steps][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.32 * len(steps) + 1.2))
    # bars at numeric positions, labelled after: two steps of one name (a stage and a
    # step both called qa) would share one category row and shift every label
    ax.barh(range(len(counts)), counts, color="#4C72B0")
    ax.set_yticks(range(len(counts)), names)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    for y, n in enumerate(counts):
        ax.text(n, y, f" {n:,}", va="center", fontsize=8)
    ax.set_xlabel("rows kept (log scale)")
    ax.set_title("drops per step")
    fig.tight_layout()
    return fig


@figure("cues", "Artifact report: the morphemes most skewed towards one label "
        "(share of their items with that label), in train and in dev and test.")  # fmt: skip
def cues(facts: CardFacts) -> Figure | None:
    parts = {p: (facts["split"].get(p) or {}).get("cues", {}).get("skewed", [])[:12]
             for p in ("train", "dev+test")}  # fmt: skip
    if not any(parts.values()):
        return None
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for ax, (part, rows) in zip(axes, parts.items(), strict=True):
        rows = rows[::-1]
        ax.barh([f"{r['morpheme']}  ({r['label']})" for r in rows], [r["share"] for r in rows],
                color=SPLIT_COLOURS.get(part))  # fmt: skip
        for y, r in enumerate(rows):
            ax.text(r["share"], y, f" {r['count']}", va="center", fontsize=7)
        ax.set_xlim(0, 1.1)
        ax.set_title(f"{part}: skewed morphemes (items)")
    fig.tight_layout()
    return fig
