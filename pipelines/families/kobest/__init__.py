"""KoBEST (Kim et al. 2022): five tasks written from scratch by trained annotators and
reviewed by linguists (BoolQ, COPA, WiC, HellaSwag, SentiNeg).

- ``tasks``: the five tasks' fields, labels, release layout and partial inputs;
- ``checks``: the guideline checks run on every written item (registered);
- ``negation``: SentiNeg's negation-suggestion helper and negation test (MeCab);
- ``duplicates``: the near-duplicate review (COPA swaps, rapidfuzz near duplicates);
- ``review``: the linguist review's decisions and versions, and the model-driven
  artifact review on the split step's artifact report;
- ``simulate``: the simulated writers, reviewers and revisers of the demos.
- ``section``: the ``kobest:`` recipe section; ``steps``: the steps and the registration
  of the five task kinds.
"""

from pipelines.families.kobest import section, steps  # noqa: F401 - their registrations
