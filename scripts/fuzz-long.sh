#!/usr/bin/env bash
# The long fuzz run of docs/security.md: every decoder to 1,000,000 inputs, one process per
# target (a hang's watchdog then names its target), into DIR (default ~/.cache/weblab/fuzz):
# DIR/run.log (one summary line per finished target), DIR/artifacts (inputs that panicked, hung
# or ran away), DIR/corpus (the minimised corpus; scripts/fuzz-corpus.sh samples it into
# fuzz/corpus/). Resumable: a target whose summary is already in run.log is skipped.
# Usage: scripts/fuzz-long.sh [DIR] [INPUTS (1000000)] [SEED (11)]
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/weblab-target}"
dir="${1:-$HOME/.cache/weblab/fuzz}"; inputs="${2:-1000000}"; seed="${3:-11}"
mkdir -p "$dir/artifacts" "$dir/corpus"
cargo build --release --example fuzz
# Run a copy: a rebuild in the target dir must not replace the binary under a running fuzzer.
cp "$CARGO_TARGET_DIR/release/examples/fuzz" "$dir/fuzz"
targets=$(sed -n 's/.*Target { name: "\([a-z_]*\)".*/\1/p' fuzz/targets.rs)
for t in $targets; do
  if grep -q "^$t " "$dir/run.log" 2>/dev/null; then echo "[fuzz-long] $t: done"; continue; fi
  nice -n 19 "$dir/fuzz" "$t" --inputs "$inputs" --seed "$seed" --artifacts "$dir/artifacts" --write-corpus "$dir/corpus" >> "$dir/run.log"
done
cat "$dir/run.log"
