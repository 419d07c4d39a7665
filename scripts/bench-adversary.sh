#!/usr/bin/env bash
# Adversary benchmark: trains the navigators with every objective (CoDE, Flexible b-PAIRED,
# Flexible PAIRED, PAIRED, ALP) and with DR and CL, from the same seed and the same training
# budget, natively on the site simulator, in the population loop (examples/train_adversary.rs).
# Each run prints over training the zero-shot grid (greedy, simulator, 20 seeds per cell), the
# share of active and passive primitives, the adversary's expected budget, regret, updates/s,
# env steps/s and wall-clock, and writes its best navigator; then every best navigator is judged
# on the live DOM (headless Chromium, scripts/judge-navigator.sh's judge, 50 seeds per cell).
# Usage: scripts/bench-adversary.sh [minutes of training per generator (5)] [seed (1)] [out dir]
#        SKIP_LIVE=1 leaves out the live-DOM judging.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
minutes="${1:-5}"
seed="${2:-1}"
out="${3:-$CARGO_TARGET_DIR/adversary-bench}"
mkdir -p "$out"
cargo build --release --example train_adversary
generators=(code flexible_b_paired flexible_paired paired alp dr cl)
for g in "${generators[@]}"; do
  "$CARGO_TARGET_DIR/release/examples/train_adversary" "$g" --seed "$seed" --minutes "$minutes" \
    --judge-every 60 --judge-seeds 20 --out "$out/navigator-$g-seed$seed.wln" | tee "$out/$g-seed$seed.log"
done
echo
echo "== summary (simulator, 20 seeds per cell) =="
for g in "${generators[@]}"; do grep -h '^SUMMARY' "$out/$g-seed$seed.log"; done
if [ -z "${SKIP_LIVE:-}" ]; then
  echo
  echo "== the best navigators on the live DOM (50 seeds per cell) =="
  scripts/setup.sh
  trunk build
  for g in "${generators[@]}"; do
    node tests/e2e/judge-navigator.mjs "$out/navigator-$g-seed$seed.wln" 50 | tee "$out/$g-seed$seed-live.txt"
  done
fi
