#!/usr/bin/env bash
# The navigator trained in the tab: the built app's Train view trains it on one fixed test site
# (login level 0 by default) in headless Chromium until its success-grid cell reaches 90%, printing
# the cell, env steps/s and updates/s over time; then the exported checkpoint is judged zero-shot
# on the live DOM. A benchmark, not a test.
# Usage: scripts/bench-navigator-tab.sh [--site S] [--level L] [--minutes M] ... (tests/e2e/bench-navigator-tab.mjs)
exec "$(dirname "$0")/with-app.sh" tests/e2e/bench-navigator-tab.mjs "$@"
