"""Issue 51, item 5: ``benchforge annotate invite`` against a real Label Studio server.

An address that passed benchforge's check but that Label Studio's sign-up refuses
(``a@b.c``: a one-letter top-level domain) failed after the first account was created
and its password written, although the help says nothing is created on error; the rerun
then refused the first address as an existing account. Every address is now checked as
Label Studio checks it before any account is made, and a rerun after a run that stopped
half-way (the server died) keeps the accounts it made and makes the rest.

Item 13 (its ``wait`` part): a wait for real annotators printed nothing for 150 s; it now
prints a progress line when it begins, every ``BENCHFORGE_PROGRESS_SECONDS`` (10 by
default) and at its end where no bar is shown (a log, a pipe), and no more often."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import httpx
import pandas as pd
import pytest

from pipelines.annotation import annotate, ls_server
from pipelines.annotation.annotate import AnnotationError
from pipelines.annotation.invite import invite

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=ROOT,
                          env={**os.environ}, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def accounts() -> set[str]:
    return {str(u.email).lower() for u in annotate.client().users.list()}


def logs_in(url: str, email: str, password: str) -> bool:
    """The login form of the server accepts ``email`` with ``password`` (a redirect)."""
    with httpx.Client(timeout=60, follow_redirects=False) as web:
        page = web.get(f"{url}/user/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        done = web.post(f"{url}/user/login/", headers={"Referer": f"{url}/user/login/"},
                        data={"csrfmiddlewaretoken": token, "email": email,
                              "password": password})  # fmt: skip
    return done.status_code == 302


REFUSED = [
    ("a@b.c", "top-level domain"),  # Label Studio (Django) wants 2 letters or more
    ("사용자@example.org", "before the @"),  # the local part is ASCII only
    ("a..b@example.org", "before the @"),
    (".a@example.org", "before the @"),
    ("x@-bad.example.org", "domain"),
    ("x@exa_mple.org", "domain"),
    ("x" * 250 + "@example.org", "255 characters"),
]


@pytest.mark.parametrize(("address", "why"), REFUSED, ids=[r[0][:20] for r in REFUSED])
def test_an_address_label_studio_refuses_creates_no_account(server, tmp_path, address, why):
    first = f"first.{zlib.crc32(address.encode())}@example.org"
    credentials = tmp_path / "annotators.json"
    proc = cli("annotate", "invite", "--emails", f"{first},{address}",
               "--credentials", str(credentials))  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert address[:40] in proc.stderr and why in proc.stderr, proc.stderr[-2000:]
    assert "nothing was created" in proc.stderr
    assert first not in accounts()
    assert not credentials.exists()


def test_every_refused_address_is_named_in_one_error(server, tmp_path):
    with pytest.raises(AnnotationError) as err:
        invite(["ok.x@example.org", "a@b.c", "a..b@example.org"], None, tmp_path / "c.json")
    assert "a@b.c" in str(err.value) and "a..b@example.org" in str(err.value)
    assert "ok.x@example.org" not in accounts()


def test_an_unreadable_credentials_file_is_an_error_before_any_account(server, tmp_path):
    credentials = tmp_path / "annotators.json"
    credentials.write_text("{not json", encoding="utf-8")
    proc = cli("annotate", "invite", "--emails", "never.made@example.org",
               "--credentials", str(credentials))  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert str(credentials) in proc.stderr and "nothing was created" in proc.stderr
    assert "never.made@example.org" not in accounts()
    assert credentials.read_text(encoding="utf-8") == "{not json"


def test_a_rerun_after_the_server_died_half_way_resumes(server, tmp_path, monkeypatch):
    """The server dies after the first sign-up: the run stops with one clear error, the
    first account's password is in the file; after ``up``, the same command keeps that
    account (its password still logs in) and makes the others."""
    from pipelines.annotation import invite as invite_module

    real_sign_up = invite_module.sign_up
    signed: list[str] = []

    def sign_up_then_die(link: str, email: str, password: str) -> None:
        if signed:  # the second sign-up: the server is gone
            ls_server.down()
        real_sign_up(link, email, password)
        signed.append(email)

    monkeypatch.setattr(invite_module, "sign_up", sign_up_then_die)
    credentials = tmp_path / "private" / "annotators.json"
    people = ["half.one@example.org", "half.two@example.org", "half.three@example.org"]
    with pytest.raises(AnnotationError, match="run the same command again"):
        invite(people, None, credentials)
    monkeypatch.setattr(invite_module, "sign_up", real_sign_up)
    kept = json.loads(credentials.read_text(encoding="utf-8"))["annotators"]
    first = {a["email"]: a for a in kept}["half.one@example.org"]

    ls_server.up(server["port"])
    proc = cli("annotate", "invite", "--emails", ",".join(people), "--credentials",
               str(credentials), "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["created"] == ["half.two@example.org", "half.three@example.org"]
    assert result["kept"] == ["half.one@example.org"]
    listed = {a["email"]: a for a in
              json.loads(credentials.read_text(encoding="utf-8"))["annotators"]}  # fmt: skip
    assert sorted(listed) == sorted(people)
    assert listed["half.one@example.org"]["password"] == first["password"]
    assert not any(a.get("pending") for a in listed.values())
    assert set(people) <= accounts()
    url = ls_server.connection().url
    for email, entry in listed.items():
        assert logs_in(url, email, entry["password"]), email


def test_an_account_of_someone_else_is_still_refused(server, tmp_path):
    """An existing account that this credentials file did not make (the admin's) is
    refused as before, and nothing is created."""
    with pytest.raises(AnnotationError, match="already a Label Studio account"):
        invite(["other.new@example.org", ls_server.ADMIN], None, tmp_path / "c.json")
    assert "other.new@example.org" not in accounts()


def test_a_wait_for_people_prints_progress_without_flooding(server, capsys):
    config = annotate.load_config(ROOT / "annotation_configs" / "sts.xml")
    items = pd.DataFrame({"item_id": ["w-1", "w-2"], "sentence1": ["비가 온다.", "눈이 온다."],
                          "sentence2": ["비가 내린다.", "아이들이 논다."]})  # fmt: skip
    annotate.push(items, config, "people-wait", 1)
    proc = cli("annotate", "wait", "--project", "people-wait", "--timeout", "3", "--poll", "1")
    assert proc.returncode == 3, proc.stderr[-2000:]
    said = [line for line in proc.stderr.splitlines() if line.startswith("wait people-wait:")]
    assert len(said) == 2, proc.stderr[-2000:]  # when it begins and when it ends
    assert "0/2 tasks complete, 0 annotations, 0 skipped (0 s of 3 s)" in said[0]
    assert "0/2 tasks complete" in said[1] and "of 3 s)" in said[1]
    # a line every `every` seconds, not one per poll (about 40 polls here)
    capsys.readouterr()
    result = annotate.wait("people-wait", 4.5, poll=0.1, every=1.0)
    assert not result["done"]
    said = [line for line in capsys.readouterr().err.splitlines()
            if line.startswith("wait people-wait:")]  # fmt: skip
    assert 4 <= len(said) <= 7, said
