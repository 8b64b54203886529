"""``benchforge setup`` (and ``python -m flows.setup``, which ``scripts/bootstrap.sh``
runs): prepare both servers a rebuild starts, once, as part of the set-up (issue 38).

- Label Studio: its own virtual environment (``ls_server.ensure_installed``) and an empty,
  migrated database that every new data folder starts from (a server's first start then
  takes about 6 s instead of 30).
- Prefect: the database of ``PREFECT_HOME`` (benchforge's default:
  ``~/.benchforge/prefect``) migrated (``prefect server database upgrade``); the
  temporary server's first start otherwise spent about 10 s on it inside the main job.

Both run at once (each is mostly another process). Quick when done: a stamp names the
Prefect version whose migrations were applied. Imports nothing heavy, so a bootstrap
that finds everything in place costs a fraction of a second.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

log = logging.getLogger("benchforge")


def prefect_database() -> Path | None:
    """Migrate the Prefect database of ``PREFECT_HOME`` unless done for this Prefect
    version; the stamp's path, or None when ``PREFECT_API_URL`` names a server (nothing
    local to prepare)."""
    from flows.runtime import prepare_environment

    prepare_environment()
    if os.environ.get("PREFECT_API_URL"):
        return None
    home = Path(os.environ["PREFECT_HOME"]).expanduser()
    stamp = home / f".benchforge-migrated-{version('prefect')}"
    if stamp.exists() and (home / "prefect.db").exists():
        return stamp
    log.info("preparing Prefect's database in %s (first time only)", home)
    proc = subprocess.run(
        [sys.executable, "-m", "prefect", "server", "database", "upgrade", "-y"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(
            f"Prefect's database in {home} could not be migrated: "
            f"{(proc.stderr or proc.stdout)[-500:].strip()}"
        )
    stamp.write_text("")
    return stamp


def label_studio() -> Path:
    """Label Studio installed and its empty database prepared; its executable."""
    from pipelines.annotation import ls_server

    return ls_server.ensure_installed()


def detectors() -> dict[str, Path]:
    """The built-in gender-bias and hate detectors of KLUE 2.3's toxic-content filter,
    trained from the shipped Korean HateSpeech data when not yet in the data folder
    (:mod:`pipelines.models.builtin_detectors`); name -> folder."""
    from pipelines.models.builtin_detectors import builtin_detector
    from pipelines.quality.settings import DETECTOR_DEFAULTS

    return {name: builtin_detector(name) for name in DETECTOR_DEFAULTS}


def setup() -> dict[str, str]:
    """The three at once; what was prepared, for the one line printed."""
    with ThreadPoolExecutor(3) as pool:
        ls = pool.submit(label_studio)
        prefect = pool.submit(prefect_database)
        found = pool.submit(detectors)
        exe, stamp, folders = ls.result(), prefect.result(), found.result()
    from pipelines.annotation import ls_server

    done = {
        "label_studio": str(exe.parent.parent),
        "detectors": str(next(iter(folders.values())).parent),
    }
    if ls_server.database_template().exists():
        done["label_studio_database"] = str(ls_server.database_template())
    if stamp is not None:
        done["prefect_database"] = str(stamp.parent / "prefect.db")
    return done


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="[setup] %(message)s")
    if "--label-studio-only" in sys.argv[1:]:
        # scripts/bootstrap.sh, while the main environment installs: needs only the
        # standard library and uv beside this interpreter
        print(f"[setup] ready: Label Studio in {label_studio().parent.parent}", flush=True)
        return 0
    done = setup()
    where = f"Label Studio in {done['label_studio']}"
    if "prefect_database" in done:
        where += f"; Prefect's database {done['prefect_database']}"
    where += f"; the built-in detectors in {done['detectors']}"
    print(f"[setup] ready: {where}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
