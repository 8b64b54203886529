"""KoBBQ (Jin et al. 2024): a bias benchmark adapted to Korean culture.

- :mod:`pipelines.bias.survey`: the survey rules that decide which stereotypes stay and
  which groups are targets and non-targets (KoBBQ 3.2.5);
- :mod:`pipelines.bias.templates`: the template file, slot filling with Korean particle
  agreement (:mod:`pipelines.bias.josa`), expansion into samples, the evaluation set;
- :mod:`pipelines.bias.scoring`: accuracy and diff-bias (KoBBQ 4, after Parrish et al.
  2022) of any model's predictions, template-averaged as the paper does.

The ``kobbq`` task kind (``pipelines.tasks.kobbq``) runs them as a recipe.
"""
