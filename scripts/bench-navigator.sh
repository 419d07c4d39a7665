#!/usr/bin/env bash
# Navigator benchmark: trains with Domain Randomization and with the scheduled curriculum (CL)
# from the same seed, natively on the site simulator, printing over training time the success
# grid on the test sites (judged on the simulator), env steps/s and updates/s; each run writes its
# best checkpoint, which scripts/judge-navigator.sh then judges on the live DOM.
# Usage: scripts/bench-navigator.sh [minutes per generator (20)] [seed (1)] [out dir (target dir)]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
export PATH="$HOME/.cargo/bin:$PATH"
minutes="${1:-20}"
seed="${2:-1}"
out="${3:-$CARGO_TARGET_DIR/navigators}"
mkdir -p "$out"
cargo build --release --example train_navigator
for g in dr cl; do
  "$CARGO_TARGET_DIR/release/examples/train_navigator" "$g" --seed "$seed" --minutes "$minutes" \
    --judge-every $((minutes * 6)) --judge-seeds 20 --out "$out/navigator-$g-seed$seed.wln"
done
echo "checkpoints in $out; judge them on the live DOM with scripts/judge-navigator.sh FILE"
