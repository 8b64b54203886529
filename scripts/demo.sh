#!/usr/bin/env bash
# The main job on the demo data shipped in data/demo: set up (quick when done), then
# rebuild a KLUE-STS-style dataset end to end (recipes/sts-demo.yaml): ingest and filter
# NSMC and ParaKQC, build sentence pairs, send 300 of them to a local Label Studio server
# (installed on first use) for 7 simulated annotators each, pull the annotations, apply
# KLUE-STS's agreement rule and split rule, and write the dataset and its data card to
# runs/sts-demo/dataset, then fine-tune the baseline whose figures the card shows
# (benchforge baseline). The Label Studio server is stopped at the end if this run
# started it. Run it again: every finished step is skipped.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
.venv/bin/benchforge rebuild recipes/sts-demo.yaml --out runs/sts-demo --stop-server "$@"
# how hard the dataset is: a small encoder fine-tuned on train, scored on dev and test with
# KLUE-STS's metrics, its figures written into the card (skipped when already done)
.venv/bin/benchforge baseline runs/sts-demo
