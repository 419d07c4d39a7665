#!/usr/bin/env bash
# Environment benchmark: episodes/s and steps/s of the random and oracle policies through the live
# iframe environment in headless Chromium. Usage: scripts/bench-env.sh [episodes] [task ...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
trunk build
exec node tests/e2e/bench-env.mjs "$@"
