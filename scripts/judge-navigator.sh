#!/usr/bin/env bash
# Judges a navigator checkpoint zero-shot on the live DOM: the 5 test sites × 4 levels and the
# form tasks, greedy, in headless Chromium, beside the CoDE paper's Table 1.
# Usage: scripts/judge-navigator.sh CHECKPOINT.wln [seeds per cell (50)] [first seed]
exec "$(dirname "$0")/with-app.sh" tests/e2e/judge-navigator.mjs "$@"
