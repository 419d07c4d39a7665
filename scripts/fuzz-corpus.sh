#!/usr/bin/env bash
# Commits a sample of a long fuzz run's minimised corpus (`fuzz --write-corpus DIR`): per target,
# the 64 inputs of at most 8 kB whose names (a hash of the outcome class) sort first, so the
# sample is spread over outcome classes rather than the smallest inputs. tests/fuzz.rs replays
# fuzz/corpus/<target>/ on every test run.
# Inputs named found-* (a finding's input, kept as a regression) are left in place.
# Usage: scripts/fuzz-corpus.sh DIR [TARGET ...] (default: every target found in DIR)
set -euo pipefail
src="${1:?usage: fuzz-corpus.sh DIR [TARGET ...]}"; shift
cd "$(dirname "$0")/.."
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || for d in "$src"/*/; do targets+=("$(basename "$d")"); done
for t in "${targets[@]}"; do
  dest="fuzz/corpus/$t"
  # Inputs that once found a bug (found-*) stay; the sample is replaced.
  mkdir -p "$dest"; find "$dest" -type f ! -name 'found-*' -delete
  mapfile -t picked < <(find "$src/$t" -type f -size -8193c -printf "%f\n" | LC_ALL=C sort)
  for f in "${picked[@]:0:64}"; do cp "$src/$t/$f" "$dest/"; done
  echo "$t: $(ls "$dest" | wc -l) inputs, $(du -sk "$dest" | cut -f1) kB"
done
