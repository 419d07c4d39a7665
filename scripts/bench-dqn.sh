#!/usr/bin/env bash
# DOM-Q-Net benchmark: trains single-task on click-test, click-button, focus-text, enter-text and
# login-user in headless Chromium and prints steps and time to 90% success, backend, inference
# latency, updates/s and main-thread long tasks. `--multitask` runs the paper's 9-task set.
# Usage: scripts/bench-dqn.sh [--tasks a,b] [--backends cpu,webgpu] [--multitask --budget N] ...
# (options: tests/e2e/bench-dqn.mjs)
exec "$(dirname "$0")/with-app.sh" tests/e2e/bench-dqn.mjs "$@"
