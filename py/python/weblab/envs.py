"""gMiniWoB sites as Gymnasium environments, on the native site simulator.

``gymnasium.make("weblab/Site-v0", site="login", level=1)`` — a test site; ``design={...}`` — any
design (the lab's design JSON); ``gymnasium.make("weblab/Generated-v0", generator={"kind": "dr"})``
— a new design drawn at each reset (DR, or CL with its schedule); ``generator={"kind":
"adversary", "objective": "alp"}`` — a learning adversary (ALP) proposes a design every
``episodes_per_design`` resets (default 2) and learns from the episodes' discounted returns (the
objectives that compare two navigators need ``weblab.train``).

Observation (a Dict of fixed-size arrays; rows past the page's elements or fields are zero):
``element_tokens`` int32 [E, 5, T] (tag, value, text, placeholder, classes; token ids hashed into
2..H, 0 padding, 1 unknown), ``element_features`` float32 [E, 8] (focused, tampered, new, is-DIV,
left, top, width, height), ``field_tokens`` int32 [F, T] (the instruction's profile fields),
``action_mask`` int8 [E·(F+1)] (the open actions). Action: Discrete(E·(F+1)); ``a // (F+1)`` is the
element, ``a % (F+1)`` 0 clicks it and k > 0 types field k−1's value into it. An action that is
not open changes nothing and costs a step. Defaults: E = 128, F = 16, T = 10, H = 4096.
Reward: the navigator's learning reward (potential-based shaping); ``info["success"]`` the lab's
success rule. Seeded resets give identical observations.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import gymnasium
import numpy as np
from gymnasium import spaces

from . import _native


def _config(kwargs: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in kwargs.items() if v is not None})


def _space(native_env) -> tuple[spaces.Dict, spaces.Discrete, tuple]:
    e, a, t, f, h, n = native_env.spaces()
    obs = spaces.Dict(
        {
            "element_tokens": spaces.Box(0, h - 1, (e, a, t), np.int32),
            "element_features": spaces.Box(-np.inf, np.inf, (e, 8), np.float32),
            "field_tokens": spaces.Box(0, h - 1, (f, t), np.int32),
            "action_mask": spaces.Box(0, 1, (n,), np.int8),
        }
    )
    return obs, spaces.Discrete(n), (e, a, t, f, n)


def _arrays(raw: dict[str, bytes], dims: tuple, batch: Optional[int] = None) -> dict[str, np.ndarray]:
    e, a, t, f, n = dims
    lead = () if batch is None else (batch,)
    return {
        "element_tokens": np.frombuffer(raw["element_tokens"], "<i4").reshape(lead + (e, a, t)).astype(np.int32),
        "element_features": np.frombuffer(raw["element_features"], "<f4").reshape(lead + (e, 8)).astype(np.float32),
        "field_tokens": np.frombuffer(raw["field_tokens"], "<i4").reshape(lead + (f, t)).astype(np.int32),
        "action_mask": np.frombuffer(raw["action_mask"], np.int8).reshape(lead + (n,)).copy(),
    }


class SiteEnv(gymnasium.Env):
    """One simulated site; see the module docs for its spaces."""

    metadata = {"render_modes": []}

    def __init__(self, site: Optional[str] = None, level: Optional[int] = None, design: Optional[dict] = None,
                 generator: Optional[dict] = None, max_elements: Optional[int] = None, max_fields: Optional[int] = None,
                 max_tokens: Optional[int] = None, hash_size: Optional[int] = None, episodes_per_design: Optional[int] = None,
                 seed: Optional[int] = None):
        self._config = _config(dict(site=site, level=level, design=design, generator=generator, max_elements=max_elements,
                                    max_fields=max_fields, max_tokens=max_tokens, hash_size=hash_size,
                                    episodes_per_design=episodes_per_design, seed=seed))
        self._env = _native.SiteEnv(self._config)
        self.observation_space, self.action_space, self._dims = _space(self._env)
        self._seeds: Optional[np.random.Generator] = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        # The page's seed: the one given, else drawn from the environment's generator.
        page_seed = seed if seed is not None else int(self.np_random.integers(0, 2**30))
        if not 0 <= page_seed < 2**32:
            raise ValueError(f"seed must be 0 to 2**32 - 1, not {page_seed}")
        return _arrays(self._env.reset(page_seed), self._dims), {}

    def step(self, action):
        raw, reward, terminated, truncated, info = self._env.step(int(action))
        return _arrays(raw, self._dims), float(reward), bool(terminated), bool(truncated), info


class GeneratedEnv(SiteEnv):
    """A new design at each reset from a generator (``{"kind": "dr"}`` or ``{"kind": "cl"}``)."""

    def __init__(self, generator: Optional[dict] = None, **kwargs):
        super().__init__(generator=generator or {"kind": "dr"}, **kwargs)


class SiteVectorEnv(gymnasium.vector.VectorEnv):
    """N simulated sites stepped in one native call (the GIL released), autoreset in the same
    step: an environment that ended returns its next episode's first observation, and
    ``info["final"]`` marks it (Gymnasium's same-step autoreset mode)."""

    metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int = 8, **kwargs):
        if "generator" not in kwargs and "site" not in kwargs and "design" not in kwargs:
            kwargs["generator"] = {"kind": "dr"}
        config = _config(kwargs)
        self.num_envs = num_envs
        self._batch = _native.SiteBatch(config, num_envs)
        self.single_observation_space, self.single_action_space, self._dims = _space(self._batch)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, num_envs)
        self._rng = np.random.default_rng()

    def _seeds(self) -> list[int]:
        return [int(s) for s in self._rng.integers(0, 2**30, self.num_envs)]

    def reset(self, *, seed=None, options=None):
        if isinstance(seed, int):
            self._rng = np.random.default_rng(seed)
            seeds = [seed + i for i in range(self.num_envs)]
        elif seed is not None:
            seeds = [int(s) for s in seed]
        else:
            seeds = self._seeds()
        return _arrays(self._batch.reset(seeds), self._dims, self.num_envs), {}

    def step(self, actions):
        raw, rewards, terminated, truncated, info = self._batch.step([int(a) for a in np.asarray(actions).reshape(-1)], self._seeds())
        terminated, truncated = np.array(terminated), np.array(truncated)
        info = {k: np.array(v) for k, v in info.items()}
        info["final"] = terminated | truncated
        return _arrays(raw, self._dims, self.num_envs), np.array(rewards, np.float64), terminated, truncated, info
