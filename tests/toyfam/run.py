"""Rebuild a recipe with the toy family registered: ``run.py RECIPE OUT [PORT]`` (PORT:
the local Label Studio server's, for a recipe with the toy family's round)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, holding toyfam
import toyfam  # noqa: E402,F401 - the family registers itself
from flows.rebuild import run_rebuild  # noqa: E402
from flows.runtime import prefect_server  # noqa: E402

with prefect_server():
    port = int(sys.argv[3]) if len(sys.argv) > 3 else None
    result = run_rebuild(Path(sys.argv[1]), Path(sys.argv[2]), port=port)
print("RESULT " + json.dumps(result["steps"]))
