#!/usr/bin/env bash
# DOM-Q-Net fed by workflow-guided exploration on the live login-user page (tests/bench_wge_dqn.rs,
# an ignored browser test run as a benchmark in headless Chromium): prints DOM-Q-Net's greedy
# success on 20 held-out seeds every EVAL_EVERY environment steps.
# Usage: scripts/bench-wge-dqn.sh [STEPS (3000)] [EVAL_EVERY (500)] [FEED 1|0 (0: DOM-Q-Net alone)] [SEED (1)]
set -euo pipefail
# A benchmark runs longer than a test: up to an hour.
BENCH_TIMEOUT=3600 source "$(dirname "$0")/lib-bench.sh"
# Read at compile time by the test (option_env!): the browser has no environment variables.
export WGE_DQN_STEPS="${1:-3000}" WGE_DQN_EVAL_EVERY="${2:-500}" WGE_DQN_FEED="${3:-1}" WGE_DQN_SEED="${4:-1}"
exec cargo test --release --target wasm32-unknown-unknown --test bench_wge_dqn -- --include-ignored --nocapture
