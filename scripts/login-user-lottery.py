#!/usr/bin/env python3
"""How often a uniform random DOM-Q-Net action finds login-user's reward, in two worlds.

login-user (real MiniWoB++ page) has five leaves (label, username box, label, password box,
Login), two modes and 15 goal tokens, the username and the password being one token each.
A success needs exactly the username in its box and the password in its box when Login is
clicked (a type on Login clicks it too); the episode also ends after the step limit.

Two readings of "type token into a leaf that takes no text" (a label):
  lab      the lab's `type_clicks_untypable`: it is a click on the label, and a press on a label
           that has no control moves focus off the box (src/web/actuator.rs, focus_or_blur);
  authors  the reference code's: `core.elementClick(ref)` (click(), focus(): neither moves focus
           off the box) then the keys, which land in the box focused last; its limit lets 23
           steps run (`epi_step > 22`).

This checks whether that difference could be why the paper's exploration found login-user's
reward and ours did not (docs/benchmarks.md, "login-user: exploration is the wall").

    python3 scripts/login-user-lottery.py [episodes] [seed]
"""
import random
import sys

USER, PASS = 3, 7  # the two tokens' places in "Enter the username U and the password P into ..."
LABEL1, BOX1, LABEL2, BOX2, LOGIN = range(5)


def episode(world, rng, p_login=None, limit=22):
    boxes = {BOX1: [], BOX2: []}
    focus = None
    for _ in range(limit + 1 if world == "authors" else limit):
        if p_login is None:
            leaf = rng.randrange(5)
        else:
            leaf = LOGIN if rng.random() < p_login else rng.randrange(4)
        typing, token = rng.random() < 0.5, rng.randrange(15)
        if leaf == LOGIN:
            return boxes[BOX1] == [USER] and boxes[BOX2] == [PASS]
        if leaf in boxes:
            focus = leaf
            if typing:
                boxes[leaf].append(token)
        elif world == "lab":
            focus = None
        elif typing and focus is not None:
            boxes[focus].append(token)
    return False


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    print(f"successes per episode, {n:,} episodes each")
    for p_login, what in ((None, "uniform over the 5 leaves"), (0.1, "Login 10 % of steps"), (0.05, "Login 5 % of steps")):
        rates = [sum(episode(w, rng, p_login) for _ in range(n)) / n for w in ("lab", "authors")]
        print(f"  {what:26}  lab {rates[0]:.2e}   authors' code {rates[1]:.2e}")


if __name__ == "__main__":
    main()
