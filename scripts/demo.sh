#!/usr/bin/env bash
# The main job on the demo data shipped in data/demo: set up (quick when done), then
# ingest recipes/ingest-demo.yaml into runs/ingest-demo and print the stage table.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
exec .venv/bin/benchforge ingest recipes/ingest-demo.yaml --out runs/ingest-demo "$@"
