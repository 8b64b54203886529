"""A Label Studio round of a rebuild, as a family declares it (``TaskKind.rounds``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.annotation.settings import SimulateSpec


@dataclass
class Round:
    """One Label Studio round of a rebuild: the items it shows, its interface, project,
    overlap, simulated annotators (or None) and the table its pull writes; ``phase``:
    ``pilot`` for a qualification round (simulated accounts answer as in a test,
    ``pipelines.annotation.simulate``), else ``main``."""

    items: Path
    config: Path
    project: str
    overlap: int
    simulate: SimulateSpec | None  # None: real people
    pool: str
    annotations: Path
    timeout: float = 3600.0
    poll: float = 5.0
    phase: str = "main"
    guideline: Path | None = None  # Markdown shown as the project's instructions
    # the recipe's value types pinned per field (``annotation.value_types``): the push,
    # the simulated people and the pull read the interface with them
    value_types: tuple[tuple[str, str], ...] = ()
