import json

import pytest

import weblab
from weblab import population

from conftest import small_config


def test_a_run_from_python_is_the_native_loop_and_its_split_form_matches():
    cfg = small_config("code", seed=2, iterations=5)
    summary = weblab.train(cfg)
    assert summary["iterations"] == 5 and summary["generator"] == "CoDE"
    assert len(summary["best_grid"]) == len(weblab.TEST_SITES)
    split = population.run_serial(cfg, 5)
    assert split["trajectory"] == summary["trajectory"], "the driver/learner split plays the serial loop's iterations"
    assert weblab.train(cfg)["trajectory"] == summary["trajectory"], "the same seed, the same run"
    assert weblab.train(dict(cfg, seed=3))["trajectory"] != summary["trajectory"]


def test_a_run_folder_holds_its_snapshot_plot_and_summary_and_resumes(tmp_path):
    lines = []
    first = weblab.train(small_config("dr", iterations=3, snapshot_every_iterations=1), str(tmp_path), lines.append)
    assert any(l.startswith("SUMMARY") for l in lines)
    for f in ("run.wlpr", "progress.json", "summary.json", "plot.png", "best.wln"):
        assert (tmp_path / f).exists(), f
    more = weblab.train(small_config("dr", iterations=5, snapshot_every_iterations=1), str(tmp_path))
    assert (more["iterations"], more["sittings"]) == (5, 2)
    assert more["trajectory"] == weblab.train(small_config("dr", iterations=5))["trajectory"]
    grid = weblab.judge((tmp_path / "best.wln").read_bytes(), seeds=2)
    assert len(grid) == 5 and all(len(r) == 4 for r in grid)


@pytest.mark.parametrize(
    "bad, key",
    [
        ({"sed": 1}, "unknown field `sed`"),
        ({"minutes": -1}, "minutes"),
        ({"judge_seeds": 0}, "judge_seeds"),
        ({"generator": {"kind": "adversary", "objective": "nope"}}, "unknown variant `nope`"),
        ({"navigator": {"max_elements": 0}}, "max_elements"),
        ({"loop": {"episodes": 0}}, "episodes"),
    ],
)
def test_a_bad_config_raises_value_error_naming_the_field(bad, key):
    with pytest.raises(ValueError, match=key):
        weblab.train(bad)
    with pytest.raises(ValueError):
        weblab.check_config(bad)


def test_bad_checkpoints_raise_instead_of_crashing():
    with pytest.raises(ValueError):
        weblab.judge(b"not a checkpoint", seeds=2)
    with pytest.raises(ValueError):
        weblab.judge(b"", seeds=0)


def test_native_work_releases_the_gil():
    import threading

    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=tick)
    t.start()
    before = len(ticks)
    weblab.train(small_config("dr", iterations=30))
    during = len(ticks) - before
    done.set()
    t.join()
    assert during > 20, f"a Python thread ran {during} times while a run trained"
