"""``benchforge deploy RECIPE``: the rebuild as a deployment on the user's Prefect server
(issue 39).

With ``PREFECT_API_URL`` pointing at a Prefect server of the user's, this creates (or
updates) the deployment ``benchforge-rebuild/<name>`` of the rebuild flow
(``flows/rebuild.py:rebuild_flow``, the code of this checkout) with the recipe, the
output folder and ``deployed=True`` as its parameters, in a process work pool (created
when missing). A worker runs it::

    prefect worker start --pool benchforge
    prefect deployment run benchforge-rebuild/sts-demo

A deployed run publishes its artifacts (``flows.artifacts``), and a round people have not
finished suspends it until ``benchforge webhook serve`` resumes it (``flows.suspend``).
The worker's environment is the deployment's: ``BENCHFORGE_HOME``, ``BENCHFORGE_LS_VENV``,
``LABEL_STUDIO_URL`` and the webhook settings are passed on when set here; a secret
(``LABEL_STUDIO_API_KEY``) is not written into the deployment: the worker must have it
in its own environment.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipelines.core.errors import BenchforgeError

ROOT = Path(__file__).resolve().parents[1]
ENTRYPOINT = "flows/rebuild.py:rebuild_flow"
# passed on to the worker's flow runs when set here (never a token or a password)
PASSED_ON = ("BENCHFORGE_HOME", "BENCHFORGE_CONFIG", "BENCHFORGE_LS_VENV", "BENCHFORGE_LS_PORT",
             "LABEL_STUDIO_URL", "BENCHFORGE_WEBHOOK_URL", "BENCHFORGE_WEBHOOK_PORT",
             "BENCHFORGE_SUSPEND_TIMEOUT", "PREFECT_SERVER_ANALYTICS_ENABLED")  # fmt: skip


class DeployError(BenchforgeError, RuntimeError):
    """A deployment that cannot be made; the message says what is missing."""


def ensure_pool(name: str) -> bool:
    """A process work pool called ``name``; True when it was created here."""
    from prefect import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            pool = client.read_work_pool(name)
        except ObjectNotFound:
            client.create_work_pool(WorkPoolCreate(name=name, type="process"))
            return True
        if pool.type != "process":
            raise DeployError(f"work pool {name!r} is of type {pool.type!r}; benchforge "
                              "deploys to a process pool (--pool NAME for another)")  # fmt: skip
    return False


def deploy(recipe_path: Path, out: Path | None = None, name: str | None = None,
           pool: str = "benchforge", simulate: bool | None = None, seed: int | None = None,
           cron: str | None = None, interval: float | None = None) -> dict:  # fmt: skip
    """Create or update the deployment; returns its id, name, pool and parameters."""
    from pipelines.core.recipe import load_recipe

    if not os.environ.get("PREFECT_API_URL"):
        raise DeployError(
            "PREFECT_API_URL is not set: a deployment lives on a Prefect server of yours "
            "(`prefect server start`, then PREFECT_API_URL=http://127.0.0.1:4200/api)"
        )
    recipe_path = Path(recipe_path).resolve()
    recipe = load_recipe(recipe_path)  # validated whole before anything is created
    out = Path(out or ROOT / "runs" / recipe.name).resolve()
    name = name or recipe.name
    from flows.rebuild import rebuild_flow

    created = ensure_pool(pool)
    parameters = {"recipe_path": str(recipe_path), "out_dir": str(out), "simulate": simulate,
                  "seed": seed, "deployed": True}  # fmt: skip
    env = {k: os.environ[k] for k in PASSED_ON if os.environ.get(k)}
    env["PYTHONPATH"] = str(ROOT)
    flow = rebuild_flow.from_source(source=str(ROOT), entrypoint=ENTRYPOINT)
    deployment_id = flow.deploy(
        name=name, work_pool_name=pool, build=False, push=False, parameters=parameters,
        job_variables={"env": env, "working_dir": str(ROOT)}, cron=cron, interval=interval,
        description=f"benchforge rebuild of {recipe.name} ({recipe_path.name}) into {out}",
        tags=["benchforge", recipe.task], print_next_steps=False,
    )  # fmt: skip
    return {"id": str(deployment_id), "name": f"benchforge-rebuild/{name}", "pool": pool,
            "pool_created": created, "parameters": parameters, "env": sorted(env)}  # fmt: skip
