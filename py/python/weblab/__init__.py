"""weblab: the browser lab's native core for Python.

- ``weblab.envs``: gMiniWoB sites (the test sites, any design, DR/CL-drawn designs) as Gymnasium
  environments, registered as ``weblab/Site-v0`` and ``weblab/Generated-v0``;
- ``weblab.train`` / ``weblab.judge``: a whole training run of the population loop (the same loop
  as ``cargo run --example train_adversary``) and the judging of a saved navigator;
- ``weblab.population``: the population loop with each navigator on its own Ray actor;
- ``weblab.study``: grids of runs as resumable Ray tasks (``python -m weblab.study study.toml``);
- ``weblab.browser``: judging on the live DOM in headless Chromium, one browser per actor.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Optional

from . import _native
from ._native import LEVELS, REPORT_SEEDS_FROM, TEST_SITES

__all__ = ["train", "judge", "check_config", "TEST_SITES", "LEVELS", "REPORT_SEEDS_FROM"]


def check_config(config: dict[str, Any]) -> dict[str, Any]:
    """The run config with every default filled in; ``ValueError`` names a bad key or value."""
    if not isinstance(config, dict):
        raise ValueError(f"a run config is a dict, not {type(config).__name__}")
    return json.loads(_native.check_config(json.dumps(config)))


def train(config: dict[str, Any], run_dir: Optional[str] = None, log: Optional[Callable[[str], None]] = None) -> dict[str, Any]:
    """Runs the population loop as ``config`` says (``weblab::study::RunConfig``: generator, seed,
    minutes or iterations, judging, loop and navigator settings). In ``run_dir`` it writes
    snapshots and resumes from them, so a killed run goes on where it stopped. Returns the
    summary: the judged grids, counters, wall-clock and a digest of the whole trajectory."""
    check_config(config)
    return json.loads(_native.train(json.dumps(config), run_dir, log))


def judge(checkpoint: bytes, seeds: int = 50) -> list[list[float]]:
    """A saved navigator (``.wln`` bytes) judged greedily on the simulator's test sites: success
    per site (``TEST_SITES`` order) and level, on seeds never trained on."""
    return _native.judge(bytes(checkpoint), seeds)


def _register() -> None:
    import gymnasium

    for name in ("Site-v0", "Generated-v0"):
        if f"weblab/{name}" not in gymnasium.registry:
            entry = "weblab.envs:SiteEnv" if name == "Site-v0" else "weblab.envs:GeneratedEnv"
            gymnasium.register(id=f"weblab/{name}", entry_point=entry, vector_entry_point="weblab.envs:SiteVectorEnv")


_register()
