#!/usr/bin/env bash
# The real MiniWoB++ benchmark page by page (tests/e2e/bench-miniwob.mjs): every page of the
# miniwob package through the lab's environment — reset, getDOMInfo, determinism, random and
# oracle episodes. Arguments: task names (default: all 130). RANDOM_SEEDS, ORACLE_SEEDS, OUT.
exec "$(dirname "$0")/with-app.sh" tests/e2e/bench-miniwob.mjs "$@"
