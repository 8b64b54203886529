"""Recipes: one YAML file describes a dataset build (sources, filters, runner).

A recipe that names only its corpora works: every filter setting has a default, the
papers' value where a paper gives one (cited on the field). Paths are relative to the
recipe file. Invalid recipes raise :class:`RecipeError` naming the file and the field.

This module holds the recipe's shell: name, task, language, corpora, runner and export
(the release licence, checked at load), and what every layer's section needs
(:class:`Strict`, :func:`rules_field`, :func:`typed_rules`, :class:`StageOptions`,
:func:`problems`). A section a stage or a family owns (``filters``:
:mod:`pipelines.quality.settings`; ``pairing``: :mod:`pipelines.pairing.settings`;
``annotation``: :mod:`pipelines.annotation.settings`; ``card``:
:mod:`pipelines.export.settings`; ``agreement``, ``split``, ``items``, ``translation``,
``kobbq``, ...) is registered by its owner (:data:`pipelines.core.plugins.RECIPE_SECTIONS`)
with its model, checks and default; :func:`recipe_model` joins the shell and every
registered section into one model, so a recipe is still validated whole at load, before
any work, and the whole schema is one JSON Schema (:func:`recipe_schema`). Core imports
nothing above it.
"""

from __future__ import annotations

import hashlib
import json
import re
import typing
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from pipelines.core import plugins
from pipelines.core.errors import BenchforgeError
from pipelines.core.licenses import Resolution, resolve


class RecipeError(BenchforgeError, ValueError):
    """A recipe that cannot be used; the message names the file and the problem."""


class Strict(BaseModel):
    """A recipe section: unknown keys are errors, and a value of the wrong kind is not
    coerced (issue 32): ``true`` is not a number, a number is not text; no number is
    NaN or infinite (issue 51: ``.inf`` and ``.nan`` are YAML floats)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_coercion(cls, data: object) -> object:
        if not isinstance(data, dict):
            return data
        for name, value in data.items():
            field = cls.model_fields.get(name)
            if field is None or value is None:
                continue
            kinds = _plain_kinds(field.annotation)
            if isinstance(value, bool) and kinds and bool not in kinds and kinds & {int, float}:
                raise ValueError(f"{name}: expected a number, got {value!r}")
            if (isinstance(value, int | float) and not isinstance(value, bool) and kinds
                    and kinds <= {str}):  # fmt: skip
                raise ValueError(f"{name}: expected text, got the number {value!r}; quote it")
        return data


def _plain_kinds(annotation: object) -> set[type]:
    """The plain types (bool, int, float, str) a field's annotation admits; empty when it
    admits anything else (a model, a list, a Literal) and no check applies."""
    import types

    args = typing.get_args(annotation) if isinstance(
        annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union else (
        annotation,)  # fmt: skip
    kinds = {a for a in args if a is not type(None)}
    return kinds if kinds and all(k in (bool, int, float, str) for k in kinds) else set()


class CorpusSpec(Strict):
    """One source corpus and its provenance."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    path: str
    format: Literal["jsonl", "csv", "tsv", "txt"]
    text_field: str | None = None
    id_field: str | None = None
    date_field: str | None = None
    date_format: str | None = None
    license: str  # SPDX identifier (CC0-1.0, CC-BY-SA-4.0, ...): pipelines.core.licenses
    # the attribution line the release carries: title, authors, where it came from
    attribution: str | None = None
    # the licence's text as the corpus ships it: its notice is reproduced in the card of
    # every release built from the corpus (MIT: "The above copyright notice and this
    # permission notice shall be included in all copies or substantial portions")
    license_file: str | None = None
    # text its authors posted on a website (reviews, comments) and a third party scraped:
    # the card says that the licence is the collector's, not the authors'
    scraped_user_text: bool = False
    domain: str
    style: Literal["formal", "colloquial"]
    # who published the text (a news corpus's publisher): KLUE 2.3 skips the toxic-content
    # filter for three publishers by name
    # (pipelines.quality.settings.ClassifierSettings.skip_publishers)
    publisher: str | None = None
    unit: Literal["sentence", "document"] = "sentence"
    language: str | None = None  # a registered language (pipelines.lang); None: the recipe's
    encoding: str = "utf-8"
    has_header: bool = True
    columns: list[str] | None = None
    keep_fields: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)
    # a corpus that may be empty (no documents): otherwise an empty file is an error, so
    # that a truncated export never silently replaces good outputs with empty ones
    allow_empty: bool = False

    @model_validator(mode="after")
    def _check(self) -> CorpusSpec:
        if self.format != "txt" and not self.text_field:
            raise ValueError(f"corpus {self.name!r}: format {self.format} needs text_field")
        if self.date_field and not self.date_format:
            raise ValueError(f"corpus {self.name!r}: date_field needs date_format")
        if self.columns is not None and self.format not in ("csv", "tsv"):
            raise ValueError(f"corpus {self.name!r}: columns only apply to csv and tsv")
        if self.format in ("csv", "tsv") and not self.has_header and not self.columns:
            raise ValueError(f"corpus {self.name!r}: a file without header needs columns")
        return self


class RunnerSettings(Strict):
    """Where the work runs: local Dask workers (all cores by default) or a scheduler."""

    workers: int | None = Field(default=None, ge=1)
    dask_address: str | None = None
    shard_size: int = Field(default=20000, ge=1)


def rules_field(cls: type) -> typing.Any:
    """The field of a section that holds a rules dataclass's settings as a mapping
    (``ner.tagger.settings``, ``jglue.rules``, ...), checked by :func:`typed_rules`; its
    JSON Schema names the class (``x-settings``), which the docs and the range tests
    read."""
    return Field(
        default_factory=dict,
        json_schema_extra={"x-settings": f"{cls.__module__}.{cls.__qualname__}"},
    )


def typed_rules(cls: type, options: dict, where: str) -> object:
    """A family's rules dataclass from a recipe's mapping; an unknown key is an error
    naming ``where`` and the known ones. A YAML list given for a tuple-typed field
    becomes a tuple (the dataclass stays hashable and equal to its defaults). Every
    value is checked against its field's type and range (``options_model``: no
    coercion, no NaN where the field is a :data:`pipelines.core.settings.Finite` kind)
    and then by the class's own checks; each problem raises ``ValueError`` naming
    ``where.setting`` (issue 51: ``epochs: "twelve"`` was a traceback in training)."""
    from dataclasses import fields

    from pipelines.core.settings import named, options_model

    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"{where}: unknown settings {unknown} (known: {sorted(known)})")
    hints = typing.get_type_hints(cls)
    options = {
        name: tuple(value)
        if isinstance(value, list) and typing.get_origin(hints.get(name)) is tuple
        else value
        for name, value in options.items()
    }
    try:
        options_model(cls).model_validate(options)
    except ValidationError as exc:
        raise ValueError(problems(exc, where)) from None
    try:
        return cls(**options)
    except (ValueError, TypeError) as exc:
        raise ValueError(named(where, str(exc), cls)) from None


class StageOptions(Strict):
    """Settings passed through to a stage's settings class (agreement, split); checked
    against that class's fields and types by ``load_recipe`` (``check_stage_options``)."""

    model_config = ConfigDict(extra="allow")
    rule: str


class ExportSpec(Strict):
    """The released dataset (its layout is the task kind's, named by the recipe's
    ``task``)."""

    guid_prefix: str | None = None  # default: "<recipe name>_<split>"
    # the release licence; None: derived from the sources (pipelines.core.licenses)
    license: str | None = None
    # TSV cells a spreadsheet would run as a formula (=, +, -, @) get a leading ' (issue
    # 32, pipelines.core.spreadsheet); JSON Lines and Parquet keep the exact text
    spreadsheet_safe: bool = True
    # issue 51 (pipelines.export.guards): the release is refused when a split is empty,
    # its labels take one class, or a model whose labels it carries is degenerate, unless
    # the guard is listed here; the card then warns of it
    allow_degenerate: list[Literal["empty_split", "single_class", "degenerate_model"]] = []
    # a trained tagger is degenerate when its dev score beats the trivial model's (entity
    # F1 0: the all-O tagger) by less than this (no paper figure; the demos' taggers
    # reach 0.33-0.41)
    min_model_gain: float = Field(0.05, ge=0.0, le=1.0, allow_inf_nan=False)


class Recipe(Strict):
    name: str
    description: str = ""
    # benchforge rebuild: the dataset family (a registered task kind, pipelines.families)
    task: str | None = None
    language: str = "ko"  # a registered language (pipelines.lang): the corpora's default
    corpora: list[CorpusSpec] = Field(min_length=1)
    runner: RunnerSettings = Field(default_factory=RunnerSettings)
    export: ExportSpec = Field(default_factory=ExportSpec)
    # the start of the recipe's Label Studio project names (None: its name): a round's
    # project is "<prefix>-<round>" unless the round names one. A demo whose interfaces
    # change gets a new prefix, so that a server holding the older demo's projects does
    # not refuse the new run (tests/unit/annotation/test_demo_projects.py)
    project_prefix: str | None = None
    # the sections owned by stages and families (filters, pairing, annotation, agreement,
    # split, card, items, translation, kobbq, ...) are added by recipe_model() from
    # plugins.RECIPE_SECTIONS
    # set by load_recipe: the folder relative paths are resolved against
    base_dir: str = ""

    @model_validator(mode="before")
    @classmethod
    def _no_layout(cls, data: object) -> object:
        export = data.get("export") if isinstance(data, dict) else None
        if isinstance(export, dict) and "layout" in export:
            raise ValueError(
                f"export.layout was replaced by the recipe's task (task: {export['layout']}); "
                "the task kind knows its layout"
            )
        return data

    @field_validator("task")
    @classmethod
    def _known_task(cls, name: str | None) -> str | None:
        if name is not None:
            plugins.TASK_KINDS.get(name)  # UnknownName (a KeyError) names the nearest kind
        return name

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str) -> str:
        plugins.LANGUAGES.get(code)
        return code

    def corpus_language(self, corpus: CorpusSpec) -> str:
        """The language of ``corpus``: its own, else the recipe's."""
        return corpus.language or self.language

    @model_validator(mode="after")
    def _licences(self) -> Recipe:
        """The sources' licences allow a release (the recipe's ``export.license`` when
        named): checked at load, before any work."""
        self.release_licence()
        return self

    def release_licence(self) -> Resolution:
        """The release licence (:class:`pipelines.core.licenses.Resolution`)."""
        return resolve({c.name: c.license for c in self.corpora}, self.export.license)

    @model_validator(mode="after")
    def _unique_names(self) -> Recipe:
        names = [c.name for c in self.corpora]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"corpus names must be unique; repeated: {dupes}")
        return self

    def corpus_path(self, corpus: CorpusSpec) -> Path:
        return self.resolve(corpus.path)

    def resolve(self, path: str) -> Path:
        """A path of the recipe, relative to the recipe file."""
        return (Path(self.base_dir) / path).expanduser().resolve()


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, but a key given twice in one mapping is an error (YAML says
    keys are unique; PyYAML would silently keep the last one)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"key {key!r} appears twice (first on line {seen[key] + 1})",
                    key_node.start_mark,
                )  # fmt: skip
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def load_recipe(path: str | Path, overrides: dict | None = None) -> Recipe:
    """Read and validate a recipe; ``overrides`` is merged over the YAML (for the CLI)."""
    path = Path(path)
    if not path.is_file():
        raise RecipeError(f"{path}: recipe file not found")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506
    except yaml.YAMLError as exc:
        raise RecipeError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a mapping with at least 'name' and 'corpora'")
    for key, value in (overrides or {}).items():
        section = data.setdefault(key, {})
        section.update({k: v for k, v in value.items() if v is not None})
    return validate_recipe(data, path, path.parent)


def validate_recipe(data: dict, where: str | Path, base_dir: str | Path) -> Recipe:
    """A recipe from its parsed YAML ``data``, its relative paths resolved against
    ``base_dir``: the whole model, then each section's check against the rest. Every
    problem raises :class:`RecipeError` starting with ``where`` (the file)."""
    data = {**data, "base_dir": str(Path(base_dir).resolve())}
    try:
        recipe = recipe_model().model_validate(data)
    except ValidationError as exc:
        raise RecipeError(f"{where}: {problems(exc)}") from exc
    for name, section in plugins.RECIPE_SECTIONS.items():
        value = getattr(recipe, name)
        if value is not None and section.check is not None:
            try:
                section.check(recipe, value)
            except ValueError as exc:
                raise RecipeError(f"{where}: {exc}") from None
    return recipe


_MODELS: dict[tuple, type[Recipe]] = {}


def recipe_model() -> type[Recipe]:
    """The whole recipe model: the shell (:class:`Recipe`) with every registered section
    (``plugins.RECIPE_SECTIONS``) as a field of the section's model: its ``default``
    when the recipe leaves it out, else None. Its class
    is ``LoadedRecipe`` of this module (found again by that name when a recipe is
    pickled to a Dask worker)."""
    sections = list(plugins.RECIPE_SECTIONS.items())
    key = tuple(sections)  # a section re-registered with another model or default: rebuilt
    if key not in _MODELS:
        clash = sorted(name for name, _ in sections if name in Recipe.model_fields)
        if clash:
            raise RecipeError(f"recipe sections {clash} are fields of the recipe's shell")
        fields = {
            name: (section.model, Field(default_factory=section.default, description=section.doc))
            if section.default is not None
            else (section.model | None, Field(default=None, description=section.doc))
            for name, section in sections
        }
        model = create_model("LoadedRecipe", __base__=Recipe, __module__=__name__, **fields)
        model.__doc__ = Recipe.__doc__
        _MODELS.clear()
        _MODELS[key] = model
    return _MODELS[key]


def __getattr__(name: str) -> object:
    if name == "LoadedRecipe":
        return recipe_model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def recipe_schema() -> dict:
    """The JSON Schema of a whole recipe (the shell and every registered section)."""
    schema = recipe_model().model_json_schema()
    schema["properties"].pop("base_dir", None)  # set by load_recipe, not written
    schema["title"] = "benchforge recipe"
    return schema


def problems(exc: ValidationError, prefix: str = "") -> str:
    """pydantic's errors as ``where: problem; ...`` (``prefix``: the section's name)."""
    out = []
    for err in exc.errors():
        where = ".".join([prefix, *map(str, err["loc"])] if prefix else map(str, err["loc"]))
        msg = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
        if err["type"] == "value_error" and "error" in err.get("ctx", {}):
            msg = str(err["ctx"]["error"])  # a check's own words, without "Value error, "
            if where and _relative(where, msg):
                out.append(f"{where}.{msg}")
                continue
        out.append(f"{where or '(top)'}: {msg}")
    return "; ".join(out)


def _relative(where: str, message: str) -> bool:
    """Whether a model check's ``message`` starts with a setting of the model at
    ``where`` (``min_chars: expected a number``, ``simulate.annotators 2 < overlap 3``),
    so that ``where.message`` names it by its dotted path; a message that starts with
    the section's own name (``ner.tagger.settings.lr: ...``) or with a word is not."""
    match = re.match(r"[A-Za-z_][\w.]*", message)
    if not match:
        return False
    token, rest = match.group(), message[match.end() :]
    if token.split(".")[0] == where.split(".")[0]:
        return False
    return rest.startswith(":") or (rest.startswith(" ") and ("_" in token or "." in token))


def check_stage_options(options: StageOptions, registry: object, section: str) -> None:
    """A stage's section (``agreement``, ``split``) against its rule's settings class, at
    load time (a union tagged by ``rule``, the classes in ``registry``): an unknown key
    (with the nearest valid name), a value of the wrong type or a rule's own check raises
    ``ValueError`` naming the key, before any work (not after the annotation rounds)."""
    from pipelines.core.settings import named, options_model, settings_class

    data = options.model_dump()
    cls = settings_class(registry, data, ValueError, section, data["rule"])
    try:
        options_model(cls).model_validate(data)
    except ValidationError as exc:
        raise ValueError(problems(exc, section)) from None
    try:
        cls(**data)
    except (ValueError, TypeError) as exc:
        raise ValueError(named(section, str(exc), cls)) from None


def settings_key(*parts: object) -> str:
    """A stable hash of settings (pydantic models, dicts, strings) for cache keys."""

    def plain(obj: object) -> object:
        if isinstance(obj, BaseModel):
            return obj.model_dump(mode="json")
        return obj

    blob = json.dumps([plain(p) for p in parts], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]
