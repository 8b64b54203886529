"""JGLUE (Kurihara et al. 2022): the ``jsts`` and ``jnli`` task kinds.
:mod:`.release` reads the JGLUE release files, :mod:`.construct` holds the construction
rules of JGLUE 3.2, :mod:`.section` the ``jglue:`` recipe section and :mod:`.steps` the
steps and the registration."""

from pipelines.families.jglue import section, steps  # noqa: F401 - their registrations
