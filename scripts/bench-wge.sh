#!/usr/bin/env bash
# The workflow policy alone on the paper's Table 1 tasks we have plus login-user, use-autocomplete,
# search-engine and book-flight, on the live task pages in headless Chromium (tests/bench_wge.rs,
# an ignored browser test run as a benchmark): ten scripted-oracle demonstrations per task, then
# training success by quarter, test-mode success on held-out seeds and wall-clock per task.
# Usage: scripts/bench-wge.sh [EPISODES (3000)] [TEST SEEDS (100)] [POLICY SEED (1)] [TASKS (all; comma-separated)]
# Pages and demonstrations, from the environment: WGE_PAGES=miniwob runs on the real MiniWoB++
# pages (default: the lab's own, WGE_PAGES=lab); WGE_DEMO_DIR=FOLDER takes people's
# demonstrations in the published format, the first ten files in name order of FOLDER/<page>/
# (e.g. ../shared/reference/wge-demos), instead of ten scripted-oracle ones.
set -euo pipefail
# A benchmark runs longer than a test: up to two hours.
BENCH_TIMEOUT=7200 source "$(dirname "$0")/lib-bench.sh"
# Read at compile time by the benchmark (option_env!): the browser has no environment variables.
export WGE_EPISODES="${1:-3000}" WGE_TEST="${2:-100}" WGE_SEED="${3:-1}" WGE_TASKS="${4:-}" WGE_NEURAL=0
export WGE_PAGES="${WGE_PAGES:-lab}" WGE_DEMOS=""
if [ -n "${WGE_DEMO_DIR:-}" ]; then WGE_DEMOS="$(scripts/stage-wge-demos.sh "$WGE_DEMO_DIR")"; fi
exec cargo test --release --target wasm32-unknown-unknown --test bench_wge -- --include-ignored --nocapture
