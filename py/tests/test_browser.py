import os
from pathlib import Path

import pytest

import weblab
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
