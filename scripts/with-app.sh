#!/usr/bin/env bash
# Shared by the benchmark and training commands: installs what is missing, builds the app, then
# runs the given node script (tests/e2e/*.mjs) against the build with the remaining arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
trunk build
exec node "$@"
