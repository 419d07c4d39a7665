#!/usr/bin/env bash
# gMiniWoB benchmark: env steps/s and episodes/s of the random and oracle policies on each test
# site and on random designs, live DOM in headless Chromium, and the test sites' DOM sizes.
# Usage: scripts/bench-gminiwob.sh [episodes] [level]
exec "$(dirname "$0")/with-app.sh" tests/e2e/bench-gminiwob.mjs "$@"
