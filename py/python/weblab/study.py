"""Studies: a grid of training runs (generators × seeds) as Ray tasks, each in its own folder,
each resumable. ``python -m weblab.study study.toml``.

A task that fails or whose worker dies is retried (``retries``) and resumes from the snapshot in
its folder; one that runs past ``timeout_minutes`` of wall-clock is cancelled and started again
the same way. With no cluster Ray starts locally on this machine's cores; with ``RAY_ADDRESS``
set it joins that cluster unchanged. The results are collected into ``results.md`` (the README's
CoDE table: per test site the mean over levels 0–3 and level 3), ``results.json`` and
``curves.png`` (every run's grid mean and level-3 mean over training); each run's
folder holds its ``plot.png``, ``best.wln`` and ``summary.json``.

With ``live_judge_seeds`` set, each finished run's ``best.wln`` is then judged on the live DOM as
well (greedy, in headless Chromium, ``weblab.browser.judge_grid``: the figures the papers' tables
compare), and ``results.md`` holds both tables. That needs a weblab checkout with the built app
(``WEBLAB_CHECKOUT``, default: the working directory; checked before any run starts). A run's
live grid is kept in its folder (``live.json``, with the checkpoint's digest), so a study started
again judges only what changed.

The study file (TOML; every key is checked before anything starts)::

    out = "runs/my-study"          # the study's folder (relative to the working directory)
    generators = ["code", "dr"]    # paired, flexible_paired, flexible_b_paired, code, alp, dr, cl
    seeds = [1, 2, 3]
    minutes = 60                   # training minutes per run (judging not counted)
    # iterations = 2000            # or stop at this many iterations (a reproducible run)
    judge_every_minutes = 10
    judge_seeds = 50
    snapshot_every_minutes = 5
    timeout_minutes = 120          # wall-clock per attempt
    retries = 2
    cpus_per_run = 2               # each run trains its navigators on a thread each
    # live_judge_seeds = 50        # then judge each best.wln on the live DOM, this many seeds a cell
    # live_browsers = 2            # ... spread over this many Chromiums
    [generator_options]            # per generator, keys of its spec (weblab.check_config checks them)
    code = { config = { max_pages = 10 } }   # an adversary's K; dr = { max_pages = 10 } for DR's
    [config]                       # any further run-config keys (navigator, loop, ...) for every run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from . import LEVELS, TEST_SITES, check_config

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

GENERATORS = ("paired", "flexible_paired", "flexible_b_paired", "code", "alp", "dr", "cl")
KEYS = {
    "out", "generators", "seeds", "minutes", "iterations", "judge_every_minutes", "judge_every_iterations", "judge_seeds",
    "snapshot_every_minutes", "snapshot_every_iterations", "timeout_minutes", "retries", "cpus_per_run", "config", "name",
    "live_judge_seeds", "live_browsers", "generator_options",
}


@dataclass
class Study:
    name: str
    out: Path
    runs: list[tuple[str, dict[str, Any]]]  # (folder name, run config)
    timeout_s: float
    retries: int
    cpus_per_run: float
    source: dict[str, Any] = field(default_factory=dict)
    live_judge_seeds: int = 0  # 0: the simulator's judging only
    live_browsers: int = 2


def _number(d: dict, key: str, lo: float, hi: float, integer: bool = False, default=None):
    v = d.get(key, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
        raise ValueError(f"{key}: expected {'an integer' if integer else 'a number'}, not {v!r}")
    if not lo <= v <= hi:
        raise ValueError(f"{key}: {v} is outside {lo}..{hi}")
    return v


def _generator(key: str) -> dict[str, Any]:
    if key == "dr":
        return {"kind": "dr"}
    if key == "cl":
        return {"kind": "cl"}
    return {"kind": "adversary", "objective": key}


def parse(text: str, base: Path = Path(".")) -> Study:
    """A study from its TOML text; ``ValueError`` names the first bad key. Every run's config is
    checked by the native core too, so a bad ``[config]`` fails here, before anything starts."""
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"the study file is not TOML: {e}") from None
    unknown = sorted(set(d) - KEYS)
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown key (known: {', '.join(sorted(KEYS))})")
    gens = d.get("generators")
    if not isinstance(gens, list) or not gens or not all(isinstance(g, str) for g in gens):
        raise ValueError("generators: a non-empty list of names (" + ", ".join(GENERATORS) + ")")
    for g in gens:
        if g not in GENERATORS:
            raise ValueError(f"generators: unknown generator {g!r} (" + ", ".join(GENERATORS) + ")")
    seeds = d.get("seeds")
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**63 for s in seeds):
        raise ValueError("seeds: a non-empty list of integers ≥ 0")
    if len(set(seeds)) != len(seeds) or len(set(gens)) != len(gens):
        raise ValueError("seeds/generators: each may appear once")
    out = d.get("out")
    if not isinstance(out, str) or not out:
        raise ValueError("out: the study's folder (a string)")
    extra = d.get("config", {})
    if not isinstance(extra, dict):
        raise ValueError("config: a table of run-config keys")
    options = d.get("generator_options", {})
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise ValueError("generator_options: a table of tables, one per generator")
    for g in options:
        if g not in gens:
            raise ValueError(f"generator_options.{g}: not one of the study's generators ({', '.join(gens)})")
        if "kind" in options[g] or "objective" in options[g]:
            raise ValueError(f"generator_options.{g}: kind and objective are the generator's name")
    minutes = _number(d, "minutes", 0.01, 100_000, default=5.0)
    base_cfg: dict[str, Any] = dict(extra)
    base_cfg["minutes"] = minutes
    for key, native_key, scale in (
        ("iterations", "iterations", None),
        ("judge_every_minutes", "judge_every_s", 60.0),
        ("judge_every_iterations", "judge_every_iterations", None),
        ("snapshot_every_minutes", "snapshot_every_s", 60.0),
        ("snapshot_every_iterations", "snapshot_every_iterations", None),
        ("judge_seeds", "judge_seeds", None),
    ):
        v = _number(d, key, 0.001 if scale else 1, 10**12, integer=scale is None)
        if v is not None:
            base_cfg[native_key] = v * scale if scale else v
    runs = []
    for g in gens:
        for s in seeds:
            cfg = dict(base_cfg, generator=dict(_generator(g), **options.get(g, {})), seed=s)
            for k in ("generator", "seed"):
                if k in extra:
                    raise ValueError(f"config.{k}: set by the study's generators and seeds")
            try:
                check_config(cfg)
            except ValueError as e:
                raise ValueError(f"config ({g}, seed {s}): {e}") from None
            runs.append((f"{g}-seed{s}", cfg))
    return Study(
        name=str(d.get("name", Path(out).name)),
        out=(base / out).resolve(),
        runs=runs,
        timeout_s=60.0 * _number(d, "timeout_minutes", 0.01, 10**6, default=24 * 60),
        retries=_number(d, "retries", 0, 100, integer=True, default=2),
        cpus_per_run=_number(d, "cpus_per_run", 0.1, 1024, default=1),
        source=d,
        live_judge_seeds=_number(d, "live_judge_seeds", 0, 10_000, integer=True, default=0),
        live_browsers=_number(d, "live_browsers", 1, 64, integer=True, default=2),
    )


def _train_task(cfg: dict[str, Any], run_dir: str) -> dict[str, Any]:
    """One run, in its folder (resumed from its snapshot when the folder holds one)."""
    from . import train

    Path(run_dir).mkdir(parents=True, exist_ok=True)
    # Who runs it now (a test kills it to check the resume).
    (Path(run_dir) / "worker.pid").write_text(str(os.getpid()))
    with open(Path(run_dir) / "train.log", "a") as log:
        summary = train(cfg, run_dir, lambda line: (log.write(line + "\n"), log.flush()))
    return summary


def checkout() -> Path:
    """The weblab checkout whose built app judges on the live DOM; ``ValueError`` says what is
    missing."""
    root = Path(os.environ.get("WEBLAB_CHECKOUT", ".")).resolve()
    dist = Path(os.environ.get("WEBLAB_DIST", root / "dist"))
    if not (root / "tests" / "e2e" / "judge-cells.mjs").exists():
        raise ValueError(f"live_judge_seeds: {root} is not a weblab checkout; set WEBLAB_CHECKOUT to one")
    if not (dist / "index.html").exists():
        raise ValueError(f"live_judge_seeds: no built app in {dist}; run `trunk build` in {root}")
    return root


def judge_live(study: Study, rows: list[dict[str, Any]], say=print) -> None:
    """Each finished run's best navigator on the live DOM: ``row["live_grid"]``, kept in the run's
    ``live.json`` for the same checkpoint and seeds."""
    from .browser import FIRST_SEED, judge_grid

    root = checkout()
    for r in rows:
        ckpt_path = study.out / r["name"] / "best.wln"
        if "failed" in r or not ckpt_path.exists():
            continue
        ckpt = ckpt_path.read_bytes()
        key = {"sha256": hashlib.sha256(ckpt).hexdigest(), "seeds": study.live_judge_seeds, "first": FIRST_SEED}
        cache = study.out / r["name"] / "live.json"
        kept = json.loads(cache.read_text()) if cache.exists() else {}
        if {k: kept.get(k) for k in key} == key and "grid" in kept:
            r["live_grid"] = kept["grid"]
            continue
        t0 = time.monotonic()
        grid = judge_grid(ckpt, seeds=study.live_judge_seeds, browsers=study.live_browsers, checkout=str(root))
        cache.write_text(json.dumps(dict(key, grid=grid, seconds=round(time.monotonic() - t0, 1))))
        r["live_grid"] = grid
        say(f"[study] {r['name']}: live DOM grid mean {100 * _mean(grid):.0f}% ({study.live_judge_seeds} seeds a cell)")


def _mean(grid: list[list[float]]) -> float:
    return sum(sum(row) for row in grid) / sum(len(row) for row in grid)


def run(study: Study, poll_s: float = 1.0, say=print) -> list[dict[str, Any]]:
    """Runs every run of the study on Ray (then judges them on the live DOM, if the study says
    so); returns their summaries (study order)."""
    import ray

    if study.live_judge_seeds:
        checkout()  # before hours of training, not after
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"))
    task = ray.remote(num_cpus=study.cpus_per_run, max_retries=study.retries, retry_exceptions=True)(_train_task)
    study.out.mkdir(parents=True, exist_ok=True)
    (study.out / "study.json").write_text(json.dumps({"name": study.name, "runs": [{"name": n, "config": c} for n, c in study.runs]}, indent=1))
    results: dict[str, dict[str, Any]] = {}
    attempts = {n: 0 for n, _ in study.runs}
    pending: dict[Any, tuple[str, dict, float]] = {}

    def start(name: str, cfg: dict) -> None:
        attempts[name] += 1
        ref = task.remote(cfg, str(study.out / name))
        pending[ref] = (name, cfg, time.monotonic())

    for name, cfg in study.runs:
        done = study.out / name / "summary.json"
        summary = json.loads(done.read_text()) if done.exists() else None
        if summary is not None and "iterations" in summary and _finished(cfg, summary):
            results[name] = summary
            say(f"[study] {name}: already finished")
        else:
            start(name, cfg)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=poll_s)
        for ref in ready:
            name, cfg, _ = pending.pop(ref)
            try:
                results[name] = ray.get(ref)
                say(f"[study] {name}: done, best grid mean {100 * results[name]['best_mean']:.0f}%")
            except Exception as e:  # retries are spent: report and go on with the others
                say(f"[study] {name}: failed after {attempts[name]} attempt(s): {str(e).splitlines()[0] if str(e) else type(e).__name__}")
                results[name] = {"failed": str(e)}
        now = time.monotonic()
        for ref, (name, cfg, t0) in list(pending.items()):
            if now - t0 > study.timeout_s:
                ray.cancel(ref, force=True)
                del pending[ref]
                if attempts[name] <= study.retries:
                    say(f"[study] {name}: over {study.timeout_s / 60:.1f} min, cancelled; resuming from its snapshot")
                    start(name, cfg)
                else:
                    say(f"[study] {name}: over {study.timeout_s / 60:.1f} min on its last attempt; given up")
                    results[name] = {"failed": "timed out"}
    ordered = [dict(results[n], name=n) for n, _ in study.runs]
    if study.live_judge_seeds:
        judge_live(study, ordered, say)
    write_results(study, ordered)
    return ordered


def _finished(cfg: dict, summary: dict) -> bool:
    if cfg.get("iterations") is not None and summary.get("iterations", 0) >= cfg["iterations"]:
        return True
    return summary.get("train_s", 0) >= 60 * cfg.get("minutes", 0)


def table(rows: list[dict[str, Any]], grid_key: str = "best_grid") -> str:
    """The README's CoDE table: per test site the best navigator's mean over levels 0–3 and, in
    brackets, level 3; then the grid's mean and the run's size. ``grid_key`` "live_grid" gives
    the live DOM's figures for the same navigators."""
    head = "| run | " + " | ".join(TEST_SITES) + " | grid mean | iterations | training min |"
    lines = [head, "|" + "---|" * (len(TEST_SITES) + 4)]
    for r in rows:
        if "failed" in r:
            lines.append(f"| {r['name']} | " + " | ".join("—" for _ in TEST_SITES) + f" | failed: {r['failed'][:60]} | | |")
            continue
        if grid_key != "best_grid" and grid_key not in r:
            lines.append(f"| {r['name']} | " + " | ".join("—" for _ in TEST_SITES) + " | not judged (no best.wln) | | |")
            continue
        grid = r[grid_key] or [[0.0] * LEVELS for _ in TEST_SITES]
        cells = [f"{100 * sum(row) / len(row):.0f} ({100 * row[-1]:.0f})" for row in grid]
        mean = r["best_mean"] if grid_key == "best_grid" else _mean(grid)
        lines.append(f"| {r['name']} | " + " | ".join(cells) + f" | {100 * mean:.0f} | {r['iterations']} | {r['train_s'] / 60:.1f} |")
    return "\n".join(lines) + "\n"


def write_results(study: Study, rows: list[dict[str, Any]]) -> None:
    (study.out / "results.json").write_text(json.dumps(rows, indent=1))
    note = ("Zero-shot success (%) of each run's best navigator on the simulator's test sites, greedy, on seeds never "
            "trained on: mean of levels 0–3 (level 3 in brackets).\n\n")
    live = ""
    if study.live_judge_seeds:
        live = (f"\nThe same navigators on the live DOM (headless Chromium, greedy, {study.live_judge_seeds} seeds a cell "
                "from 2^30; `weblab.browser.judge_grid`):\n\n" + table(rows, "live_grid"))
    (study.out / "results.md").write_text(f"# {study.name}\n\n" + note + table(rows) + live + "\n![curves](curves.png)\n")
    from . import _native

    runs = json.dumps([[r["name"], str(study.out / r["name"])] for r in rows])
    (study.out / "curves.png").write_bytes(_native.study_plot(f"{study.name}: the runs side by side", runs))


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m weblab.study", description="Runs a study file's grid of training runs on Ray.")
    ap.add_argument("study", help="the study file (TOML)")
    ap.add_argument("--check", action="store_true", help="check the file and list its runs; start nothing")
    args = ap.parse_args(argv)
    path = Path(args.study)
    try:
        study = parse(path.read_text(), Path.cwd())
    except (OSError, ValueError) as e:
        print(f"{path}: {e}", file=sys.stderr)
        return 2
    print(f"[study] {study.name}: {len(study.runs)} runs into {study.out}")
    if args.check:
        for name, cfg in study.runs:
            print(f"  {name}: {json.dumps(cfg)}")
        return 0
    if study.live_judge_seeds:
        try:
            checkout()
        except ValueError as e:
            print(f"{path}: {e}", file=sys.stderr)
            return 2
    rows = run(study)
    print(table(rows))
    if study.live_judge_seeds:
        print(table(rows, "live_grid"))
    return 0 if all("failed" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
