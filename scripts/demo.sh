#!/usr/bin/env bash
# The main job on the demo data shipped in data/demo: set up (quick when done), then
# ingest recipes/ingest-demo.yaml into runs/ingest-demo and print the stage table, then
# build STS sentence pairs (recipes/sts-pairs-demo.yaml: GSM over NSMC sentences,
# ParaKQC intent/topic pairs) into runs/sts-pairs-demo and print the pair table.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
.venv/bin/benchforge ingest recipes/ingest-demo.yaml --out runs/ingest-demo "$@"
.venv/bin/benchforge pair recipes/sts-pairs-demo.yaml --out runs/sts-pairs-demo
