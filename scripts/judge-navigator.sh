#!/usr/bin/env bash
# Judges a navigator checkpoint zero-shot on the live DOM: the 5 test sites × 4 levels and the
# form tasks, greedy, in headless Chromium, beside the CoDE paper's Table 1. With --ship it also
# ships it: agents/NAME.wln and its manifest entry, written from this judging and the run's folder.
# Usage: scripts/judge-navigator.sh CHECKPOINT.wln [seeds per cell (50)] [first seed (Lab.navigatorReportSeed)]
#          [--ship NAME --run-dir DIR --command "the training command" | --rejudge NAME]
exec "$(dirname "$0")/with-app.sh" tests/e2e/judge-navigator.mjs "$@"
