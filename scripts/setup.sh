#!/usr/bin/env bash
# Installs whatever this machine lacks to build, serve and test the lab. Safe to run repeatedly:
# each step checks first. Pinned versions: see ../README.md ("Toolchain").
set -euo pipefail
cd "$(dirname "$0")/.."

TRUNK_VERSION=0.21.14          # 0.22 needs a newer rustc than 1.95
WASM_OPT_VERSION=0.116.1       # binaryen 116; Debian's binaryen 108 corrupts wasm-bindgen output
WEBPKI_ROOTS_PIN=1.0.10        # the registry lacks the version wasm-bindgen-cli's lockfile wants
MINIWOB_VERSION=1.1.0          # the real MiniWoB++ pages: src/env/miniwob.rs, tasks/miniwob.json
# The Python package (py/): built with maturin into its virtual environment, with Ray beside it.
PY_TOOLS="maturin==1.16.0 gymnasium==1.4.0 numpy ray[default]==2.60.0 pytest"
VENV="${WEBLAB_VENV:-$HOME/.cache/weblab-venv}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

for component in clippy rustfmt; do
  if ! rustup component list --installed | grep -q "^$component"; then
    say "adding the $component component"
    rustup component add "$component"
  fi
done

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  say "installing Debian's chromium and chromium-driver"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi

if [ "$(trunk --version 2>/dev/null || true)" != "trunk $TRUNK_VERSION" ]; then
  say "installing trunk $TRUNK_VERSION (about 6 minutes)"
  cargo install trunk --version "$TRUNK_VERSION" --locked
fi

# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly.
WB_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null || true)" != "wasm-bindgen $WB_VERSION" ]; then
  say "installing wasm-bindgen-cli $WB_VERSION"
  if ! cargo install wasm-bindgen-cli --version "$WB_VERSION" --locked; then
    say "retrying with webpki-roots pinned to $WEBPKI_ROOTS_PIN"
    crate=$(ls "$HOME"/.cargo/registry/cache/*/wasm-bindgen-cli-"$WB_VERSION".crate | head -n1)
    work=$(mktemp -d)
    tar xzf "$crate" -C "$work"
    (cd "$work/wasm-bindgen-cli-$WB_VERSION" &&
      CARGO_TARGET_DIR="$work/target" cargo update -p webpki-roots --precise "$WEBPKI_ROOTS_PIN" &&
      CARGO_TARGET_DIR="$work/target" cargo install --path . --locked)
    rm -rf "$work"
  fi
fi

if ! wasm-opt --version 2>/dev/null | grep -q "version 116"; then
  say "installing wasm-opt (binaryen 116, about 6 minutes)"
  cargo install wasm-opt --version "$WASM_OPT_VERSION" --locked
fi

# Trunk runs offline and calls `cargo metadata`, which needs every locked crate downloaded.
if [ ! -f "$CARGO_TARGET_DIR/.fetched" ] || [ Cargo.lock -nt "$CARGO_TARGET_DIR/.fetched" ]; then
  say "fetching crates"
  cargo fetch
  mkdir -p "$CARGO_TARGET_DIR" && touch "$CARGO_TARGET_DIR/.fetched"
fi

# The real MiniWoB++ benchmark: the `miniwob` package's html/ folder, from PyPI (no Python needed
# at run time; pip only downloads the wheel), unpacked into the lab's cache and served beside the
# app by every build (scripts/stage-miniwob.sh). Offline, the lab says how to get it and works on
# its own tasks, so a failed download is a warning, not an error.
MINIWOB_DIR=$(scripts/stage-miniwob.sh --dir)
if [ ! -f "$MINIWOB_DIR/html/core/core.js" ]; then
  say "fetching the MiniWoB++ pages (the miniwob $MINIWOB_VERSION package from PyPI)"
  work=$(mktemp -d)
  if python3 -m pip download --quiet --no-deps --disable-pip-version-check --dest "$work" "miniwob==$MINIWOB_VERSION" &&
    python3 - "$work"/miniwob-"$MINIWOB_VERSION"-*.whl "$work/unpacked" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith('miniwob/html/')])
PY
  then
    mkdir -p "$(dirname "$MINIWOB_DIR")"
    rm -rf "$MINIWOB_DIR"
    mkdir -p "$MINIWOB_DIR"
    mv "$work/unpacked/miniwob/html" "$MINIWOB_DIR/html"
    say "MiniWoB++ pages in $MINIWOB_DIR/html ($(find "$MINIWOB_DIR/html/miniwob" -name '*.html' | wc -l) tasks)"
  else
    say "WARNING: could not fetch the miniwob package; the lab works on its own tasks without it (run scripts/setup.sh again when online)"
  fi
  rm -rf "$work"
fi
# The browser tests' server (wasm-bindgen-test-runner) serves the checkout: they find the pages
# at miniwob/html/ in it (ignored by git), as the app does beside itself.
if [ -f "$MINIWOB_DIR/html/core/core.js" ] && [ ! -f miniwob/html/core/core.js ]; then
  scripts/stage-miniwob.sh .
fi

# The end-to-end tests and benchmarks drive Debian's chromium with playwright-core (no browser
# download).
if [ ! -d tests/e2e/node_modules/playwright-core ] || [ tests/e2e/package-lock.json -nt tests/e2e/node_modules/.package-lock.json ]; then
  say "installing the end-to-end test driver (playwright-core)"
  (cd tests/e2e && npm ci --no-audit --no-fund --silent)
fi

# The Python package: a virtual environment with maturin, Gymnasium, Ray and pytest, and the wheel
# of this checkout (py/, abi3 for CPython >= 3.10) built and installed in it whenever the sources
# changed. `pip install "$CARGO_TARGET_DIR"/wheels/weblab-*.whl` installs it anywhere else.
if [ ! -x "$VENV/bin/python" ]; then
  say "creating the Python package's virtual environment ($VENV)"
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-dev
    rm -rf "$VENV" && python3 -m venv "$VENV"
  fi
fi
if ! "$VENV/bin/python" -c "import gymnasium, ray, pytest, numpy" 2>/dev/null || ! "$VENV/bin/maturin" --version >/dev/null 2>&1; then
  say "installing the Python package's tools: $PY_TOOLS"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install -q --disable-pip-version-check $PY_TOOLS
fi
stamp="$CARGO_TARGET_DIR/wheels/.built"
if [ ! -f "$stamp" ] || [ -n "$(find py/src py/python py/Cargo.toml py/pyproject.toml src Cargo.toml Cargo.lock -newer "$stamp" -print -quit)" ]; then
  say "building the Python package's wheel (maturin, release)"
  rm -f "$CARGO_TARGET_DIR"/wheels/weblab-*.whl
  "$VENV/bin/maturin" build --quiet --release --locked -m py/Cargo.toml -o "$CARGO_TARGET_DIR/wheels"
  "$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$CARGO_TARGET_DIR"/wheels/weblab-*.whl
  touch "$stamp"
fi
