#!/usr/bin/env bash
# The workflow policy alone on the paper's Table 1 tasks we have plus login-user, use-autocomplete,
# search-engine and book-flight, on the live task pages in headless Chromium (tests/bench_wge.rs,
# an ignored browser test run as a benchmark): ten scripted-oracle demonstrations per task, then
# training success by quarter, test-mode success on held-out seeds and wall-clock per task.
# Usage: scripts/bench-wge.sh [EPISODES (3000)] [TEST SEEDS (100)] [POLICY SEED (1)] [TASKS (all; comma-separated)]
set -euo pipefail
# A benchmark runs longer than a test: up to two hours.
BENCH_TIMEOUT=7200 source "$(dirname "$0")/lib-bench.sh"
# Read at compile time by the benchmark (option_env!): the browser has no environment variables.
export WGE_EPISODES="${1:-3000}" WGE_TEST="${2:-100}" WGE_SEED="${3:-1}" WGE_TASKS="${4:-}" WGE_NEURAL=0
exec cargo test --release --target wasm32-unknown-unknown --test bench_wge -- --include-ignored --nocapture
