import json
import os
import signal
import time
from pathlib import Path

import pytest

import weblab
from weblab import population, study

from conftest import SMALL, small_config


def test_the_population_on_ray_actors_is_the_serial_loop(ray_local):
    cfg = small_config("paired", seed=4, iterations=20)
    serial = population.run_serial(cfg, 20)
    on_ray = population.run_on_ray(cfg, 20, num_cpus_per_actor=0.5)
    assert on_ray["iterations"] == serial["iterations"] == 20
    assert on_ray["returns"] == serial["returns"] and len(on_ray["returns"][0]) == 2, "2 actors, returns equal to the bit"
    assert on_ray["trajectory"] == serial["trajectory"] == weblab.train(cfg)["trajectory"]


STUDY = """
out = "{out}"
generators = ["dr", "code"]
seeds = [1]
iterations = {iterations}
judge_every_iterations = 1000
judge_seeds = 2
snapshot_every_iterations = 1
timeout_minutes = 10
retries = 2
cpus_per_run = 1
[config]
navigator = {navigator}
"""


def study_text(out, iterations=6):
    nav = "{ " + ", ".join(f"{k} = {v}" for k, v in SMALL.items()) + " }"
    return STUDY.format(out=out, iterations=iterations, navigator=nav)


def test_a_study_runs_its_grid_and_collects_one_table(ray_local, tmp_path):
    s = study.parse(study_text(tmp_path / "s"))
    assert [n for n, _ in s.runs] == ["dr-seed1", "code-seed1"]
    rows = study.run(s, say=lambda _: None)
    assert [r["name"] for r in rows] == ["dr-seed1", "code-seed1"] and all(r["iterations"] == 6 for r in rows)
    table = (tmp_path / "s" / "results.md").read_text()
    assert "| dr-seed1 |" in table and "| code-seed1 |" in table and "login" in table
    assert (tmp_path / "s" / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for n in ("dr-seed1", "code-seed1"):
        assert (tmp_path / "s" / n / "plot.png").exists() and (tmp_path / "s" / n / "summary.json").exists()
    assert rows[1]["trajectory"] == weblab.train(s.runs[1][1])["trajectory"], "a study's run is the run"


def test_a_run_killed_mid_study_resumes_from_its_snapshot_to_the_same_result(ray_local, tmp_path):
    whole = study.run(study.parse(study_text(tmp_path / "a", iterations=40)), say=lambda _: None)
    s = study.parse(study_text(tmp_path / "b", iterations=40))
    s.runs = s.runs[1:]  # code, seed 1
    import threading

    killed = []

    def killer():
        run_dir = tmp_path / "b" / "code-seed1"
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            pid_file, progress = run_dir / "worker.pid", run_dir / "progress.json"
            if pid_file.exists() and progress.exists() and not (run_dir / "summary.json").exists():
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
                killed.append(True)
            time.sleep(0.05)

    t = threading.Thread(target=killer)
    t.start()
    rows = study.run(s, say=lambda _: None)
    t.join()
    assert killed, "the run's worker was killed mid-run"
    assert rows[0]["sittings"] >= 2, "it resumed from its snapshot"
    assert rows[0]["trajectory"] == whole[1]["trajectory"]
    assert rows[0]["final_grid"] == whole[1]["final_grid"]


def test_a_run_over_its_time_is_cancelled(ray_local, tmp_path):
    text = study_text(tmp_path / "t", iterations=10**9).replace("timeout_minutes = 10", "timeout_minutes = 0.05").replace("retries = 2", "retries = 0")
    s = study.parse(text)
    s.runs = s.runs[:1]
    t0 = time.time()
    rows = study.run(s, say=lambda _: None)
    assert rows[0]["failed"] == "timed out" and time.time() - t0 < 60


@pytest.mark.parametrize(
    "change, message",
    [
        (("seeds = [1]", "seeds = [1]\nseedz = 3"), "seedz: unknown key"),
        (('generators = ["dr", "code"]', 'generators = ["dr", "codee"]'), "unknown generator 'codee'"),
        (("judge_seeds = 2", "judge_seeds = 0"), "judge_seeds"),
        (("retries = 2", "retries = -1"), "retries"),
        (("seeds = [1]", "seeds = []"), "seeds"),
        (("[config]", "[config]\nloop = { episodes = 0 }"), "episodes"),
        (("[config]", "[config]\nnavigatorr = 1"), "unknown field `navigatorr`"),
        (("seeds = [1]", "seeds = [1]\nlive_judge_seeds = -1"), "live_judge_seeds"),
        (("seeds = [1]", "seeds = [1]\nlive_browsers = 0"), "live_browsers"),
        (("[config]", "[generator_options]\npaired = { config = { max_pages = 10 } }\n[config]"), "generator_options.paired: not one of"),
        (("[config]", "[generator_options]\ncode = { config = { max_pages = 99 } }\n[config]"), "max_pages"),
        (("[config]", "[generator_options]\ndr = { kind = \"cl\" }\n[config]"), "kind and objective"),
    ],
)
def test_a_bad_study_file_is_refused_naming_the_key_before_anything_starts(tmp_path, change, message):
    text = study_text(tmp_path / "x").replace(*change)
    with pytest.raises(ValueError, match=message):
        study.parse(text)
    assert not (tmp_path / "x").exists()
    f = tmp_path / "bad.toml"
    f.write_text(text)
    assert study.main([str(f)]) == 2


def test_generator_options_reach_each_generators_spec():
    text = study_text("/tmp/unused").replace("[config]", "[generator_options]\ncode = { config = { max_pages = 10 } }\ndr = { max_pages = 10 }\n[config]")
    runs = dict(study.parse(text).runs)
    assert runs["code-seed1"]["generator"] == {"kind": "adversary", "objective": "code", "config": {"max_pages": 10}}
    assert runs["dr-seed1"]["generator"] == {"kind": "dr", "max_pages": 10}


def test_a_study_to_be_judged_live_without_a_built_checkout_is_refused_before_anything_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("WEBLAB_CHECKOUT", str(tmp_path))
    f = tmp_path / "live.toml"
    f.write_text(study_text(tmp_path / "x").replace("seeds = [1]", "seeds = [1]\nlive_judge_seeds = 5"))
    assert study.main([str(f)]) == 2
    assert not (tmp_path / "x").exists(), "no run started"
    with pytest.raises(ValueError, match="not a weblab checkout"):
        study.run(study.parse(f.read_text()), say=lambda _: None)


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[1] / "studies").glob("*.toml")), ids=lambda p: p.name)
def test_the_shipped_study_files_are_valid_and_name_the_long_runs_command(path):
    s = study.parse(path.read_text())
    assert s.runs, path
    if path.name.startswith("table1-"):
        # Issue #31's grid: every run at CoDE's budget, with the long runs' navigator and loop.
        # The variants change one thing each: the reference's bidirectional encoder, or the
        # navigators' cross-entropy from uniform.
        variant = {"table1-code-k10-bilstm.toml": {"bidirectional": True}, "table1-code-k10-uniform.toml": {"uniform_coef": 0.01}}
        navigator = {"click_choices": False, **variant.get(path.name, {})}
        for name, cfg in s.runs:
            assert cfg["minutes"] == 120, name
            assert cfg["navigator"] == navigator and cfg["loop"] == {"designs": 4}, name
        assert s.live_judge_seeds == 50, "the table's figures are the live DOM's"
        if path.name != "table1-code.toml":  # the K = 4 runs; the rest at the papers' K = 10
            for name, cfg in s.runs:
                g = cfg["generator"]
                assert (g.get("config") or g)["max_pages"] == 10, name
