#!/usr/bin/env bash
# The shipped DOM-Q-Net agents, greedy on 50 held-out seeds, on the lab's page of their task and
# on the real MiniWoB++ page of that name (tests/e2e/eval-agents.mjs).
# Usage: scripts/eval-agents.sh [agent ...] [--episodes N]
exec "$(dirname "$0")/with-app.sh" tests/e2e/eval-agents.mjs "$@"
