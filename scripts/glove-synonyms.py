#!/usr/bin/env python3
"""How far the shipped GloVe vectors alone tell click-checkboxes-soft's synonyms apart.

The real page (MiniWoB++ 1.1.0) draws 3-7 boxes, each labelled with a word of its own synonym
group, and 1-5 goal words, each drawn again from the group of a box to click. This samples
episodes the same way from the page's own SYNONYMS and counts, with the cosine of the shipped
table's vectors (data/glove-6b-50d-tasks.wlv, the words DOMNet's `align_similar` compares):
  - how often a goal word's nearest label is its own box's,
  - how often every goal word's nearest label is its box and no other box is chosen (a whole
    episode solved by "each goal word clicks its nearest label").
Usage: scripts/glove-synonyms.py [EPISODES (20000)] [SEED (1)]
"""
import math
import os
import random
import re
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def table(path):
    b = open(path, "rb").read()
    assert b[:8] == b"WLWORDS1", "not a word-vector table"
    dim, count, source_len = struct.unpack("<III", b[8:20])
    at = 20 + source_len
    words = []
    for _ in range(count):
        n = b[at]
        words.append(b[at + 1 : at + 1 + n].decode())
        at += 1 + n
    scales = struct.unpack(f"<{count}f", b[at : at + 4 * count])
    at += 4 * count
    codes = struct.unpack(f"<{count * dim}b", b[at : at + count * dim])
    out = {}
    for i, w in enumerate(words):
        v = [c * scales[i] for c in codes[i * dim : (i + 1) * dim]]
        norm = math.sqrt(sum(x * x for x in v)) or 1.0
        out[w] = [x / norm for x in v]
    return out


def synonym_groups():
    cache = subprocess.run([os.path.join(ROOT, "scripts/stage-miniwob.sh"), "--dir"], capture_output=True, text=True, check=True).stdout.strip()
    page = open(os.path.join(cache, "html/miniwob/click-checkboxes-soft.html")).read()
    body = page.split("var SYNONYMS")[1].split("];")[0]
    return [re.findall(r"'(\w+)'", g) for g in re.findall(r"\[([^\[\]]*)\]", body)]


def main():
    episodes = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    vectors = table(os.path.join(ROOT, "data/glove-6b-50d-tasks.wlv"))
    groups = synonym_groups()
    missing = sorted({w for g in groups for w in g if w.lower() not in vectors})

    def cos(a, b):
        va, vb = vectors.get(a.lower()), vectors.get(b.lower())
        return sum(x * y for x, y in zip(va, vb)) if va and vb else 0.0

    words_right = words = whole = 0
    for _ in range(episodes):
        k = rng.randint(1, 5)
        n = rng.randint(max(3, k + 1), 7)
        drawn = rng.sample(range(len(groups)), n)
        labels = [rng.choice(groups[g]) for g in drawn]
        goals = [rng.choice(groups[g]) for g in drawn[:k]]
        picks = set()
        for i, goal in enumerate(goals):
            best = max(range(n), key=lambda j: cos(goal, labels[j]))
            picks.add(best)
            words_right += best == i
            words += 1
        whole += picks == set(range(k))
    print(f"{len(groups)} synonym groups, {sum(map(len, groups))} words; not in the table: {missing or 'none'}")
    print(f"a goal word's nearest label is its box: {100 * words_right / words:.1f} % of {words} goal words")
    print(f"every goal word's nearest label is its box, no other box: {100 * whole / episodes:.1f} % of {episodes} episodes")


if __name__ == "__main__":
    main()
