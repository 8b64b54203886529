"""The dataset families, one package each (``klue``, ``kornlu``, ``kobbq``, ``jglue``,
``jcqa``, ``marc``, ``kobest``, ``reading``): a family's steps, rounds, card section and
recipe section, and its one registration, ``register_task(TaskKind(...))``
(:mod:`pipelines.rebuild.kinds`), in its package's ``__init__.py``. A family imports the
shared steps (``pipelines.rebuild``) and the stages below them, never another family
(the import contracts of ``pyproject.toml``). The registries of ``pipelines.core``
find the families by importing this package's modules (see docs/architecture.md, "How
to add a dataset family").
"""
