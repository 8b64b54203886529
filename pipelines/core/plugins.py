"""The registries a recipe is validated against, filled from the layers above core.

``pipelines.core`` stands below every stage and family (the import contracts of
``pyproject.toml``): it never imports them. A recipe still has to be checked whole at
load, before any work: its ``task`` against the registered dataset families, its
``language`` against the language packs, and the sections a stage or a family owns
(``filters``, ``pairing``, ``annotation``, ``agreement``, ``split``, ``items``,
``translation``, ``kobbq``, ...) against the models those layers register here. Each
registry finds its members by package discovery
(:class:`pipelines.core.registry.Registry` imports the named packages on first
lookup), so adding a family, a language or a section is one registration in the new
module, and core does not change.

- :data:`TASK_KINDS`: the dataset families (``pipelines.rebuild.kinds.TaskKind``), by name;
- :data:`LANGUAGES`: the language packs (``pipelines.lang.Language``), by code;
- :data:`VALUE_TYPES`: the annotation value types
  (``pipelines.annotation.values.ValueType``), by name: a recipe may pin one per field;
- :data:`RECIPE_SECTIONS`: the recipe sections owned above core
  (:class:`RecipeSection`): their pydantic model, an optional check against the whole
  recipe (a corpus it names exists, a vote count fits the overlap) and an optional
  default for a recipe that leaves the section out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipelines.core.registry import Registry

TASK_KINDS: Registry[Any] = Registry("task kind", "pipelines.families", "dataset families")
LANGUAGES: Registry[Any] = Registry("language", "pipelines.lang", "text packs")
VALUE_TYPES: Registry[Any] = Registry(
    "value type", ("pipelines.annotation.values", "pipelines.families"), "annotation value types"
)


@dataclass(frozen=True)
class RecipeSection:
    """A recipe section owned by a stage or a family: ``model`` validates it (a strict
    pydantic model, ``pipelines.core.recipe.Strict``); ``check(recipe, section)`` runs
    after the whole recipe validated and raises ``ValueError`` for what needs the rest
    of the recipe (the message is prefixed with the recipe file). ``default`` (a
    factory, usually ``model`` itself) gives the section when a recipe leaves it out
    (``recipe.filters.noise`` always works); without one the section is ``None``."""

    name: str
    model: type
    doc: str
    check: Callable[[Any, Any], None] | None = None
    default: Callable[[], Any] | None = None


RECIPE_SECTIONS: Registry[RecipeSection] = Registry(
    "recipe section",
    (
        "pipelines.agreement.settings",
        "pipelines.annotation.settings",
        "pipelines.export.settings",
        "pipelines.pairing.settings",
        "pipelines.quality.settings",
        "pipelines.splits.base",
        "pipelines.families",
    ),
    "recipe sections owned by stages and families",
)


def register_section(section: RecipeSection) -> RecipeSection:
    """Register ``section`` under its name (the owning module's one registration)."""
    RECIPE_SECTIONS.add(section.name, section, section.doc)
    return section
