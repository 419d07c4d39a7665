#!/usr/bin/env bash
# The Python package's wheel (built by scripts/setup.sh) installs with pip into a fresh virtual
# environment, with its dependencies from PyPI, and a Gymnasium environment runs from it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
VENV="${WEBLAB_VENV:-$HOME/.cache/weblab-venv}"
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
"$VENV/bin/python" -m venv "$fresh"
"$fresh/bin/pip" install -q --disable-pip-version-check "$CARGO_TARGET_DIR"/wheels/weblab-*.whl
cd "$fresh"
"$fresh/bin/python" - <<'PY'
import gymnasium, weblab
env = gymnasium.make("weblab/Site-v0", site="login", level=0)
obs, _ = env.reset(seed=1)
assert obs["action_mask"].any()
print(f"[check-wheel] weblab {weblab.__file__}: a fresh virtual environment imports it and runs weblab/Site-v0")
PY
