"""Every round's guideline and the interface's hotkeys, checked against each other
(issue 55).

A Label Studio round shows its guideline as the project's instructions before labelling.
A round's guideline is the recipe's (``annotation.guideline``, the main round's) or the
interface's own: ``<folder of the XML>/guidelines/<XML stem>.md`` (the shipped
interfaces' are in ``annotation_configs/guidelines/``). A round with neither cannot be
pushed: :func:`round_guideline` raises, naming the interface and the file it looked for.

A guideline file is Markdown with a header of ``key: value`` lines, then a blank line:

- ``lang``: the annotators' language (``ko`` or ``ja``): the body is written in it; an
  ``English`` heading holds a summary for the engineers and stewards;
- the body: definitions, rules and examples, from the paper's own guideline text;
- a hotkey table, the table whose first header cell names the key (``단축키`` /
  ``ショートカット``): one row per option of the interface, ``| `key` | `field` | `code`
  | shown as | meaning |``. The code is what the annotation stores (a Choice's or Label's
  ``alias``, else its ``value``); what the person sees is its ``value``.

Contract of :func:`check_guideline` (run at recipe load by
``pipelines.preflight.check_rebuild_recipe`` and again before every push): the file
exists and says something besides its header and table; every static ``Choice`` and
``Label`` of the interface has a ``hotkey``; no two share one, and none is one of Label
Studio's own keys (:data:`RESERVED_KEYS`); the table lists exactly the interface's
(field, code, key) triples. Any break is one :class:`GuidelineError` naming the file and
every offending option. Options listed from task data (``<Choices value="$options">``)
carry their hotkeys in the data (their builders add them) and are not in the table.

:func:`instruction_html` renders a round's instructions: a line in the annotators'
language saying what kind of round this is (a pilot is a test whose result decides who
takes part; a human-performance round measures people, not the data), then the guideline,
sanitised (``invite.guideline_html``: the text is data).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from pipelines.annotation.annotate import AnnotationError

LANGUAGES = ("ko", "ja")
KEY_HEADERS = ("단축키", "ショートカット")
# Label Studio 1.23's own keys for text tasks (its editor keymap: submit, skip, undo, redo,
# region cycle / delete / duplicate / exit / focus / lock / meta / relation / unselect /
# visibility); an option's hotkey must not shadow one of them
RESERVED_KEYS = frozenset(
    {"ctrl+enter", "ctrl+space", "ctrl+z", "ctrl+shift+z", "alt+.", "backspace",
     "ctrl+backspace", "ctrl+d", "escape", "enter", "alt+l", "alt+m", "alt+r", "u",
     "alt+h", "ctrl+h", "delete"}
)  # fmt: skip
# what kind of round this is, in the annotators' language (phase -> language -> text)
PHASE_NOTES = {
    "pilot": {
        "ko": "이 라운드는 자격 시험(파일럿)입니다. 정답이 정해진 문항으로 이루어져 있고, "
        "결과에 따라 본 작업 참여 여부가 정해집니다. (A pilot: items with known answers; "
        "your result decides whether you take part in the main round.)",
        "ja": "このラウンドは資格テスト（パイロット）です。正解の決まった問題で、結果により"
        "本作業に参加できるかが決まります。(A pilot: items with known answers; your result "
        "decides whether you take part in the main round.)",
    },
    "human": {
        "ko": "이 라운드는 사람의 성능을 재는 라운드입니다. 평가 데이터의 문항에 지침대로 "
        "답해 주세요. 답은 데이터를 바꾸지 않습니다. (Human performance: your answers "
        "measure people against the released labels and do not change the data.)",
        "ja": "このラウンドは人間の性能を測るためのものです。評価データの問題に指針どおりに"
        "答えてください。回答はデータを変更しません。(Human performance: your answers "
        "measure people against the released labels and do not change the data.)",
    },
}


class GuidelineError(AnnotationError):
    """A guideline that is missing, empty, or does not match its interface."""


@dataclass(frozen=True)
class Option:
    """One static option of an interface: its field (control name), stored code, the
    text shown, and its hotkey ("" when it has none)."""

    field: str
    code: str
    shown: str
    key: str


@dataclass(frozen=True)
class Guideline:
    """A parsed guideline: its file, language, body (Markdown, header removed) and the
    hotkey table's (field, code, key) rows."""

    path: Path
    lang: str
    body: str
    keys: frozenset[tuple[str, str, str]]


def default_guideline(config: Path) -> Path:
    """Where an interface's own guideline lives: ``<folder>/guidelines/<stem>.md``."""
    return Path(config).parent / "guidelines" / f"{Path(config).stem}.md"


def interface_options(config: Path | str) -> list[Option]:
    """The static ``Choice`` and ``Label`` options of the interface at ``config``, in
    order (see the module docstring); a dynamic control's options are not listed."""
    root = ET.fromstring(Path(config).read_text(encoding="utf-8"))
    out: list[Option] = []
    for control in root.iter():
        if control.tag not in {"Choices", "Labels"}:
            continue
        name = control.attrib.get("name", "")
        for child in control:
            if child.tag in {"Choice", "Label"}:
                shown = child.attrib.get("value", "")
                code = child.attrib.get("alias") or shown
                out.append(Option(name, code, shown, child.attrib.get("hotkey", "")))
    return out


def check_interface_keys(config: Path | str) -> list[Option]:
    """The interface's options, after checking their hotkeys (present, unique, not one
    of Label Studio's own); raises :class:`GuidelineError` naming ``config``."""
    options = interface_options(config)
    problems = [f"{o.field}={o.code!r} has no hotkey" for o in options if not o.key]
    problems += [f"{o.field}={o.code!r}: hotkey {o.key!r} is one of Label Studio's own"
                 for o in options if o.key.lower() in RESERVED_KEYS]  # fmt: skip
    seen: dict[str, Option] = {}
    for o in options:
        if not o.key:
            continue
        other = seen.setdefault(o.key.lower(), o)
        if other is not o:
            problems.append(
                f"hotkey {o.key!r} is both {other.field}={other.code!r} and {o.field}={o.code!r}"
            )
    if problems:
        raise GuidelineError(f"{config}: " + "; ".join(problems))
    return options


_HEADER_LINE = re.compile(r"([a-z_]+):\s*(.*)")
_CODE = re.compile(r"`([^`]+)`")


def read_guideline(path: Path | str) -> Guideline:
    """The guideline at ``path`` (see the module docstring); raises
    :class:`GuidelineError` naming the file when it is missing, empty, has no ``lang``
    or no English summary."""
    path = Path(path)
    if not path.is_file():
        raise GuidelineError(f"{path}: guideline not found")
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    header: dict[str, str] = {}
    while lines and (found := _HEADER_LINE.fullmatch(lines[0].strip())):
        header[found.group(1)] = found.group(2).strip()
        lines.pop(0)
    body = "\n".join(lines).strip()
    lang = header.get("lang", "")
    if lang not in LANGUAGES:
        raise GuidelineError(
            f"{path}: line 1: the header names the annotators' language (lang: "
            f"{' or '.join(LANGUAGES)}), got {lang or 'nothing'!r}"
        )
    keys = _key_rows(path, body)
    prose = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("|")]
    if len(prose) < 2:
        raise GuidelineError(f"{path}: the guideline is empty (no text besides its table)")
    if not re.search(r"^#+ .*English", body, flags=re.M):
        raise GuidelineError(f"{path}: no English summary (a heading with 'English')")
    return Guideline(path, lang, body, keys)


def _key_rows(path: Path, body: str) -> frozenset[tuple[str, str, str]]:
    rows: set[tuple[str, str, str]] = set()
    in_table = False
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        if not in_table:
            in_table = any(h in cells[0] for h in KEY_HEADERS)
            continue
        if set(stripped) <= set("|-: "):
            continue
        codes = [_CODE.fullmatch(c) for c in cells[:3]]
        if len(cells) < 3 or not all(codes):
            raise GuidelineError(
                f"{path}: a hotkey table row: | `key` | `field` | `code` | ... expected, "
                f"got {stripped!r}"
            )
        key, field, code = (m.group(1) for m in codes if m is not None)
        rows.add((field, code, key))
    return frozenset(rows)


def check_guideline(config: Path | str, guideline: Path | str) -> Guideline:
    """The guideline of the interface ``config``, checked against it (see the module
    docstring); raises :class:`GuidelineError` naming the guideline file."""
    options = check_interface_keys(config)
    parsed = read_guideline(guideline)
    wanted = {(o.field, o.code, o.key) for o in options}
    missing = sorted(wanted - parsed.keys)
    extra = sorted(parsed.keys - wanted)
    name = Path(config).name
    problems = [f"{f}={c!r} (hotkey {k!r}) is in {name} but not in the hotkey table"
                for f, c, k in missing]  # fmt: skip
    problems += [f"the table's {f}={c!r} (hotkey {k!r}) is not an option of {name}"
                 for f, c, k in extra]  # fmt: skip
    if problems:
        raise GuidelineError(f"{guideline}: " + "; ".join(problems))
    return parsed


def round_guideline(config: Path | str, guideline: Path | str | None = None) -> Guideline:
    """The guideline a round with interface ``config`` shows: ``guideline`` (the
    recipe's) or the interface's own (:func:`default_guideline`), read and checked
    against the interface (its file is ``.path``); a round with neither raises
    :class:`GuidelineError`."""
    path = Path(guideline) if guideline else default_guideline(Path(config))
    if not path.is_file():
        raise GuidelineError(
            f"{config}: this interface has no guideline ({path} not found); every round "
            "shows one before labelling (write it there, or set annotation.guideline)"
        )
    return check_guideline(config, path)


def instruction_html(config: Path | str, guideline: Path | str | None = None,
                     phase: str = "main") -> str:  # fmt: skip
    """A round's instructions as sanitised HTML: the phase's note (pilot, human) in the
    guideline's language, then the guideline (see the module docstring)."""
    import markdown
    import nh3

    parsed = round_guideline(config, guideline)
    note = PHASE_NOTES.get(phase, {}).get(parsed.lang)
    text = (f"> **{note}**\n\n" if note else "") + parsed.body
    return nh3.clean(markdown.markdown(text, extensions=["tables"]))
