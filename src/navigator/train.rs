//! Training a navigator on a stream of generated sites (AEG Algorithm 1 without the adversary's
//! update, CoDE Algorithm 1 likewise): a generator proposes a design, the navigator collects M
//! episodes on it (a fresh seed each), and learns from them: one A2C update, or under the DQN
//! head the episodes join the replay and the TD updates it owes follow. Judging is greedy, on
//! seeds never trained on, without growing the vocabulary.
//!
//! Generic over [`Environment`]: the live DOM in the browser, the native site simulator in tests
//! and benchmarks.

//! Judging a navigator: greedy episodes on seeds never trained on, without growing the
//! vocabulary, one task at a time or the success grid over the test sites; and one episode on
//! its own (the Watch view's). Training is the population loop, `crate::curriculum::train`.
//!
//! Generic over [`Environment`]: the live DOM in the browser, the native site simulator in tests
//! and benchmarks.

use serde::{Deserialize, Serialize};

use super::agent::{Navigator, Transition};
use super::rollout::{Job, play};
use crate::gminiwob::sim::SiteSim;
use crate::gminiwob::test_sites::{LEVELS, TEST_SITES, test_site};
use crate::gminiwob::{Design, RewardConfig, Values};
use crate::task::{Env, TaskSpec};

pub use super::rollout::{Episode, NOTHING_OPEN};

/// Plays one episode of `task` with `seed`: sampling unless `greedy`; new tokens join the
/// vocabulary only while `grow`.
pub async fn rollout<E: Env>(
    env: &mut E,
    nav: &mut Navigator,
    task: &TaskSpec,
    seed: u32,
    greedy: bool,
    grow: bool,
) -> Result<(Vec<Transition>, Episode), String> {
    let stream = nav.episode_stream();
    let played = play(std::slice::from_mut(env), nav, &[Job { task, seed, stream }], greedy, grow).await?;
    let p = played.into_iter().next().expect("one episode");
    Ok((p.steps, p.episode))
}

/// A generated site as a task (the papers' reward, realistic values).
pub fn site_task(name: &str, design: Design) -> TaskSpec {
    TaskSpec::Generated { name: name.to_string(), site: design.into() }
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
/// vocabulary (unseen tokens read as `<unk>`), the episodes side by side on `envs`.
pub async fn judge<E: Env>(envs: &mut [E], nav: &mut Navigator, task: &TaskSpec, seeds: impl IntoIterator<Item = u32>) -> Result<Judged, String> {
    let jobs: Vec<Job> = seeds.into_iter().map(|seed| Job { task, seed, stream: crate::rng::Rng::new(0) }).collect();
    let mut j = Judged::default();
    for p in play(envs, nav, &jobs, true, false).await? {
        let ep = p.episode;
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

/// Site simulators for judging side by side (one per seed of a cell, up to this many).
const JUDGE_POOL: usize = 50;

/// Simulators for `n` episodes side by side.
pub fn sim_pool(n: usize) -> Vec<SiteSim> {
    (0..n.max(1)).map(|_| SiteSim::new(test_site("login", 0).expect("a test site"), 0, Values::default(), RewardConfig::default())).collect()
}

/// Seeds of training episodes count up from 0; judging uses seeds from here on, so a navigator
/// is never judged on a seed it trained on.
pub const JUDGE_SEEDS_FROM: u32 = 1 << 30;

/// A reported figure (the live-DOM judging of a run's best navigator, `judge-navigator.mjs`) uses
/// seeds from here. A run picks its best navigator by judging on `JUDGE_SEEDS_FROM` onwards, so a
/// report on those seeds would score the pick on the very seeds that made it.
pub const REPORT_SEEDS_FROM: u32 = JUDGE_SEEDS_FROM + (1 << 29);

/// The success grid: `nav`'s greedy success on every test site and level, `seeds` unseen seeds
/// a cell, on the site simulator (equal to the live DOM, `tests/web_gminiwob_sim.rs`); rows in
/// `TEST_SITES` order, a column per level. `after_cell` runs after each cell (the learner worker
/// yields there, so the page's messages get through a long judging).
pub async fn judge_test_sites<F: Future<Output = ()>>(
    nav: &mut Navigator,
    seeds: u32,
    mut after_cell: impl FnMut() -> F,
) -> Result<Vec<Vec<f64>>, String> {
    let mut sims = sim_pool((seeds as usize).min(JUDGE_POOL));
    let mut rows = Vec::new();
    for site in TEST_SITES {
        let mut row = Vec::new();
        for level in 0..LEVELS {
            let task = site_task(&format!("{site}-{level}"), test_site(site, level).expect("a test site"));
            row.push(judge(&mut sims, nav, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + seeds).await?.success_rate());
            after_cell().await;
        }
        rows.push(row);
    }
    Ok(rows)
}

/// A success grid's mean over its test sites × levels: the figure a navigator is ranked by.
pub fn grid_mean(grid: &[Vec<f64>]) -> f64 {
    grid.iter().flatten().sum::<f64>() / (TEST_SITES.len() * LEVELS as usize) as f64
}

/// A population judged on the test sites: every navigator's grid and mean, and the best one (the
/// highest mean; the first on ties), the navigator a run reports and keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct PopulationGrids {
    pub grids: Vec<Vec<Vec<f64>>>,
    pub means: Vec<f64>,
    pub best: usize,
}

impl PopulationGrids {
    pub fn new(grids: Vec<Vec<Vec<f64>>>) -> Self {
        let means: Vec<f64> = grids.iter().map(|g| grid_mean(g)).collect();
        let best = (0..means.len()).fold(0, |b, i| if means[i] > means[b] { i } else { b });
        PopulationGrids { grids, means, best }
    }

    /// The best navigator's grid.
    pub fn best_grid(&self) -> &[Vec<f64>] {
        &self.grids[self.best]
    }
}

/// Every navigator of `population` judged by [`judge_test_sites`].
pub async fn judge_population<F: Future<Output = ()>>(
    population: &mut [Navigator],
    seeds: u32,
    mut after_cell: impl FnMut() -> F,
) -> Result<PopulationGrids, String> {
    let mut grids = Vec::with_capacity(population.len());
    for nav in population {
        grids.push(judge_test_sites(nav, seeds, &mut after_cell).await?);
    }
    Ok(PopulationGrids::new(grids))
}

#[cfg(test)]
mod tests {
    use burn::prelude::Device;

    use super::*;
    use crate::navigator::NavigatorConfig;
    use crate::util::block_on;

    /// The mean is over every cell, and the best is the highest mean, the first on ties.
    #[test]
    fn a_population_ranks_by_grid_mean_the_first_on_ties() {
        let grid = |x: f64| vec![vec![x; LEVELS as usize]; TEST_SITES.len()];
        // Levels 0 and 1 solved everywhere, 2 and 3 never: a mean of exactly 1/2.
        let lopsided: Vec<Vec<f64>> = (0..TEST_SITES.len()).map(|_| (0..LEVELS).map(|l| if l < 2 { 1.0 } else { 0.0 }).collect()).collect();
        let p = PopulationGrids::new(vec![grid(0.25), lopsided, grid(0.5)]);
        assert_eq!(p.means, vec![0.25, 0.5, 0.5]);
        assert_eq!(p.best, 1, "the first of the tied best");
        assert_eq!(p.best_grid()[0], vec![1.0, 1.0, 0.0, 0.0]);
    }

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
        let mut sim = sim_pool(1);
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
