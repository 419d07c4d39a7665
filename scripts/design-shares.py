#!/usr/bin/env python3
"""The share of a generator run's designs holding each named primitive, over training.

Reads RUN_DIR/progress.json (written by `train_adversary --run-dir`): its `history` counts each
primitive in blocks of consecutive iterations, and its `points` map iterations to training
minutes. Prints one row per primitive, one column per sampled block (the training minute at the
block's end).

    scripts/design-shares.py RUN_DIR [PRIMITIVE ...] [--columns N]

Primitives by name (src/gminiwob/primitive.rs), default: state rememberme stayloggedin.
E.g. `scripts/design-shares.py runs/code-revive/k10-s1 state` — the table of
docs/benchmarks-code.md, "Why the `state` select stays unset".
"""

import bisect
import json
import re
import sys
from pathlib import Path

PRIMITIVE_RS = Path(__file__).resolve().parent.parent / "src" / "gminiwob" / "primitive.rs"


def primitive_indices():
    """Name → design index (1..=40), read from the Rust table so the two never disagree."""
    found = re.findall(r'^\s*p\((\d+), "([a-z0-9_]+)"', PRIMITIVE_RS.read_text(), re.M)
    return {name: int(i) for i, name in found}


def main(argv):
    args, columns = [], 10
    it = iter(argv)
    for a in it:
        if a == "--columns":
            columns = int(next(it, "10"))
        else:
            args.append(a)
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    run, names = Path(args[0]), args[1:] or ["state", "rememberme", "stayloggedin"]
    try:
        progress = json.loads((run / "progress.json").read_text())
        history, points = progress["history"], progress["points"]
    except (OSError, ValueError, KeyError) as e:
        print(f"{run}: no run progress with a primitive history ({e})", file=sys.stderr)
        return 1
    index = primitive_indices()
    unknown = [n for n in names if n not in index]
    if unknown:
        print(f"unknown primitive(s) {', '.join(unknown)}; known: {' '.join(sorted(index))}", file=sys.stderr)
        return 2
    blocks, length = history["blocks"], history["block"]
    if not blocks or not points:
        print(f"{run}: the run has not reported yet", file=sys.stderr)
        return 1
    iterations = [p["iteration"] for p in points]

    def minute(iteration):
        k = min(bisect.bisect_left(iterations, iteration), len(points) - 1)
        return points[k]["train_min"]

    step = max(1, len(blocks) // columns)
    picked = list(range(0, len(blocks), step))
    if picked[-1] != len(blocks) - 1:
        picked.append(len(blocks) - 1)
    # A block covers `length` iterations; the last one may be partly filled.
    header = ["minute"] + [f"{minute(min((i + 1) * length, iterations[-1])):.0f}" for i in picked]
    print(f"{run}: % of designs holding each primitive ({len(blocks)} blocks of {length} iterations)")
    print("  ".join(f"{h:>12}" if j == 0 else f"{h:>4}" for j, h in enumerate(header)))
    for name in names:
        cells = []
        for i in picked:
            designs, counts = blocks[i]
            cells.append(f"{100 * counts[index[name] - 1] / designs:4.0f}" if designs else "   -")
        print(f"{name:>12}  " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
