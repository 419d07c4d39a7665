#!/usr/bin/env bash
# Builds the lab and serves it at http://127.0.0.1:8080/ (installs what is missing first).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
exec trunk serve "$@"
