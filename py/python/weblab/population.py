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


def _loop(config: dict[str, Any], iterations: int, start_workers) -> dict[str, Any]:
    """``iterations`` of the loop: the driver proposes, ``play_all(proposal)`` (from
    ``start_workers(config_json, population)``) returns every navigator's result in order."""
    check_config(config)
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, not {iterations!r}")
    config_json = json.dumps(config)
    driver = _native.Driver(config_json)
    play_all, stop = start_workers(config_json, driver.population)
    returns, trajectory = [], ""
    try:
        for _ in range(iterations):
            rets, trajectory = driver.finish(play_all(driver.propose()))
            returns.append(rets)
    finally:
        stop()
    return {"iterations": driver.iteration, "returns": returns, "trajectory": trajectory}


def run_serial(config: dict[str, Any], iterations: int) -> dict[str, Any]:
    """``iterations`` of the loop with the navigators in this process, one after another."""

    def start(config_json: str, size: int):
        workers = [_Worker(config_json, i) for i in range(size)]
        return (lambda p: [w.play(p) for w in workers]), (lambda: None)

    return _loop(config, iterations, start)


def run_on_ray(config: dict[str, Any], iterations: int, num_cpus_per_actor: float = 1.0) -> dict[str, Any]:
    """``iterations`` of the loop with each navigator on a Ray actor (Ray started locally if it
    is not running; ``RAY_ADDRESS`` joins a cluster). Only proposals and results travel."""
    import ray

    check_config(config)  # before Ray starts
    if not ray.is_initialized():
        ray.init()
    actor = ray.remote(num_cpus=num_cpus_per_actor)(_Worker)

    def start(config_json: str, size: int):
        workers = [actor.remote(config_json, i) for i in range(size)]
        # ray.get returns the results in the order asked, whichever actor finished first.
        play_all = lambda p: ray.get([w.play.remote(p) for w in workers])  # noqa: E731
        return play_all, lambda: [ray.kill(w) for w in workers]

    return _loop(config, iterations, start)
