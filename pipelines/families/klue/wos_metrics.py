"""KLUE-WoS's two metrics (KLUE 1.1: "the joint goal accuracy which measures whether all
the slots were correctly predicted" and the slot F1, reported beside it because the
first "often fails to distinguish similarly performing" systems), over user turns.

- **Joint goal accuracy**: the share of user turns whose predicted cumulative state is
  exactly the gold one (as sets of ``domain-slot-value``; an empty state matches an
  empty prediction).
- **Slot micro F1**: over every user turn's state items, true positives an item in
  both, false positives one only predicted, false negatives one only in gold;
  ``2TP / (2TP + FP + FN)`` (1.0 when both sides are empty everywhere).

Per domain (KLUE 1.1: "multiple domains in order to facilitate finer-grain analysis"):
the same figures over the turns of dialogues that list the domain, each state cut to
the domain's slots. Figures are x 100, rounded to 2 places.
"""

from __future__ import annotations

from collections.abc import Sequence

State = Sequence[str]


def joint_goal_accuracy(gold: Sequence[State], pred: Sequence[State]) -> float | None:
    """The share (x 100) of turns whose predicted state is the gold one."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold turns against {len(pred)} predicted")
    if not gold:
        return None
    right = sum(set(g) == set(p) for g, p in zip(gold, pred, strict=True))
    return round(100 * right / len(gold), 2)


def slot_micro_f1(gold: Sequence[State], pred: Sequence[State]) -> float | None:
    """Micro F1 (x 100) of the state items over every turn."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold turns against {len(pred)} predicted")
    if not gold:
        return None
    tp = fp = fn = 0
    for g, p in zip(gold, pred, strict=True):
        g, p = set(g), set(p)
        tp, fp, fn = tp + len(g & p), fp + len(p - g), fn + len(g - p)
    if tp + fp + fn == 0:
        return 100.0
    return round(100 * 2 * tp / (2 * tp + fp + fn), 2)


def only_domain(state: State, domain: str) -> list[str]:
    return [s for s in state if s.split("-", 1)[0] == domain]


def per_domain(
    gold: Sequence[State], pred: Sequence[State], domains: Sequence[Sequence[str]]
) -> dict[str, dict[str, float | None]]:
    """Per domain: ``jga`` and ``slot_f1`` over the turns whose dialogue lists it
    (``domains[i]``: turn ``i``'s dialogue's domains), states cut to its slots."""
    names = sorted({d for ds in domains for d in ds})
    out = {}
    for name in names:
        at = [i for i, ds in enumerate(domains) if name in ds]
        g = [only_domain(gold[i], name) for i in at]
        p = [only_domain(pred[i], name) for i in at]
        out[name] = {"turns": len(at), "jga": joint_goal_accuracy(g, p),
                     "slot_f1": slot_micro_f1(g, p)}  # fmt: skip
    return out
