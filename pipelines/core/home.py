"""benchforge's data folder: where the Label Studio environment, the built-in detectors
and the pretrained encoders live (``BENCHFORGE_HOME``, else ``~/.local/share/benchforge``)."""

from __future__ import annotations

import os
from pathlib import Path


def home() -> Path:
    """benchforge's data folder: ``BENCHFORGE_HOME``, else ``~/.local/share/benchforge``."""
    return Path(os.environ.get("BENCHFORGE_HOME") or Path.home() / ".local/share/benchforge")
