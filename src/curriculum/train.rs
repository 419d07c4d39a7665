//! The one training loop (AEG Algorithm 1, CoDE Algorithm 1), for every generator: it proposes D
//! designs; each navigator of the population plays M episodes on each (the same M site seeds for
//! all navigators, so a regret compares agents on the same sites), all D·M side by side in
//! lock-step (`navigator::rollout`), then takes one update on them; the generator hears every
//! navigator's discounted returns on each design and learns (the adversaries) or not (DR, CL,
//! a fixed site). A navigator trained alone is a population of one. With D = 1 this is the
//! papers' loop exactly; D > 1 is synchronous A2C over a batch of designs (see [`LoopConfig`]).
//!
//! Generic over [`Environment`] (the native site simulator; the live page in the tab) and over
//! the navigators' burn device. Natively, [`PopulationTrainer::step_parallel`] plays and updates
//! each navigator on its own thread — the same work, so the same results. A snapshot
//! ([`PopulationTrainer::snapshot`]) holds the whole run — every navigator (weights, vocabulary,
//! counters, Adam, sampling state), the generator's state and the loop's counters — in the shared
//! checkpoint container, so a resumed run goes on exactly as the original.

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use super::{Generator, GeneratorReport, Outcome};
use crate::gminiwob::{Design, GeneratedSite, RewardConfig};
use crate::learn::checkpoint::{self as container, CheckpointError, Kind, Precision};
use crate::navigator::rollout::{Episode, Job, play};
use crate::navigator::train::JUDGE_SEEDS_FROM;
use crate::navigator::{Navigator, NavigatorConfig, UpdateStats};
use crate::rng::Rng;
use crate::task::{Env, TaskSpec};

pub const RUN_KIND: Kind = Kind { magic: b"WEBLABPR", name: "population run", oldest: 1, newest: 1, max_bytes: container::MAX_RUN_BYTES };

/// The loop's constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoopConfig {
    /// M: episodes each navigator plays on a design (CoDE A.14: M = 2 "based on a
    /// hyper-parameter search"; Table 3 finds M = 4 and 6 worse).
    pub episodes: usize,
    /// D: designs per iteration. The papers update after each design (D = 1); D > 1 plays D·M
    /// episodes per navigator side by side and takes one update on all of them, and the
    /// adversary one on all D designs (synchronous A2C with a batch of D designs). Our choice
    /// for speed on a CPU, where one forward over many states costs little more than one.
    pub designs: usize,
    /// Revive a navigator that stopped succeeding: after this many of its episodes in a row
    /// without a success, while another navigator succeeded within as many of its own, it
    /// restarts as a copy of that one (weights, vocabulary, Adam; its own sampling stream and
    /// counters, so the two part again). `None`: never, as in the papers. Our addition,
    /// population-based training's exploit step (Jaderberg et al. 2017): with A2C one navigator
    /// of two settled on submitting at once (return −1 on every design) in every population run
    /// we made, and the flexible regret max − mean is then the other one's return, which pays
    /// the adversary for designs that one already solves (docs/benchmarks-code.md §5).
    pub revive_after: Option<u64>,
    /// The reward on the designs the navigators train on (default: the reference gin's, as
    /// [`RewardConfig`] names each constant; judging always uses the default, whose success is
    /// the page's own). The papers' own terms differ in two: no cost for a step that changes
    /// nothing (`unchanged_penalty` 0: the papers name only "a small penalty each timestep") and
    /// −1 on time-out (`step_limit_reward`, CoDE App. A.1).
    pub reward: RewardConfig,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig { episodes: 2, designs: 1, revive_after: None, reward: RewardConfig::default() }
    }
}

impl LoopConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=256).contains(&self.episodes) {
            return Err(format!("episodes (M) must be 1 to 256, not {}", self.episodes));
        }
        if !(1..=256).contains(&self.designs) {
            return Err(format!("designs (D) must be 1 to 256, not {}", self.designs));
        }
        if self.revive_after == Some(0) {
            return Err("revive_after must be at least 1 episode".into());
        }
        Ok(())
    }
}

/// Which navigators to revive, and from which: (revived, source) pairs. `since_success[i]` is
/// navigator i's episodes since its last success; one at `window` or more is revived from the
/// navigator with the most recent success, if that one succeeded within `window` (the first on
/// ties). Nobody is revived while no navigator has succeeded lately.
pub fn revivals(since_success: &[u64], window: u64) -> Vec<(usize, usize)> {
    let live = (0..since_success.len()).filter(|&j| since_success[j] < window).min_by_key(|&j| since_success[j]);
    let Some(source) = live else { return Vec::new() };
    (0..since_success.len()).filter(|&i| since_success[i] >= window).map(|i| (i, source)).collect()
}

/// `size` fresh navigators, navigator i as [`population_member`] makes it.
pub fn population(cfg: &NavigatorConfig, size: usize, device: &Device, seed: u64) -> Result<Vec<Navigator>, String> {
    (0..size).map(|i| population_member(cfg, device, seed, i)).collect()
}

/// Navigator `i` of a fresh population, alone (a navigator trained on its own worker): seeded
/// with `seed`·1000 + i.
pub fn population_member(cfg: &NavigatorConfig, device: &Device, seed: u64, i: usize) -> Result<Navigator, String> {
    Navigator::new(cfg.clone(), device, seed.wrapping_mul(1000).wrapping_add(i as u64))
}

/// What one iteration did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PopIteration {
    pub iteration: u64,
    /// The designs played, in the order proposed.
    pub designs: Vec<Design>,
    /// Profile fields of each design's sites (as the navigators read them).
    pub fields: Vec<u32>,
    /// Each navigator's episodes, D·M: design d's at d·M..(d+1)·M.
    pub episodes: Vec<Vec<Episode>>,
    pub updates: Vec<UpdateStats>,
    /// What a learning generator made of each design (empty for the others).
    pub reports: Vec<GeneratorReport>,
    /// Navigators revived after this iteration, as (revived, source) ([`LoopConfig::revive_after`]).
    #[serde(default)]
    pub revived: Vec<(usize, usize)>,
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
    /// Every navigator's episodes on design `d`.
    pub fn on_design(&self, d: usize) -> Vec<&[Episode]> {
        let m = self.episodes[0].len() / self.designs.len().max(1);
        self.episodes.iter().map(|e| &e[d * m..(d + 1) * m]).collect()
    }
    /// What the generator heard about design `d`: each navigator's discounted returns.
    pub fn returns(&self, d: usize) -> Vec<Vec<f64>> {
        self.on_design(d).iter().map(|eps| eps.iter().map(|e| e.discounted).collect()).collect()
    }
}

/// The loop's own counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PopState {
    pub iteration: u64,
    /// Designs proposed (= iterations for runs saved before designs were batched).
    #[serde(default)]
    pub designs: Option<u64>,
    pub next_seed: u32,
    pub design_rng: u64,
    /// Each navigator's sampling generator.
    pub sampling_rngs: Vec<u64>,
    /// Each navigator's episodes since its last success (empty: none yet, or a run saved before
    /// navigators could be revived).
    #[serde(default)]
    pub since_success: Vec<u64>,
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
    /// Designs proposed so far (schedules such as CL's read it).
    pub designs: u64,
    /// Each navigator's episodes since its last success.
    since_success: Vec<u64>,
}

/// An iteration's designs, their tasks and the episodes' seeds (M per design, design order):
/// all a navigator needs to play its part, so it can be sent to a navigator elsewhere (the
/// Python package's Ray actors).
pub type Proposal = (Vec<Design>, Vec<TaskSpec>, Vec<u32>);

/// One navigator's part of an iteration: what it played and how it learned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    pub episodes: Vec<Episode>,
    pub fields: Vec<Option<u32>>,
    pub update: UpdateStats,
}

/// A navigator plays M episodes on each task (`seeds` in design order, M per design) side by
/// side on `envs`, and takes one update on them. What every navigator does in an iteration,
/// wherever it lives.
pub async fn play_and_learn<E: Env>(envs: &mut [E], nav: &mut Navigator, tasks: &[TaskSpec], seeds: &[u32]) -> Result<Learned, String> {
    let m = seeds.len() / tasks.len();
    let jobs: Vec<Job> = seeds.iter().enumerate().map(|(i, &seed)| Job { task: &tasks[i / m], seed, stream: nav.episode_stream() }).collect();
    let played = play(envs, nav, &jobs, false, true).await?;
    let mut fields = vec![None; tasks.len()];
    let mut batch = Vec::with_capacity(played.len());
    let mut episodes = Vec::with_capacity(played.len());
    for (i, p) in played.into_iter().enumerate() {
        nav.counters.env_steps += p.episode.steps as u64;
        nav.counters.episodes += 1;
        if let Some(t) = p.steps.first() {
            fields[i / m].get_or_insert(t.state.fields as u32);
            batch.push(p.steps);
        }
        episodes.push(p.episode);
    }
    let update = if batch.is_empty() {
        UpdateStats { loss: 0.0, policy_loss: 0.0, value_loss: 0.0, entropy: 0.0, mean_return: 0.0, steps: 0, updates: 0, epsilon: 0.0 }
    } else {
        nav.update(&batch).await?
    };
    Ok(Learned { episodes, fields, update })
}

impl<G: Generator> PopulationTrainer<G> {
    pub fn new(population: Vec<Navigator>, generator: G, cfg: LoopConfig, seed: u64) -> Result<Self, String> {
        let state = PopState {
            iteration: 0,
            designs: Some(0),
            next_seed: 0,
            design_rng: Rng::new(seed ^ 0x706f_7075_6c61_7469).state(),
            sampling_rngs: population.iter().map(|n| n.rng_state()).collect(),
            since_success: Vec::new(),
        };
        Self::from_state(population, generator, cfg, &state)
    }

    /// A run continued from its counters `state`, with its navigators and generator restored
    /// (the tab keeps a lone navigator's checkpoint beside the state, see `src/web`).
    pub fn from_state(mut population: Vec<Navigator>, generator: G, cfg: LoopConfig, state: &PopState) -> Result<Self, String> {
        cfg.validate()?;
        if population.is_empty() {
            return Err("the population needs at least one navigator".into());
        }
        if state.sampling_rngs.len() != population.len() {
            return Err(format!("the saved run has {} navigators' sampling states for {}", state.sampling_rngs.len(), population.len()));
        }
        for (nav, &rng) in population.iter_mut().zip(&state.sampling_rngs) {
            nav.set_rng_state(rng);
        }
        let since_success = match state.since_success.len() {
            0 => vec![0; population.len()],
            n if n == population.len() => state.since_success.clone(),
            n => return Err(format!("the saved run counts episodes since a success for {n} navigators, not {}", population.len())),
        };
        Ok(PopulationTrainer {
            population,
            generator,
            cfg,
            rng: Rng::from_state(state.design_rng),
            next_seed: state.next_seed % JUDGE_SEEDS_FROM,
            iteration: state.iteration,
            designs: state.designs.unwrap_or(state.iteration),
            since_success,
        })
    }

    pub fn state(&self) -> PopState {
        PopState {
            iteration: self.iteration,
            designs: Some(self.designs),
            next_seed: self.next_seed,
            design_rng: self.rng.state(),
            sampling_rngs: self.population.iter().map(|n| n.rng_state()).collect(),
            since_success: self.since_success.clone(),
        }
    }

    /// The run's counters, summed over every navigator it trains.
    pub fn counters(&self) -> crate::learn::Counters {
        let mut c = crate::learn::Counters::default();
        for n in &self.population {
            c.env_steps += n.counters.env_steps;
            c.updates += n.counters.updates;
            c.episodes += n.counters.episodes;
        }
        c
    }

    /// One iteration: D designs, M episodes per navigator on each, one update per navigator,
    /// the generator told. The navigators take turns on `envs`.
    pub async fn step<E: Env>(&mut self, envs: &mut [E]) -> Result<PopIteration, String> {
        let (designs, tasks, seeds) = self.propose()?;
        let mut learned = Vec::with_capacity(self.population.len());
        for nav in &mut self.population {
            learned.push(play_and_learn(envs, nav, &tasks, &seeds).await?);
        }
        let it = self.finish(designs, learned)?;
        self.revive(&it.revived).await?;
        Ok(it)
    }

    /// [`Self::step`] with each navigator on its own thread and its own share of `envs` (at
    /// least one each): the same episodes and updates, as navigators share nothing. (A lone
    /// navigator takes the second core in halves of its own work instead, `learn::shards`.)
    #[cfg(not(target_family = "wasm"))]
    pub fn step_parallel<E: Env + Send>(&mut self, envs: &mut [E]) -> Result<PopIteration, String> {
        let n = self.population.len();
        if n == 1 || envs.len() < n {
            return crate::util::block_on(self.step(envs));
        }
        let (designs, tasks, seeds) = self.propose()?;
        let share = envs.len() / n;
        let learned: Vec<Result<Learned, String>> = std::thread::scope(|scope| {
            let (tasks, seeds) = (&tasks, &seeds);
            let handles: Vec<_> = self
                .population
                .iter_mut()
                .zip(envs.chunks_mut(share))
                .map(|(nav, envs)| {
                    scope.spawn(move || crate::learn::shards::alone(|| crate::util::block_on(play_and_learn(envs, nav, tasks, seeds))))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a navigator's thread panicked".into()))).collect()
        });
        let learned = learned.into_iter().collect::<Result<Vec<_>, _>>()?;
        let it = self.finish(designs, learned)?;
        crate::util::block_on(self.revive(&it.revived))?;
        Ok(it)
    }

    /// An iteration split for navigators that live elsewhere (one per process or machine): this
    /// proposes the designs, the navigators each run [`play_and_learn`] on them, and
    /// [`Self::finish_remote`] tells the generator — the same iteration as [`Self::step`], as
    /// navigators share nothing. This trainer's own `population` is not trained then.
    pub fn propose_remote(&mut self) -> Result<Proposal, String> {
        if self.cfg.revive_after.is_some() {
            return Err("a population trained elsewhere cannot revive navigators (loop.revive_after)".into());
        }
        self.propose()
    }

    /// The end of a [`Self::propose_remote`] iteration: each navigator's [`Learned`], in
    /// population order.
    pub fn finish_remote(&mut self, designs: Vec<Design>, learned: Vec<Learned>) -> Result<PopIteration, String> {
        if learned.len() != self.population.len() {
            return Err(format!("{} navigators' results for a population of {}", learned.len(), self.population.len()));
        }
        let m = self.cfg.episodes * designs.len();
        if let Some(l) = learned.iter().find(|l| l.episodes.len() != m || l.fields.len() != designs.len()) {
            return Err(format!(
                "a navigator's result holds {} episodes on {} designs, not {m} on {}",
                l.episodes.len(),
                l.fields.len(),
                designs.len()
            ));
        }
        self.finish(designs, learned)
    }

    /// Makes each revived navigator a copy of its source (weights, vocabulary, Adam and, under
    /// DQN, target network and replay), keeping its own sampling stream and counters.
    async fn revive(&mut self, pairs: &[(usize, usize)]) -> Result<(), String> {
        for &(i, source) in pairs {
            let from = &self.population[source];
            let bytes = from.save(self.generator.name(), Precision::Full).await?;
            let learner = from.optimizer_state().await?;
            let old = &self.population[i];
            let (mut nav, _) = Navigator::load(&bytes, &old.model().device(), 0).map_err(|e| e.to_string())?;
            if let Some(state) = learner {
                nav.load_optimizer_state(&state)?;
            }
            nav.set_rng_state(old.rng_state());
            nav.counters = old.counters;
            self.population[i] = nav;
            self.since_success[i] = self.since_success[source];
        }
        Ok(())
    }

    /// The iteration's designs, their tasks and the episodes' seeds (M per design, design order).
    fn propose(&mut self) -> Result<Proposal, String> {
        let mut designs = Vec::with_capacity(self.cfg.designs);
        for _ in 0..self.cfg.designs {
            designs.push(self.generator.propose(&mut self.rng, self.designs));
            if let Some(e) = self.generator.failure() {
                return Err(format!("the {} generator failed: {e}", self.generator.name()));
            }
            self.designs += 1;
        }
        let tasks = designs
            .iter()
            .enumerate()
            .map(|(d, design)| {
                let name = format!("{}-{}", self.generator.name(), self.designs - (designs.len() - d) as u64);
                TaskSpec::Generated { name, site: GeneratedSite { reward: self.cfg.reward, ..GeneratedSite::from(design.clone()) } }
            })
            .collect();
        let seeds = (0..self.cfg.designs * self.cfg.episodes)
            .map(|_| {
                let s = self.next_seed;
                self.next_seed = self.next_seed.wrapping_add(1) % JUDGE_SEEDS_FROM;
                s
            })
            .collect();
        Ok((designs, tasks, seeds))
    }

    /// Tells the generator each navigator's discounted returns on each design.
    fn finish(&mut self, designs: Vec<Design>, learned: Vec<Learned>) -> Result<PopIteration, String> {
        let m = self.cfg.episodes;
        let outcomes: Vec<Outcome> = (0..designs.len())
            .map(|d| Outcome { returns: learned.iter().map(|l| l.episodes[d * m..(d + 1) * m].iter().map(|e| e.discounted).collect()).collect() })
            .collect();
        self.generator.observe(&outcomes);
        if let Some(e) = self.generator.failure() {
            return Err(format!("the {} generator failed: {e}", self.generator.name()));
        }
        let fields = (0..designs.len()).map(|d| learned.iter().find_map(|l| l.fields[d]).unwrap_or(0)).collect();
        for (since, l) in self.since_success.iter_mut().zip(&learned) {
            for e in &l.episodes {
                *since = if e.success() { 0 } else { *since + 1 };
            }
        }
        let revived = self.cfg.revive_after.map_or_else(Vec::new, |w| revivals(&self.since_success, w));
        let (episodes, updates) = learned.into_iter().map(|l| (l.episodes, l.update)).unzip();
        let it = PopIteration { iteration: self.iteration, designs, fields, episodes, updates, reports: self.generator.reports(), revived };
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
        let parts = SnapshotParts::read(bytes)?;
        if parts.header.generator != generator.name() {
            return Err(format!("the snapshot is of a {} run, not {}", parts.header.generator, generator.name()));
        }
        let mut population = Vec::new();
        for &(ckpt, learner) in &parts.navigators {
            let (mut nav, _) = Navigator::load(ckpt, device, 0).map_err(|e| e.to_string())?;
            if !learner.is_empty() {
                nav.load_optimizer_state(learner)?;
            }
            population.push(nav);
        }
        if !parts.generator.is_empty() {
            generator.load_state(parts.generator)?;
        }
        let header = parts.header;
        Self::from_state(population, generator, header.config, &header.state)
    }
}

/// A run snapshot ([`PopulationTrainer::snapshot`]) taken apart, checked, without building
/// anything: for resuming, and for reading one navigator out of a run (`examples/
/// extract_navigator.rs`).
pub struct SnapshotParts<'a> {
    header: RunHeader,
    /// Per navigator, in population order: its checkpoint (a `.wln`) and its learner state
    /// (empty when none).
    pub navigators: Vec<(&'a [u8], &'a [u8])>,
    /// The generator's state (empty when none).
    pub generator: &'a [u8],
}

impl<'a> SnapshotParts<'a> {
    pub fn read(bytes: &'a [u8]) -> Result<Self, String> {
        let parts = container::read(&RUN_KIND, bytes).map_err(|e| e.to_string())?;
        let header: RunHeader = container::read_header(parts.header).map_err(|e| match e {
            CheckpointError::Corrupt(why) => format!("the run snapshot is damaged: {why}"),
            e => e.to_string(),
        })?;
        header.config.validate()?;
        let record = parts.record;
        let mut at = 0usize;
        let mut part = || -> Result<&'a [u8], String> {
            let damaged = || "the run snapshot is damaged: it ends too early".to_string();
            let len = record.get(at..at + 8).ok_or_else(damaged)?;
            let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap())).map_err(|_| damaged())?;
            let s = record.get(at + 8..(at + 8).checked_add(len).ok_or_else(damaged)?).ok_or_else(damaged)?;
            at += 8 + len;
            Ok(s)
        };
        let mut navigators = Vec::new();
        for _ in &header.state.sampling_rngs {
            navigators.push((part()?, part()?));
        }
        let generator = part()?;
        if at != record.len() {
            return Err("the run snapshot is damaged: unexpected bytes after its parts".into());
        }
        if navigators.is_empty() {
            return Err("the run snapshot has no navigators".into());
        }
        Ok(SnapshotParts { header, navigators, generator })
    }

    /// The name of the generator the run trained with.
    pub fn generator_name(&self) -> &str {
        &self.header.generator
    }
}
