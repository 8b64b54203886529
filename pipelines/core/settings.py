"""Typed settings: a rule's settings are one dataclass, and everything else (the recipe
check, the CLI's mapping, the data card) reads its fields from it.

``rule_settings`` builds the settings of the rule named in ``options["rule"]`` from its
registry (a tagged union on ``rule``): a key that rule does not have is an error naming
the key and the nearest valid name; ``options_model`` checks types with pydantic;
``from_namespace`` maps parsed CLI arguments onto a settings class by field name.

The numeric kinds below (:data:`Finite`, :data:`Share`, :data:`Positive`, ...) carry their
range (issue 51): a settings dataclass annotates a field with one of them and
``options_model`` (hence the recipe's load and ``typed_rules``) refuses a value out of
it, NaN and infinities included, with an error naming the dotted setting. The recipe's
own models use the same kinds (``pipelines.core.recipe``).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from argparse import Namespace
from collections.abc import Callable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, create_model

from pipelines.core.registry import Registry, nearest

# a real number (no NaN, no infinity)
Finite = Annotated[float, Field(strict=True, allow_inf_nan=False)]
# a share or a probability, in [0, 1]
Share = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False, strict=True)]
# shares that make up a whole (question types, styles) sum to 1 within this
SHARE_TOLERANCE = 1e-6
# a rate, a length ratio, a timeout: finite and above 0
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False, strict=True)]
# a spread, a tolerance, a delay: finite and 0 or more
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False, strict=True)]
# a 0-100 score (rapidfuzz's ratio, chrF)
Score100 = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False, strict=True)]
# a count that may be 0 (none of them)
Count = Annotated[int, Field(ge=0, strict=True)]
# a count of one or more (epochs, layers, people, items)
AtLeastOne = Annotated[int, Field(ge=1, strict=True)]
# a random seed (numpy refuses a negative one)
Seed = Annotated[int, Field(ge=0, strict=True)]


def field_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init]


def unknown_keys(cls: type, options: dict, where: str) -> str | None:
    """A message for the first key of ``options`` that ``cls`` has no field for."""
    names = field_names(cls)
    for key in options:
        if key not in names:
            near = nearest(key, names)
            hint = f"; did you mean {near!r}?" if near else ""
            rule = getattr(cls, "rule", "")
            return (
                f"{where}.{key}: unknown setting{hint} (the settings of rule {rule!r}: "
                f"{', '.join(names)})"
            )
    return None


def settings_class(registry: Registry, options: dict, error: Callable[[str], Exception],
                   where: str, default_rule: str) -> type:  # fmt: skip
    """The settings class of the rule ``options["rule"]`` (``default_rule`` when absent)
    from ``registry`` (``.settings``), after checking that it has every key of
    ``options``; ``error(message)`` is raised for an unknown rule or key."""
    try:
        cls = registry.get(options.get("rule", default_rule)).settings
    except KeyError as exc:
        raise error(f"{where}.rule: {exc}") from None
    problem = unknown_keys(cls, options, where)
    if problem:
        raise error(problem)
    return cls


def rule_settings(registry: Registry, options: dict, error: type[Exception], where: str,
                  default_rule: str) -> object:  # fmt: skip
    """The settings instance of the rule ``options["rule"]`` (``default_rule`` when
    absent): the rule's own settings class from ``registry`` (``.settings``)."""
    cls = settings_class(registry, options, error, where, default_rule)
    return cls(**{**options, "rule": options.get("rule", default_rule)})


@functools.cache
def options_model(cls: type) -> type[BaseModel]:
    """A strict pydantic model of a settings dataclass's fields (types, ranges of the
    numeric kinds above, and defaults): no coercion (``"12"`` is not a number, ``true``
    is not a count), an unknown key is an error."""
    hints = typing.get_type_hints(cls, include_extras=True)
    fields: dict[str, tuple] = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            fields[f.name] = (hints[f.name], f.default)
        elif f.default_factory is not dataclasses.MISSING:
            fields[f.name] = (hints[f.name], Field(default_factory=f.default_factory))
        else:
            fields[f.name] = (hints[f.name], ...)
    return create_model(
        f"{cls.__name__}Options", __config__=ConfigDict(extra="forbid", strict=True), **fields
    )


def named(where: str, message: str, cls: type) -> str:
    """``message`` of a settings class's own check under ``where``: ``where.field ...``
    when it starts with one of ``cls``'s field names (the checks' convention), else
    ``where: message``."""
    first = message.split(" ", 1)[0].rstrip(":,").split(".", 1)[0]
    if first in field_names(cls):
        return f"{where}.{message}"
    return f"{where}: {message}"


def from_namespace(cls: type, args: Namespace, convert: dict[str, Callable] | None = None,
                   **fixed: object) -> dict:  # fmt: skip
    """The options for ``cls`` from parsed CLI arguments of the same names (``--min-votes``
    is ``min_votes``); ``convert`` turns a raw argument into the field's value. Fields
    with no argument keep their defaults; ``fixed`` overrides."""
    out = {}
    for name in field_names(cls):
        if name in fixed:
            out[name] = fixed[name]
        elif hasattr(args, name):
            value = getattr(args, name)
            out[name] = (convert or {}).get(name, lambda v: v)(value)
    return out
