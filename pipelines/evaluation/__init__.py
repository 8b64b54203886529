"""Scoring models on a built dataset: the papers' metrics (:mod:`.metrics`), how each
task kind's release is read for scoring (:mod:`.spec`, declared by the family on its
``TaskKind.evaluation``), ``benchforge evaluate`` (:mod:`.evaluate`), the fine-tuned
baseline of ``benchforge baseline`` (:mod:`.baseline`) and the lm-evaluation-harness task
export (:mod:`.harness`).

This layer sits above the shared stages (it uses the models and the export's card) and
below the families, which declare their evaluation with :class:`.spec.Evaluation`.
"""
