"""KorNLI and KorSTS (Ham et al. 2020): datasets translated from English, the ``korsts``
and ``kornli`` task kinds. :mod:`.section` is the ``translation:`` recipe section,
:mod:`.steps` the steps and the registration."""

from pipelines.families.kornlu import section, steps  # noqa: F401 - their registrations
