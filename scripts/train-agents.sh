#!/usr/bin/env bash
# Trains the pretrained DOM-Q-Net agents the app ships: one single-task run per task in headless
# Chromium (until 90% success over 100 episodes, or the paper's budget), a greedy evaluation on 50
# held-out seeds, then agents/<task>.wlq and agents/manifest.json for those that pass.
# Usage: scripts/train-agents.sh [task ...] [--after-solved N] [--eval N] [--min-success F] ...
#        scripts/train-agents.sh task ... --multitask NAME [--budget N] [--preset fast-tab]  # one agent for all the tasks
# (default tasks and options: tests/e2e/train-agents.mjs)
exec "$(dirname "$0")/with-app.sh" tests/e2e/train-agents.mjs "$@"
