"""The Label Studio rounds a card's facts record, and who answered each (people or the
simulator): read by the card, its warnings, its summary and the fields' origins."""

from __future__ import annotations

from pipelines.export.facts import CardFacts


def rounds_of(facts: CardFacts) -> list[tuple[str, dict]]:
    """The annotation rounds recorded in the card's facts, the main round last."""
    named = [
        (k, v)
        for k, v in facts.items()
        if isinstance(v, dict) and "overlap" in v and "config" in v and k != "annotation"
    ]
    return [*named, *([("annotation", facts["annotation"])] if "annotation" in facts else [])]


def card_rounds(facts: CardFacts) -> list[tuple[str, dict]]:
    """The card's rounds by name: a family release's own ``rounds`` (its unnamed main
    round named ``annotation``), else the rounds the shared export records
    (:func:`rounds_of`)."""
    rounds = facts.get("rounds")
    if isinstance(rounds, dict) and rounds:
        return [(n or "annotation", r) for n, r in rounds.items() if isinstance(r, dict)]
    return rounds_of(facts)


def round_states(facts: CardFacts) -> list[tuple[str, bool]]:
    """Each Label Studio round of the card (its project's name) and whether simulated
    people answered it (:func:`card_rounds`)."""
    return [(r.get("project") or name, bool(r.get("simulated")))
            for name, r in card_rounds(facts) if "simulated" in r]  # fmt: skip
