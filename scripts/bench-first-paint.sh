#!/usr/bin/env bash
# First-paint benchmark: the page's and the learner worker's wasm, raw and gzipped, and the time
# from opening the Watch view on a warm local server to its first paint and its first agent step.
# Usage: scripts/bench-first-paint.sh [runs]   (default 5, after one warm-up visit)
exec "$(dirname "$0")/with-app.sh" tests/e2e/bench-first-paint.mjs "$@"
