"""One check for a rebuild that must stop at load (issue 51): exit 2, one error line
holding every needle, no traceback, no step run and no Label Studio server started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def refused_rebuild(tmp_path: Path, recipe: Path, *needles: str) -> str:
    """Rebuild ``recipe`` into ``tmp_path/out`` and assert it was refused before any work;
    returns the error. Label Studio's address is a dead loopback port: a check that came
    too late (after the server check) fails in seconds with another message instead of
    starting a server."""
    home, out = tmp_path / "home", tmp_path / "out"
    env = {**os.environ, "BENCHFORGE_HOME": str(home), "BENCHFORGE_CONFIG": str(home / "config"),
           "LABEL_STUDIO_URL": "http://127.0.0.1:9", "PREFECT_HOME": str(tmp_path / "prefect"),
           "PREFECT_API_URL": ""}  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "flows.cli", "rebuild", str(recipe), "--out",
                           str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr  # one line
    assert not out.exists()  # no step ran
    assert not (home / "labelstudio" / "server.json").exists()  # no server was started
    return proc.stderr
