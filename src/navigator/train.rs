//! Training a navigator on a stream of generated sites (AEG Algorithm 1 without the adversary's
//! update, CoDE Algorithm 1 likewise): a generator proposes a design, the navigator collects M
//! episodes on it (a fresh seed each), and learns from them: one A2C update, or under the DQN
//! head the episodes join the replay and the TD updates it owes follow. Judging is greedy, on
//! seeds never trained on, without growing the vocabulary.
//!
//! Generic over [`Environment`]: the live DOM in the browser, the native site simulator in tests
//! and benchmarks.

use serde::{Deserialize, Serialize};

use super::agent::{Navigator, Transition, UpdateStats};
use super::features::EpisodeMemory;
use crate::curriculum::{Generator, Outcome};
use crate::env::{Environment, TaskSpec};
use crate::gminiwob::sim::SiteSim;
use crate::gminiwob::test_sites::{LEVELS, TEST_SITES, test_site};
use crate::gminiwob::{Design, RewardConfig, Values};
use crate::rng::Rng;

/// How one episode went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub seed: u32,
    pub steps: u32,
    /// Sum of the learning rewards (the shaped reward on generated sites).
    pub ret: f64,
    pub raw_reward: f64,
    pub reason: Option<String>,
}

impl Episode {
    /// The papers' `is_task_completed`: raw reward 1.
    pub fn success(&self) -> bool {
        self.raw_reward >= 1.0
    }
}

/// Why an episode ended when the navigator had no open choice left.
pub const NOTHING_OPEN: &str = "the navigator had no open choice";

/// Plays one episode of `task` with `seed`: sampling unless `greedy`; new tokens join the
/// vocabulary only while `grow`.
pub async fn rollout<E: Environment>(
    env: &mut E,
    nav: &mut Navigator,
    task: &TaskSpec,
    seed: u32,
    greedy: bool,
    grow: bool,
) -> Result<(Vec<Transition>, Episode), String> {
    let mut obs = env.reset(task, seed).await.map_err(|e| e.to_string())?;
    let mut memory = EpisodeMemory::default();
    let mut steps: Vec<Transition> = Vec::new();
    let mut ep = Episode { seed, steps: 0, ret: 0.0, raw_reward: 0.0, reason: None };
    loop {
        let state = nav.encode(&obs, &mut memory, grow);
        let Some(choice) = nav.act(&state, greedy).await? else {
            ep.raw_reward = -1.0;
            ep.reason = Some(NOTHING_OPEN.into());
            return Ok((steps, ep));
        };
        let step = env.step(&state.action(choice)).await.map_err(|e| e.to_string())?;
        memory.acted(&state, choice);
        let reward = step.learning_reward();
        ep.steps += 1;
        ep.ret += reward;
        steps.push(Transition { state, action: choice, reward });
        if step.done {
            ep.raw_reward = step.raw_reward;
            ep.reason = step.reason;
            return Ok((steps, ep));
        }
        obs = step.observation;
    }
}

/// A generated site as a task (the papers' reward, realistic values).
pub fn site_task(name: &str, design: Design) -> TaskSpec {
    TaskSpec::Generated { name: name.to_string(), design, values: Values::default(), reward: RewardConfig::default() }
}

/// Greedy results of `nav` on `task` for `seeds`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub episodes: u32,
    pub successes: u32,
    pub mean_return: f64,
    pub mean_steps: f64,
}

impl Judged {
    pub fn success_rate(&self) -> f64 {
        if self.episodes == 0 { 0.0 } else { self.successes as f64 / self.episodes as f64 }
    }
}

/// Judges `nav` greedily on `task` for every seed in `seeds`, without learning or growing its
/// vocabulary (unseen tokens read as `<unk>`).
pub async fn judge<E: Environment>(
    env: &mut E,
    nav: &mut Navigator,
    task: &TaskSpec,
    seeds: impl IntoIterator<Item = u32>,
) -> Result<Judged, String> {
    let mut j = Judged::default();
    for seed in seeds {
        let (_, ep) = rollout(env, nav, task, seed, true, false).await?;
        j.episodes += 1;
        j.successes += ep.success() as u32;
        j.mean_return += ep.ret;
        j.mean_steps += ep.steps as f64;
    }
    if j.episodes > 0 {
        j.mean_return /= j.episodes as f64;
        j.mean_steps /= j.episodes as f64;
    }
    Ok(j)
}

/// Seeds of training episodes count up from 0; judging uses seeds from here on, so a navigator
/// is never judged on a seed it trained on.
pub const JUDGE_SEEDS_FROM: u32 = 1 << 30;

/// The success grid: `nav`'s greedy success on every test site and level, `seeds` unseen seeds
/// a cell, on the site simulator (equal to the live DOM, `tests/web_gminiwob_sim.rs`); rows in
/// `TEST_SITES` order, a column per level. `after_cell` runs after each cell (the learner worker
/// yields there, so the page's messages get through a long judging).
pub async fn judge_test_sites<F: Future<Output = ()>>(
    nav: &mut Navigator,
    seeds: u32,
    mut after_cell: impl FnMut() -> F,
) -> Result<Vec<Vec<f64>>, String> {
    let mut sim = SiteSim::new(test_site("login", 0).expect("a test site"), 0, Values::default(), RewardConfig::default());
    let mut rows = Vec::new();
    for site in TEST_SITES {
        let mut row = Vec::new();
        for level in 0..LEVELS {
            let task = site_task(&format!("{site}-{level}"), test_site(site, level).expect("a test site"));
            row.push(judge(&mut sim, nav, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + seeds).await?.success_rate());
            after_cell().await;
        }
        rows.push(row);
    }
    Ok(rows)
}

/// What one iteration did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Iteration {
    pub iteration: u64,
    pub pages: u32,
    pub primitives: u32,
    pub fields: u32,
    pub episodes: Vec<Episode>,
    pub update: UpdateStats,
}

impl Iteration {
    pub fn success_rate(&self) -> f64 {
        self.episodes.iter().filter(|e| e.success()).count() as f64 / self.episodes.len().max(1) as f64
    }
    pub fn mean_return(&self) -> f64 {
        self.episodes.iter().map(|e| e.ret).sum::<f64>() / self.episodes.len().max(1) as f64
    }
}

/// What a snapshot keeps of a training loop (beside the navigator's checkpoint and its learner
/// state: Adam's moments, and under DQN the target network and replay) so a resumed run goes on
/// as the original would have. The ε schedule and the target copies follow the checkpoint's
/// counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NavTrainerState {
    pub iteration: u64,
    pub next_seed: u32,
    pub design_rng: u64,
    pub sampling_rng: u64,
}

/// The training loop's state: the navigator, the generator, and the counters that make a run
/// reproducible from its seed.
pub struct NavTrainer<G: Generator> {
    pub navigator: Navigator,
    pub generator: G,
    /// Draws the generator's designs.
    rng: Rng,
    next_seed: u32,
    pub iteration: u64,
}

impl<G: Generator> NavTrainer<G> {
    pub fn new(navigator: Navigator, generator: G, seed: u64) -> Self {
        NavTrainer { navigator, generator, rng: Rng::new(seed ^ 0x6765_6e65_7261_746f), next_seed: 0, iteration: 0 }
    }

    pub fn state(&self) -> NavTrainerState {
        NavTrainerState {
            iteration: self.iteration,
            next_seed: self.next_seed,
            design_rng: self.rng.state(),
            sampling_rng: self.navigator.rng_state(),
        }
    }

    /// Continues a run saved as `state` (its navigator loaded from the run's checkpoint).
    pub fn resume(mut navigator: Navigator, generator: G, state: &NavTrainerState) -> Self {
        navigator.set_rng_state(state.sampling_rng);
        NavTrainer {
            navigator,
            generator,
            rng: Rng::from_state(state.design_rng),
            next_seed: state.next_seed % JUDGE_SEEDS_FROM,
            iteration: state.iteration,
        }
    }

    /// One iteration: propose, collect M episodes, update, tell the generator.
    pub async fn step<E: Environment>(&mut self, env: &mut E) -> Result<Iteration, String> {
        let design = self.generator.propose(&mut self.rng, self.iteration);
        let (pages, primitives) = (design.pages(), design.placed().len() as u32);
        let task = site_task(&format!("{}-{}", self.generator.name(), self.iteration), design);
        let mut batch = Vec::with_capacity(self.navigator.cfg.episodes_per_update);
        let mut episodes = Vec::with_capacity(batch.capacity());
        let mut fields = 0;
        for _ in 0..self.navigator.cfg.episodes_per_update {
            let seed = self.next_seed;
            self.next_seed = self.next_seed.wrapping_add(1) % JUDGE_SEEDS_FROM;
            let (steps, ep) = rollout(env, &mut self.navigator, &task, seed, false, true).await?;
            fields = steps.first().map(|t| t.state.fields as u32).unwrap_or(fields);
            self.navigator.counters.env_steps += ep.steps as u64;
            self.navigator.counters.episodes += 1;
            if !steps.is_empty() {
                batch.push(steps);
            }
            episodes.push(ep);
        }
        let update = self.navigator.update(&batch).await?;
        self.generator.observe(&Outcome { returns: vec![episodes.iter().map(|e| e.ret).collect()] });
        let it = Iteration { iteration: self.iteration, pages, primitives, fields, episodes, update };
        self.iteration += 1;
        Ok(it)
    }
}

#[cfg(test)]
mod tests {
    use burn::prelude::Device;

    use super::*;
    use crate::navigator::NavigatorConfig;
    use crate::util::block_on;

    /// The grid holds, site by site and level by level, what judging that test site alone gives,
    /// and yields after every cell.
    #[test]
    fn the_success_grid_is_each_test_sites_judging() {
        let cfg = NavigatorConfig { vocab_cap: 64, embedding_dim: 16, latent_dim: 12, ..NavigatorConfig::default() };
        let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 3).unwrap();
        let mut cells = 0;
        let grid = block_on(judge_test_sites(&mut nav, 2, || {
            cells += 1;
            std::future::ready(())
        }))
        .unwrap();
        assert_eq!(cells, TEST_SITES.len() * LEVELS as usize);
        assert_eq!(grid.len(), TEST_SITES.len());
        let mut sim = SiteSim::new(test_site("login", 0).unwrap(), 0, Values::default(), RewardConfig::default());
        for (site, row) in TEST_SITES.iter().zip(&grid) {
            assert_eq!(row.len(), LEVELS as usize);
            for (level, &cell) in row.iter().enumerate() {
                let task = site_task(&format!("{site}-{level}"), test_site(site, level as u32).unwrap());
                let alone = block_on(judge(&mut sim, &mut nav, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + 2)).unwrap();
                assert_eq!(cell, alone.success_rate(), "{site} level {level}");
            }
        }
    }
}
