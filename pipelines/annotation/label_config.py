"""What a Label Studio labeling config asks for: the task data fields it reads and the
controls (fields) annotators fill, parsed from the XML, so that items can be checked
before they are pushed and annotations simulated and flattened per field."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.core.errors import BenchforgeError

CONTROL_TAGS = {"Choices", "TextArea", "Labels", "Rating", "Number", "Relations", "Taxonomy"}
REPORT_FIELDS = {"report", "unable"}  # controls whose values are report flags


class LabelConfigError(BenchforgeError, ValueError):
    """A labeling config that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Control:
    """One field an annotator fills: ``name`` (the result's from_name), its tag, the
    object it points at, its choices or labels in config order, and whether it is
    required and single-valued."""

    name: str
    tag: str
    to_name: str
    options: tuple[str, ...] = ()
    required: bool = False
    single: bool = True
    # the task data field that lists the options (Label Studio's dynamic choices,
    # ``<Choices value="$options">``: a list of {"value": ...}); "" for static options
    dynamic: str = ""
    # the tag's other attributes (maxRating, min, max, ...), as (name, value) pairs
    attrs: tuple[tuple[str, str], ...] = ()

    def attr(self, name: str, default: str = "") -> str:
        """The control's XML attribute ``name`` (``default`` when absent)."""
        return dict(self.attrs).get(name, default)

    def options_for(self, data: dict) -> tuple[str, ...]:
        """The options of this control for one task (its dynamic ones when it has them)."""
        if not self.dynamic:
            return self.options
        listed = data.get(self.dynamic) or []
        return tuple(str(o.get("alias") or o["value"]) if isinstance(o, dict) else str(o)
                     for o in listed)  # fmt: skip


OPTION_KEYS = tuple("1234567890")


def dynamic_options(codes: list[str], shown: dict[str, str] | None = None) -> list[dict]:
    """The task-data list of a dynamic choice control (``<Choices value="$options">``):
    one ``{"value": what the person reads, "alias": the stored code, "hotkey": ...}`` per
    code, in order; the first ten get the keys 1-9 and 0 (issue 55: answers by
    keyboard), later ones "" (none). ``shown``: code -> text in the annotators'
    language (None: the code itself). Every option has the three keys, so that a
    Parquet column of them reads back as it was written."""
    return [{"value": (shown or {}).get(code, code), "alias": code,
             "hotkey": OPTION_KEYS[i] if i < len(OPTION_KEYS) else ""}
            for i, code in enumerate(codes)]  # fmt: skip


@dataclass(frozen=True)
class LabelConfig:
    """A parsed config: the XML text, its data fields (``$name``) and its controls."""

    xml: str
    data_fields: tuple[str, ...]
    controls: tuple[Control, ...] = field(default_factory=tuple)
    # value types a recipe pinned per field (``annotation.value_types``), as pairs
    value_types: tuple[tuple[str, str], ...] = ()

    def pinned(self, name: str) -> str | None:
        """The value type the recipe pinned for field ``name`` (None: the control's own)."""
        return dict(self.value_types).get(name)

    def control(self, name: str) -> Control:
        for ctl in self.controls:
            if ctl.name == name:
                return ctl
        raise KeyError(name)

    def answer_control(self, name: str | None = None) -> Control | None:
        """The answer control ``name``, or with no name the only answer control; None
        when there is no such control or several to choose from."""
        controls = self.answer_controls
        chosen = [c for c in controls if c.name == name] if name else list(controls)
        return chosen[0] if len(chosen) == 1 else None

    @property
    def answer_controls(self) -> tuple[Control, ...]:
        """Controls that carry the annotation itself (not report flags)."""
        return tuple(c for c in self.controls if c.name not in REPORT_FIELDS)

    @property
    def report_controls(self) -> tuple[Control, ...]:
        return tuple(c for c in self.controls if c.name in REPORT_FIELDS)


def _leaf_paths(node: ET.Element, separator: str, prefix: tuple[str, ...] = ()) -> list[str]:
    """The leaf ``<Choice>`` paths under a ``<Taxonomy>`` node, joined by ``separator``."""
    out = []
    for child in node:
        if child.tag != "Choice":
            continue
        path = (*prefix, child.attrib.get("alias") or child.attrib["value"])
        below = _leaf_paths(child, separator, path)
        out.extend(below or [separator.join(path)])
    return out


def parse_label_config(source: str | Path) -> LabelConfig:
    """Parse a config from a file path or XML text."""
    path = Path(source) if not str(source).lstrip().startswith("<") else None
    where = str(path) if path else "label config"
    try:
        xml = path.read_text(encoding="utf-8") if path else str(source)
    except OSError as exc:
        raise LabelConfigError(f"{where}: cannot read ({exc.strerror})") from None
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise LabelConfigError(f"{where}: not valid XML ({exc})") from None
    fields: list[str] = []
    controls: list[Control] = []
    for el in root.iter():
        value = el.attrib.get("value", "")
        if el.tag not in {"Choice", "Label", "Header"} and value.startswith("$"):
            name = value[1:]
            if name not in fields:
                fields.append(name)
        if el.tag in CONTROL_TAGS:
            options = tuple(  # what a result stores: the alias, else the shown value
                child.attrib.get("alias") or child.attrib["value"]
                for child in el
                if child.tag in {"Choice", "Label", "Relation"}
            )
            if el.tag == "Taxonomy":  # its leaves, each as its path joined by the separator
                options = tuple(_leaf_paths(el, el.attrib.get("pathSeparator", " / ")))
            controls.append(
                Control(
                    # <Relations> has no name in Label Studio; its results carry none
                    name=el.attrib.get("name", "relations" if el.tag == "Relations" else ""),
                    tag=el.tag,
                    to_name=el.attrib.get("toName", ""),
                    options=options,
                    required=el.attrib.get("required", "false") == "true",
                    single=el.tag != "Labels" and el.attrib.get("choice", "single") != "multiple",
                    dynamic=value[1:] if el.tag == "Choices" and value.startswith("$") else "",
                    attrs=tuple(sorted(el.attrib.items())),
                )
            )
    # $vars inside Header text, e.g. "$subject → $object"
    for el in root.iter("Header"):
        for name in re.findall(r"\$(\w+)", el.attrib.get("value", "")):
            if name not in fields:
                fields.append(name)
    if not controls:
        raise LabelConfigError(f"{where}: no control tag ({', '.join(sorted(CONTROL_TAGS))})")
    return LabelConfig(xml=xml, data_fields=tuple(fields), controls=tuple(controls))
