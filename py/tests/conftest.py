import pytest

# Small navigators: the tests check behaviour, not learning.
SMALL = {"vocab_cap": 300, "embedding_dim": 8, "latent_dim": 8}


def small_config(generator="code", seed=1, iterations=6, **kw):
    gen = {"kind": generator} if generator in ("dr", "cl") else {"kind": "adversary", "objective": generator}
    cfg = {
        "generator": gen,
        "seed": seed,
        "iterations": iterations,
        "minutes": 60,
        "judge_every_iterations": 1000,
        "judge_seeds": 2,
        "navigator": dict(SMALL),
    }
    cfg.update(kw)
    return cfg


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray for the whole session (a start costs seconds)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
