"""Judging on the live DOM in parallel: each ``BrowserJudge`` owns one headless Chromium (Debian's,
driven by the lab's node driver ``tests/e2e/judge-cells.mjs`` with the built app from a checkout),
judges a navigator greedily on test-site cells, and is watched from outside: a call that runs
past its timeout kills the driver and its browser (the whole process group) and starts a fresh
one. ``judge_grid`` spreads a checkpoint's cells over several such judges as Ray actors.

The checkout is ``WEBLAB_CHECKOUT`` (default: the working directory), built with ``trunk build``
(its ``dist/``, or ``WEBLAB_DIST``).
"""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Optional

from . import LEVELS, REPORT_SEEDS_FROM, TEST_SITES

# A reported judging's first seed (the lab's `navigator::train::REPORT_SEEDS_FROM`): apart from the
# seeds training used (from 0) and from those a run judged on to pick its best navigator (from 2^30).
FIRST_SEED = REPORT_SEEDS_FROM


class BrowserJudge:
    """One Chromium, kept between calls; restarted from outside when a call hangs."""

    def __init__(self, checkout: Optional[str] = None, start_timeout_s: float = 180.0):
        self.checkout = Path(checkout or os.environ.get("WEBLAB_CHECKOUT", ".")).resolve()
        self.script = self.checkout / "tests" / "e2e" / "judge-cells.mjs"
        if not self.script.exists():
            raise ValueError(f"{self.checkout} is not a weblab checkout (no tests/e2e/judge-cells.mjs)")
        self.start_timeout_s = start_timeout_s
        self.proc: Optional[subprocess.Popen] = None
        self.restarts = 0
        self._next = 0

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            ["node", str(self.script)], cwd=self.checkout, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, start_new_session=True,
        )
        if self._read(self.start_timeout_s) != {"ready": True}:
            self.kill()
            raise RuntimeError("the browser did not start")

    def _read(self, timeout_s: float) -> Optional[dict]:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    return None  # the driver died
                return json.loads(line)

    def kill(self) -> None:
        """Ends the driver and its Chromium (their whole process group)."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None

    def judge(self, checkpoint: bytes, site: str, level: int, seeds: int, first: int = FIRST_SEED, timeout_s: float = 300.0) -> dict[str, Any]:
        """Greedy episodes on one test-site cell: {"successes", "episodes", "seconds"}. A call
        past ``timeout_s`` kills the browser and raises ``TimeoutError``; the next call starts a
        fresh one."""
        if site not in TEST_SITES or not 0 <= level < LEVELS:
            raise ValueError(f"site/level: no test site {site!r} level {level!r}")
        if not isinstance(seeds, int) or not 1 <= seeds <= 10_000:
            raise ValueError(f"seeds must be 1 to 10000, not {seeds!r}")
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                self.restarts += 1
            self._start()
        self._next += 1
        req = {"id": self._next, "checkpoint": base64.b64encode(bytes(checkpoint)).decode(), "site": site, "level": level, "first": first, "seeds": seeds}
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        out = self._read(timeout_s)
        if out is None:
            self.kill()
            self.restarts += 1
            raise TimeoutError(f"judging {site}-{level} took over {timeout_s:.0f} s; the browser was killed")
        if "error" in out:
            raise RuntimeError(f"judging {site}-{level}: {out['error']}")
        return {k: out[k] for k in ("successes", "episodes", "seconds")}

    def stats(self) -> dict[str, int]:
        """How often the browser was restarted after a hang or a crash."""
        return {"restarts": self.restarts}

    def close(self) -> None:
        self.kill()


def judge_grid(checkpoint: bytes, seeds: int = 50, browsers: int = 2, timeout_s: float = 600.0, checkout: Optional[str] = None) -> list[list[float]]:
    """A checkpoint judged on every test-site cell on the live DOM, the cells spread over
    ``browsers`` Ray actors with a Chromium each; success per site and level. A hung cell is
    retried once on a fresh browser."""
    import ray

    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"))
    actor = ray.remote(num_cpus=1)(BrowserJudge)
    judges = [actor.remote(checkout) for _ in range(max(1, browsers))]
    ref = ray.put(bytes(checkpoint))
    cells = [(s, l) for s in TEST_SITES for l in range(LEVELS)]
    try:
        grid = {}
        for attempt in range(2):
            calls = {judges[i % len(judges)].judge.remote(ref, s, l, seeds, FIRST_SEED, timeout_s): (s, l) for i, (s, l) in enumerate(cells) if (s, l) not in grid}
            for call, cell in calls.items():
                try:
                    r = ray.get(call)
                    grid[cell] = r["successes"] / r["episodes"]
                except (TimeoutError, ray.exceptions.RayTaskError):
                    if attempt == 1:
                        raise
        return [[grid[(s, l)] for l in range(LEVELS)] for s in TEST_SITES]
    finally:
        for j in judges:
            ray.kill(j)
