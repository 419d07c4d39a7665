#!/usr/bin/env bash
# Runs every test of the lab: native unit/integration tests, the browser tests (wasm-bindgen-test
# in headless Chromium), then builds the app and runs the end-to-end tests against it.
# Installs whatever is missing first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
say() { printf '\033[1m[test]\033[0m %s\n' "$*"; }

say "format and lints (cargo fmt, clippy natively and for the learner worker's wasm build)"
cargo fmt --check
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --profile shell --target wasm32-unknown-unknown --lib --features learner -- -D warnings

say "native tests"
cargo test --locked

say "browser tests (wasm-bindgen-test, headless Chromium)"
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=${WASM_BINDGEN_TEST_TIMEOUT:-900}
# The page's profile and features (index.html's first rust link, no LTO): shares the dependency
# build with `trunk build` and keeps the test wasm small enough to load quickly.
web_tests=()
for f in tests/web_*.rs; do web_tests+=(--test "$(basename "$f" .rs)"); done
cargo test --locked --profile shell --target wasm32-unknown-unknown "${web_tests[@]}"

say "building the app"
trunk build

say "end-to-end tests (the built app in headless Chromium)"
node --test --test-concurrency=1 tests/e2e/

say "the Python package (clippy, pytest with a local Ray, the wheel in a fresh virtual environment)"
VENV="${WEBLAB_VENV:-$HOME/.cache/weblab-venv}"
PYO3_PYTHON="$VENV/bin/python" cargo clippy --locked -p weblab-python -- -D warnings
# The browser actor's test needs the app just built; here it must run, not skip.
WEBLAB_REQUIRE_BROWSER=1 "$VENV/bin/python" -m pytest -q py/tests
scripts/check-wheel.sh
say "all tests passed"
