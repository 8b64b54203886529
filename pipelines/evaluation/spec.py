"""How a task kind's release is scored: :class:`Evaluation`, declared by each family
on its ``TaskKind.evaluation``.

An evaluation names the release file of each split, the field that identifies an item
(the ``guid`` of a predictions file is that field's value), the gold value of a record,
the metrics the paper reports for it and the inputs a model sees (for the baseline and
the harness export). Families build theirs with :func:`classification`,
:func:`regression`, :func:`multiple_choice`, :func:`tagging` or :func:`extractive_qa`,
or with :class:`Evaluation` itself when a release needs its own reading.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import TextFileError, read_text

DEFAULT_FILES = {"train": "train.jsonl", "dev": "dev.jsonl", "test": "test.jsonl"}
JGLUE_FILES = {"train": "train.json", "dev": "valid.json", "test": "test.json"}
SPLIT_ALIASES = {"valid": "dev", "validation": "dev", "development": "dev"}


class EvaluationError(BenchforgeError, ValueError):
    """A release or predictions that cannot be scored; the message names the file,
    the line and the problem."""


@dataclass(frozen=True)
class Evaluation:
    """How to score one task kind's release (see the module docstring).

    - ``target``: what a prediction is: ``label`` (a class name), ``score`` (a real
      value), ``choice`` (the index of one of ``choices``), ``tags`` (one tag a
      character of ``text``) or ``answer`` (a text; gold: the accepted answers);
    - ``gold(record)``: the gold value of a release record;
    - ``text(record)``: the input a model reads: one text, or a pair (``text_pair``);
    - ``choices(record)``: the options of a multiple-choice item;
    - ``metrics``: registered metric names (:data:`pipelines.evaluation.metrics.METRICS`);
    - ``headline``: the metric a card's baseline row leads with (the first by default);
    - ``source``: where the paper defines them;
    - ``labels``: the classes in a fixed order (AUPRC's columns), else the gold's sorted;
    - ``values``: the values a prediction may take besides ``labels`` (a ``tags``
      target's tags); see :meth:`allowed`.
    """

    target: str
    id_field: str
    gold: Callable[[dict], object]
    text: Callable[[dict], str]
    metrics: tuple[str, ...]
    source: str
    text_pair: Callable[[dict], str] | None = None
    choices: Callable[[dict], list[str]] | None = None
    files: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_FILES))
    labels: tuple[str, ...] = ()
    # the prompt of the harness export: a Jinja template over the record's fields
    prompt: str = ""
    harness_choices: tuple[str, ...] = ()  # verbalised classes ("label" targets)
    # lm-eval metrics beside accuracy where the harness's own task reports them
    # (KoBEST HellaSwag's acc_norm)
    harness_metrics: tuple[str, ...] = ()
    # the prompt and verbalised classes in another language than the paper's, for a
    # recipe in that language (MARC-ja's demo on Korean NSMC reviews): language ->
    # (prompt, harness_choices)
    harness_languages: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # a family's own scoring (KoBBQ's biases): (records, predictions by guid, source) ->
    # metrics; None: the registered metrics over gold and prediction
    scorer: Callable[[list[dict], dict[str, dict], str], dict] | None = None
    # the gold's field (dotted) and a multiple-choice item's option fields, for exports
    # that read the release without benchforge (the harness task's loader)
    gold_field: str = ""
    choice_fields: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    # a rule the baseline must beat, for a target without a constant answer (a parser's
    # right-branching trees): (train records, scored records) -> one prediction each,
    # shown beside the baseline as ``reference_name``
    reference: Callable[[list[dict], list[dict]], list[object]] | None = None
    reference_name: str = ""

    def allowed(self) -> tuple[str, ...]:
        """The values a prediction may take: a ``label`` target's declared classes, a
        ``tags`` target's tags (``values``); empty: not a closed set (a number, an
        option index, an answer text, or a task kind that declares none)."""
        if self.target == "label":
            return self.values or self.labels
        if self.target == "tags":
            return self.values
        return ()

    def ids(self, records: Sequence[dict]) -> list[str]:
        """Each record's guid: its ``id_field``, or, for a layout without ids (KorNLI's,
        KorSTS's), its line in the split's file counted from 0."""
        if not self.id_field:
            return [str(n) for n in range(len(records))]
        return [str(r[self.id_field]) for r in records]

    def classes(self, gold: Sequence[object]) -> list[str]:
        """The classes in a fixed order (AUPRC's columns, a classifier's outputs): the
        declared ``labels``, else the gold values' names sorted."""
        return list(self.labels) or sorted({str(g) for g in gold})

    def split_file(self, dataset: Path, split: str) -> Path:
        """The release file of ``split`` (``dev``, or its alias ``valid``) in ``dataset``."""
        split = SPLIT_ALIASES.get(split, split)
        if split not in self.files:
            raise EvaluationError(
                f"no split {split!r} in this release (splits: {sorted(self.files)})"
            )
        return Path(dataset) / self.files[split]


def field_of(name: str) -> Callable[[dict], object]:
    """A record's field ``name`` (dotted for nested: ``labels.label``)."""
    parts = name.split(".")

    def get(record: dict) -> object:
        value: object = record
        for part in parts:
            value = value[part]  # type: ignore[index]
        return value

    get.__name__ = f"field_{name.replace('.', '_')}"
    return get


def utf8_text(path: Path) -> str:
    """The text of ``path`` as UTF-8 (a byte order mark is not part of the text), read by
    the project's one reader of input files (:func:`pipelines.core.io.read_text`): a byte
    that is not UTF-8 is an :class:`EvaluationError` naming the file and the line."""
    try:
        return read_text(path, "utf-8-sig")
    except TextFileError as exc:
        raise EvaluationError(str(exc)) from None


def read_records(path: Path) -> list[dict]:
    """The records of a release file: JSON Lines (``.jsonl`` or ``.json`` written a
    record a line, as JGLUE's are) or one JSON array; an error names the line."""
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(f"{path}: release file not found")
    text = utf8_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            return list(json.loads(text))
        except json.JSONDecodeError as exc:
            raise EvaluationError(f"{path}: not valid JSON ({exc})") from None
    records = []
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise EvaluationError(f"{path}, line {n}: not valid JSON ({exc.msg})") from None
    return records


def classification(id_field: str, gold: str, text: str, metrics: Sequence[str], source: str,
                   text_pair: str | None = None, **kw: object) -> Evaluation:  # fmt: skip
    """A class per item (``gold``, ``text`` and ``text_pair``: field names)."""
    return Evaluation("label", id_field, field_of(gold), field_of(text), tuple(metrics), source,
                      text_pair=field_of(text_pair) if text_pair else None, gold_field=gold,
                      **kw)  # fmt: skip


def regression(id_field: str, gold: str, text: str, text_pair: str, metrics: Sequence[str],
               source: str, **kw: object) -> Evaluation:  # fmt: skip
    """A real-valued score per pair (similarity)."""
    return Evaluation("score", id_field, field_of(gold), field_of(text), tuple(metrics), source,
                      text_pair=field_of(text_pair), gold_field=gold, **kw)  # fmt: skip


def multiple_choice(id_field: str, gold: str, text: str | Callable[[dict], str],
                    choices: Sequence[str], metrics: Sequence[str], source: str,
                    **kw: object) -> Evaluation:  # fmt: skip
    """The index of the right one of ``choices`` (field names) per item."""
    names = list(choices)
    return Evaluation(
        "choice", id_field, lambda r: int(field_of(gold)(r)),
        text if callable(text) else field_of(text), tuple(metrics), source,
        choices=lambda r: [str(r[c]) for c in names], gold_field=gold,
        choice_fields=tuple(names), **kw,
    )  # fmt: skip


def _answers(record: dict) -> list[str]:
    """The accepted answers of a SQuAD-layout record (none when it is unanswerable)."""
    if record.get("is_impossible"):
        return []
    answers = record.get("answers") or {}
    return [str(t) for t in (answers.get("text") or [])]


def extractive_qa(id_field: str, metrics: Sequence[str], source: str, **kw: object
                  ) -> Evaluation:  # fmt: skip
    """An answer span of ``context`` for ``question`` (SQuAD's layout: ``answers.text``
    the accepted answers, ``is_impossible`` an unanswerable question)."""
    return Evaluation("answer", id_field, _answers, field_of("question"), tuple(metrics), source,
                      text_pair=field_of("context"), **kw)  # fmt: skip


def tagging(id_field: str, metrics: Sequence[str], source: str, tags: str = "ner_tags",
            tokens: str = "tokens", types: Sequence[str] = (), **kw: object
            ) -> Evaluation:  # fmt: skip
    """One BIO tag per character (``tokens``: the characters, ``tags``: the gold); with
    ``types`` (the entity types) a prediction's tags are ``O`` and ``B-``/``I-`` of them."""
    values = ("O", *(f"{b}-{t}" for t in types for b in "BI")) if types else ()
    return Evaluation("tags", id_field, field_of(tags),
                      lambda r: "".join(str(t) for t in r[tokens]), tuple(metrics), source,
                      values=values, **kw)  # fmt: skip
