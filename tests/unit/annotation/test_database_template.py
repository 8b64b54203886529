"""The install's empty Label Studio database (``ls_server.make_database_template``): a
migration that fails for good is remembered and not tried again; one that failed
because the disk was full is tried again at the next set-up; an install folder that
went away while the migration ran (a set-up stopped half-way) is no traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

from pipelines.annotation import ls_server


def _label_studio(venv: Path, body: str) -> Path:
    """A stand-in ``label-studio`` executable whose ``version`` runs ``body`` (sh)."""
    (venv / "bin").mkdir(parents=True)
    exe = venv / "bin" / "label-studio"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(0o755)
    return exe


def test_a_migration_that_fails_is_remembered_and_not_tried_again(tmp_path):
    exe = _label_studio(tmp_path / "venv", "echo 'no such table: django_migrations' >&2; exit 1")
    assert ls_server.make_database_template(exe) is None
    marker = ls_server.database_template(tmp_path / "venv").parent / "failed"
    assert "no such table" in marker.read_text()
    exe.write_text('#!/bin/sh\ntouch "$3/label_studio.sqlite3"\n')  # would succeed now
    assert ls_server.make_database_template(exe) is None  # remembered: not tried again


def test_a_full_disk_is_not_remembered_and_the_next_set_up_migrates(tmp_path):
    exe = _label_studio(
        tmp_path / "venv",
        "echo 'django.db.utils.OperationalError: attempt to write a readonly database' >&2; exit 1",
    )
    assert ls_server.make_database_template(exe) is None
    template = ls_server.database_template(tmp_path / "venv")
    assert not (template.parent / "failed").exists()
    # space again: `label-studio version --data-dir DIR` writes the migrated database
    exe.write_text('#!/bin/sh\necho migrated > "$3/label_studio.sqlite3"\n')
    assert ls_server.make_database_template(exe) == template
    assert template.read_text() == "migrated\n"


def test_an_install_removed_during_the_migration_is_no_traceback(tmp_path):
    venv = tmp_path / "venv"
    exe = _label_studio(venv, "")
    # the migration removes the install's template folder, as a stopped set-up's clean-up
    # does, then fails
    folder = ls_server.database_template(venv).parent
    exe.write_text(f"#!/bin/sh\nrm -rf '{folder}'\necho 'gone' >&2\nexit 1\n")
    assert ls_server.make_database_template(exe) is None
    assert not folder.exists()
    shutil.rmtree(venv)
