"""Benchmark: push 10,000 tasks to Label Studio and pull 10,000 x 7 annotations.

Starts benchforge's local Label Studio server in a temporary home (the install is shared
with ``BENCHFORGE_LS_VENV``, default ``~/.local/share/benchforge/labelstudio/venv``) on
a free loopback port, then:

- push: ``annotate.push`` of N STS items (bulk import in chunks, after the idempotency
  look-up), timed; reference: the same items created one task per request
  (``tasks.create``), timed on a sample and scaled to N.
- pull: the annotations are put in place by importing N more tasks with 7 annotations
  each from 7 real accounts (Label Studio's import; posting 70,000 annotations one by one
  would take most of an hour), then ``annotate.pull`` (one export, flattened into the
  long table) is timed; reference: one request per task for its annotations
  (``annotations.list``), timed on a sample and scaled to N.

Targets (issue 5): push 10,000 in 20 s or less; pull 70,000 annotations in 60 s or less.

    .venv/bin/python benchmarks/labelstudio.py [--tasks 10000] [--annotators 7]
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from pipelines.annotation import annotate, ls_server  # noqa: E402
from pipelines.annotation.label_config import parse_label_config  # noqa: E402
from pipelines.annotation.simulate import ensure_annotators  # noqa: E402

SAMPLE = 200


def items(n: int, prefix: str) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "item_id": [f"{prefix}-{i:06d}" for i in range(n)],
            "sentence1": [f"배우들 연기가 정말 좋았어요 {i}" for i in range(n)],
            "sentence2": [f"연기가 훌륭한 영화였다 {i}" for i in range(n)],
            "sim_similarity": rng.integers(0, 6, n).astype(float),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000, help="tasks to push (10,000)")
    parser.add_argument("--annotators", type=int, default=7, help="annotations per task (7)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bf-ls-bench-"))
    ls_server.use_private_home(tmp)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    print(f"starting Label Studio on port {port} ...", flush=True)
    ls_server.up(port)
    try:
        run(args.tasks, args.annotators)
    finally:
        ls_server.down()


def run(n: int, k: int) -> None:
    config = parse_label_config(ROOT / "annotation_configs" / "sts.xml")
    ls = annotate.client()

    # push: reference, one task per request on a sample
    ref = annotate.ensure_project(ls, "bench push reference", config, overlap=k)
    sample = annotate._records(items(SAMPLE, "ref"))
    start = time.perf_counter()
    for record in sample:
        ls.tasks.create(project=ref.id, data=record["data"])
    ref_rate = SAMPLE / (time.perf_counter() - start)
    start = time.perf_counter()
    result = annotate.push(items(n, "push"), config, "bench push", overlap=k, ls=ls)
    push_s = time.perf_counter() - start
    assert result.created == n
    start = time.perf_counter()
    again = annotate.push(items(n, "push"), config, "bench push", overlap=k, ls=ls)
    repush_s = time.perf_counter() - start
    assert again.created == 0
    ref_push_s = n / ref_rate
    print(
        f"push {n:,} tasks: {push_s:.1f} s (target <= 20 s); one task per request: "
        f"{ref_rate:.0f} tasks/s, {ref_push_s:.0f} s est.; ratio {ref_push_s / push_s:.1f}x; "
        f"pushing the same items again: {repush_s:.1f} s, 0 tasks created",
        flush=True,
    )

    # pull: N tasks with k annotations each, put in place through the import
    people = ensure_annotators(ls, k, seed=0)
    proj = annotate.ensure_project(ls, "bench pull", config, overlap=k)
    rng = np.random.default_rng(1)
    records = annotate._records(items(n, "pull"))
    for record in records:
        record["annotations"] = [
            {
                "completed_by": who.user_id,
                "lead_time": float(rng.uniform(5, 60)),
                "result": [
                    {
                        "from_name": "similarity",
                        "to_name": "sentence1",
                        "type": "choices",
                        "value": {"choices": [str(int(rng.integers(0, 6)))]},
                    }
                ],
            }
            for who in people
        ]
    start = time.perf_counter()
    for lo in range(0, n, 1000):
        ls.projects.import_tasks(proj.id, request=records[lo : lo + 1000])
    setup_s = time.perf_counter() - start
    start = time.perf_counter()
    table = annotate.pull("bench pull", ls=ls)
    pull_s = time.perf_counter() - start
    annotations = table["annotation_id"].nunique()
    assert annotations == n * k, annotations
    task_ids = [int(t) for t in table["task_id"].drop_duplicates().head(SAMPLE)]
    start = time.perf_counter()
    fetched = sum(len(ls.annotations.list(id=t)) for t in task_ids)
    ref_rate = fetched / (time.perf_counter() - start)
    ref_pull_s = annotations / ref_rate
    print(
        f"pull {annotations:,} annotations ({len(table):,} rows): {pull_s:.1f} s "
        f"(target <= 60 s); one request per task: {ref_rate:.0f} annotations/s, "
        f"{ref_pull_s:.0f} s est.; ratio {ref_pull_s / pull_s:.1f}x "
        f"(setting up the annotations through the import took {setup_s:.1f} s)",
        flush=True,
    )


if __name__ == "__main__":
    main()
