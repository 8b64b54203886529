"""Annotators as people (issue 35, item 6): ``benchforge annotate invite`` creates their
Label Studio accounts, and a recipe's guideline becomes the instructions a project shows
before labelling.

Contract of :func:`invite`: every e-mail is checked before any account is made (a
malformed or repeated address, or one that is already an account, is an
:class:`~pipelines.annotation.annotate.AnnotationError` naming it; nothing is created).
Each new account gets a random password and is signed up through the organization's
sign-up link (Label Studio's ``/api/invite``), as the annotator would in the browser:
an account made through the users API gets no password it can log in with. The
credentials, the login page and the sign-up link go to a private file (folder 0700,
file 0600, written atomically; default ``BENCHFORGE_CONFIG/annotators/<project>.json``,
outside the repository), merged with the accounts already listed there. The passwords
are never returned, printed or logged: the result names the accounts and the file.

:func:`guideline_html` renders a recipe's Markdown guideline to the sanitised HTML that
Label Studio shows as the project's instructions (``expert_instruction``, shown before
labelling). The text is data: ``nh3`` keeps only harmless tags, so a guideline cannot
run a script in the annotators' browser.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

from pipelines.annotation.annotate import AnnotationError, client, find_project, with_retries

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def credentials_file(project: str | None) -> Path:
    """The default private file of the annotators invited to ``project``."""
    from pipelines.annotation import ls_server

    name = re.sub(r"[^\w.-]", "_", project or "server")
    return ls_server.config_dir() / "annotators" / f"{name}.json"


def check_emails(emails: list[str], existing: set[str]) -> list[str]:
    """The addresses, stripped; an error names a malformed, repeated or taken one."""
    out, seen = [], set()
    for raw in emails:
        email = raw.strip()
        if not EMAIL.match(email):
            raise AnnotationError(f"invite: {email!r} is not an e-mail address")
        if email.lower() in seen:
            raise AnnotationError(f"invite: {email} is given twice")
        if email.lower() in existing:
            raise AnnotationError(
                f"invite: {email} is already a Label Studio account; nothing was created "
                "(leave it out, or give its owner the password they have)"
            )
        seen.add(email.lower())
        out.append(email)
    if not out:
        raise AnnotationError("invite: no e-mail address given")
    return out


def invite_link(url: str, api_key: str) -> str:
    """The organization's sign-up link (``/user/signup/?token=...``, Label Studio's
    ``/api/invite``): whoever opens it can make an account in the organization."""
    import httpx

    answer = httpx.get(f"{url}/api/invite", headers={"Authorization": f"Token {api_key}"},
                       timeout=60)  # fmt: skip
    if answer.status_code != 200:
        raise AnnotationError(f"invite: {url}/api/invite answered {answer.status_code}")
    return f"{url}{answer.json()['invite_url']}"


def sign_up(link: str, email: str, password: str) -> None:
    """Sign ``email`` up through the organization's sign-up ``link`` with ``password``, as
    the annotator would in the browser (the account then logs in with it: an account
    made through the users API gets no usable password)."""
    import httpx

    with httpx.Client(timeout=60, follow_redirects=False) as web:
        page = web.get(link)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        form = re.search(r'<form id="signup-form"\s+action="([^"]+)"', page.text)
        if page.status_code != 200 or not token or not form:
            raise AnnotationError(f"invite: the sign-up page answered {page.status_code}")
        base = link.split("/user/", 1)[0]
        done = web.post(base + form.group(1).replace("&amp;", "&"),
                        data={"csrfmiddlewaretoken": token.group(1), "email": email,
                              "password": password, "allow_newsletters": "false"},
                        headers={"Referer": link})  # fmt: skip
    if done.status_code != 302:  # the form again, with its error
        errors = re.findall(r'class="[^"]*(?:error|field_errors)[^"]*"[^>]*>\s*([^<]+)', done.text)
        raise AnnotationError(f"invite: signing {email} up failed: {errors or done.status_code}")


def invite(
    emails: list[str],
    project: str | None = None,
    credentials: Path | None = None,
    ls=None,  # noqa: ANN001
) -> dict:
    """Create an annotator account per address (see the module docstring) by signing it
    up through the organization's sign-up link; returns ``{"created": [...],
    "credentials": path, "project": ..., "url": ..., "project_id": ...}``."""
    from pipelines.annotation.ls_server import connection, write_private

    conn = connection()
    ls = ls or client(conn)
    proj = None
    if project is not None:
        proj = find_project(ls, project)
        if proj is None:
            raise AnnotationError(f"invite: no Label Studio project named {project!r}")
    users = with_retries(lambda: list(ls.users.list()), "list users")
    existing = {str(u.email or "").lower() for u in users}
    wanted = check_emails(emails, existing)
    path = credentials or credentials_file(project)
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    listed = {a["email"]: a for a in data.get("annotators", [])}
    url = conn.url.rstrip("/")
    link = invite_link(url, conn.api_key)
    created = []
    for email in wanted:
        password = secrets.token_urlsafe(16)
        sign_up(link, email, password)
        user = next((u for u in ls.users.list() if str(u.email).lower() == email.lower()), None)
        listed[email] = {"email": email, "password": password,
                         "user_id": int(user.id) if user else None}  # fmt: skip
        created.append(email)
        # written after each account: a failure half-way loses no password
        people = sorted(listed.values(), key=lambda a: a["email"])
        write_private(path, {"url": url, "login": f"{url}/user/login/", "project": project,
                              "project_id": proj.id if proj else None,
                              "sign_up_link": link, "annotators": people}, indent=2)  # fmt: skip
    return {"created": created, "credentials": str(path), "project": project, "url": url,
            "project_id": proj.id if proj else None}  # fmt: skip


def guideline_html(path: Path) -> str:
    """The Markdown guideline at ``path`` as sanitised HTML (see the module docstring)."""
    import markdown
    import nh3

    if not path.is_file():
        raise AnnotationError(f"{path}: guideline not found")
    text = path.read_text(encoding="utf-8")
    return nh3.clean(markdown.markdown(text, extensions=["tables"]))
