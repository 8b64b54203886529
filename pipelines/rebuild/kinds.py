"""Task kinds: a dataset family's declaration of its rebuild (one per family package,
``pipelines/families/<family>/``).

A :class:`TaskKind` declares everything ``benchforge rebuild`` needs to know about a
family, so that the orchestrator (``flows/rebuild.py``) runs any of them without knowing
one by name:

- ``steps``: registered step names, in order, or ``plan(recipe)`` when the recipe decides
  them (``pipelines.core.steps.STEPS``; the shared ones live in ``pipelines.rebuild``
  (``agree``, ``split``, ``export``, the people rounds' steps, ``harness``) and in
  ``flows/steps.py`` (``ingest``, ``pairs`` and a Label Studio round's ``push``,
  ``simulate``, ``wait``, ``pull``, which run Prefect subflows and tasks), a family's own
  ones in its package);
- ``rounds``: its Label Studio rounds by name (``""`` is the round whose annotations
  the agreement step reads; ``push-writing`` runs the ``writing`` round); a recipe's
  ``annotation.pilot`` and ``annotation.controls`` add a qualification round and
  control items to any family (:mod:`pipelines.rebuild.people`);
- ``card``: its section of the data card (:class:`CardSection`);
- ``needs``: the recipe sections it needs (annotation, agreement and split by default;
  checked before any work);
- ``shared``: what the shared ``agree`` and ``export`` steps need of a family that uses
  them (:class:`SharedSteps`: its release records, the files its card reads, ...); a
  family that writes its own release leaves it out;
- the hooks run before any step (``plan``, ``simulated``, ``configs``, ``preflight``),
  each optional.

A recipe names its task kind (``task: klue-sts``). Registering a new family is one
``register_task(TaskKind(...))`` in the ``__init__.py`` of its package
``pipelines/families/<family>/`` (see docs/architecture.md, "How to add a dataset
family").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipelines.annotation.rounds import Round
from pipelines.core import plugins
from pipelines.core.registry import Registry
from pipelines.export.card_section import CardSection
from pipelines.rebuild.rounds import PlanEntry

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe
    from pipelines.evaluation.spec import Evaluation

__all__ = ["TASK_KINDS", "ExportInputs", "SharedSteps", "TaskKind", "register_task", "task_kind"]


@dataclass
class ExportInputs:
    """The tables the export step joins into records."""

    gold: pd.DataFrame
    items: pd.DataFrame
    splits: pd.DataFrame
    annotations: pd.DataFrame
    dropped: pd.DataFrame
    prefix: str


@dataclass
class SharedSteps:
    """What the shared ``agree`` and ``export`` steps (:mod:`pipelines.rebuild.agree`,
    :mod:`pipelines.rebuild.export`) need of a family
    that uses them rather than writing its own release (the KLUE kinds): its release
    ``records`` per split, and the files and facts of its card."""

    records: Callable[[ExportInputs], dict[str, list[dict]]]
    ingest_dir: str = "ingest"  # the ingest whose statistics the card reads
    items_step: str = "items"  # the step whose info is the card's "items"
    export_inputs: dict[str, str] = field(default_factory=dict)  # name -> path under OUT
    # facts of the card read from JSON export inputs: fact name -> export input name
    card_json: dict[str, str] = field(default_factory=dict)
    # the agreement the paper reports: {"level": ..., "alpha": ..., "source": ...}, with
    # "after_screening": True when the paper's figure is the kept annotators' (KLUE 3.2.1)
    paper_agreement: dict | None = None
    votes: Callable[[object], Path] | None = None  # the table agree reads, when not pull's
    # the folder (under OUT) of the gold.parquet and dropped.parquet that split and
    # export read: agree's, or a family step's after it (KLUE-NER's reviewed gold)
    gold_dir: str = "agree"


@dataclass
class TaskKind:
    """A dataset family (see the module docstring)."""

    name: str
    title: str
    layout: str
    # its plan: registered step names and Label Studio rounds (LabelStudioRound), in order
    steps: list[PlanEntry]
    rounds: Callable[[object], dict[str, Round]]  # RunContext -> rounds by name
    card: Callable[[dict], CardSection]
    # the recipe sections it needs (dotted), checked before any work
    needs: list[str] = field(default_factory=lambda: ["annotation", "agreement", "split"])
    shared: SharedSteps | None = None  # when it uses the shared agree and export steps
    # whether a recipe's rounds are simulated by default (None: its annotation section's)
    simulated: Callable[[object], bool] | None = None
    # the annotation configs a recipe names, checked before any work: (field, path)
    configs: Callable[[object], list[tuple[str, str]]] | None = None
    # checks of the recipe's own inputs before any work (a bad file fails in seconds)
    preflight: Callable[[object], None] | None = None
    # the steps for a recipe, when they depend on it (KoBEST's review iterations);
    # None: ``steps``
    plan: Callable[[Recipe], list[PlanEntry]] | None = None
    # the Hub's card metadata of its releases (pipelines.export.hf_card): its
    # ``task_categories`` and the paper's ``citation`` (BibTeX)
    hub: dict = field(default_factory=dict)
    # how its release is scored: the paper's metrics over the gold of each split file,
    # and the inputs a baseline model reads (pipelines.evaluation.spec.Evaluation)
    evaluation: Evaluation | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        """The family's rounds, with the qualification round and the control items a
        recipe may add to any family (``pipelines.rebuild.people``)."""
        from pipelines.rebuild.people import with_people_rounds

        family_rounds = self.rounds
        self.rounds = lambda ctx: with_people_rounds(ctx, family_rounds(ctx))

    def steps_for(self, recipe: Recipe | None) -> list[str]:
        """The steps of a rebuild of ``recipe``: the family's plan (its Label Studio
        rounds written out, :func:`pipelines.rebuild.rounds.expand_plan`), with a pilot round and
        control items when the recipe asks for them (``pipelines.rebuild.people``), and
        the release's lm-evaluation-harness task last (``pipelines.rebuild.harness``)."""
        from pipelines.rebuild.people import with_people_steps
        from pipelines.rebuild.rounds import expand_plan

        plan = list(self.plan(recipe)) if self.plan and recipe is not None else list(self.steps)
        plan = with_people_steps(recipe, plan) if recipe is not None else plan
        steps = expand_plan(plan)
        # a release (its steps export) that declares its evaluation ends with its
        # lm-evaluation-harness task
        # (pipelines.rebuild.harness)
        releases = self.evaluation is not None and "export" in steps
        return [*steps, "harness"] if releases else steps

    @property
    def paper_agreement(self) -> dict | None:
        """The agreement its paper reports (:class:`SharedSteps`), if it says."""
        return self.shared.paper_agreement if self.shared else None

    def uses_label_studio(self, recipe: Recipe | None) -> bool:
        """Whether a rebuild of ``recipe`` has a Label Studio round (a ``push`` step, bare
        or ``push-ROUND``): the server is then checked before the first step (issue 32:
        kinds whose rounds sit in their own recipe section ran their first step and then
        retried a dead server for minutes)."""
        return any(step.split("-", 1)[0] == "push" for step in self.steps_for(recipe))


# the registry lives in core (pipelines.core.plugins), which validates a recipe's
# ``task`` without importing the families
TASK_KINDS: Registry[TaskKind] = plugins.TASK_KINDS


def register_task(kind: TaskKind) -> TaskKind:
    """Register ``kind`` under its name (a family module's one registration)."""
    TASK_KINDS.add(kind.name, kind, kind.title)
    return kind


def task_kind(name: str) -> TaskKind:
    return TASK_KINDS.get(name)
