"""Release guards (issue 51): no release is written with an empty split, a single class
or a degenerate model's labels unless the recipe says so, and the card then says it.

Three guards, each named by what ``export.allow_degenerate`` must list to let it pass:

- ``empty_split``: a release file of a split (``export.files`` of the card's facts) or a
  split the card states holds no record (JSQuAD's valid and test when no question met
  ``reading.min_validator_answers``);
- ``single_class``: the gold labels of a class-labelled release (its task kind's
  evaluation target is a class or an option, :data:`CLASS_TARGETS`; not scores, answers
  or span sets, and not a reading release's question types) take one value over the
  whole release (MARC-ja with ``labels.negative: []``); one split of one class is the
  card's ``split-label-share`` warning, not a refusal (the KLUE-RE demo's small test
  split holds only ``no_relation``);
- ``degenerate_model``: a model whose labels the release carries (the KLUE-NER and
  KLUE-RE taggers: a metrics dict with a ``history`` of epochs and a ``dev`` score)
  whose training loss went NaN or infinite, or whose dev score beats the trivial
  baseline by less than ``export.min_model_gain`` (entity F1: the all-``O`` tagger,
  the majority class, scores 0).

:func:`guard_release` runs on the card's facts after they are computed and before any
release file is written, so a refused release leaves the earlier outputs as they were;
:func:`guard_model` runs right after a tagger is trained, before any of its labels are
used. An allowed problem is returned (the export records it as the card's
``degenerate`` facts, which ``pipelines.export.warnings`` turns into a card warning);
one not allowed raises :class:`ReleaseRefused` naming the split, class or model and the
setting that would allow it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from pipelines.core.errors import BenchforgeError
from pipelines.export.facts import CardFacts

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

GUARDS = ("empty_split", "single_class", "degenerate_model")
# evaluation targets (pipelines.evaluation.spec.Evaluation.target) whose gold is a class
CLASS_TARGETS = ("label", "choice")
# the score a trivial model reaches, per metric: predicting the majority tag (O) finds
# no entity, entity F1 0
TRIVIAL_SCORES = {"entity_f1": 0.0}


class ReleaseRefused(BenchforgeError, ValueError):
    """A release (or a model whose labels it would carry) the guards refuse."""


@dataclass(frozen=True)
class Degenerate:
    """One degenerate part of a release: the guard, what it concerns, and the figures."""

    guard: str  # one of GUARDS
    what: str  # "split valid", "class positive", "model tagger"
    detail: str

    def __str__(self) -> str:
        return f"{self.what}: {self.detail}"


def empty_splits(facts: CardFacts) -> list[Degenerate]:
    """Release files and stated splits with no record."""
    out = []
    for name, n in ((facts.get("export") or {}).get("files") or {}).items():
        if int(n) == 0:
            out.append(Degenerate("empty_split", f"file {name}", "0 records"))
    named = {d.what.removeprefix("file ").rsplit(".", 1)[0] for d in out}
    for split, n in (((facts.get("split") or {}).get("splits")) or {}).items():
        if isinstance(n, int) and n == 0 and split not in named:
            out.append(Degenerate("empty_split", f"split {split}", "0 items"))
    return out


def _class_labelled(facts: CardFacts) -> bool:
    """Whether the card's labels are the release's gold classes: the task kind named by
    ``task_kind`` declares a class or option target (a fact without a known kind: yes)."""
    from pipelines.core.plugins import TASK_KINDS

    name = facts.get("task_kind")
    if not name or name not in TASK_KINDS:
        return True
    evaluation = getattr(TASK_KINDS.get(name), "evaluation", None)
    return evaluation is None or evaluation.target in CLASS_TARGETS


def single_classes(facts: CardFacts) -> list[Degenerate]:
    """A class-labelled release whose labels take one value (see the module docstring)."""
    labels = facts.get("labels") or {}
    per_split = labels.get("per_split") or {}
    if labels.get("numeric") or labels.get("elements") or not per_split:
        return []
    if not _class_labelled(facts):
        return []
    total: dict[str, int] = {}
    for counts in per_split.values():
        for label, n in counts.items():
            total[label] = total.get(label, 0) + int(n)
    seen = {k: n for k, n in total.items() if n > 0}
    if len(seen) == 1 and sum(seen.values()) > 1:
        ((label, n),) = seen.items()
        return [Degenerate("single_class", f"class {label}",
                           f"every one of the release's {n} items is {label!r} "
                           f"(splits: {', '.join(per_split)})")]  # fmt: skip
    return []


def model_problem(history: Iterable[dict], score: float | None, metric: str,
                  min_gain: float) -> str | None:  # fmt: skip
    """Why a trained model is degenerate, or None: a non-finite training loss in
    ``history`` (epochs' ``train_loss``), or a dev ``score`` (of ``metric``) missing,
    not a number, or within ``min_gain`` of the trivial model's (:data:`TRIVIAL_SCORES`)."""
    for row in history:
        loss = row.get("train_loss")
        if loss is not None and not math.isfinite(float(loss)):
            return f"its training loss went {loss} at epoch {row.get('epoch', '?')}"
    trivial = TRIVIAL_SCORES.get(metric, 0.0)
    if score is None or not math.isfinite(float(score)):
        return f"its dev {metric} is {score}"
    if float(score) <= trivial + min_gain:
        return (f"its dev {metric} {score} is not above the trivial model's {trivial} "
                f"by export.min_model_gain {min_gain}")  # fmt: skip
    return None


def guard_baseline(name: str, metric: str, score: float | None, baseline: float | None,
                   recipe: Recipe, where: str) -> dict | None:  # fmt: skip
    """Check a trained model whose trivial model is a rule with its own dev score (a
    parser's right-branching UAS): raise :class:`ReleaseRefused` when ``score`` is not
    a number or not above ``baseline`` by ``export.min_model_gain``, unless the recipe
    allows ``degenerate_model``; return the allowed problem (or None)."""
    allowed, min_gain = _settings(recipe)
    if score is None or not math.isfinite(float(score)):
        why = f"its dev {metric} is {score}"
    elif baseline is not None and float(score) <= float(baseline) + min_gain:
        why = (f"its dev {metric} {score} is not above the trivial rule's {baseline} by "
               f"export.min_model_gain {min_gain}")  # fmt: skip
    else:
        return None
    problem = Degenerate("degenerate_model", f"model {name}", why)
    if "degenerate_model" not in allowed:
        raise _refuse([problem], where)
    return asdict(problem)


def _models(facts: CardFacts) -> Iterator[tuple[str, dict]]:
    """The trained taggers among the facts: a dict with a ``history`` list and a ``dev``
    dict holding ``entity_f1`` (a tagger's metrics), at the top level or one level down
    (KLUE-RE's taggers)."""

    def is_model(v: object) -> bool:
        return (isinstance(v, dict) and isinstance(v.get("history"), list)
                and isinstance(v.get("dev"), dict) and "entity_f1" in v["dev"])  # fmt: skip

    for key, value in facts.items():
        if is_model(value):
            yield key, value
        elif isinstance(value, dict):
            for name, inner in value.items():
                if is_model(inner):
                    yield f"{key}.{name}", inner


def degenerate_models(facts: CardFacts, min_gain: float) -> list[Degenerate]:
    """The degenerate models among the facts (:func:`model_problem` on entity F1)."""
    out = []
    for name, m in _models(facts):
        if m.get("trained") is False and not m.get("history"):
            continue  # a loaded checkpoint with no recorded training
        dev = m.get("dev") or {}
        why = model_problem(m.get("history") or [], dev.get("entity_f1"), "entity_f1",
                            min_gain)  # fmt: skip
        if why:
            out.append(Degenerate("degenerate_model", f"model {name}", why))
    return out


def release_problems(facts: CardFacts, min_gain: float) -> list[Degenerate]:
    """Every degenerate part of the release the facts describe."""
    return [*empty_splits(facts), *single_classes(facts), *degenerate_models(facts, min_gain)]


def _refuse(problems: list[Degenerate], where: str) -> ReleaseRefused:
    kinds = sorted({p.guard for p in problems})
    lines = "; ".join(str(p) for p in problems)
    return ReleaseRefused(
        f"{where}: refused ({lines}). Nothing was written to the release. Fix the recipe, "
        f"or allow it explicitly with `export.allow_degenerate: [{', '.join(kinds)}]` "
        "(the data card then warns of it)"
    )


def _settings(recipe: Recipe) -> tuple[set[str], float]:
    export = getattr(recipe, "export", None)
    allowed = set(getattr(export, "allow_degenerate", None) or [])
    return allowed, float(getattr(export, "min_model_gain", 0.05))


def guard_release(facts: CardFacts, recipe: Recipe, where: str = "release") -> list[dict]:
    """Check the release ``facts`` describe against ``recipe.export``'s
    ``allow_degenerate`` and ``min_model_gain``: raise :class:`ReleaseRefused` for any
    problem not allowed; return the allowed ones as the card's ``degenerate`` facts."""
    allowed, min_gain = _settings(recipe)
    problems = release_problems(facts, min_gain)
    refused = [p for p in problems if p.guard not in allowed]
    if refused:
        raise _refuse(refused, where)
    return [asdict(p) for p in problems]


def guard_model(name: str, metrics: dict, recipe: Recipe, where: str) -> dict | None:
    """Check one trained tagger's ``metrics`` (``history``, ``dev.entity_f1``) right
    after training: raise :class:`ReleaseRefused` when it is degenerate and the recipe
    does not allow ``degenerate_model``; return the allowed problem (or None)."""
    allowed, min_gain = _settings(recipe)
    if not metrics.get("history") and "entity_f1" not in (metrics.get("dev") or {}):
        return None  # a loaded checkpoint that records no training and no dev score
    why = model_problem(metrics.get("history") or [], (metrics.get("dev") or {}).get(
        "entity_f1"), "entity_f1", min_gain)  # fmt: skip
    if why is None:
        return None
    problem = Degenerate("degenerate_model", f"model {name}", why)
    if "degenerate_model" not in allowed:
        raise _refuse([problem], where)
    return asdict(problem)
