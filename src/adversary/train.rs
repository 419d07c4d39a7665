//! The population loop (AEG Algorithm 1, CoDE Algorithm 1): a generator proposes a design, each
//! navigator of the population plays M episodes on it (the same M site seeds for all, so the
//! regret compares agents on the same sites), each navigator takes one A2C update on its own
//! episodes, and the generator hears every navigator's discounted returns — the adversaries
//! learn from them, DR and CL ignore them, so all run in this one loop from the same seeds.
//!
//! Generic over [`Environment`] (the native site simulator in tests and benchmarks) and over
//! the navigators' burn device. A snapshot ([`PopulationTrainer::snapshot`]) holds the whole run
//! — every navigator (weights, vocabulary, counters, Adam, sampling state), the generator's
//! state (the adversary's weights and Adam) and the loop's counters and design generator — in
//! the shared checkpoint container, so a resumed run goes on exactly as the original.

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use crate::curriculum::{Generator, GeneratorReport, Outcome};
use crate::env::Environment;
use crate::gminiwob::Design;
use crate::learn::checkpoint::{self as container, Kind, Precision};
use crate::navigator::train::{Episode, JUDGE_SEEDS_FROM, rollout, site_task};
use crate::navigator::{Navigator, NavigatorConfig, UpdateStats};
use crate::rng::Rng;

use super::config::LoopConfig;

pub const RUN_KIND: Kind = Kind { magic: b"WEBLABPR", name: "population run", oldest: 1, newest: 1, max_bytes: container::MAX_RUN_BYTES };

/// `size` fresh navigators; navigator i is seeded with `seed`·1000 + i.
pub fn population(cfg: &NavigatorConfig, size: usize, device: &Device, seed: u64) -> Result<Vec<Navigator>, String> {
    (0..size).map(|i| Navigator::new(cfg.clone(), device, seed.wrapping_mul(1000).wrapping_add(i as u64))).collect()
}

/// What one iteration did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PopIteration {
    pub iteration: u64,
    pub design: Design,
    /// Profile fields of the design's sites.
    pub fields: u32,
    /// Each navigator's episodes (M each).
    pub episodes: Vec<Vec<Episode>>,
    /// Each navigator's discounted returns, as the generator heard them.
    pub returns: Vec<Vec<f64>>,
    pub updates: Vec<UpdateStats>,
    /// What a learning generator made of it.
    pub report: Option<GeneratorReport>,
}

impl PopIteration {
    pub fn env_steps(&self) -> u64 {
        self.episodes.iter().flatten().map(|e| e.steps as u64).sum()
    }
    /// Share of all episodes that succeeded.
    pub fn success_rate(&self) -> f64 {
        let all: Vec<&Episode> = self.episodes.iter().flatten().collect();
        all.iter().filter(|e| e.success()).count() as f64 / all.len().max(1) as f64
    }
}

/// The loop's own counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PopState {
    pub iteration: u64,
    pub next_seed: u32,
    pub design_rng: u64,
    /// Each navigator's sampling generator.
    pub sampling_rngs: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunHeader {
    /// The generator's name, checked on resume.
    generator: String,
    config: LoopConfig,
    state: PopState,
}

pub struct PopulationTrainer<G: Generator> {
    pub population: Vec<Navigator>,
    pub generator: G,
    pub cfg: LoopConfig,
    /// Draws the generator's designs (and the adversary's noise and choices).
    rng: Rng,
    next_seed: u32,
    pub iteration: u64,
}

fn discounted(rewards: impl DoubleEndedIterator<Item = f64>, gamma: f64) -> f64 {
    rewards.rev().fold(0.0, |g, r| r + gamma * g)
}

impl<G: Generator> PopulationTrainer<G> {
    pub fn new(population: Vec<Navigator>, generator: G, cfg: LoopConfig, seed: u64) -> Result<Self, String> {
        cfg.validate()?;
        if population.is_empty() {
            return Err("the population needs at least one navigator".into());
        }
        Ok(PopulationTrainer { population, generator, cfg, rng: Rng::new(seed ^ 0x706f_7075_6c61_7469), next_seed: 0, iteration: 0 })
    }

    pub fn state(&self) -> PopState {
        PopState {
            iteration: self.iteration,
            next_seed: self.next_seed,
            design_rng: self.rng.state(),
            sampling_rngs: self.population.iter().map(|n| n.rng_state()).collect(),
        }
    }

    /// One iteration: propose, M episodes per navigator, one update each, tell the generator.
    pub async fn step<E: Environment>(&mut self, env: &mut E) -> Result<PopIteration, String> {
        let design = self.generator.propose(&mut self.rng, self.iteration);
        if let Some(e) = self.generator.report().and_then(|r| r.error) {
            return Err(format!("the {} generator failed: {e}", self.generator.name()));
        }
        let task = site_task(&format!("{}-{}", self.generator.name(), self.iteration), design.clone());
        let seeds: Vec<u32> = (0..self.cfg.episodes)
            .map(|_| {
                let s = self.next_seed;
                self.next_seed = self.next_seed.wrapping_add(1) % JUDGE_SEEDS_FROM;
                s
            })
            .collect();
        let (mut episodes, mut returns, mut updates) = (Vec::new(), Vec::new(), Vec::new());
        let mut fields = 0;
        for nav in &mut self.population {
            let (mut batch, mut eps, mut rets) = (Vec::new(), Vec::new(), Vec::new());
            for &seed in &seeds {
                let (steps, ep) = rollout(env, nav, &task, seed, false, true).await?;
                fields = steps.first().map(|t| t.state.fields as u32).unwrap_or(fields);
                nav.counters.env_steps += ep.steps as u64;
                nav.counters.episodes += 1;
                // An episode with no step (nothing open) returns its failure, as a step would.
                rets.push(if steps.is_empty() { ep.raw_reward } else { discounted(steps.iter().map(|t| t.reward), nav.cfg.discount) });
                if !steps.is_empty() {
                    batch.push(steps);
                }
                eps.push(ep);
            }
            let stats = if batch.is_empty() {
                UpdateStats { loss: 0.0, policy_loss: 0.0, value_loss: 0.0, entropy: 0.0, mean_return: 0.0, steps: 0, updates: 0, epsilon: 0.0 }
            } else {
                nav.update(&batch).await?
            };
            episodes.push(eps);
            returns.push(rets);
            updates.push(stats);
        }
        self.generator.observe(&Outcome { returns: returns.clone() });
        let report = self.generator.report();
        if let Some(e) = report.as_ref().and_then(|r| r.error.clone()) {
            return Err(format!("the {} generator failed: {e}", self.generator.name()));
        }
        let it = PopIteration { iteration: self.iteration, design, fields, episodes, returns, updates, report };
        self.iteration += 1;
        Ok(it)
    }

    /// The whole run as bytes (see the module docs). Layout inside the container: the header
    /// (generator name, loop config, counters) as JSON; the record is a list of u64-length-prefixed
    /// parts: per navigator its checkpoint and its learner state (empty when none), then the
    /// generator's state (empty when none).
    pub async fn snapshot(&self) -> Result<Vec<u8>, String> {
        let header = RunHeader { generator: self.generator.name().to_string(), config: self.cfg.clone(), state: self.state() };
        let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
        let mut record = Vec::new();
        let mut put = |part: &[u8]| {
            record.extend_from_slice(&(part.len() as u64).to_le_bytes());
            record.extend_from_slice(part);
        };
        for nav in &self.population {
            put(&nav.save(self.generator.name(), Precision::Full).await?);
            put(&nav.optimizer_state().await?.unwrap_or_default());
        }
        put(&self.generator.save_state()?.unwrap_or_default());
        Ok(container::write(&RUN_KIND, &header, &record))
    }

    /// Continues a run from [`Self::snapshot`] with `generator` built as the original was
    /// (the navigators on `device`). A damaged or mismatched snapshot is refused with a message.
    pub fn resume(bytes: &[u8], mut generator: G, device: &Device) -> Result<Self, String> {
        let parts = container::read(&RUN_KIND, bytes).map_err(|e| e.to_string())?;
        let header: RunHeader = serde_json::from_slice(parts.header).map_err(|e| format!("the run snapshot is damaged: unreadable header: {e}"))?;
        if header.generator != generator.name() {
            return Err(format!("the snapshot is of a {} run, not {}", header.generator, generator.name()));
        }
        header.config.validate()?;
        let mut at = 0usize;
        let record = parts.record;
        let mut part = || -> Result<&[u8], String> {
            let damaged = || "the run snapshot is damaged: it ends too early".to_string();
            let len = record.get(at..at + 8).ok_or_else(damaged)?;
            let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap())).map_err(|_| damaged())?;
            let s = record.get(at + 8..(at + 8).checked_add(len).ok_or_else(damaged)?).ok_or_else(damaged)?;
            at += 8 + len;
            Ok(s)
        };
        let mut population = Vec::new();
        for &rng in &header.state.sampling_rngs {
            let (ckpt, learner) = (part()?, part()?);
            let (mut nav, _) = Navigator::load(ckpt, device, 0).map_err(|e| e.to_string())?;
            if !learner.is_empty() {
                nav.load_optimizer_state(learner)?;
            }
            nav.set_rng_state(rng);
            population.push(nav);
        }
        let gen_state = part()?;
        if !gen_state.is_empty() {
            generator.load_state(gen_state)?;
        }
        if at != record.len() {
            return Err("the run snapshot is damaged: unexpected bytes after its parts".into());
        }
        if population.is_empty() {
            return Err("the run snapshot has no navigators".into());
        }
        Ok(PopulationTrainer {
            population,
            generator,
            cfg: header.config,
            rng: Rng::from_state(header.state.design_rng),
            next_seed: header.state.next_seed % JUDGE_SEEDS_FROM,
            iteration: header.state.iteration,
        })
    }
}
