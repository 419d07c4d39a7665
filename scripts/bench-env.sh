#!/usr/bin/env bash
# Environment benchmark: episodes/s and steps/s of the random and oracle policies through the live
# iframe environment in headless Chromium. Usage: scripts/bench-env.sh [episodes] [task ...]
exec "$(dirname "$0")/with-app.sh" tests/e2e/bench-env.mjs "$@"
