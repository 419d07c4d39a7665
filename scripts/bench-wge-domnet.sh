#!/usr/bin/env bash
# DOMNet+WGE, the paper's column, on the same tasks and live pages as scripts/bench-wge.sh
# (tests/bench_wge.rs with WGE_NEURAL=1): per task ten scripted-oracle demonstrations, workflow
# exploration whose successes fill DOMNet's grouped replay, replay gradient steps and DOMNet's own
# on-policy episodes while it explores, then DOMNet greedy and the workflow policy's test mode on
# the same held-out seeds; wall-clock split into exploration, DOMNet training and test.
# The schedule's defaults are the paper's (NeuralConfig: every 5 episodes 30 gradient steps on 5
# replayed episodes, a group sampled once it holds 100, one on-policy episode per round); the
# README's run overrides them to fit an hour on the 2-core machine: 3000 100 1 "" 20 5 10 1 (why: README).
# Usage: scripts/bench-wge-domnet.sh [EPISODES (3000)] [TEST SEEDS (100)] [SEED (1)] [TASKS (all)]
#        [REPLAY_EVERY (5)] [REPLAY_STEPS (30)] [MIN_GROUP (100)] [ON_POLICY (1)]
# WGE_SHOW_FAILURES=N in the environment prints DOMNet's first N failed test episodes per task
# (the instruction and each action).
# Pages and demonstrations, from the environment: WGE_PAGES=miniwob runs on the real MiniWoB++
# pages (default: the lab's own, WGE_PAGES=lab); WGE_DEMO_DIR=FOLDER takes people's
# demonstrations in the published format, the first ten files in name order of FOLDER/<page>/
# (e.g. ../shared/reference/wge-demos), instead of ten scripted-oracle ones. WGE_WORDS=glove reads
# words through the shipped GloVe 6B 50-d vectors, held fixed (data/glove-6b-50d-tasks.wlv);
# WGE_DOMNET=paper takes the paper's §5 DOMNet instead of the code's; WGE_ALIGN=similar (with
# WGE_WORDS=glove) also aligns an element with a field by the largest cosine of their words (ours);
# WGE_ALIGN=similar-mean the same by the mean over the element's words of each one's best cosine
# (ours); WGE_ALIGN=classes aligns an element without text (an icon) by its class names (ours);
# a comma list takes several: similar-mean,classes.
set -euo pipefail
BENCH_TIMEOUT=7200 source "$(dirname "$0")/lib-bench.sh"
# Read at compile time by the benchmark (option_env!): the browser has no environment variables.
export WGE_NEURAL=1 WGE_EPISODES="${1:-3000}" WGE_TEST="${2:-100}" WGE_SEED="${3:-1}" WGE_TASKS="${4:-}"
export WGE_SHOW_FAILURES="${WGE_SHOW_FAILURES:-0}"
export WGE_PAGES="${WGE_PAGES:-lab}" WGE_DEMOS="" WGE_WORDS="${WGE_WORDS:-}" WGE_DOMNET="${WGE_DOMNET:-}" WGE_ALIGN="${WGE_ALIGN:-}"
if [ -n "${WGE_DEMO_DIR:-}" ]; then WGE_DEMOS="$(scripts/stage-wge-demos.sh "$WGE_DEMO_DIR")"; fi
export WGE_REPLAY_EVERY="${5:-5}" WGE_REPLAY_STEPS="${6:-30}" WGE_MIN_GROUP="${7:-100}" WGE_ON_POLICY="${8:-1}"
exec cargo test --release --target wasm32-unknown-unknown --test bench_wge -- --include-ignored --nocapture
