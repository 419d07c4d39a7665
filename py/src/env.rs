//! The site simulator as Gymnasium sees it: fixed-size arrays of what the navigator reads, and one
//! flat discrete action per (element, click or field) pair.
//!
//! Observation (all rows past the page's elements or the instruction's fields are zero):
//! - `element_tokens` int32 [E, 5, T]: each element's tag, value, text, placeholder and classes,
//!   tokenised as the navigator does (`weblab::navigator::features`), each token hashed into
//!   2..H (0 padding, 1 unknown), so ids mean the same in every environment and process;
//! - `element_features` float32 [E, 8]: focused, tampered, new since the last step, is a DIV,
//!   left, top, width, height (relative to the site's frame);
//! - `field_tokens` int32 [F, T]: the profile fields' keys (the instruction), hashed alike;
//! - `action_mask` int8 [E·(F+1)]: which actions are open.
//!
//! Action `a` ∈ [0, E·(F+1)): element `a / (F+1)`; `a % (F+1)` = 0 clicks it, k > 0 sets field
//! k−1's value into it. An action that is not open changes nothing and costs a step (the step
//! cap still ends the episode, as truncation). The reward is the navigator's learning reward (the
//! papers' potential-based shaping, `weblab::gminiwob::reward`); `info["success"]` is the lab's
//! success rule on the page's raw reward.

use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde::Deserialize;
use weblab::curriculum::Generator;
use weblab::env::{Observation, is_success};
use weblab::gminiwob::test_sites::test_site;
use weblab::gminiwob::{Design, RewardConfig, SiteSim, Values};
use weblab::learn::vocab::Vocab;
use weblab::navigator::NavigatorConfig;
use weblab::navigator::features::{ATTRIBUTES, ELEMENT_FEATURES, EpisodeMemory, NavAction, NavState, encode};
use weblab::request::GeneratorSpec;
use weblab::rng::Rng;

use crate::{bad_value, guarded, native};

/// How an environment is made (JSON from Python; unknown keys refused).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvConfig {
    /// A test site and level (`"login"`, 0..3)...
    site: Option<String>,
    level: Option<u32>,
    /// ...or any design (the lab's design JSON)...
    design: Option<Design>,
    /// ...or a generator drawing a new design at each reset (`{"kind": "dr"}`, `{"kind": "cl"}`),
    /// or every `episodes_per_design` resets for a learning adversary that hears this
    /// environment's discounted returns (`{"kind": "adversary", "objective": "alp"}`: ALP, the
    /// one objective that needs a single agent; the others compare two navigators' returns).
    generator: Option<GeneratorSpec>,
    /// M, the episodes an adversary's design is played for before it learns (CoDE A.14: 2).
    #[serde(default = "episodes_per_design")]
    episodes_per_design: usize,
    /// Seeds an adversary's weights.
    #[serde(default)]
    seed: u64,
    #[serde(default = "max_elements")]
    max_elements: usize,
    #[serde(default = "max_fields")]
    max_fields: usize,
    #[serde(default = "max_tokens")]
    max_tokens: usize,
    /// H: token ids are hashed into 2..H.
    #[serde(default = "hash_size")]
    hash_size: u32,
}

// Sizes that hold every test site and generated design (a design has at most 40 primitives).
fn max_elements() -> usize {
    128
}
fn max_fields() -> usize {
    16
}
fn max_tokens() -> usize {
    NavigatorConfig::default().max_tokens
}
fn hash_size() -> u32 {
    4096
}
fn episodes_per_design() -> usize {
    2
}

enum Source {
    Fixed(Design),
    // In a Mutex so the Python object may be shared between threads (pyo3 asks Sync); only
    // `get_mut` is used, as every call holds the object exclusively.
    Drawn {
        generator: Mutex<Box<dyn Generator + Send>>,
        drawn: u64,
    },
    /// A learning adversary: its design, and the discounted returns of the episodes played on it.
    Learning {
        adversary: Mutex<Box<dyn Generator + Send>>,
        design: Option<Design>,
        returns: Vec<f64>,
        drawn: u64,
    },
}

/// One environment's state (shared by the single and the batched class).
struct Core {
    cfg: EnvConfig,
    nav: NavigatorConfig,
    source: Source,
    sim: Option<SiteSim>,
    vocab: Vocab,
    memory: EpisodeMemory,
    state: Option<NavState>,
    steps: u32,
    step_limit: u32,
    /// The running episode's discounted return and discount (an adversary hears the return).
    ret: f64,
    gamma_t: f64,
    /// Whether the running episode's return was handed to the adversary.
    counted: bool,
}

/// One step's result before it becomes Python objects.
struct Out {
    obs: Arrays,
    reward: f64,
    terminated: bool,
    truncated: bool,
    success: bool,
    raw_reward: f64,
    reason: Option<String>,
}

#[derive(Default)]
struct Arrays {
    element_tokens: Vec<i32>,
    element_features: Vec<f32>,
    field_tokens: Vec<i32>,
    action_mask: Vec<i8>,
}

fn fnv(word: &str) -> u32 {
    word.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

impl Core {
    fn new(json: &str) -> Result<Core, String> {
        let cfg: EnvConfig = serde_json::from_str(json).map_err(|e| format!("environment config: {e}"))?;
        let source = match (&cfg.site, &cfg.design, &cfg.generator) {
            (Some(site), None, None) => {
                let level = cfg.level.ok_or("level: a test site needs its level (0 to 3)")?;
                Source::Fixed(
                    test_site(site, level)
                        .ok_or(format!("site/level: no test site {site} level {level} (login, address, payment, flight, shopping; 0 to 3)"))?,
                )
            }
            (None, Some(design), None) => Source::Fixed(design.clone()),
            (None, None, Some(spec @ GeneratorSpec::Adversary { objective, .. })) => {
                if objective.population() != 1 {
                    return Err(format!(
                        "generator: {} compares {} navigators' returns and an environment has one agent; train it with weblab.train, or use ALP here",
                        objective.label(),
                        objective.population()
                    ));
                }
                let dev = burn::prelude::Device::flex().autodiff();
                let adversary: Box<dyn Generator + Send> = Box::new(spec.build_adversary(&dev, cfg.seed).map_err(|e| format!("generator: {e}"))?);
                Source::Learning { adversary: Mutex::new(adversary), design: None, returns: Vec::new(), drawn: 0 }
            }
            (None, None, Some(spec)) => Source::Drawn { generator: Mutex::new(spec.build().map_err(|e| format!("generator: {e}"))?), drawn: 0 },
            _ => return Err("give one of site (with level), design or generator".into()),
        };
        if !(1..=64).contains(&cfg.episodes_per_design) {
            return Err(format!("episodes_per_design must be 1 to 64, not {}", cfg.episodes_per_design));
        }
        if cfg.level.is_some() && cfg.site.is_none() {
            return Err("level: only a test site has a level".into());
        }
        let nav =
            NavigatorConfig { max_elements: cfg.max_elements, max_fields: cfg.max_fields, max_tokens: cfg.max_tokens, ..NavigatorConfig::default() };
        nav.validate()?;
        if !(16..=1 << 24).contains(&cfg.hash_size) {
            return Err(format!("hash_size must be 16 to {}, not {}", 1 << 24, cfg.hash_size));
        }
        let step_limit = RewardConfig::default().step_limit;
        Ok(Core {
            vocab: Vocab::new(usize::MAX),
            cfg,
            nav,
            source,
            sim: None,
            memory: EpisodeMemory::default(),
            state: None,
            steps: 0,
            step_limit,
            ret: 0.0,
            gamma_t: 1.0,
            counted: true,
        })
    }

    /// The array shapes: (E, attributes, T, F, H, actions).
    fn spaces(&self) -> (usize, usize, usize, usize, u32, usize) {
        (self.cfg.max_elements, ATTRIBUTES, self.cfg.max_tokens, self.cfg.max_fields, self.cfg.hash_size, self.actions())
    }

    fn actions(&self) -> usize {
        self.cfg.max_elements * (self.cfg.max_fields + 1)
    }

    /// The ended (or abandoned) episode's discounted return, to the adversary once. An episode
    /// reset before its first step was not played and is not counted.
    fn count_episode(&mut self) {
        if let Source::Learning { returns, design: Some(_), .. } = &mut self.source
            && !self.counted
            && self.steps > 0
        {
            returns.push(self.ret);
        }
        self.counted = true;
    }

    fn reset(&mut self, seed: u32) -> Result<Arrays, String> {
        self.count_episode();
        let m = self.cfg.episodes_per_design;
        let design = match &mut self.source {
            Source::Fixed(d) => d.clone(),
            Source::Drawn { generator, drawn } => {
                *drawn += 1;
                generator.get_mut().unwrap_or_else(|p| p.into_inner()).propose(&mut Rng::new(seed as u64 ^ 0x7765_626c_6162), *drawn - 1)
            }
            Source::Learning { adversary, design, returns, drawn } => {
                let adversary = adversary.get_mut().unwrap_or_else(|p| p.into_inner());
                if design.is_none() || returns.len() >= m {
                    if design.is_some() {
                        adversary.observe(&[weblab::curriculum::Outcome { returns: vec![std::mem::take(returns)] }]);
                    }
                    *design = Some(adversary.propose(&mut Rng::new(seed as u64 ^ 0x6164_7665_7273), *drawn));
                    *drawn += 1;
                    if let Some(e) = adversary.failure() {
                        return Err(format!("the {} adversary failed: {e}", adversary.name()));
                    }
                }
                design.clone().expect("a design was just proposed")
            }
        };
        let mut sim = SiteSim::new(design, seed, Values::default(), RewardConfig::default());
        let obs = sim.reset_seed(seed);
        self.sim = Some(sim);
        self.memory = EpisodeMemory::default();
        self.steps = 0;
        (self.ret, self.gamma_t, self.counted) = (0.0, 1.0, false);
        Ok(self.read(&obs))
    }

    fn read(&mut self, obs: &Observation) -> Arrays {
        let state = encode(obs, &self.nav, &mut self.vocab, true, &mut self.memory);
        let arrays = self.arrays(&state);
        self.state = Some(state);
        arrays
    }

    fn arrays(&self, s: &NavState) -> Arrays {
        let (e, f, t) = (self.cfg.max_elements, self.cfg.max_fields, self.cfg.max_tokens);
        let hash = |id: u32| -> i32 {
            match self.vocab.word(id) {
                Some("<pad>") => 0,
                Some("<unk>") | None => 1,
                Some(w) => (2 + fnv(w) % (self.cfg.hash_size - 2)) as i32,
            }
        };
        let mut element_tokens = vec![0; e * ATTRIBUTES * t];
        for (i, &id) in s.element_tokens.iter().enumerate() {
            element_tokens[i] = hash(id);
        }
        let mut element_features = vec![0.0; e * ELEMENT_FEATURES];
        element_features[..s.element_features.len()].copy_from_slice(&s.element_features);
        let mut field_tokens = vec![0; f * t];
        for (i, &id) in s.field_tokens.iter().enumerate() {
            field_tokens[i] = hash(id);
        }
        let mut action_mask = vec![0i8; e * (f + 1)];
        for el in 0..s.elements {
            action_mask[el * (f + 1)] = s.is_open(NavAction::Click { element: el }) as i8;
            for field in 0..s.fields {
                action_mask[el * (f + 1) + 1 + field] = s.is_open(NavAction::Set { field, element: el }) as i8;
            }
        }
        Arrays { element_tokens, element_features, field_tokens, action_mask }
    }

    fn step(&mut self, action: i64) -> Result<Out, String> {
        let actions = self.actions();
        if action < 0 || action as usize >= actions {
            return Err(format!("action {action} is outside 0..{actions}"));
        }
        let (Some(sim), Some(state)) = (self.sim.as_mut(), self.state.take()) else {
            return Err("step before reset: call reset first".into());
        };
        let f1 = self.cfg.max_fields + 1;
        let (element, k) = (action as usize / f1, action as usize % f1);
        let choice = if k == 0 { NavAction::Click { element } } else { NavAction::Set { field: k - 1, element } };
        self.steps += 1;
        if !state.is_open(choice) {
            let obs = self.arrays(&state);
            self.state = Some(state);
            let truncated = self.steps >= self.step_limit;
            return Ok(Out {
                obs,
                reward: 0.0,
                terminated: false,
                truncated,
                success: false,
                raw_reward: 0.0,
                reason: truncated.then(|| "step limit".into()),
            });
        }
        let step = sim.step(&state.action(choice)).map_err(|e| e.to_string())?;
        self.memory.acted(&state, choice);
        let obs = self.read(&step.observation);
        let truncated = !step.done && self.steps >= self.step_limit;
        Ok(Out {
            obs,
            reward: step.learning_reward(),
            terminated: step.done,
            truncated,
            success: step.done && is_success(step.raw_reward),
            raw_reward: step.raw_reward,
            reason: step.reason.clone(),
        })
    }
}

fn to_dict<'py>(py: Python<'py>, batch: &[Arrays]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let bytes = |f: &dyn Fn(&Arrays) -> Vec<u8>| PyBytes::new(py, &batch.iter().flat_map(f).collect::<Vec<u8>>());
    d.set_item("element_tokens", bytes(&|a| a.element_tokens.iter().flat_map(|v| v.to_le_bytes()).collect()))?;
    d.set_item("element_features", bytes(&|a| a.element_features.iter().flat_map(|v| v.to_le_bytes()).collect()))?;
    d.set_item("field_tokens", bytes(&|a| a.field_tokens.iter().flat_map(|v| v.to_le_bytes()).collect()))?;
    d.set_item("action_mask", bytes(&|a| a.action_mask.iter().map(|&v| v as u8).collect()))?;
    Ok(d)
}

fn info<'py>(py: Python<'py>, o: &Out) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("success", o.success)?;
    d.set_item("raw_reward", o.raw_reward)?;
    d.set_item("reason", o.reason.clone())?;
    Ok(d)
}

/// One simulated site (see the module docs for its spaces).
#[pyclass(module = "weblab._native")]
pub struct SiteEnv {
    core: Core,
}

#[pymethods]
impl SiteEnv {
    #[new]
    fn new(config: &str) -> PyResult<Self> {
        guarded(|| Ok(SiteEnv { core: Core::new(config).map_err(bad_value)? }))
    }

    /// The array shapes: (E, attributes, T, F, H, actions).
    fn spaces(&self) -> (usize, usize, usize, usize, u32, usize) {
        self.core.spaces()
    }

    /// Starts an episode; the same seed gives the same page and instruction.
    fn reset<'py>(&mut self, py: Python<'py>, seed: u32) -> PyResult<Bound<'py, PyDict>> {
        let core = &mut self.core;
        let obs = native(py, || core.reset(seed))?;
        to_dict(py, &[obs])
    }

    /// (observation, reward, terminated, truncated, info).
    #[allow(clippy::type_complexity)]
    fn step<'py>(&mut self, py: Python<'py>, action: i64) -> PyResult<(Bound<'py, PyDict>, f64, bool, bool, Bound<'py, PyDict>)> {
        let core = &mut self.core;
        let out = py.detach(|| core.step(action)).map_err(bad_value)?;
        let i = info(py, &out)?;
        Ok((to_dict(py, std::slice::from_ref(&out.obs))?, out.reward, out.terminated, out.truncated, i))
    }
}

/// N simulated sites stepped in one native call (the vector environment's batched path).
#[pyclass(module = "weblab._native")]
pub struct SiteBatch {
    cores: Vec<Core>,
}

#[pymethods]
impl SiteBatch {
    #[new]
    fn new(config: &str, n: usize) -> PyResult<Self> {
        if !(1..=4096).contains(&n) {
            return Err(bad_value(format!("num_envs must be 1 to 4096, not {n}")));
        }
        guarded(|| Ok(SiteBatch { cores: (0..n).map(|_| Core::new(config)).collect::<Result<_, _>>().map_err(bad_value)? }))
    }

    /// The array shapes of each environment: (E, attributes, T, F, H, actions).
    fn spaces(&self) -> (usize, usize, usize, usize, u32, usize) {
        self.cores[0].spaces()
    }

    /// Resets every environment with its seed; stacked observations.
    fn reset<'py>(&mut self, py: Python<'py>, seeds: Vec<u32>) -> PyResult<Bound<'py, PyDict>> {
        if seeds.len() != self.cores.len() {
            return Err(bad_value(format!("{} seeds for {} environments", seeds.len(), self.cores.len())));
        }
        let cores = &mut self.cores;
        let obs = native(py, || cores.iter_mut().zip(&seeds).map(|(c, &s)| c.reset(s)).collect::<Result<Vec<_>, _>>())?;
        to_dict(py, &obs)
    }

    /// Steps every environment; one that ended is reset with `seeds[i]` in the same call and its
    /// observation is the new episode's (`info["final"]` says which ended).
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: Vec<i64>,
        seeds: Vec<u32>,
    ) -> PyResult<(Bound<'py, PyDict>, Vec<f64>, Vec<bool>, Vec<bool>, Bound<'py, PyDict>)> {
        if actions.len() != self.cores.len() || seeds.len() != self.cores.len() {
            return Err(bad_value(format!("{} actions and {} seeds for {} environments", actions.len(), seeds.len(), self.cores.len())));
        }
        let cores = &mut self.cores;
        let outs = py
            .detach(|| {
                cores
                    .iter_mut()
                    .zip(actions.iter().zip(&seeds))
                    .map(|(c, (&a, &s))| {
                        let mut o = c.step(a)?;
                        if o.terminated || o.truncated {
                            o.obs = c.reset(s)?;
                        }
                        Ok(o)
                    })
                    .collect::<Result<Vec<Out>, String>>()
            })
            .map_err(bad_value)?;
        let i = PyDict::new(py);
        i.set_item("success", outs.iter().map(|o| o.success).collect::<Vec<_>>())?;
        i.set_item("raw_reward", outs.iter().map(|o| o.raw_reward).collect::<Vec<_>>())?;
        let mut outs = outs;
        let arrays: Vec<Arrays> = outs.iter_mut().map(|o| std::mem::take(&mut o.obs)).collect();
        Ok((
            to_dict(py, &arrays)?,
            outs.iter().map(|o| o.reward).collect(),
            outs.iter().map(|o| o.terminated).collect(),
            outs.iter().map(|o| o.truncated).collect(),
            i,
        ))
    }

    fn __len__(&self) -> usize {
        self.cores.len()
    }
}
