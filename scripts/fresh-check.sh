#!/usr/bin/env bash
# The README's main command as a new user meets it: a fresh clone of this checkout's
# committed HEAD, a throwaway HOME (so a fresh .venv, a fresh Label Studio install and no
# credentials, servers or caches of ours), and another program listening on
# 127.0.0.1:8080, Label Studio's default port (a developer's web server, Jupyter...).
# Fails when the main job fails; prints how long the set-up and the main job took.
# Only pip's and uv's download caches are kept (PIP_CACHE_DIR, UV_CACHE_DIR): they change
# how fast packages arrive, not what is installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${BENCHFORGE_PYTHON:-python3}"
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}"
export UV_CACHE_DIR="${UV_CACHE_DIR:-$HOME/.cache/uv}"
work="$(mktemp -d "${TMPDIR:-/tmp}/benchforge-fresh.XXXXXX")"
holder=""
cleanup() {
  [ -n "$holder" ] && kill "$holder" 2>/dev/null || true
  # a server the run left behind would hide the next user's failure: stop it
  if [ -x "$work/clone/.venv/bin/benchforge" ]; then
    HOME="$work/home" "$work/clone/.venv/bin/benchforge" labelstudio down >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git clone --quiet "$root" "$work/clone"
else  # not a git checkout: copy what a clone would hold
  mkdir -p "$work/clone"
  tar -C "$root" --exclude=.venv --exclude=runs --exclude=__pycache__ -cf - . \
    | tar -C "$work/clone" -xf -
fi
mkdir -p "$work/home"
# a second .venv and Label Studio install: how much room there was, should it run out
echo "[fresh-check] $(df -Pk "$work" | awk 'NR == 2 {print int($4 / 1024)}') MB free on the disk of $work"

if "$python" -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1", 8080)) == 0)'; then
  "$python" -m http.server 8080 --bind 127.0.0.1 --directory "$work" >/dev/null 2>&1 &
  holder=$!
  for _ in $(seq 50); do
    "$python" -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1", 8080)) != 0)' && break
    sleep 0.1
  done
  echo "[fresh-check] port 8080 held by another program (pid $holder)"
else
  echo "[fresh-check] port 8080 is already held by another program"
fi

cd "$work/clone"
env -u LABEL_STUDIO_URL -u LABEL_STUDIO_API_KEY -u PREFECT_API_URL -u BENCHFORGE_HOME \
  -u BENCHFORGE_CONFIG -u BENCHFORGE_LS_VENV -u BENCHFORGE_LS_PORT -u PREFECT_HOME \
  HOME="$work/home" bash -c '
    set -euo pipefail
    start=$SECONDS
    bash scripts/bootstrap.sh
    setup=$((SECONDS - start))
    start=$SECONDS
    bash scripts/demo.sh
    echo "[fresh-check] set-up (bootstrap) ${setup} s; main job (scripts/demo.sh, Label Studio install included) $((SECONDS - start)) s"
  '
test -s runs/sts-demo/dataset/DATA_CARD.md
grep -q "Fine-tuned baseline" runs/sts-demo/dataset/DATA_CARD.md   # the baseline's row
test -s runs/sts-demo/dataset/lm_eval/benchforge_sts_demo.yaml     # the lm-eval task
.venv/bin/benchforge card check runs/sts-demo
echo "[fresh-check] the main job passed in a fresh clone with a fresh HOME and 8080 taken"
