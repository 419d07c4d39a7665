#!/usr/bin/env python3
"""Writes navigator N of a run's snapshot (a train_adversary / study folder's run.wlpr) as a .wln
checkpoint, for inspect_navigator or the judging scripts, e.g. to look at a population's other
navigator than best.wln's:

    python3 scripts/extract-navigator.py RUN_DIR/run.wlpr 0 nav0.wln

The snapshot is the lab's checkpoint container (src/learn/checkpoint.rs: magic, version, header,
record, FNV-1a checksum); its record is length-prefixed parts, per navigator its checkpoint then
its optimiser's state, then the generator's state (PopulationTrainer::snapshot)."""
import struct
import sys

MAGIC = b"WEBLABPR"


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, which, out = sys.argv[1], sys.argv[2], sys.argv[3]
    data = open(src, "rb").read()
    if len(data) < 32 or data[:8] != MAGIC:
        print(f"{src}: not a run snapshot (run.wlpr)", file=sys.stderr)
        return 1
    if fnv1a(data[:-8]) != struct.unpack("<Q", data[-8:])[0]:
        print(f"{src}: its checksum does not match (changed or cut short)", file=sys.stderr)
        return 1
    at = 16 + struct.unpack("<I", data[12:16])[0]
    record = data[at + 8 : at + 8 + struct.unpack("<Q", data[at : at + 8])[0]]
    parts, i = [], 0
    while i < len(record):
        n = struct.unpack("<Q", record[i : i + 8])[0]
        parts.append(record[i + 8 : i + 8 + n])
        i += 8 + n
    navigators = (len(parts) - 1) // 2
    if not which.isdigit() or int(which) >= navigators:
        print(f"{src}: navigator {which}? the snapshot holds {navigators} (0 to {navigators - 1})", file=sys.stderr)
        return 1
    open(out, "wb").write(parts[2 * int(which)])
    print(f"wrote navigator {which} of {navigators} to {out} ({len(parts[2 * int(which)])} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
