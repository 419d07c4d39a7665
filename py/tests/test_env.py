import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import weblab  # noqa: F401  (registers the environments)
from weblab import _native
from weblab.envs import SiteEnv, SiteVectorEnv


@pytest.mark.parametrize("kwargs", [dict(id="weblab/Site-v0", site="login", level=1), dict(id="weblab/Generated-v0", generator={"kind": "dr"})])
def test_the_environments_pass_gymnasiums_checker(kwargs):
    env = gymnasium.make(**kwargs)
    check_env(env.unwrapped, skip_render_check=True)


def test_seeded_resets_give_identical_observations_and_episodes():
    def episode(seed):
        env = SiteEnv(site="payment", level=2)
        obs, _ = env.reset(seed=seed)
        trace, rng = [obs], np.random.default_rng(7)
        for _ in range(30):
            open_ = np.flatnonzero(obs["action_mask"])
            obs, r, term, trunc, info = env.step(int(rng.choice(open_)))
            trace.append((obs, r, term, trunc, info["success"]))
            if term or trunc:
                break
        return trace

    a, b, c = episode(3), episode(3), episode(4)
    flat = lambda t: [x if not isinstance(x, tuple) else x[0] for x in t]
    assert all(all(np.array_equal(x[k], y[k]) for k in x) for x, y in zip(flat(a), flat(b))) and len(a) == len(b)
    assert [x[1:] for x in a[1:]] == [x[1:] for x in b[1:]]
    assert not np.array_equal(a[0]["element_tokens"], c[0]["element_tokens"]) or not np.array_equal(a[0]["field_tokens"], c[0]["field_tokens"])


def test_actions_click_and_type_and_the_mask_says_which_are_open():
    env = SiteEnv(site="login", level=0)
    obs, _ = env.reset(seed=1)
    f1 = env.observation_space["field_tokens"].shape[0] + 1
    assert env.action_space.n == env.observation_space["element_tokens"].shape[0] * f1
    assert obs["action_mask"].sum() > 0 and obs["field_tokens"].any() and obs["element_tokens"].any()
    closed = int(np.flatnonzero(obs["action_mask"] == 0)[-1])
    after, r, term, trunc, _ = env.step(closed)
    assert (r, term) == (0.0, False) and all(np.array_equal(after[k], obs[k]) for k in obs), "a closed action changes nothing"
    # A greedy walk through the open actions ends the episode within the step cap.
    for _ in range(40):
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        if term or trunc:
            break
    assert term or trunc


def test_the_vector_env_steps_a_batch_and_resets_what_ended():
    venv = SiteVectorEnv(num_envs=4, site="address", level=1)
    obs, _ = venv.reset(seed=11)
    assert obs["action_mask"].shape == (4, venv.single_action_space.n)
    one = SiteEnv(site="address", level=1)
    single, _ = one.reset(seed=12)
    assert np.array_equal(obs["element_tokens"][1], single["element_tokens"]), "env i of a seeded batch starts with seed + i"
    ended = 0
    for _ in range(60):
        actions = [int(np.flatnonzero(m)[-1]) if m.any() else 0 for m in obs["action_mask"]]
        obs, rew, term, trunc, info = venv.step(actions)
        ended += int(info["final"].sum())
    assert ended > 0 and rew.shape == (4,)


def test_bad_configs_and_calls_raise_value_errors_naming_the_problem():
    with pytest.raises(ValueError, match="unknown field `sitee`"):
        _native.SiteEnv('{"sitee": "login"}')
    with pytest.raises(ValueError, match="no test site"):
        SiteEnv(site="nowhere", level=0)
    with pytest.raises(ValueError, match="level"):
        SiteEnv(site="login")
    with pytest.raises(ValueError, match="max_elements"):
        SiteEnv(site="login", level=0, max_elements=0)
    env = SiteEnv(site="login", level=0)
    with pytest.raises(ValueError, match="reset first"):
        env._env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside"):
        env.step(10**9)


def test_make_vec_gives_the_batched_vector_env():
    venv = gymnasium.make_vec("weblab/Site-v0", num_envs=3, vectorization_mode="vector_entry_point", site="login", level=0)
    assert isinstance(venv, SiteVectorEnv) and venv.num_envs == 3
    obs, _ = venv.reset(seed=5)
    assert obs["element_tokens"].shape[0] == 3


def test_an_alp_adversary_designs_the_sites_and_learns_from_the_episodes():
    # Gymnasium's checker replays seeds and expects the same pages: it holds while a design stands
    # (here for all of the checker's episodes); the adversary's learning is checked below.
    env = gymnasium.make("weblab/Generated-v0", generator={"kind": "adversary", "objective": "alp"}, episodes_per_design=64).unwrapped
    check_env(env, skip_render_check=True)
    env = SiteEnv(generator={"kind": "adversary", "objective": "alp"}, episodes_per_design=2)
    rng = np.random.default_rng(3)
    firsts = []
    for episode in range(6):
        obs, _ = env.reset(seed=100 + episode)
        firsts.append(obs["element_tokens"].copy())
        for _ in range(30):
            open_ = np.flatnonzero(obs["action_mask"])
            if not len(open_):
                break
            obs, _, term, trunc, _ = env.step(int(rng.choice(open_)))
            if term or trunc:
                break
    # Each design is played for two episodes, then the adversary learns and proposes the next.
    assert any(not np.array_equal(firsts[0], f) for f in firsts[2:])
    with pytest.raises(ValueError, match="compares 2 navigators"):
        SiteEnv(generator={"kind": "adversary", "objective": "code"})
    with pytest.raises(ValueError, match="episodes_per_design"):
        SiteEnv(generator={"kind": "adversary", "objective": "alp"}, episodes_per_design=0)
