"""A local Label Studio server that benchforge installs, starts and stops itself.

Label Studio's pins clash with Prefect's, so the server lives in a virtual environment
of its own (``BENCHFORGE_HOME/labelstudio/venv``, installed from
``scripts/labelstudio-constraints.txt`` the first time). ``up`` starts it on 127.0.0.1
with an admin account and a legacy API token created without any prompt, and waits until
it answers; its data folder (whose database holds every account's token) is private to
the owner (folders 0700, files 0600, the server started with umask 077); the account's
password and token are generated once and kept in a credentials file with mode 0600
outside the repository (``BENCHFORGE_CONFIG``, default ``~/.config/benchforge``).
Secrets reach the server through its environment, never its command line, and are never
printed or logged. ``status`` says whether it runs and where;
``down`` stops the process it started.

One Label Studio per data folder, always (issue 32). ``up`` holds a lock on the server
folder while it starts one, so two ``up`` never race; it looks for a live Label Studio
process serving the data folder (by its command line) before starting another, and reuses
it; and it reads the port the process it started really listens on from the process,
instead of assuming the port it asked for. ``down`` stops every server of the folder. Export
snapshots that a killed run left behind are swept by ``up``.

The port benchforge chooses is the one Label Studio binds (issue 51): Label Studio's own
move to the next port when its port is taken is switched off (its ``--debug`` flag does
that and nothing else in 1.23), and a port that another program takes between the check
and the bind is replaced by a fresh free one (``--port`` given: an error naming it).

The managed server keeps to the machine (issue 51): its check of the package index for a
newer version, its error reports to Sentry (server and browser) and its usage analytics
are switched off, and every other outgoing HTTP request it would make (the tips its
frontend asks for come from GitHub) goes to a proxy address on loopback where nothing
answers, so annotation data never leaves the machine. ``BENCHFORGE_LS_ONLINE=1`` lifts
the proxy (for cloud storage added in Label Studio's own settings); the version check
and the reports stay off.

A user who runs Label Studio already sets ``LABEL_STUDIO_URL`` and
``LABEL_STUDIO_API_KEY``; ``connection`` then returns those and nothing is started.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipelines.core.errors import BenchforgeError
from pipelines.core.home import home
from pipelines.core.ports import free_port, port_free

log = logging.getLogger(__name__)

LS_VERSION = "1.23.2"
ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "scripts" / "labelstudio-constraints.txt"
ADMIN = "admin@benchforge.local"
DEFAULT_PORT = 8080


class LabelStudioError(BenchforgeError, RuntimeError):
    """The server cannot be installed, started, reached or authenticated against."""


@dataclass(frozen=True)
class Connection:
    """Where Label Studio answers and the API key to use (never printed: see __repr__)."""

    url: str
    api_key: str
    managed: bool  # started by benchforge (False: LABEL_STUDIO_URL from the environment)

    def __repr__(self) -> str:
        return f"Connection(url={self.url!r}, api_key=<hidden>, managed={self.managed})"


def config_dir() -> Path:
    """Where the credentials file lives: ``BENCHFORGE_CONFIG``, else ``~/.config/benchforge``."""
    return Path(os.environ.get("BENCHFORGE_CONFIG") or Path.home() / ".config/benchforge")


def _server_dir() -> Path:
    return home() / "labelstudio"


def _state_path() -> Path:
    return _server_dir() / "server.json"


def credentials_path() -> Path:
    return config_dir() / "labelstudio-credentials.json"


def venv_dir() -> Path:
    """Label Studio's virtual environment: ``BENCHFORGE_LS_VENV``, else under ``home()``
    (tests share one install across their temporary homes this way)."""
    return Path(os.environ.get("BENCHFORGE_LS_VENV") or _server_dir() / "venv")


def ensure_installed() -> Path:
    """Label Studio's own virtual environment, created and installed when missing or when
    its pinned set changed; returns the ``label-studio`` executable."""
    venv = venv_dir()
    exe = venv / "bin" / "label-studio"
    stamp = venv / ".benchforge-stamp"
    want = f"{LS_VERSION} {_constraints_digest()}"
    template = database_template(venv)
    if installed(venv, want) and (template.exists() or _template_failed(template)):
        return exe
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (parallel test workers)
        if installed(venv, want):
            make_database_template(exe)  # an install made before the template existed
            return exe
        if stamp.exists():
            log.warning(
                "Label Studio's virtual environment %s is unusable (its programs are not "
                "executable, or its pins changed): installing it again",
                venv,
            )
            shutil.rmtree(venv)
        log.info("installing Label Studio %s into %s (first time only)", LS_VERSION, venv)
        if not (venv / "bin" / "python").exists():
            _run([sys.executable, "-m", "venv", str(venv)], "creating its virtual environment")
        _run([*_installer(venv), "-c", str(CONSTRAINTS), f"label-studio=={LS_VERSION}"],
             "installing label-studio")  # fmt: skip
        stamp.write_text(want)
        make_database_template(exe)
    return exe


TEMPLATE = "benchforge-empty-database"  # under the venv: a migrated database, no account


def database_template(venv: Path | None = None) -> Path:
    """Where the install keeps an empty, migrated Label Studio database
    (``label_studio.sqlite3``: Django's tables, no account, no secret), which a new data
    folder starts from."""
    return (venv or venv_dir()) / TEMPLATE / "label_studio.sqlite3"


def make_database_template(exe: Path) -> Path | None:
    """Migrate an empty database once per install (issue 38): a server's first start in
    a new data folder spent about 25 s of two cores applying Label Studio's ~500
    migrations; started from this copy it answers in about 6 s. ``label-studio version``
    applies the migrations and exits (Label Studio's ``server.main`` migrates before any
    command); nothing else is kept: the data folder's ``.env`` (its Django SECRET_KEY)
    is made at the server's own first start, and its admin account by ``up``. Two
    databases migrated this way differ only in timestamps (checked). None when the venv
    cannot be written (a shared install): the server then migrates as before."""
    target = database_template(exe.parent.parent)
    if target.exists() or _template_failed(target):
        return target if target.exists() else None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    import tempfile

    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        env = {**os.environ, "DJANGO_DB": "sqlite", **offline_env()}
        for name in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY", "LABEL_STUDIO_USERNAME",
                     "LABEL_STUDIO_PASSWORD", "LABEL_STUDIO_USER_TOKEN", "DATABASE_NAME",
                     "LABEL_STUDIO_BASE_DATA_DIR"):  # fmt: skip
            env.pop(name, None)
        log.info("preparing Label Studio's empty database (first time only)")
        proc = subprocess.run(
            [str(exe), "version", "--data-dir", work], env=env, cwd=work,
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )  # fmt: skip
        made = Path(work) / "label_studio.sqlite3"
        if proc.returncode != 0 or not made.exists():
            why = (proc.stderr or proc.stdout)[-300:].strip()
            log.warning("could not prepare Label Studio's empty database (%s); each new data "
                        "folder migrates its own", why)  # fmt: skip
            _mark_failed(target, why)
            return None
        os.chmod(made, 0o600)
        os.replace(made, target)
    return target


# what a full disk makes Label Studio's migrations print: a passing condition, not a
# failure of this install, so the migration is tried again at the next set-up
_NO_SPACE = ("No space left on device", "database or disk is full", "readonly database")


def _mark_failed(target: Path, why: str) -> None:
    """Remember that this install cannot migrate its empty database, so that it is not
    tried again at every start; not when the disk was full (tried again next time), nor
    when the install's folder is gone or cannot be written (nothing to remember in)."""
    if any(sign in why for sign in _NO_SPACE):
        return
    with contextlib.suppress(OSError):
        (target.parent / "failed").write_text(why + "\n")


def _template_failed(target: Path) -> bool:
    return (target.parent / "failed").exists()


def _seed_database(data_dir: Path) -> None:
    """A new data folder gets a copy of the install's migrated empty database."""
    db = data_dir / "label_studio.sqlite3"
    template = database_template()
    if db.exists() or not template.exists():
        return
    part = db.with_name(db.name + ".part")
    shutil.copyfile(template, part)
    os.chmod(part, 0o600)
    os.replace(part, db)


def _installer(venv: Path) -> list[str]:
    """The install command for ``venv``: uv when scripts/bootstrap.sh put it beside this
    interpreter (the same pins, about 6x faster on two cores), else the venv's pip."""
    uv = Path(sys.executable).parent / "uv"
    if uv.is_file() and os.access(uv, os.X_OK):
        # bytecode compiled at install, as pip does (nothing writes it later where
        # PYTHONDONTWRITEBYTECODE is set, and every server start would compile Django)
        return [str(uv), "pip", "install", "--quiet", "--compile-bytecode", "--python",
                str(venv / "bin" / "python")]  # fmt: skip
    return [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
            "--disable-pip-version-check"]  # fmt: skip


def installed(venv: Path, want: str) -> bool:
    """The install in ``venv`` is complete (its stamp says ``want``: the pinned version and
    constraints) and usable: ``label-studio`` and ``python`` exist and are executable. A
    copy that lost its modes (seen in CI: a home folder whose files all became 0600) is
    not usable and is installed again."""
    stamp = venv / ".benchforge-stamp"
    if not (stamp.exists() and stamp.read_text() == want):
        return False
    return all(os.access(venv / "bin" / name, os.X_OK) for name in ("label-studio", "python"))


def _constraints_digest() -> str:
    import hashlib

    return hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest()[:16]


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise LabelStudioError(f"{what} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")


def credentials() -> dict[str, str]:
    """The admin account (username, password, token), created on first use and stored
    with mode 0600 in a folder with mode 0700."""
    path = credentials_path()
    if path.exists():
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise LabelStudioError(
                f"{path}: credentials file is readable by others (mode {mode:o}); "
                "run `chmod 600` on it"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {k: str(data[k]) for k in ("username", "password", "token")}
        except (ValueError, KeyError) as exc:
            raise LabelStudioError(f"{path}: not a benchforge credentials file ({exc})") from exc
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {
        "username": ADMIN,
        "password": secrets.token_urlsafe(18),
        "token": secrets.token_hex(20),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)
    return data


def _read_state() -> dict | None:
    try:
        return json.loads(_state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _answers(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def server_pids(data_dir: Path | None = None) -> list[int]:
    """The pids of every live Label Studio process started on ``data_dir`` (default: the
    managed one), found by their command line, whoever started them."""
    import psutil

    want = str(data_dir or _server_dir() / "data")
    pids = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if any("label-studio" in part for part in cmd[:2]) and "start" in cmd:
            for i, part in enumerate(cmd[:-1]):
                if part == "--data-dir" and cmd[i + 1] == want:
                    pids.append(int(proc.info["pid"]))
    return sorted(pids)


def listening_ports(pid: int) -> set[int]:
    """The TCP ports on which ``pid`` or one of its children listens (read from the
    process, never assumed)."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return set()
    ports = set()
    for proc in procs:
        try:
            for conn in proc.net_connections(kind="tcp"):
                if conn.status == psutil.CONN_LISTEN:
                    ports.add(int(conn.laddr.port))
        except psutil.Error:
            continue
    return ports


def _with_real_port(state: dict) -> dict:
    """``state`` with the port its process really listens on (Label Studio may have
    moved from the one it was asked for)."""
    ports = listening_ports(int(state["pid"]))
    if ports and state.get("port") not in ports:
        port = min(ports)
        log.warning(
            "Label Studio (pid %s) listens on port %d, not on port %s it was started with "
            "(that port was taken by another program after the check); using port %d",
            state["pid"], port, state.get("port"), port,
        )  # fmt: skip
        state = {**state, "port": port, "url": f"http://127.0.0.1:{port}"}
        _write_state(state)
    return state


def _write_state(state: dict) -> None:
    write_private(_state_path(), state)


def write_private(path: Path, data: object, indent: int | None = None) -> None:
    """``data`` as JSON at ``path``, readable by the owner only (file 0600, a new folder
    0700), written atomically: the state file, invited annotators' passwords."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False, indent=indent)
    os.replace(tmp, path)


def status() -> dict:
    """Whether the benchforge-managed server runs, and where; ``LABEL_STUDIO_URL`` when
    set (an external server) is reported instead."""
    external = os.environ.get("LABEL_STUDIO_URL")
    if external:
        return {"running": _answers(external.rstrip("/")), "url": external, "managed": False}
    state = _read_state()
    if not state or not _alive(int(state["pid"])):
        pids = server_pids()  # a server of this folder that the state file lost
        if not pids:
            return {"running": False, "url": None, "managed": True}
        ports = listening_ports(pids[0])
        if not ports:
            return {"running": False, "url": None, "managed": True, "pid": pids[0]}
        server = _server_dir()
        state = {"pid": pids[0], "port": min(ports), "url": f"http://127.0.0.1:{min(ports)}",
                 "data_dir": str(server / "data"), "log": str(server / "server.log"),
                 "started_at": None}  # fmt: skip
        _write_state(state)
    state = _with_real_port(state)
    running = _alive(int(state["pid"])) and _answers(state["url"])
    return {
        "running": running,
        "url": state["url"],
        "port": state.get("port"),
        "pid": state["pid"],
        "data_dir": state["data_dir"],
        "log": state["log"],
        "managed": True,
    }


def configured_port() -> int:
    """The port the managed server prefers: ``BENCHFORGE_LS_PORT``, else 8080."""
    value = os.environ.get("BENCHFORGE_LS_PORT")
    if not value:
        return DEFAULT_PORT
    try:
        port = int(value)
    except ValueError:
        raise LabelStudioError(f"BENCHFORGE_LS_PORT={value!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise LabelStudioError(f"BENCHFORGE_LS_PORT={port} is not a port number (1-65535)")
    return port


def choose_port(port: int | None = None) -> int:
    """``port`` when given (it must be free: an error names it otherwise); else the
    configured port when free, else a free port that the operating system chooses."""
    if port is not None:
        if not port_free(port):
            raise LabelStudioError(
                f"port {port} on 127.0.0.1 is taken by another program; choose another with "
                "--port, or leave --port out and a free one is chosen"
            )
        return port
    wanted = configured_port()
    if port_free(wanted):
        return wanted
    chosen = free_port()
    log.warning(
        "port %d on 127.0.0.1 is taken by another program; Label Studio starts on port %d "
        "instead (remembered in %s)",
        wanted,
        chosen,
        _state_path(),
    )
    return chosen


def up(port: int | None = None, timeout: float = 300.0) -> dict:
    """Install if needed, start the server on 127.0.0.1 and wait until it answers and the
    stored token authenticates. ``port`` forces a port; by default the configured one
    (``configured_port``) when free, else a free one (``choose_port``); the port in use is
    kept in the state file, where ``status`` and ``connection`` find it. A server already
    running is left as it is."""
    _server_dir().mkdir(parents=True, exist_ok=True)
    with open(_server_dir() / ".up.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one `up` at a time for this data folder
        current = status()
        if current["running"]:
            if port is not None and current.get("port") not in (None, port):
                log.warning(
                    "Label Studio already runs on %s; --port %d is ignored", current["url"], port
                )
            sweep_snapshots()
            return current
        if current.get("pid"):
            raise LabelStudioError(
                f"a Label Studio process (pid {current['pid']}) already serves "
                f"{_server_dir() / 'data'} but does not answer; stop it with `benchforge "
                "labelstudio down` and run again"
            )
        started = _start(port, timeout)
        sweep_snapshots()
        return started


BIND_TRIES = 3  # fresh ports tried when another program takes the chosen one first
DEAD_PROXY = "http://127.0.0.1:9"  # loopback's discard port: nothing leaves the machine


def offline_env(online: bool | None = None) -> dict[str, str]:
    """The environment that keeps the managed Label Studio to the machine (see the module
    docstring): Label Studio reads ``LABEL_STUDIO_<NAME>`` before ``<NAME>``, so these win
    over any the user set. ``online`` (default: ``BENCHFORGE_LS_ONLINE`` is ``1``) leaves
    out the dead proxy."""
    env = {
        "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",  # PyPI, at every start
        "LABEL_STUDIO_SENTRY_DSN": "",  # the server's error reports (empty: no Sentry)
        "LABEL_STUDIO_SENTRY_RATE": "0",
        "LABEL_STUDIO_FRONTEND_SENTRY_DSN": "",  # the browser's (no Sentry script either)
        "LABEL_STUDIO_FRONTEND_SENTRY_RATE": "0",
        "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
    }
    if online is None:
        online = os.environ.get("BENCHFORGE_LS_ONLINE", "").strip() == "1"
    if not online:
        loopback = "127.0.0.1,localhost,::1"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            env[name] = env[name.lower()] = DEAD_PROXY
        env["NO_PROXY"] = env["no_proxy"] = loopback
    return env


class _PortTaken(LabelStudioError):
    """Another program bound the chosen port between the check and Label Studio's bind."""


def _start(port: int | None, timeout: float) -> dict:
    forced = port is not None
    port = choose_port(port)
    for _ in range(BIND_TRIES):
        try:
            return _launch(port, timeout)
        except _PortTaken:
            if forced:
                raise LabelStudioError(
                    f"port {port} on 127.0.0.1 was taken by another program while Label "
                    "Studio started; choose another with --port, or leave --port out and a "
                    "free one is chosen"
                ) from None
            taken, port = port, free_port()
            log.warning("port %d on 127.0.0.1 was taken by another program while Label "
                        "Studio started; starting it on port %d instead", taken, port)  # fmt: skip
    raise LabelStudioError(
        f"Label Studio could not bind a port: {BIND_TRIES} free ports were taken by other "
        "programs before it started; run again"
    )


def _launch(port: int, timeout: float) -> dict:
    """Start Label Studio on exactly ``port`` and wait until it answers; ``_PortTaken``
    when its bind fails because another program holds the port."""
    exe = ensure_installed()
    creds = credentials()
    server = _server_dir()
    data_dir = server / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    _seed_database(data_dir)
    log_path = server / "server.log"
    make_private(server, skip=venv_dir())
    env = {
        **os.environ,
        "LABEL_STUDIO_USERNAME": creds["username"],
        "LABEL_STUDIO_PASSWORD": creds["password"],
        "LABEL_STUDIO_USER_TOKEN": creds["token"],
        **offline_env(),
        "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
        "DJANGO_DB": "sqlite",
        # Label Studio's SSRF protection with loopback let through: the managed server
        # (itself on loopback) may call benchforge's webhook endpoint on 127.0.0.1
        # (flows/suspend.py); every other reserved network stays blocked
        "USE_DEFAULT_BANNED_SUBNETS": "false",
        "USER_ADDITIONAL_BANNED_SUBNETS": ",".join(BANNED_BUT_LOOPBACK),
    }
    for name in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"):
        env.pop(name, None)
    # --debug: Label Studio binds --port or fails; it does not move to port + 1 itself
    cmd = [
        str(exe),
        "start",
        "--no-browser",
        "--internal-host",
        "127.0.0.1",
        "--port",
        str(port),
        "--data-dir",
        str(data_dir),
        "--enable-legacy-api-token",
        "--log-level",
        "WARNING",
        "--debug",
    ]
    url = f"http://127.0.0.1:{port}"
    logged = log_path.stat().st_size if log_path.exists() else 0
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=server,
            start_new_session=True,  # its own process group: `down` stops all of it
            umask=0o077,  # its database holds every account's token: owner only
        )
    state = {
        "pid": proc.pid,
        "url": url,
        "port": port,
        "data_dir": str(data_dir),
        "log": str(log_path),
        "started_at": time.time(),
    }
    _write_state(state)
    log.info("starting Label Studio on %s (log: %s)", url, log_path)
    deadline = time.monotonic() + timeout
    # wait until the process we started listens, on whichever port it took, and answers
    while True:
        if proc.poll() is not None:
            _state_path().unlink(missing_ok=True)
            if _bind_failed(log_path, logged):
                raise _PortTaken(port)
            raise LabelStudioError(
                f"Label Studio exited with code {proc.returncode} while starting; see {log_path}"
            )
        ports = listening_ports(proc.pid)
        if ports:
            state = _with_real_port(state)
            if _answers(state["url"]):
                break
        if time.monotonic() > deadline:
            down()
            raise LabelStudioError(f"Label Studio did not answer within {timeout:.0f} s")
        time.sleep(0.5)
    _check_token(state["url"], creds["token"])
    return status()


def _bind_failed(log_path: Path, offset: int) -> bool:
    """The server's log since ``offset`` says its port was in use (Django's runserver)."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(offset)
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return False
    return "port is already in use" in text or "Address already in use" in text


def make_private(folder: Path, skip: Path | None = None) -> None:
    """``folder`` and every folder under it 0700, every file 0600: Label Studio's SQLite
    database holds the admin's and every annotator's API token in plain text. Fixes
    installs made before. ``skip`` and every virtual environment (a folder holding
    ``pyvenv.cfg``) are left as they are: their programs must stay executable, whichever
    ``BENCHFORGE_LS_VENV`` is in use now."""
    skip = skip.resolve() if skip else None
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        if (skip and here.resolve() == skip) or "pyvenv.cfg" in files:
            dirs[:] = []
            continue
        here.chmod(0o700)
        dirs[:] = [d for d in dirs if not (skip and (here / d).resolve() == skip)]
        for name in files:
            path = here / name
            if not path.is_symlink():
                path.chmod(0o600)


def _check_token(url: str, token: str, source: str | None = None) -> None:
    req = urllib.request.Request(
        f"{url}/api/current-user/whoami", headers={"Authorization": f"Token {token}"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10):
            return
    except urllib.error.HTTPError as exc:
        if source:
            raise LabelStudioError(
                f"Label Studio at {url} rejects the token in {source} (HTTP {exc.code})"
            ) from None
        state = _read_state() or {}
        ports = listening_ports(int(state["pid"])) if state.get("pid") else set()
        port = urllib.parse.urlsplit(url).port
        if ports and port not in ports:
            raise LabelStudioError(
                f"the program answering at {url} is not this Label Studio (pid "
                f"{state['pid']} listens on {sorted(ports)}): it rejects the token "
                f"(HTTP {exc.code}); stop that program or run `benchforge labelstudio down` "
                "and `up` again"
            ) from None
        raise LabelStudioError(
            f"Label Studio at {url} rejects the stored token (HTTP {exc.code}): its data folder "
            f"was made with other credentials than {credentials_path()}"
        ) from None


def down(timeout: float = 30.0) -> bool:
    """Stop every Label Studio server of the data folder: the one ``up`` started (its
    whole process group) and any other found serving the same folder; False when none."""
    state = _read_state()
    pids = set(server_pids())
    if state and _alive(int(state["pid"])):
        pids.add(int(state["pid"]))
    for pid in sorted(pids):
        _stop_group(pid, timeout)
    _state_path().unlink(missing_ok=True)
    return bool(pids)


def _stop_group(pid: int, timeout: float) -> None:
    try:
        pgid = os.getpgid(pid)
    except ProcessLookupError:
        return
    target = pgid if pgid == pid else None  # a group of its own (ours): stop all of it
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM) if target else os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.2)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL) if target else os.kill(pid, signal.SIGKILL)
        _reap(pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


SNAPSHOT_MAX_AGE = 600.0  # seconds: an export takes seconds; older snapshots are left-overs


def sweep_snapshots(max_age: float = SNAPSHOT_MAX_AGE) -> int:
    """Remove the export snapshots (``data/export/project-*-at-*.json`` and their
    ``.zip``/converted twins) older than ``max_age`` seconds that killed or concurrent
    runs left on the managed server's disk; returns how many."""
    folder = managed_export_dir() or _server_dir() / "data" / "export"
    if not folder.is_dir():
        return 0
    now, removed = time.time(), 0
    for path in folder.glob("project-*-at-*"):
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime > max_age:
                path.unlink()
                removed += 1
    if removed:
        log.info("removed %d export snapshots left by interrupted runs in %s", removed, folder)
    return removed


def managed_export_dir() -> Path | None:
    """Where the managed server writes export snapshots; None when ``LABEL_STUDIO_URL``
    names a server of the user's own or none was started."""
    if os.environ.get("LABEL_STUDIO_URL"):
        return None
    state = _read_state()
    return Path(state["data_dir"]) / "export" if state else None


def use_private_home(folder: Path) -> None:
    """Point this process (and what it starts) at a Label Studio of its own under
    ``folder`` (home and config there, no outside server or token), sharing the install
    in ``BENCHFORGE_LS_VENV`` (default ``~/.local/share/benchforge/labelstudio/venv``):
    for benchmarks and probes that must not touch a user's server."""
    os.environ["BENCHFORGE_HOME"] = str(folder / "home")
    os.environ["BENCHFORGE_CONFIG"] = str(folder / "config")
    os.environ.setdefault(
        "BENCHFORGE_LS_VENV", str(Path.home() / ".local/share/benchforge/labelstudio/venv")
    )
    for key in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY"):
        os.environ.pop(key, None)


def ensure_reachable(port: int | None = None) -> dict:
    """Before any work: ``LABEL_STUDIO_URL`` answers and accepts ``LABEL_STUDIO_API_KEY``,
    or the managed server runs (started with ``up(port)`` when it does not)."""
    if os.environ.get("LABEL_STUDIO_URL"):
        conn = connection()
        if not _answers(conn.url, timeout=10.0):
            raise LabelStudioError(f"LABEL_STUDIO_URL {conn.url} does not answer")
        _check_token(conn.url, conn.api_key, "LABEL_STUDIO_API_KEY")
        return {"running": True, "url": conn.url, "managed": False}
    return up(port)


def server_version(conn: Connection) -> str:
    """The version the server reports at ``/api/version`` (its ``release``), or a note
    saying why it could not be read."""
    req = urllib.request.Request(
        f"{conn.url}/api/version", headers={"Authorization": f"Token {conn.api_key}"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            data = json.loads(resp.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"unknown ({conn.url}/api/version: {exc})"
    release = data.get("release") or (data.get("label-studio-os-package") or {}).get("version")
    return str(release) if release else "unknown (no release in /api/version)"


class _Starting:
    """A start of the managed server going on in a thread of this process."""

    def __init__(self, port: int | None, then: Callable[[dict], None] | None) -> None:
        import threading
        from concurrent.futures import Future

        self.port, self.then = port, then
        self.future: Future = Future()
        self.thread = threading.Thread(target=self._run, name="label-studio-start", daemon=True)

    def _run(self) -> None:
        try:
            info = up(self.port)
            if self.then is not None:
                self.then(info)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
            self.future.set_exception(exc)
        else:
            self.future.set_result(info)


_STARTING: list[_Starting] = []


def start_in_background(
    port: int | None = None, then: Callable[[dict], None] | None = None
) -> None:
    """Start the managed server (``up(port)``, then ``then(info)``) in a thread while the
    caller goes on (issue 38: ``rebuild`` ingests and pairs while Label Studio starts,
    instead of waiting for it first). A forced ``port`` that is taken fails here, at once.
    ``connection`` waits for the start (and raises its error) before it returns;
    ``start_error`` tells a caller between steps whether it failed already."""
    if port is not None:
        choose_port(port)  # a forced port that is taken: the error now, not in a minute
    starting = _Starting(port, then)
    _STARTING[:] = [starting]
    starting.thread.start()


def wait_started(timeout: float | None = None) -> dict | None:
    """Wait for a start ``start_in_background`` began (its info, or its error raised);
    None when none was begun. The starting thread itself never waits for itself."""
    import threading

    if not _STARTING or threading.current_thread() is _STARTING[0].thread:
        return None
    return _STARTING[0].future.result(timeout)


def start_error() -> BaseException | None:
    """The error of a background start that has failed already, else None."""
    if _STARTING and _STARTING[0].future.done():
        return _STARTING[0].future.exception()
    return None


def forget_start() -> None:
    """Drop the record of a background start (the command that began it has ended)."""
    _STARTING.clear()


# Label Studio's default banned subnets (label_studio/core/utils/io.py, 1.23) less
# 127.0.0.0/8: webhooks to the loopback endpoint of flows/suspend.py are allowed
BANNED_BUT_LOOPBACK = (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "233.252.0.0/24", "240.0.0.0/4",
    "255.255.255.255/32", "::/128", "::1/128", "::ffff:0:0/96", "::ffff:0:0:0/96",
    "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001:0000::/32", "2001:20::/28",
    "2001:db8::/32", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8",
)  # fmt: skip


def connection() -> Connection:
    """``LABEL_STUDIO_URL`` + ``LABEL_STUDIO_API_KEY`` when set, else the managed server
    (once a start ``start_in_background`` began has finished)."""
    url = os.environ.get("LABEL_STUDIO_URL")
    if url:
        key = os.environ.get("LABEL_STUDIO_API_KEY")
        if not key:
            raise LabelStudioError("LABEL_STUDIO_URL is set but LABEL_STUDIO_API_KEY is not")
        return Connection(url.rstrip("/"), key, managed=False)
    wait_started()
    current = status()
    if not current["running"]:
        raise LabelStudioError(
            "Label Studio is not running: start it with `benchforge labelstudio up`, or set "
            "LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY to use a server of your own"
        )
    return Connection(current["url"], credentials()["token"], managed=True)
