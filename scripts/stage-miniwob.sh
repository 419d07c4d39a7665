#!/usr/bin/env bash
# Serves the real MiniWoB++ pages beside the app: copies the `miniwob` package's html/ folder
# (fetched by scripts/setup.sh into the lab's cache, never into the repository) to miniwob/html/
# in the folder given (trunk's staging folder: Trunk.toml runs this after every build).
#   scripts/stage-miniwob.sh --dir        prints where the pages are cached
#   scripts/stage-miniwob.sh <folder>     copies them to <folder>/miniwob/html/
set -euo pipefail
MINIWOB_VERSION=1.1.0
DIR="${WEBLAB_MINIWOB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/weblab/miniwob-$MINIWOB_VERSION}"
if [ "${1:-}" = "--dir" ]; then echo "$DIR"; exit 0; fi
dest="${1:?usage: stage-miniwob.sh <folder> | --dir}"
if [ ! -f "$DIR/html/core/core.js" ]; then
  echo "[stage-miniwob] the MiniWoB++ pages are not in $DIR (scripts/setup.sh fetches them): building without them" >&2
  exit 0
fi
rm -rf "$dest/miniwob"
mkdir -p "$dest/miniwob"
cp -R "$DIR/html" "$dest/miniwob/html"
