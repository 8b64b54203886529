"""Every numeric setting of a recipe is checked at load by type and range (issue 51).

The settings are found, not listed: the whole recipe model (the shell and every
registered section, ``recipe_model()``), the settings class of every registered
agreement and split rule (the ``agreement:`` and ``split:`` sections), and the rules
dataclasses a section holds as a mapping (``rules_field``: ``ner.tagger.settings``,
``jglue.rules``, ...). For each numeric setting, hypothesis draws values out of its
range (below its lower bound, above its upper one, NaN, infinities, a word, ``true``, a
list; -10⁹ where no lower bound is declared and the setting's own check must refuse it),
writes one into a copy of a committed demo recipe at the setting's place and loads it:
the load must raise :class:`RecipeError` whose message names the dotted setting; never
another exception (a traceback) and never silent acceptance.
"""

from __future__ import annotations

import copy
import importlib
import math
import re
import types
import typing
from pathlib import Path

import annotated_types as at
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from pipelines.core import plugins
from pipelines.core.recipe import RecipeError, StageOptions, recipe_model, validate_recipe
from pipelines.core.settings import options_model

ROOT = Path(__file__).resolve().parents[3]
RECIPES = ROOT / "recipes"

# the demo recipe a setting's section is written into (any recipe for the shell's own)
BASES = {
    "annotation": "klue-ner-demo", "agreement": "klue-ner-demo", "ner": "klue-ner-demo",
    "re": "klue-re-demo", "reading": "jsquad-demo", "jcqa": "jcqa-demo",
    "jglue": "jnli-demo", "kobbq": "kobbq-demo", "kobest": "kobest-copa-demo",
    "translation": "korsts-demo", "marc": "marc-ja-demo", "pairing": "sts-demo",
    "split": "nli-demo", "dp": "klue-dp-demo",
}  # fmt: skip
# what an optional model needs when a setting inside it is written and the demo has none
FILLERS = {
    "PilotSpec": {"gold": "gold.jsonl", "rule": {"kind": "min_correct", "threshold": 1}},
    "PassRuleSpec": {"kind": "min_correct", "threshold": 1},
    "ControlsSpec": {"items": "controls.jsonl", "share": 0.1, "min_accuracy": 0.5},
    "WritingSpec": {"config": "annotation_configs/nli_hypothesis.xml"},
    "TranslatorSpec": {"backend": "http", "endpoint": "http://127.0.0.1:9"},
    "RttSpec": {"sentences": 1},
    "MetadataSpec": {"group_field": "group"},
    "DetectorSpec": {"model": "detector"},
    "MtTrainSpec": {"parallel": "parallel.tsv"},
    "MemorySpec": {"path": "memory.tsv"},
    "PremiseRules": {},
}
# the keys a mapping of models or numbers is written under
KEYS = {"detectors": "hate", "question_types": "answerable", "thresholds": "hate",
        "labels": "negative", "corpora": "news", "style_shares": "formal",
        "types": "Age/stereotype"}  # fmt: skip
# what a stage rule needs besides the setting written
RULE_BASE = {"majority": {"min_votes": 1}, "span_vote": {"min_votes": 1}}


class Setting(typing.NamedTuple):
    path: tuple[str, ...]  # the keys from the recipe's top; "0": a list's first element
    kind: type  # int or float
    lower: tuple[float, bool] | None  # (bound, inclusive)
    upper: tuple[float, bool] | None
    steps: tuple[tuple[str, str], ...]  # (key, model name) of each model on the way
    rule: str | None = None  # the agreement/split rule whose settings hold it

    @property
    def dotted(self) -> str:
        return ".".join(self.path)


def _strip(annotation: object) -> tuple[object, list]:
    """The annotation without Optional and Annotated, and the metadata met on the way."""
    meta: list = []
    while True:
        if typing.get_origin(annotation) is typing.Annotated:
            meta += list(annotation.__metadata__)
            annotation = annotation.__origin__
            continue
        args = typing.get_args(annotation)
        union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
        if union and type(None) in args and len(args) == 2:
            annotation = next(a for a in args if a is not type(None))
            continue
        return annotation, meta


def _bounds(meta: list) -> tuple[tuple[float, bool] | None, tuple[float, bool] | None]:
    lower = upper = None
    for m in meta:
        for item in getattr(m, "metadata", [m]):  # a FieldInfo carries its own list
            if isinstance(item, at.Ge):
                lower = (item.ge, True)
            elif isinstance(item, at.Gt):
                lower = (item.gt, False)
            elif isinstance(item, at.Le):
                upper = (item.le, True)
            elif isinstance(item, at.Lt):
                upper = (item.lt, False)
    return lower, upper


def _numeric(annotation: object) -> type | None:
    kinds = set(typing.get_args(annotation)) if typing.get_origin(annotation) in (
        typing.Union, types.UnionType) else {annotation}  # fmt: skip
    kinds = {_strip(k)[0] for k in kinds} - {type(None)}
    if kinds and kinds <= {int, float}:
        return float if float in kinds else int
    return None


def _model(annotation: object) -> type[BaseModel] | None:
    is_model = isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation if is_model else None


def _walk(model: type[BaseModel], path: tuple, steps: tuple, rule: str | None = None):  # noqa: ANN202
    for name, field in model.model_fields.items():
        annotation, meta = _strip(field.annotation)
        meta = meta + list(field.metadata)
        here = (*path, name)
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        origin, args = typing.get_origin(annotation), typing.get_args(annotation)
        if model is StageOptions or name == "base_dir":
            continue
        if "x-settings" in extra:  # a rules dataclass held as a mapping
            module, _, cls = extra["x-settings"].rpartition(".")
            rules = options_model(getattr(importlib.import_module(module), cls))
            yield from _walk(rules, here, (*steps, (name, "mapping")), rule)
        elif _model(annotation):
            if annotation in [s for _, s in steps]:
                continue
            yield from _walk(annotation, here, (*steps, (name, annotation)), rule)
        elif origin is list and _model(args[0]):
            yield from _walk(args[0], (*here, "0"), (*steps, (name, "list"), ("0", args[0])), rule)
        elif origin is dict and _model(args[1]):
            key = KEYS[name]
            yield from _walk(args[1], (*here, key), (*steps, (name, "mapping"), (key, args[1])),
                             rule)  # fmt: skip
        elif _numeric(annotation):
            yield Setting(here, _numeric(annotation), *_bounds(meta), steps, rule)
        elif origin in (dict, list, tuple):
            inner = args[-1] if origin is dict else args[0]
            inner, inner_meta = _strip(inner)
            inner_kind = _numeric(inner)
            if origin is dict and typing.get_origin(inner) is list:  # marc.labels
                inner, inner_meta = _strip(typing.get_args(inner)[0])
                inner_kind = _numeric(inner)
                if inner_kind:
                    yield Setting(
                        (*here, KEYS[name], "0"),
                        inner_kind,
                        *_bounds(inner_meta),
                        (*steps, (name, "mapping"), (KEYS[name], "list")),
                        rule,
                    )
                continue
            if inner_kind and origin is dict:
                yield Setting((*here, KEYS[name]), inner_kind, *_bounds(inner_meta),
                              (*steps, (name, "mapping")), rule)  # fmt: skip
            elif inner_kind:
                yield Setting((*here, "0"), inner_kind, *_bounds(inner_meta),
                              (*steps, (name, "list")), rule)  # fmt: skip


def _settings() -> list[Setting]:
    found = list(_walk(recipe_model(), (), ()))
    from pipelines.agreement.settings import AGREEMENT_RULES
    from pipelines.splits.base import SPLIT_RULES

    for section, registry in (("agreement", AGREEMENT_RULES), ("split", SPLIT_RULES)):
        for name in registry.names():
            model = options_model(registry.get(name).settings)
            found += _walk(model, (section,), ((section, "mapping"),), name)
    return found


SETTINGS = _settings()


def test_the_walk_finds_the_settings_of_every_section_and_rule():
    dotted = {s.dotted for s in SETTINGS}
    for expected in ("ner.tagger.settings.lr", "re.taggers.0.settings.epochs",
                     "kobest.rules.near_duplicate_min", "reading.question_types.answerable",
                     "split.unseen_test_share", "agreement.pearson_min", "marc.scale.0",
                     "card.min_alpha", "jglue.rules.nli_min_votes", "kobbq.rules.target_ratio",
                     "translation.train.lr", "annotation.pilot.rule.threshold"):  # fmt: skip
        assert expected in dotted, expected
    assert len(SETTINGS) > 250


def _bad_values(s: Setting) -> st.SearchStrategy:
    fixed = ["twelve", True, [1]]
    numbers: list[st.SearchStrategy] = []
    if s.kind is float:
        fixed += [math.nan, math.inf, -math.inf]
    else:
        fixed += [1.5]
    if s.lower is None:
        fixed.append(-(10**9))
    else:
        bound, inclusive = s.lower
        if s.kind is int:
            numbers.append(st.integers(max_value=math.ceil(bound) - 1 if inclusive else
                                       math.floor(bound)))  # fmt: skip
        else:
            numbers.append(st.floats(max_value=bound, exclude_max=inclusive, allow_nan=False,
                                     allow_infinity=False, min_value=-1e12))  # fmt: skip
    if s.upper is not None:
        bound, inclusive = s.upper
        fixed.append(10**12)
        if s.kind is int:
            numbers.append(st.integers(min_value=math.floor(bound) + 1 if inclusive else
                                       math.ceil(bound)))  # fmt: skip
        else:
            numbers.append(st.floats(min_value=bound, exclude_min=inclusive, allow_nan=False,
                                     allow_infinity=False, max_value=1e12))  # fmt: skip
    return st.one_of(st.sampled_from(fixed), *numbers)


_DEMOS: dict[str, dict] = {}


def _demo(name: str) -> dict:
    if name not in _DEMOS:
        _DEMOS[name] = yaml.safe_load((RECIPES / f"{name}.yaml").read_text(encoding="utf-8"))
    return copy.deepcopy(_DEMOS[name])


def _recipe_with(s: Setting, value: object) -> dict:
    """A demo recipe with ``value`` written at ``s.path`` (the models on the way made
    from FILLERS when the demo has none)."""
    data = _demo(BASES.get(s.path[0], "tc-demo"))
    if s.rule is not None:
        data[s.path[0]] = {"rule": s.rule, **RULE_BASE.get(s.rule, {})}
    node = data
    for key, kind in s.steps:
        index = int(key) if isinstance(node, list) else key
        if isinstance(node, list):
            if not node:
                node.append(copy.deepcopy(FILLERS.get(getattr(kind, "__name__", ""), {})))
        elif node.get(index) is None:
            name = getattr(kind, "__name__", kind)
            node[index] = [] if kind == "list" else copy.deepcopy(FILLERS.get(name, {}))
        node = node[index]
    last = s.path[-1]
    if isinstance(node, list):
        node[:] = [value, *node[1:]] if node else [value]
    else:
        node[last] = value
    return data


def _named(message: str, s: Setting) -> bool:
    """The message names the setting: its dotted path, a list element as ``.0`` or as
    ``[name]``."""
    parts = [r"(\.0|\[[^\]]+\])" if p == "0" else r"\." + re.escape(p) for p in s.path[1:]]
    return re.search(re.escape(s.path[0]) + "".join(parts), message) is not None


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s.dotted}[{s.rule or ''}]")
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_out_of_range_value_fails_at_load_naming_the_setting(setting, data):
    value = data.draw(_bad_values(setting), label=setting.dotted)
    recipe = _recipe_with(setting, value)
    try:  # the demo's relative paths resolve as the committed recipe's do
        validate_recipe(recipe, "recipe.yaml", RECIPES)
    except RecipeError as exc:
        assert _named(str(exc), setting), f"{setting.dotted} = {value!r}: {exc}"
    else:
        pytest.fail(f"{setting.dotted} = {value!r} was accepted")


def test_every_registered_section_is_walked():
    """Each registered section has numeric settings, and the walk reaches them."""
    walked = {s.path[0] for s in SETTINGS}
    sections = set(plugins.RECIPE_SECTIONS.names())
    assert sections <= walked, sections - walked


def _with(demo: str, path: str, value: object) -> dict:
    data = _demo(demo)
    keys = path.split(".")
    node = data
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    node[keys[-1]] = value
    return data


@pytest.mark.parametrize(
    ("demo", "path", "value", "message"),
    [
        ("sts-demo", "annotation.human.simulate", {"annotators": 2},
         "annotation.human.simulate.annotators 2 < overlap 3"),
        ("klue-ner-demo", "ner.review.reviewers", 3,
         "ner.review.simulate.annotators 2 < reviewers 3"),
        ("kobbq-demo", "kobbq.survey_round.respondents", 99,
         "kobbq.survey_round.simulate.annotators"),
        ("kobest-copa-demo", "kobest.rules.review_votes", 4,
         "kobest.rules.review_votes 4 > kobest.review_round.people 3"),
        ("jcqa-demo", "jcqa.answers_round", {"people": 9},
         "jcqa.simulate.annotators"),
        ("jnli-demo", "jglue.rules.contradiction_min_votes", 11,
         "jglue.rules.contradiction_min_votes 11 > jglue.validation_round.raters 10"),
        ("jnli-demo", "jglue.rules.nli_gold", ["entailment", "maybe"], "jglue.rules.nli_gold"),
        ("sts-demo", "annotation.pilot.rule", {"kind": "min_pearson", "threshold": 2},
         "annotation.pilot.rule.threshold: min_pearson"),
        ("nli-demo", "split.style_shares", {"formal": 0.9, "colloquial": 0.6},
         "split.style_shares: the shares sum to 1.5"),
        ("nli-demo", "split.hypothesis_model", {"lr": math.nan}, "split.hypothesis_model.lr"),
        ("nli-demo", "split.hypothesis_model", {"epochs": 0}, "split.hypothesis_model.epochs"),
        ("klue-ner-demo", "ner.pii_types", [], "ner.pii_types: empty"),
        ("kobbq-demo", "kobbq.rules", {"types": {"Age/x": 3}}, "kobbq.rules.types.Age/x"),
        ("marc-ja-demo", "marc.scale", [1, True], "marc.scale.1"),
    ],
)  # fmt: skip
def test_settings_that_cannot_work_together_fail_at_load(demo, path, value, message):
    """Cross-field rules (issue 51): each error names the settings involved."""
    with pytest.raises(RecipeError) as err:
        validate_recipe(_with(demo, path, value), "recipe.yaml", RECIPES)
    assert message in str(err.value)
