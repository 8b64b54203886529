"""A deployed rebuild that waits for people without a person rerunning it (issue 39).

On a persistent Prefect server (``benchforge deploy``; the run's ``suspend_waits``), a
round people have not finished does not end the run with exit 3: the flow run is
**suspended** (Prefect's ``suspend_flow_run``: its process exits, the run waits in the
``Suspended`` state, and a worker runs it again once it is resumed; every finished step
is then skipped by its cache, and ``wait`` finds the round done).

What resumes it is :func:`serve` (``benchforge webhook serve``), a small HTTP endpoint on
loopback that Label Studio calls on every annotation created or updated (a project
webhook registered here, :func:`ensure_webhook`). Each call, and a poll every ``poll``
seconds as a fallback (a webhook lost, a server that cannot reach the endpoint), checks
every registered wait: when its round's tasks all have their annotations, the flow run
is resumed and the registration removed. A wait is a JSON file in
``$BENCHFORGE_HOME/waits/`` (:func:`register_wait`): the flow run, the project and the
Label Studio server, nothing secret.

The CLI path is unchanged: ``benchforge rebuild`` still exits 3 and is rerun.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.core.io import write_json

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
SUSPEND_TIMEOUT = 7 * 24 * 3600  # a suspended round may wait a week for its people
ACTIONS = ["ANNOTATION_CREATED", "ANNOTATIONS_CREATED", "ANNOTATION_UPDATED"]


def waits_dir() -> Path:
    """``$BENCHFORGE_HOME/waits`` (benchforge's data folder, ``ls_server.home``)."""
    from pipelines.annotation.ls_server import home

    return home() / "waits"


def webhook_url() -> str:
    """Where Label Studio sends its calls: ``BENCHFORGE_WEBHOOK_URL``, else the loopback
    endpoint on ``BENCHFORGE_WEBHOOK_PORT`` (default 8765)."""
    url = os.environ.get("BENCHFORGE_WEBHOOK_URL")
    if url:
        return url
    return f"http://127.0.0.1:{endpoint_port(None)}/label-studio"


def register_wait(flow_run_id: str, project: str, round_name: str, out: Path) -> Path:
    """Record that ``flow_run_id`` waits for ``project`` (atomically)."""
    path = waits_dir() / f"{flow_run_id}.json"
    write_json({"flow_run_id": flow_run_id, "project": project, "round": round_name,
                "out": str(out), "since": time.time()}, path)  # fmt: skip
    return path


def ensure_webhook(project: str, url: str) -> bool:
    """A Label Studio webhook of ``project`` to ``url`` for annotations created and
    updated (created once; an existing one is kept). False when it could not be made
    (the poll still resumes the run)."""
    from pipelines.annotation import annotate

    try:
        ls = annotate.client()
        proj = annotate.find_project(ls, project)
        if proj is None:
            return False
        for hook in ls.webhooks.list(project=str(proj.id)):
            if hook.url == url:
                return True
        ls.webhooks.create(url=url, project=proj.id, actions=ACTIONS, send_payload=False,
                           send_for_all_actions=False, is_active=True)  # fmt: skip
        return True
    except Exception as exc:  # noqa: BLE001 - the poll is the fallback
        log.warning("could not register a Label Studio webhook for %s: %s", project, exc)
        return False


def suspend_for(project: str, round_name: str, out: Path, finished: int | None) -> None:
    """Register the wait and the webhook, then suspend the current flow run (the process
    ends here; the run continues from the start once resumed)."""
    from prefect.context import FlowRunContext
    from prefect.flow_runs import suspend_flow_run

    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise RuntimeError("a rebuild suspends only inside a deployed flow run")
    flow_run_id = str(context.flow_run.id)
    hooked = ensure_webhook(project, webhook_url())
    register_wait(flow_run_id, project, round_name, out)
    print(f"suspending flow run {flow_run_id}: round {round_name or 'main'} (project "
          f"{project!r}) is not finished; "
          + ("a Label Studio webhook" if hooked else "the poll of `benchforge webhook serve`")
          + " resumes it", flush=True)  # fmt: skip
    timeout = int(os.environ.get("BENCHFORGE_SUSPEND_TIMEOUT", SUSPEND_TIMEOUT))
    suspend_flow_run(timeout=timeout, key=f"{project}-{finished}")


# -- the endpoint ------------------------------------------------------------------------


def _round_done(project: str) -> bool:
    from pipelines.annotation import annotate

    return bool(annotate.wait(project, 0.0, progress=True)["done"])


def _resume(flow_run_id: str) -> bool:
    """Resume the run when it is suspended; False when it is not (yet)."""
    from uuid import UUID

    from prefect import get_client
    from prefect.flow_runs import resume_flow_run

    with get_client(sync_client=True) as client:
        state = client.read_flow_run(UUID(flow_run_id)).state
    if state is None or not state.is_paused():
        return False
    resume_flow_run(UUID(flow_run_id))
    return True


def check_waits(project: str | None = None) -> list[str]:
    """Resume every registered wait (of ``project``, or all) whose round is done; returns
    the flow runs resumed. A wait whose run is not suspended yet stays registered."""
    resumed = []
    for path in sorted(waits_dir().glob("*.json")):
        try:
            wait = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if project is not None and wait["project"] != project:
            continue
        try:
            if not _round_done(wait["project"]):
                continue
            if _resume(wait["flow_run_id"]):
                path.unlink(missing_ok=True)
                resumed.append(wait["flow_run_id"])
                log.info("round of %s done: flow run %s resumed", wait["project"],
                         wait["flow_run_id"])  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - the next call or poll tries again
            log.warning("checking the wait of %s: %s", wait.get("flow_run_id"), exc)
    return resumed


def _project_of(payload: dict) -> str | None:
    project = payload.get("project")
    if isinstance(project, dict):
        return project.get("title")
    return None


class _Handler(BaseHTTPRequestHandler):
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, 1 << 20)) if length else b""
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            payload = {}
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"ok": true}')
        action = payload.get("action", "")
        log.info("Label Studio webhook %s", action or "(no action)")
        with self.lock:
            check_waits(_project_of(payload))

    def do_GET(self) -> None:  # noqa: N802 - a health check
        waits = len(list(waits_dir().glob("*.json")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"ok": True, "waits": waits}).encode())

    def log_message(self, fmt: str, *args: object) -> None:
        log.debug(fmt, *args)


class WebhookError(BenchforgeError):
    """An endpoint that cannot be served (a port out of range or taken); the message
    names the port and what to do."""


def endpoint_port(port: int | None) -> int:
    """The endpoint's port: ``port``, else ``BENCHFORGE_WEBHOOK_PORT``, else 8765; a
    value that is not a port number (1-65535) is a :class:`WebhookError` naming it."""
    where, value = f"--port {port}", port
    if port is None:
        value = os.environ.get("BENCHFORGE_WEBHOOK_PORT")
        where = f"BENCHFORGE_WEBHOOK_PORT={value}"
        if not value:
            return DEFAULT_PORT
    try:
        number = int(value)  # type: ignore[arg-type]
    except ValueError:
        number = 0
    if not 1 <= number <= 65535 or str(value).strip() != str(number):
        raise WebhookError(f"{where}: not a port number (1-65535)")
    return number


def open_endpoint(port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """The endpoint bound to ``host:port`` (not yet serving); a port taken or refused is
    a :class:`WebhookError` naming it, before anything is printed or served."""
    if not 1 <= port <= 65535:
        raise WebhookError(f"port {port}: not a port number (1-65535)")
    try:
        return ThreadingHTTPServer((host, port), _Handler)
    except OSError as exc:
        problem = ("is already in use by another program" if exc.errno == errno.EADDRINUSE
                   else f"cannot be bound ({exc.strerror or exc})")  # fmt: skip
        raise WebhookError(
            f"port {port} on {host} {problem}: stop that program, or choose another port "
            "(--port N, or BENCHFORGE_WEBHOOK_PORT; Label Studio's webhooks must then use "
            "it too: BENCHFORGE_WEBHOOK_URL)"
        ) from None


def _start_without_signals(thread: threading.Thread) -> None:
    """Start ``thread`` (and, through it, every request thread) with SIGINT and SIGTERM
    blocked, so that the kernel delivers them to the main thread. A signal that went to
    the endpoint's thread left the main thread asleep in its wait (an hour, with no
    polling): a SIGTERM then did not stop the command (issue 51, 3 of 12 runs under load).
    """
    import signal

    stops = {signal.SIGINT, signal.SIGTERM}
    if threading.current_thread() is not threading.main_thread():
        thread.start()
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        thread.start()  # a new thread inherits the mask of the thread that starts it
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def serve(port: int = DEFAULT_PORT, poll: float = 30.0, host: str = "127.0.0.1",
          stop: threading.Event | None = None,
          server: ThreadingHTTPServer | None = None) -> None:  # fmt: skip
    """Receive Label Studio's webhooks on ``host:port`` (or on ``server``, an endpoint
    :func:`open_endpoint` bound) and poll every ``poll`` seconds (0: never) until
    ``stop`` is set (or the process is stopped)."""
    server = server or open_endpoint(port, host)
    host, port = server.server_address[:2]
    stop = stop or threading.Event()
    # everything imported before the endpoint runs: a stop (SIGTERM, Ctrl-C) that comes
    # while a module is half imported could leave the process unable to exit
    waits = waits_dir()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    try:
        _start_without_signals(thread)
        log.info("benchforge webhook endpoint on http://%s:%d/label-studio (waits in %s)",
                 host, port, waits)  # fmt: skip
        # short waits: a signal the kernel gives another thread (a library's own native
        # thread) is only acted on when the main thread wakes, so it never sleeps long
        due = time.monotonic() + poll
        while not stop.wait(0.25):
            if poll > 0 and time.monotonic() >= due:
                due = time.monotonic() + poll
                with _Handler.lock:
                    check_waits()
    finally:
        if thread.ident is not None:  # started: serve_forever ends on shutdown
            server.shutdown()
        server.server_close()
