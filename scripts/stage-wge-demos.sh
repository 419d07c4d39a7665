#!/usr/bin/env bash
# Stages a folder of published WGE/MiniWoB++ demonstration files (one subfolder per task page,
# as ../shared/reference/wge-demos/ or the published collection's sets hold them) where the
# browser benchmarks' test server serves them, target/wge-demos/ in the checkout, with an
# index.json listing each task's .json/.json.gz files (a browser cannot list a folder). Prints the
# served path for WGE_DEMOS. tests/bench_wge.rs takes the first ten of a task in name order.
# Usage: scripts/stage-wge-demos.sh FOLDER
set -euo pipefail
src="${1:?usage: stage-wge-demos.sh FOLDER (one subfolder of demonstration files per task)}"
[ -d "$src" ] || { echo "[stage-wge-demos] $src is not a folder" >&2; exit 1; }
cd "$(dirname "$0")/.."
dest=target/wge-demos
rm -rf "$dest"
mkdir -p "$dest"
index="{"
sep=""
for dir in "$src"/*/; do
  task="$(basename "$dir")"
  files=()
  while IFS= read -r f; do files+=("$f"); done < <(cd "$dir" && ls -1 | grep -E '\.json(\.gz)?$' | LC_ALL=C sort)
  [ "${#files[@]}" -gt 0 ] || continue
  mkdir -p "$dest/$task"
  list=""
  for f in "${files[@]}"; do
    cp "$dir/$f" "$dest/$task/"
    list+="${list:+,}\"$f\""
  done
  index+="$sep\"$task\":[$list]"
  sep=","
done
echo "$index}" > "$dest/index.json"
echo "$dest"
