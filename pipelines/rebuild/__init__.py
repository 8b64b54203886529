"""The rebuild's shared steps, between the dataset families and the shared stages.

A dataset family (``pipelines.families.<family>``) declares a task kind
(:mod:`pipelines.rebuild.kinds`); this package holds what every family's rebuild shares:
the task-kind plan and its registration, Label Studio rounds, the people rounds (pilot,
control items, review, human performance), the agreement, split and export steps and the
release's lm-evaluation-harness task. It knows no family by name and nothing of Prefect:
``flows/`` runs its steps, the families build on it, and it builds on the stages below
(annotation, agreement, splits, export, ...).
"""
