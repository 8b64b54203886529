"""KoBBQ (Jin et al. 2024): a bias benchmark adapted to Korean culture.

- :mod:`pipelines.families.kobbq.survey`: the survey rules that decide which stereotypes stay and
  which groups are targets and non-targets (KoBBQ 3.2.5);
- :mod:`pipelines.families.kobbq.templates`: the template file, slot filling with Korean particle
  agreement (:mod:`pipelines.families.kobbq.josa`), expansion into samples, the evaluation set;
- :mod:`pipelines.families.kobbq.scoring`: accuracy and diff-bias (KoBBQ 4, after Parrish et al.
  2022) of any model's predictions, template-averaged as the paper does;
- :mod:`.section`: the ``kobbq:`` recipe section; :mod:`.steps`: the steps and the
  registration of the ``kobbq`` task kind.
"""

from pipelines.families.kobbq import section, steps  # noqa: F401 - their registrations
