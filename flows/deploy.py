"""``benchforge deploy RECIPE``: the rebuild as a deployment on the user's Prefect server
(issue 39).

With ``PREFECT_API_URL`` pointing at a Prefect server of the user's, this creates (or
updates) the deployment ``benchforge-rebuild/<name>`` of the rebuild flow
(``flows/rebuild.py:rebuild_flow``, the code of this checkout) with the recipe, the
output folder and ``deployed=True`` as its parameters, in a process work pool (created
when missing). A worker runs it::

    prefect worker start --pool benchforge
    prefect deployment run benchforge-rebuild/sts-demo

A deployed run publishes its artifacts (``flows.prefect_artifacts``), and a round people have not
finished suspends it until ``benchforge webhook serve`` resumes it (``flows.suspend``).
The worker's environment is the deployment's: ``BENCHFORGE_HOME``, ``BENCHFORGE_LS_VENV``,
``LABEL_STUDIO_URL`` and the webhook settings are passed on when set here; a secret
(``LABEL_STUDIO_API_KEY``) is not written into the deployment: the worker must have it
in its own environment.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.core.errors import BenchforgeError

if TYPE_CHECKING:
    from pipelines.core.recipe import Recipe

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
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            pool = client.read_work_pool(name)
        except ObjectNotFound:
            try:
                client.create_work_pool(WorkPoolCreate(name=name, type="process"))
                return True
            except ObjectAlreadyExists:
                # a worker started with ``--pool NAME`` made it between the read and the
                # create (a race the CI hit): the pool is there, so check its type
                pool = client.read_work_pool(name)
        if pool.type != "process":
            raise DeployError(f"work pool {name!r} is of type {pool.type!r}; benchforge "
                              "deploys to a process pool (--pool NAME for another)")  # fmt: skip
    return False


def check_api_url(url: str | None) -> str:
    """``PREFECT_API_URL`` when it is an http(s) address with a host (and a valid port),
    else a :class:`DeployError` saying what it should look like; nothing is contacted."""
    from urllib.parse import urlsplit

    example = "e.g. PREFECT_API_URL=http://127.0.0.1:4200/api after `prefect server start`"
    if not url:
        raise DeployError(f"PREFECT_API_URL is not set: a deployment lives on a Prefect "
                          f"server of yours ({example})")  # fmt: skip
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port out of range or not a number
    except ValueError as exc:
        raise DeployError(f"PREFECT_API_URL={url!r} is not a valid address ({exc}; "
                          f"{example})") from None  # fmt: skip
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DeployError(f"PREFECT_API_URL={url!r} is not an http(s) address of a Prefect "
                          f"server's API ({example})")  # fmt: skip
    return url


def check_schedule(cron: str | None, interval: float | None) -> None:
    """A schedule Prefect accepts (Prefect's own cron and interval rules), checked before
    anything is contacted; a :class:`DeployError` names the option and the problem."""
    import math
    from datetime import timedelta

    from pydantic import ValidationError

    if cron is not None and interval is not None:
        raise DeployError("--cron and --interval: give one schedule, not both")
    if cron is not None:
        from prefect.client.schemas.schedules import CronSchedule

        try:
            CronSchedule(cron=cron)
        except ValidationError:
            raise DeployError(
                f"--cron {cron!r}: not a cron schedule (five fields, minute hour day month "
                "weekday, e.g. '0 3 * * *' for 03:00 every day, or @daily/@hourly)"
            ) from None
    if interval is not None:
        try:
            ok = math.isfinite(interval) and interval > 0 and timedelta(seconds=interval)
        except OverflowError:
            ok = False
        if not ok:
            raise DeployError(f"--interval {interval}: a schedule's interval is a number of "
                              "seconds above 0 (e.g. 86400 for every day)")  # fmt: skip


def check_server(url: str, timeout: float = 5.0) -> None:
    """The Prefect server at ``url`` answers its health check; else one
    :class:`DeployError` naming the address and what to do."""
    import httpx

    health = url.rstrip("/") + "/health"
    try:
        response = httpx.get(health, timeout=timeout)
    except httpx.HTTPError as exc:
        raise DeployError(
            f"the Prefect server at PREFECT_API_URL={url} does not answer "
            f"({type(exc).__name__}: {exc or 'no answer'}): start it (`prefect server start`) "
            "or set PREFECT_API_URL to the API of a running one"
        ) from None
    if response.status_code != 200:
        raise DeployError(
            f"PREFECT_API_URL={url} is not a Prefect server's API ({health} answered HTTP "
            f"{response.status_code}); a server's API ends in /api, e.g. "
            "http://127.0.0.1:4200/api"
        )


def deploy(recipe_path: Path, out: Path | None = None, name: str | None = None,
           pool: str = "benchforge", simulate: bool | None = None, seed: int | None = None,
           cron: str | None = None, interval: float | None = None) -> dict:  # fmt: skip
    """Create or update the deployment; returns its id, name, pool and parameters.
    Everything that can be known without the server (the address, the schedule, the
    recipe) is checked first, then that the server answers, before anything is created;
    a server that stops answering midway is one :class:`DeployError` naming it."""
    from pipelines.core.recipe import load_recipe

    url = check_api_url(os.environ.get("PREFECT_API_URL"))
    check_schedule(cron, interval)
    recipe_path = Path(recipe_path).resolve()
    recipe = load_recipe(recipe_path)  # validated whole before anything is created
    out = Path(out or ROOT / "runs" / recipe.name).resolve()
    name = name or recipe.name
    check_server(url)
    import httpx

    try:
        return _deploy(recipe, recipe_path, out, name, pool, simulate, seed, cron, interval)
    except httpx.HTTPError as exc:  # the server went away midway: one line naming it
        raise DeployError(f"the Prefect server at PREFECT_API_URL={url} failed: "
                          f"{type(exc).__name__}: {exc}") from None  # fmt: skip


def _deploy(recipe: Recipe, recipe_path: Path, out: Path, name: str, pool: str,
            simulate: bool | None, seed: int | None, cron: str | None,
            interval: float | None) -> dict:  # fmt: skip
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
