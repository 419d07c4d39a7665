"""Ray on this machine, measured (a benchmark, not a test): prints its figures.

1. A 2-run study (DR, seeds 1 and 2, a fixed number of iterations) on 1 and on 2 Ray workers:
   wall-clock and the throughput ratio.
2. Ray's overhead per actor call: the population loop (PAIRED, 2 navigators) with its navigators
   on Ray actors against the serial loop in one process, and an empty actor call's round trip.
3. The same study on a 2-node cluster simulated on this machine (ray.cluster_utils.Cluster):
   the same results (trajectory digests) as on one node.

Usage: python py/benchmarks/bench_ray.py [--iterations N] [--population-iterations N]
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

import ray

import weblab

from weblab import population, study

STUDY = """
out = "{out}"
generators = ["dr"]
seeds = [1, 2]
iterations = {iterations}
judge_every_iterations = 1000000
judge_seeds = 20
snapshot_every_minutes = 5
timeout_minutes = 120
retries = 1
cpus_per_run = 1
"""


def run_study(out: Path, iterations: int):
    s = study.parse(STUDY.format(out=out, iterations=iterations))
    t0 = time.monotonic()
    rows = study.run(s, say=lambda _: None)
    return time.monotonic() - t0, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--population-iterations", type=int, default=100)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="weblab-bench-ray-"))
    print(f"[bench-ray] {time.strftime('%Y-%m-%d %H:%M')} — study: DR seeds 1, 2, {args.iterations} iterations each (judged once at the end, 20 seeds per cell)")

    walls = {}
    for workers in (1, 2):
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        wall, rows = run_study(tmp / f"w{workers}", args.iterations)
        ray.shutdown()
        walls[workers] = (wall, rows)
        steps = sum(r["env_steps"] for r in rows)
        print(f"  {workers} worker(s): {wall:.1f} s wall, {steps / wall:.0f} env steps/s over both runs")
    same = [r["trajectory"] for r in walls[1][1]] == [r["trajectory"] for r in walls[2][1]]
    print(f"  2 workers against 1: {walls[1][0] / walls[2][0]:.2f}× the throughput; the same runs either way: {same}")

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    cfg = {"generator": {"kind": "adversary", "objective": "paired"}, "seed": 1, "iterations": args.population_iterations}
    t0 = time.monotonic()
    serial = population.run_serial(cfg, args.population_iterations)
    t_serial = time.monotonic() - t0
    t0 = time.monotonic()
    remote = population.run_on_ray(cfg, args.population_iterations, num_cpus_per_actor=1)
    t_ray = time.monotonic() - t0

    @ray.remote
    class Echo:
        def ping(self, x):
            return x

    # The native loop alone (no Python between iterations): navigators in turn, and a thread each.
    native = {}
    for seq in (True, False):
        t0 = time.monotonic()
        out = weblab.train(dict(cfg, sequential=seq, judge_seeds=1, judge_every_iterations=10**9))
        native[seq] = time.monotonic() - t0
        assert out["trajectory"] == serial["trajectory"]

    e = Echo.remote()
    ray.get(e.ping.remote(0))
    n = 500
    t0 = time.monotonic()
    for i in range(n):
        ray.get(e.ping.remote(i))
    rtt = (time.monotonic() - t0) / n
    its = args.population_iterations
    print(f"[bench-ray] population loop, PAIRED (2 navigators), {its} iterations, all with the same trajectory "
          f"({serial['trajectory'] == remote['trajectory']}):\n"
          f"  native loop, navigators in turn {native[True]:.1f} s ({native[True] / its * 1e3:.1f} ms/iteration); a thread each {native[False]:.1f} s "
          f"({native[False] / its * 1e3:.1f} ms/iteration) [both include one judging of 20 cells × 1 seed]\n"
          f"  driver/learner split in one Python process {t_serial:.1f} s ({t_serial / its * 1e3:.1f} ms/iteration)\n"
          f"  navigators on 2 Ray actors {t_ray:.1f} s ({t_ray / its * 1e3:.1f} ms/iteration): {(t_ray - native[False]) / its * 1e3:+.1f} ms per "
          f"iteration (one call per actor, in parallel) against the native loop's threads; an empty actor call's round trip {rtt * 1e3:.2f} ms")
    ray.shutdown()

    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    wall, rows = run_study(tmp / "cluster", args.iterations)
    nodes = len([n for n in ray.nodes() if n["Alive"]])
    ray.shutdown()
    cluster.shutdown()
    same = [r["trajectory"] for r in rows] == [r["trajectory"] for r in walls[1][1]]
    print(f"[bench-ray] the study on a simulated {nodes}-node cluster: {wall:.1f} s wall; the same results as on one node: {same}")
    (tmp / "bench.json").write_text(json.dumps({"walls": {k: v[0] for k, v in walls.items()}, "serial_s": t_serial, "ray_s": t_ray, "rtt_s": rtt}))


if __name__ == "__main__":
    main()
