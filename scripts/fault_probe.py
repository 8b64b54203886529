"""The fault probe of issue 32: kill -9 a rebuild at every step boundary and check that it
resumes to the same data and the same Label Studio counts as a run never killed.

    .venv/bin/python scripts/fault_probe.py recipes/jsts-demo.yaml [--work DIR] [--kills K]

What it does, in a Label Studio server of its own (a temporary ``BENCHFORGE_HOME`` on a
free loopback port; the install is shared through ``BENCHFORGE_LS_VENV``):

1. a **reference** rebuild, never killed: the SHA-256 of every file under its ``--out``
   and the task and annotation count of every Label Studio project it made;
2. those projects are deleted, so the killed chain starts from nothing, under the same
   project names;
3. the **killed chain**: a rebuild into a fresh folder is killed with SIGKILL (its whole
   process group: CLI, temporary Prefect server, Dask workers) as soon as it prints the
   line of step k (``[k/N] step``: step k has finished, k+1 has not begun), for k = 1,
   2, ... (each kill is a new run of the same command, which resumes what the last one
   left); then one last run finishes it;
4. the comparison: every file of the reference against the chain's (the same names,
   the same bytes), and every project's task and annotation counts.

Files that record the run rather than the data (``VOLATILE``: the result cache, the
lock, the run summary with its timings, the manifests, the card with its export time)
are not compared; in text files the output folder's path is read as ``OUT``, and pulled
annotation tables are compared without the time each annotation was made
(``TIME_COLUMNS``). Exit 0 when everything matched, 1 with the differences otherwise.
The figures go to ``WORK/probe.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# what records the run, not the data (not compared): Prefect's result cache (pickles
# that carry timestamps), the output lock, logs, the run summary (step timings), the
# manifests (hashes of files that name the folder) and the card (its export time; the
# Hub's README.md holds the card too)
VOLATILE = re.compile(
    r"^\.cache/|(^|/)(\.benchforge\.lock|[^/]*\.log|rebuild\.json|(release_)?manifest\.json|"
    r"DATA_CARD\.(md|html)|card\.json|dataset/README\.md)$"
)
# columns of pulled annotation tables that hold when an annotation was made (a killed
# chain's annotations are made anew, in projects made anew): compared without them
TIME_COLUMNS = ["created_at", "updated_at"]
# text files whose bytes may name the output folder (an "input" path): compared with the
# folder written as OUT
TEXT = (".json", ".jsonl", ".md", ".html", ".tsv", ".csv", ".txt")
STEP_LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+)")


def digests(out: Path) -> dict[str, str]:
    """SHA-256 of every file under ``out`` that is data (not ``VOLATILE``), by path."""
    found = {}
    names = sorted({str(out), str(out.resolve())}, key=len, reverse=True)
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_file() and not VOLATILE.search(rel):
            data = path.read_bytes()
            if path.suffix == ".parquet":
                data = _without_times(path, data)
            if path.suffix in TEXT:
                for name in names:
                    data = data.replace(name.encode(), b"OUT")
            found[rel] = hashlib.sha256(data).hexdigest()
    return found


def _without_times(path: Path, data: bytes) -> bytes:
    """A Parquet file's bytes, or, when it has ``TIME_COLUMNS``, its other columns'."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    times = [c for c in TIME_COLUMNS if c in table.column_names]
    if not times:
        return data
    rest = table.drop(times)
    return json.dumps(rest.to_pylist(), sort_keys=True, default=str).encode()


def command(recipe: Path, out: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "flows.cli", "rebuild", str(recipe), "--out", str(out),
            "--port", str(port)]  # fmt: skip


def run_to_end(recipe: Path, out: Path, port: int) -> str:
    proc = subprocess.run(command(recipe, out, port), cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"rebuild failed ({proc.returncode}):\n{proc.stdout[-3000:]}"
                           f"\n{proc.stderr[-3000:]}")  # fmt: skip
    return proc.stdout


def kill_after_step(recipe: Path, out: Path, port: int, k: int) -> tuple[str | None, int]:
    """Run the rebuild and SIGKILL its process group when it prints step ``k``'s line.
    Returns (the step killed after, or None when the run ended first; the step count)."""
    proc = subprocess.Popen(command(recipe, out, port), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    killed, total = None, 0
    assert proc.stdout is not None
    for line in proc.stdout:
        match = STEP_LINE.match(line)
        if match:
            total = int(match.group(2))
            if int(match.group(1)) == k:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = match.group(3)
                break
    proc.wait()
    if killed is None and proc.returncode != 0:
        raise RuntimeError(f"rebuild failed ({proc.returncode}) before step {k}")
    return killed, total


def project_counts(prefix: str) -> dict[str, dict[str, int]]:
    """Tasks and annotations of every project whose title starts with ``prefix``."""
    from pipelines.annotation import annotate

    ls = annotate.client()
    out = {}
    for project in ls.projects.list():
        if project.title.startswith(prefix):
            tasks = annotate.export_tasks(ls, project.id)
            out[project.title] = {
                "tasks": len(tasks),
                "annotations": sum(len(t.get("annotations") or []) for t in tasks),
            }
    return dict(sorted(out.items()))


def delete_projects(prefix: str) -> None:
    from pipelines.annotation import annotate

    ls = annotate.client()
    for project in ls.projects.list():
        if project.title.startswith(prefix):
            ls.projects.delete(id=project.id)


def probe(recipe: Path, work: Path, port: int, prefix: str, kills: int | None) -> dict:
    """The reference run, the killed chain and their comparison (see the module doc)."""
    started = time.monotonic()
    run_to_end(recipe, work / "reference", port)
    reference = digests(work / "reference")
    counts = project_counts(prefix)
    delete_projects(prefix)
    chain = work / "killed"
    steps: list[str] = []
    k = 1
    while kills is None or len(steps) < kills:
        killed, total = kill_after_step(recipe, chain, port, k)
        if killed is None:
            break
        steps.append(killed)
        k += 1
        if k > total:
            break
    run_to_end(recipe, chain, port)
    after = digests(chain)
    differ = sorted(p for p in reference.keys() & after.keys() if reference[p] != after[p])
    result = {
        "recipe": str(recipe),
        "kills": len(steps),
        "killed_after": steps,
        "files_compared": len(reference.keys() & after.keys()),
        "files_identical": len(reference.keys() & after.keys()) - len(differ),
        "files_differ": differ,
        "only_in_reference": sorted(reference.keys() - after.keys()),
        "only_after_kills": sorted(after.keys() - reference.keys()),
        "projects_reference": counts,
        "projects_after_kills": project_counts(prefix),
        "seconds": round(time.monotonic() - started, 1),
    }
    result["ok"] = (not differ and not result["only_in_reference"]
                    and not result["only_after_kills"]
                    and result["projects_reference"] == result["projects_after_kills"])  # fmt: skip
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path, help="a rebuild recipe (recipes/jsts-demo.yaml)")
    parser.add_argument("--work", type=Path, default=None, help="work folder (a new temporary one)")
    parser.add_argument("--kills", type=int, default=None, help="kill after the first K steps "
                        "only (default: after every step)")  # fmt: skip
    args = parser.parse_args()
    from pipelines.annotation import ls_server
    from pipelines.core.ports import free_port
    from pipelines.core.recipe import load_recipe

    work = args.work or Path(tempfile.mkdtemp(prefix="fault-probe-"))
    ls_server.use_private_home(work)
    port = free_port()
    ls_server.up(port)
    try:
        name = load_recipe(args.recipe).name
        result = probe(args.recipe.resolve(), work, port, name, args.kills)
    finally:
        ls_server.down()
    (work / "probe.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
