"""Annotators as people (issue 35, item 6): ``benchforge annotate invite`` creates their
Label Studio accounts, and a recipe's guideline becomes the instructions a project shows
before labelling.

Contract of :func:`invite`: every e-mail and the credentials file are checked before any
account is made (issue 51): an address Label Studio's sign-up would refuse (its rules:
Django's e-mail check and fewer than 256 characters), a repeated one, one that is already
an account this file did not make, or a file that is not a readable annotators file, is
one :class:`~pipelines.annotation.annotate.AnnotationError` naming every such address or
the file; nothing is created. A run that stops half-way (the server died) is resumable:
each password is written before its sign-up (marked ``pending`` until the account
exists), and the same command again keeps the accounts the file lists (``kept``) and
makes the others.
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
import os
import re
import secrets
from pathlib import Path

from pipelines.annotation.annotate import AnnotationError, client, find_project, with_retries

# Label Studio's sign-up form checks addresses with Django's EmailValidator: a dot-atom
# local part (ASCII) and a host name whose top-level domain has 2 letters or more
LOCAL = re.compile(r"[-!#$%&'*+/=?^_`{}|~0-9a-z]+(\.[-!#$%&'*+/=?^_`{}|~0-9a-z]+)*\Z", re.I)
_UL = "\u00a1-\uffff"  # letters beyond ASCII (internationalised domain names)
DOMAIN = re.compile(
    rf"[a-z{_UL}0-9](?:[a-z{_UL}0-9-]{{0,61}}[a-z{_UL}0-9])?"  # first label
    rf"(?:\.(?!-)[a-z{_UL}0-9-]{{1,63}}(?<!-))*"  # more labels
    rf"\.(?!-)(?:[a-z{_UL}-]{{2,63}}|xn--[a-z0-9]{{1,59}})(?<!-)\Z",  # top-level domain
    re.I,
)
MAX_EMAIL = 255  # Label Studio refuses 256 characters and more


def credentials_file(project: str | None) -> Path:
    """The default private file of the annotators invited to ``project``."""
    from pipelines.annotation import ls_server

    name = re.sub(r"[^\w.-]", "_", project or "server")
    return ls_server.config_dir() / "annotators" / f"{name}.json"


def email_problem(email: str) -> str | None:
    """Why Label Studio's sign-up would refuse ``email``; None when it accepts it."""
    if len(email) > MAX_EMAIL:
        return f"it is longer than {MAX_EMAIL} characters (Label Studio's limit)"
    local, at, domain = email.rpartition("@")
    if not at or not local:
        return "it has no @ with a name before it"
    if not LOCAL.match(local):
        return ("the part before the @ must be ASCII letters, digits and !#$%&'*+-/=?^_`{|}~, "
                "with single dots between them")  # fmt: skip
    if not DOMAIN.match(domain):
        return ("the domain after the @ must be names of letters, digits and inner hyphens "
                "joined by dots, ending in a top-level domain of 2 letters or more")  # fmt: skip
    return None


def check_emails(
    emails: list[str], existing: set[str], ours: set[str] = frozenset()
) -> tuple[list[str], list[str]]:
    """(addresses to sign up, addresses kept), stripped, in the order given. Addresses
    that are accounts already and listed in ``ours`` (lower case: the credentials file
    made them) are kept; one error names every address Label Studio would refuse, given
    twice, or already an account of someone else."""
    new, kept, seen, problems = [], [], set(), []
    for number, raw in enumerate(emails, 1):
        email = raw.strip()
        why = email_problem(email)
        if why:
            problems.append(f"address {number} {email[:80]!r} is not one Label Studio accepts: "
                            f"{why}")  # fmt: skip
        elif email.lower() in seen:
            problems.append(f"{email} is given twice")
        elif email.lower() in existing and email.lower() not in ours:
            problems.append(f"{email} is already a Label Studio account (leave it out, or "
                            "give its owner the password they have)")  # fmt: skip
        else:
            (kept if email.lower() in existing else new).append(email)
        seen.add(email.lower())
    if problems:
        raise AnnotationError("invite: " + "; ".join(problems) + "; nothing was created")
    if not new and not kept:
        raise AnnotationError("invite: no e-mail address given; nothing was created")
    return new, kept


def read_credentials(path: Path) -> dict:
    """The annotators file at ``path`` ({} when there is none); an error names a file
    that is not one, or a folder where it cannot be written."""
    if path.exists() and not path.is_file():
        raise AnnotationError(f"invite: {path} is not a file; nothing was created")
    data: object = {}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise AnnotationError(f"invite: {path} is not a readable annotators file ({exc}); "
                                  "nothing was created") from None  # fmt: skip
    people = data.get("annotators", []) if isinstance(data, dict) else None
    if not isinstance(people, list) or not all(
        isinstance(a, dict) and isinstance(a.get("email"), str) for a in people
    ):
        raise AnnotationError(f"invite: {path} is not an annotators file (no list of "
                              "annotators with an email each); nothing was created")  # fmt: skip
    folder = next((p for p in [path.parent, *path.parent.parents] if p.exists()), None)
    if folder is None or not os.access(folder, os.W_OK | os.X_OK):
        raise AnnotationError(f"invite: {path} cannot be written ({folder} is not writable); "
                              "nothing was created")  # fmt: skip
    return data  # type: ignore[return-value]


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
    up through the organization's sign-up link; returns ``{"created": [...], "kept":
    [...] (accounts the file made before), "credentials": path, "project": ..., "url":
    ..., "project_id": ...}``. A server that stops answering half-way is an error that
    says to run the same command again."""
    import httpx

    try:
        return _invite(emails, project, credentials, ls)
    except (httpx.TransportError, ConnectionError) as exc:
        raise AnnotationError(
            f"invite: Label Studio stopped answering ({exc}); the accounts made so far and "
            "their passwords are kept: run the same command again to make the others"
        ) from None


def _invite(emails: list[str], project: str | None, credentials: Path | None, ls) -> dict:  # noqa: ANN001
    from pipelines.annotation.ls_server import connection, write_private

    path = credentials or credentials_file(project)
    data = read_credentials(path)
    conn = connection()
    ls = ls or client(conn)
    proj = None
    if project is not None:
        proj = find_project(ls, project)
        if proj is None:
            raise AnnotationError(f"invite: no Label Studio project named {project!r}; "
                                  "nothing was created")  # fmt: skip
    users = with_retries(lambda: list(ls.users.list()), "list users")
    ids = {str(u.email or "").lower(): int(u.id) for u in users}
    url = conn.url.rstrip("/")
    listed = {a["email"].lower(): a for a in data.get("annotators", [])}
    ours = set(listed) if data.get("url", url) == url else set()
    new, kept = check_emails(emails, set(ids), ours)
    link = invite_link(url, conn.api_key)

    def save() -> None:  # after each change: a failure half-way loses no password
        people = sorted(listed.values(), key=lambda a: a["email"])
        write_private(path, {"url": url, "login": f"{url}/user/login/", "project": project,
                              "project_id": proj.id if proj else None,
                              "sign_up_link": link, "annotators": people}, indent=2)  # fmt: skip

    for email in kept:  # made by an earlier run (a pending one: its sign-up went through)
        entry = listed[email.lower()]
        entry.pop("pending", None)
        entry["user_id"] = ids[email.lower()]
    if kept:
        save()
    for email in new:
        entry = listed.get(email.lower())
        password = entry["password"] if entry and entry.get("pending") else None
        password = password or secrets.token_urlsafe(16)
        listed[email.lower()] = {"email": email, "password": password, "user_id": None,
                                 "pending": True}  # fmt: skip
        save()  # before the sign-up: an account made as the server dies has its password
        sign_up(link, email, password)
        user = next((u for u in ls.users.list() if str(u.email).lower() == email.lower()), None)
        listed[email.lower()] = {"email": email, "password": password,
                                 "user_id": int(user.id) if user else None}  # fmt: skip
        save()
    return {"created": new, "kept": kept, "credentials": str(path), "project": project,
            "url": url, "project_id": proj.id if proj else None}  # fmt: skip


def guideline_html(path: Path) -> str:
    """The Markdown guideline at ``path`` as sanitised HTML (see the module docstring)."""
    import markdown
    import nh3

    if not path.is_file():
        raise AnnotationError(f"{path}: guideline not found")
    text = path.read_text(encoding="utf-8")
    return nh3.clean(markdown.markdown(text, extensions=["tables"]))
