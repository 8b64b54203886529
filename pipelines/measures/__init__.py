"""Agreement measures, below both the agreement rules (``pipelines.agreement``) and the
annotation value types (``pipelines.annotation.values``) that report them:
:mod:`~pipelines.measures.reliability` (Krippendorff's alpha, Fleiss' kappa) and
:mod:`~pipelines.measures.set_agreement` (pairwise F1 over set-valued answers)."""
