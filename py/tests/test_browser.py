import os
from pathlib import Path

import pytest

import weblab
from weblab import study
from weblab.browser import BrowserJudge

ROOT = Path(__file__).resolve().parents[2]
DIST = Path(os.environ.get("WEBLAB_DIST", ROOT / "dist"))
CHECKPOINT = ROOT / "agents" / "navigator-code.wln"

if not (DIST / "index.html").exists():
    if os.environ.get("WEBLAB_REQUIRE_BROWSER"):
        raise RuntimeError(f"the browser actor's test needs the built app in {DIST} (trunk build)")
    pytest.skip("no built app (trunk build) for the browser actor", allow_module_level=True)


def test_a_browser_actor_judges_a_cell_and_a_hung_call_is_killed_and_restarted(ray_local):
    judge = ray_local.remote(num_cpus=1)(BrowserJudge).remote(str(ROOT))
    ckpt = CHECKPOINT.read_bytes()
    with pytest.raises(Exception, match="took over"):
        ray_local.get(judge.judge.remote(ckpt, "login", 0, 2, timeout_s=0.001))
    out = ray_local.get(judge.judge.remote(ckpt, "login", 0, 2))
    assert out["episodes"] == 2
    # The live DOM and the simulator judge the same seeds alike.
    assert out["successes"] == round(2 * weblab.judge(ckpt, seeds=2)[0][0])
    assert ray_local.get(judge.stats.remote())["restarts"] >= 1
    ray_local.kill(judge)


LIVE_STUDY = """
out = "{out}"
generators = ["dr"]
seeds = [1]
iterations = 6
judge_every_iterations = 1000
judge_seeds = 1
timeout_minutes = 10
cpus_per_run = 1
live_judge_seeds = 1
live_browsers = 1
[config]
navigator = {{ vocab_cap = 300, embedding_dim = 8, latent_dim = 8 }}
"""


def test_a_study_judges_its_best_navigators_on_the_live_dom_once(ray_local, tmp_path, monkeypatch):
    monkeypatch.setenv("WEBLAB_CHECKOUT", str(ROOT))
    monkeypatch.setenv("WEBLAB_DIST", str(DIST))
    s = study.parse(LIVE_STUDY.format(out=tmp_path / "s"))
    [row] = study.run(s, say=lambda _: None)
    best = (tmp_path / "s" / "dr-seed1" / "best.wln").read_bytes()
    # Every cell judged in the browser, and as the simulator judges the same seeds.
    assert row["live_grid"] == weblab.judge(best, seeds=1)
    assert "on the live DOM" in (tmp_path / "s" / "results.md").read_text()
    kept = tmp_path / "s" / "dr-seed1" / "live.json"
    before = kept.stat().st_mtime_ns
    [again] = study.run(s, say=lambda _: None)
    assert again["live_grid"] == row["live_grid"] and kept.stat().st_mtime_ns == before, "the kept grid, not a new judging"
