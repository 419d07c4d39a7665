#!/usr/bin/env bash
# Ray on this machine (docs/python.md): a 2-run study on 1 and 2 workers, Ray's overhead per
# actor call against the serial population loop, and a simulated 2-node cluster.
# Usage: scripts/bench-ray.sh [iterations per run (300)] [population-loop iterations (100)]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
VENV="${WEBLAB_VENV:-$HOME/.cache/weblab-venv}"
exec "$VENV/bin/python" py/benchmarks/bench_ray.py --iterations "${1:-300}" --population-iterations "${2:-100}"
