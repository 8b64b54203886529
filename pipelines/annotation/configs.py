"""The shipped Label Studio interfaces (``annotation_configs/*.xml``), registered by file
name: a new interface is one XML file there. A recipe names its interface by path
(``annotation.config``); ``benchforge list`` shows what ships."""

from __future__ import annotations

import re
from pathlib import Path

from pipelines.core.registry import Registry

CONFIG_DIR = Path(__file__).resolve().parents[2] / "annotation_configs"
ANNOTATION_CONFIGS: Registry[Path] = Registry("annotation config", None, "annotation_configs/*.xml")


def _first_comment(path: Path) -> str:
    found = re.search(r"<!--(.*?)-->", path.read_text(encoding="utf-8"), flags=re.S)
    return " ".join(found.group(1).split()) if found else ""


for _path in sorted(CONFIG_DIR.glob("*.xml")):
    ANNOTATION_CONFIGS.add(_path.name, _path, _first_comment(_path))
