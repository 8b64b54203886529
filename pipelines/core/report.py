"""Readable tables of a run's statistics (stats.json), for the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table


def stage_table(stats: dict) -> Table:
    """Per stage: unit, rows in, kept, dropped, and the count for each reason."""
    table = Table(title="Stages (in = kept + dropped at every stage)", title_justify="left")
    for col, just in (
        ("stage", "left"),
        ("unit", "left"),
        ("in", "right"),
        ("kept", "right"),
        ("dropped", "right"),
        ("dropped by reason", "left"),
    ):
        table.add_column(col, justify=just)
    for s in stats["stages"]:
        reasons = ", ".join(f"{r} {n:,}" for r, n in s["dropped"].items()) or "-"
        table.add_row(
            s["stage"],
            s["unit"] + "s",
            f"{s['in']:,}",
            f"{s['kept']:,}",
            f"{s['dropped_total']:,}",
            reasons,
        )
    return table


def corpus_table(stats: dict) -> Table:
    """Per corpus: documents and sentences that came in and were kept."""
    table = Table(title="Corpora", title_justify="left")
    for col in ("corpus", "documents in", "documents kept", "sentences in", "sentences kept"):
        table.add_column(col, justify="left" if col == "corpus" else "right")
    for name, c in stats["corpora"].items():
        table.add_row(
            name,
            f"{c['documents_in']:,}",
            f"{c['documents_kept']:,}",
            f"{c['sentences_in']:,}",
            f"{c['sentences_kept']:,}",
        )
    return table


def print_report(stats: dict, tasks: dict | None = None, console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=140)
    console.print(corpus_table(stats))
    console.print(stage_table(stats))
    if stats.get("pii_kinds"):
        kinds = ", ".join(f"{k} {n:,}" for k, n in stats["pii_kinds"].items())
        console.print(f"PII kinds found in dropped sentences: {kinds}")
    if tasks:
        line = "; ".join(
            f"{name}: {t['computed']} computed, {t['cached']} cached" for name, t in tasks.items()
        )
        console.print(f"Tasks: {line}")


def pair_table(stats: dict) -> Table:
    """Per corpus and method: what went in, pairs made, drops by reason, scores."""
    table = Table(title="Pairs (KLUE 3.2.1)", title_justify="left")
    for col in ("corpus", "method", "in", "pairs", "dropped by reason", "scores"):
        table.add_column(col, justify="right" if col in ("in", "pairs") else "left")
    for corpus, methods in stats["corpora"].items():
        for method, s in methods.items():
            if method == "gsm":
                shown = f"{s['pool']:,} pool", f"{s['kept']:,} of {s['drawn']:,}"
                reasons = f"leftover {s['leftover']}" if s["leftover"] else "-"
                scores = f"ROUGE first/last quarter {s['score_first_quarter']}/"
                scores += f"{s['score_last_quarter']}"
            elif method == "rtt":
                shown = f"{s['in']:,}", f"{s['kept']:,}"
                reasons = ", ".join(f"{r} {n:,}" for r, n in s["dropped"].items()) or "-"
                scores = (
                    f"translations {s['translations_made']:,} made, "
                    f"{s['translations_cached']:,} from cache"
                )
            else:
                shown = f"{s['groups']:,} groups", f"{s['intent'] + s['topic']:,}"
                reasons = "-"
                scores = f"intent {s['intent']:,}, topic {s['topic']:,}"
            table.add_row(corpus, method, *shown, reasons, scores)
    return table


def print_pair_report(stats: dict, tasks: dict, console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=140)
    console.print(pair_table(stats))
    console.print(
        f"{stats['total_pairs']:,} pairs: "
        + ", ".join(f"{m} {n:,}" for m, n in stats["pairs"].items())
        + f". Tasks: {tasks['computed']} computed, {tasks['cached']} cached"
    )


def print_rebuild_summary(result: dict, console: Console | None = None) -> None:
    """The final table of ``benchforge rebuild``: one row per step."""
    console = console or Console()
    table = Table(title="Rebuild" + (" (simulated annotators)" if result.get("simulated") else ""),
                  title_justify="left")  # fmt: skip
    for col in ("step", "seconds", "result"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    for step, info in result["steps"].items():
        table.add_row(step, f"{info['seconds']:.1f}", info.get("summary", ""))
    console.print(table)
