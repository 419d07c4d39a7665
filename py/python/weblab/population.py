"""The population loop with each navigator on its own worker: the generator (an adversary, DR or
CL) stays in the driver and proposes each iteration's designs and episode seeds; every navigator
plays its episodes and takes its update where it lives, and sends back only its episodes' returns
and counters. Navigators share nothing within an iteration, so the result for a seed is the serial
loop's, whatever order the workers finish in (``trajectory`` digests match ``weblab.train``'s).

``run_serial`` keeps the workers in this process (the reference); ``run_on_ray`` puts each on a
Ray actor. Navigator revival (``loop.revive_after``) needs the navigators side by side and is
refused here.
"""

from __future__ import annotations

import json
from typing import Any

from . import _native, check_config


class _Worker:
    """One navigator of the population."""

    def __init__(self, config_json: str, index: int):
        self.learner = _native.Learner(config_json, index)

    def play(self, proposal: str) -> str:
        return self.learner.play(proposal)

    def save(self) -> bytes:
        return self.learner.save()


def _loop(config: dict[str, Any], iterations: int, play_all) -> dict[str, Any]:
    check_config(config)
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, not {iterations!r}")
    driver = _native.Driver(json.dumps(config))
    returns, trajectory = [], ""
    for _ in range(iterations):
        proposal = driver.propose()
        rets, trajectory = driver.finish(play_all(proposal))
        returns.append(rets)
    return {"iterations": driver.iteration, "returns": returns, "trajectory": trajectory}


def run_serial(config: dict[str, Any], iterations: int) -> dict[str, Any]:
    """``iterations`` of the loop with the navigators in this process, one after another."""
    check_config(config)
    workers = [_Worker(json.dumps(config), i) for i in range(_native.Driver(json.dumps(config)).population)]
    return _loop(config, iterations, lambda p: [w.play(p) for w in workers])


def run_on_ray(config: dict[str, Any], iterations: int, num_cpus_per_actor: float = 1.0) -> dict[str, Any]:
    """``iterations`` of the loop with each navigator on a Ray actor (Ray started locally if it
    is not running; ``RAY_ADDRESS`` joins a cluster). Only proposals and results travel."""
    import ray

    check_config(config)
    if not ray.is_initialized():
        ray.init()
    actor = ray.remote(num_cpus=num_cpus_per_actor)(_Worker)
    size = _native.Driver(json.dumps(config)).population
    workers = [actor.remote(json.dumps(config), i) for i in range(size)]
    try:
        # ray.get returns the results in the order asked, whichever actor finished first.
        return _loop(config, iterations, lambda p: ray.get([w.play.remote(p) for w in workers]))
    finally:
        for w in workers:
            ray.kill(w)
