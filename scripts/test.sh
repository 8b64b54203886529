#!/usr/bin/env bash
# The tests: set up (quick when done), lint and format checks, the import contracts, a
# strict build of the docs site, then pytest. `--quick`: only the tests not marked e2e
# (no server, no whole flow; tests/unit). Other arguments go to pytest.
set -euo pipefail
quick=0
if [ "${1:-}" = "--quick" ]; then quick=1; shift; fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
# The HTML data card and the annotator tests open pages in headless Chromium (Debian's
# chromium and chromium-driver, with Noto CJK so that Korean and Japanese text renders in
# the screenshots): installed here when absent and apt-get can; otherwise those tests
# skip and say why.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[test] installing Debian's chromium and chromium-driver (the HTML card test)"
    log="$(mktemp)"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver fonts-noto-cjk \
           || { apt-get update -q && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -q chromium chromium-driver fonts-noto-cjk; }; } >"$log" 2>&1; then
      echo "[test] could not install chromium (see $log); the HTML card test will skip"
    fi
  else
    echo "[test] chromium is not installed and apt-get is not usable here; the HTML card test will skip"
  fi
fi
# Label Studio's offline test traces the server's connections with strace (issue 51)
if ! command -v strace >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q strace >/dev/null 2>&1 \
    || echo "[test] could not install strace; Label Studio's offline test will skip"
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# the import contracts of pyproject.toml ([tool.importlinter])
.venv/bin/lint-imports --no-cache
# the docs site (mkdocs.yml, docs/): every page and link must build without a warning
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
if [ "$quick" = 1 ]; then
  exec .venv/bin/python -m pytest -n "${BENCHFORGE_TEST_WORKERS:-2}" --dist loadfile -m "not e2e" "$@"
fi
# Two workers (pytest-xdist), each taking whole test files, so that one file's module
# fixtures (a Label Studio server, a rebuild) run once: about 1.5x faster on two cores,
# where much of a test is waiting on a server or a subprocess. BENCHFORGE_TEST_WORKERS=0
# runs them in this process.
# --durations: the slowest tests in the log, to watch CI's 30-minute budget
exec .venv/bin/python -m pytest -n "${BENCHFORGE_TEST_WORKERS:-2}" --dist loadfile --durations=25 "$@"
