"""Issue 51, items 6 and 12: the managed Label Studio server keeps to the machine and to
the port benchforge chose for it.

Item 6: Label Studio asked the package index for its latest version at every start and
sent error reports to Sentry (159 attempts in 55 minutes) although analytics were off.
The check here traces every ``connect``/``sendto``/``sendmsg`` system call of a real
``benchforge labelstudio up`` and of the server it starts (``strace -f``, which records
an attempt even when the network is unreachable; a network namespace without a route
would hide the attempts instead of showing them), through a login, the pages an
annotator's browser loads and the tips request the frontend makes, and asserts that
every address is loopback and that no name was looked up (no connection to a DNS
port, even a loopback resolver's).

Item 12: Label Studio moved by itself to port + 1 when its port was taken after the
check, and exited when port + 1 was taken too (a fresh clone's test run failed so).
The port benchforge chooses is now the one Label Studio binds, and a port lost to a race
is replaced by another free one."""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from pipelines.annotation import ls_server

ROOT = Path(__file__).resolve().parents[2]
SHARED_VENV = Path.home() / ".local/share/benchforge/labelstudio/venv"
pytestmark = pytest.mark.e2e

ADDRESS = re.compile(
    r"sa_family=AF_INET6?, sin6?_port=htons\((\d+)\).*?"
    r"(?:inet_addr\(\"([^\"]+)\"\)|inet_pton\(AF_INET6, \"([^\"]+)\")"
)


@pytest.fixture
def own_home(tmp_path, monkeypatch):
    env = {
        "BENCHFORGE_HOME": str(tmp_path / "home"),
        "BENCHFORGE_CONFIG": str(tmp_path / "config"),
        "BENCHFORGE_LS_VENV": os.environ.get("BENCHFORGE_LS_VENV", str(SHARED_VENV)),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("LABEL_STUDIO_URL", "LABEL_STUDIO_API_KEY", "BENCHFORGE_LS_ONLINE"):
        monkeypatch.delenv(key, raising=False)
    yield tmp_path
    ls_server.down()


def outside_contacts(trace: str) -> list[str]:
    """The lines of an ``strace`` log that reach a non-loopback address or a DNS port."""
    bad = []
    for line in trace.splitlines():
        for port, v4, v6 in ADDRESS.findall(line):
            address = ipaddress.ip_address(v4 or v6)
            mapped = getattr(address, "ipv4_mapped", None)
            loopback = address.is_loopback or bool(mapped and mapped.is_loopback)
            if not loopback or int(port) == 53:
                bad.append(line.strip())
    return bad


def test_outside_contacts_reads_strace_lines():
    """The parser sees what the server test relies on (a test of the test)."""
    v4 = '7 connect(5, {sa_family=AF_INET, sin_port=htons(%d), sin_addr=inet_addr("%s")}, 16)'
    v6 = (
        "7 connect(6, {sa_family=AF_INET6, sin6_port=htons(%d), sin6_flowinfo=htonl(0), "
        'inet_pton(AF_INET6, "%s", &sin6_addr), sin6_scope_id=0}, 28) = 0'
    )
    lines = [
        v4 % (443, "151.101.0.223"),  # outside
        v4 % (53, "127.0.0.53"),  # a name looked up, even through a loopback resolver
        v6 % (443, "2a04:4e42::223"),  # outside
        v4 % (8080, "127.0.0.1"),
        v6 % (8080, "::1"),
        v6 % (8080, "::ffff:127.0.0.1"),
        '7 connect(3, {sa_family=AF_UNIX, sun_path="/run/x"}, 110) = 0',
    ]  # fmt: skip
    assert len(outside_contacts("\n".join(lines))) == 3


def _login(url: str, creds: dict) -> urllib.request.OpenerDirector:
    """A browser-like session logged in as the admin (cookies kept)."""
    import http.cookiejar
    import urllib.parse

    web = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    page = web.open(f"{url}/user/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "email": creds["username"],
                                   "password": creds["password"]}).encode()  # fmt: skip
    req = urllib.request.Request(f"{url}/user/login/", data=form,
                                 headers={"Referer": f"{url}/user/login/"})  # fmt: skip
    web.open(req, timeout=30).read()
    return web


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (apt install strace)")
def test_label_studio_contacts_nothing_but_loopback(own_home):
    port = ls_server.free_port()
    trace = own_home / "connect.trace"
    env = {**os.environ}
    cmd = ["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace),
           sys.executable, "-m", "flows.cli", "labelstudio", "up", "--port", str(port)]  # fmt: skip
    tracer = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while not ls_server._answers(url):
            assert tracer.poll() is None, tracer.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "Label Studio did not answer in 300 s"
            time.sleep(0.5)
        time.sleep(5)  # what a server does once started (its first checks, reports)
        web = _login(url, ls_server.credentials())
        page = web.open(f"{url}/projects/", timeout=30).read().decode()
        # the tips the frontend asks for: Label Studio fetches them from GitHub
        with pytest.raises(urllib.error.HTTPError):
            web.open(f"{url}/heidi-tips/", timeout=30).read()
        web.open(f"{url}/api/version", timeout=30).read()
        time.sleep(5)
    finally:
        down = subprocess.run([sys.executable, "-m", "flows.cli", "labelstudio", "down"],
                              cwd=ROOT, env=env, capture_output=True, text=True)  # fmt: skip
        try:
            tracer.wait(timeout=60)
        except subprocess.TimeoutExpired:
            tracer.kill()
            tracer.wait()
    assert down.returncode == 0, down.stderr[-2000:]
    text = trace.read_text(errors="replace")
    assert "connect(" in text  # the trace saw the CLI and the server talk over loopback
    assert outside_contacts(text) == [], outside_contacts(text)[:20]
    # the annotator's browser: no error reporting or analytics script, none enabled
    assert "sentry-cdn" not in page and "sentry_dsn: null" in page
    assert "collect_analytics: false" in page


def test_the_port_chosen_is_the_port_label_studio_binds(own_home, monkeypatch):
    """Item 12: the chosen port is taken after the check and port + 1 (Label Studio's
    own fallback) is bound by another program that does not listen yet (as another
    server that is starting): ``up`` still starts one server, on a fresh free port it
    chose itself, never on a port Label Studio picked."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    taken = held.getsockname()[1]
    following = socket.socket()  # bound, not listening: a connect check sees it free
    try:
        following.bind(("127.0.0.1", taken + 1))
    except OSError:
        following.close()
        pytest.skip(f"port {taken + 1} is in use already")
    monkeypatch.setattr(ls_server, "choose_port", lambda port=None: taken)
    try:
        info = ls_server.up()
        assert info["running"], info
        assert info["port"] not in (taken, taken + 1), info
        assert ls_server.listening_ports(info["pid"]) == {info["port"]}
        assert ls_server.server_pids() == [info["pid"]]
    finally:
        held.close()
        following.close()
    assert ls_server.down()


def test_a_forced_port_lost_to_a_race_is_an_error_naming_it(own_home, monkeypatch):
    """Item 12: ``--port P`` taken between the check and the bind is an error naming P
    (the user asked for that port), not a server on another one."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    taken = held.getsockname()[1]
    monkeypatch.setattr(ls_server, "port_free", lambda port: True)  # the check passed
    try:
        with pytest.raises(ls_server.LabelStudioError, match=f"port {taken}"):
            ls_server.up(taken)
    finally:
        held.close()
    assert ls_server.server_pids() == []
