//! Playing episodes side by side: a navigator plays a list of episodes (a task and a seed each)
//! on a pool of environments in lock-step, one forward pass over every running episode's state
//! per step (the batched acting of synchronous A2C). An environment whose episode ends takes the
//! next one from the list, so a pool of one plays them one at a time — the same code, and the
//! same episodes: each episode draws its choices from its own generator (see
//! [`Navigator::episode_stream`]), so what it chooses does not depend on its neighbours.
//!
//! Generic over [`Environment`]: the live DOM in the browser (a pool of one page), the native
//! site simulator in training and judging.

use serde::{Deserialize, Serialize};

use super::agent::{Navigator, Transition};
use super::features::{EpisodeMemory, NavAction, NavState};
use crate::env::{Observation, Step};
use crate::rng::Rng;
use crate::task::{Env, TaskSpec};

/// How one episode went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Episode {
    pub seed: u32,
    pub steps: u32,
    /// Sum of the learning rewards (the shaped reward on generated sites).
    pub ret: f64,
    /// The discounted return Σ_t γ^t r_t, the papers' R (what a generator hears); an episode
    /// with no step returns its failure, as a step would.
    #[serde(default)]
    pub discounted: f64,
    pub raw_reward: f64,
    pub reason: Option<String>,
}

impl Episode {
    /// The papers' `is_task_completed` (raw reward 1: a site gives +1, −1 or the step limit's
    /// 0), by the lab's one rule.
    pub fn success(&self) -> bool {
        crate::env::is_success(self.raw_reward)
    }

    /// The navigator's step rule, written once for training, judging and the Watch view: with
    /// no choice open the episode ends as a failure (−1, [`NOTHING_OPEN`])...
    pub fn nothing_open(&mut self) {
        self.raw_reward = -1.0;
        self.reason = Some(NOTHING_OPEN.into());
    }

    /// ... and a choice taken counts a step and its learning reward, closes the choice in
    /// `memory`, and when the step ended the episode keeps the page's raw reward and reason.
    /// Returns the step's learning reward.
    pub fn stepped(&mut self, memory: &mut EpisodeMemory, state: &NavState, choice: NavAction, step: &Step) -> f64 {
        memory.acted(state, choice);
        let reward = step.learning_reward();
        self.steps += 1;
        self.ret += reward;
        if step.done {
            self.raw_reward = step.raw_reward;
            self.reason = step.reason.clone();
        }
        reward
    }
}

/// Why an episode ended when the navigator had no open choice left.
pub const NOTHING_OPEN: &str = "the navigator had no open choice";

/// One episode to play: `task` with `seed`, its choices drawn from `stream` (unused when greedy).
#[derive(Clone, Debug)]
pub struct Job<'a> {
    pub task: &'a TaskSpec,
    pub seed: u32,
    pub stream: Rng,
}

/// A played episode: its steps (what the learner reads) and how it went.
#[derive(Clone, Debug)]
pub struct Played {
    pub steps: Vec<Transition>,
    pub episode: Episode,
}

/// An environment's episode in progress.
struct Slot {
    job: usize,
    obs: Observation,
    memory: EpisodeMemory,
    played: Played,
    stream: Rng,
}

/// Plays every job on `envs` in lock-step (at most `envs.len()` at a time, in job order), sampling
/// unless `greedy`; new tokens join the vocabulary only while `grow`, in the order the episodes'
/// states are read (job order within a step). Results come back in job order. The navigator's
/// counters are not touched (the training loop counts what it learns from).
pub async fn play<E: Env>(envs: &mut [E], nav: &mut Navigator, jobs: &[Job<'_>], greedy: bool, grow: bool) -> Result<Vec<Played>, String> {
    assert!(!envs.is_empty() || jobs.is_empty(), "episodes need an environment");
    // ε of the DQN head's exploration is held for the whole call, so it does not depend on how
    // the episodes interleave.
    let epsilon = nav.cfg.epsilon(nav.counters.env_steps);
    let mut done: Vec<Option<Played>> = vec![None; jobs.len()];
    let mut slots: Vec<Option<Slot>> = Vec::with_capacity(envs.len());
    let mut next = 0;
    for env in envs.iter_mut().take(jobs.len()) {
        slots.push(Some(start(env, jobs, next).await?));
        next += 1;
    }
    while slots.iter().any(Option::is_some) {
        let live: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].is_some()).collect();
        let mut states = Vec::with_capacity(live.len());
        for &i in &live {
            let slot = slots[i].as_mut().expect("a live slot");
            states.push(nav.encode(&slot.obs, &mut slot.memory, grow));
        }
        let mut streams: Vec<Rng> = live.iter().map(|&i| slots[i].as_ref().expect("a live slot").stream.clone()).collect();
        let refs: Vec<_> = states.iter().collect();
        let choices = nav.choose(&refs, greedy, &mut streams, epsilon).await?;
        for (((&i, state), choice), stream) in live.iter().zip(states).zip(choices).zip(streams) {
            let slot = slots[i].as_mut().expect("a live slot");
            slot.stream = stream;
            let ended = match choice {
                None => {
                    slot.played.episode.nothing_open();
                    true
                }
                Some(choice) => {
                    let step = envs[i].step(&state.action(choice)).await.map_err(|e| e.to_string())?;
                    let reward = slot.played.episode.stepped(&mut slot.memory, &state, choice, &step);
                    slot.played.steps.push(Transition { state, action: choice, reward });
                    if !step.done {
                        slot.obs = step.observation;
                    }
                    step.done
                }
            };
            if ended {
                let mut finished = slots[i].take().expect("a live slot");
                finished.played.episode.discounted = discounted(&finished.played, nav.cfg.discount);
                done[finished.job] = Some(finished.played);
                if next < jobs.len() {
                    slots[i] = Some(start(&mut envs[i], jobs, next).await?);
                    next += 1;
                }
            }
        }
    }
    Ok(done.into_iter().map(|p| p.expect("every job was played")).collect())
}

async fn start<E: Env>(env: &mut E, jobs: &[Job<'_>], job: usize) -> Result<Slot, String> {
    let j = &jobs[job];
    let obs = env.reset(j.task, j.seed).await.map_err(|e| e.to_string())?;
    let episode = Episode { seed: j.seed, steps: 0, ret: 0.0, discounted: 0.0, raw_reward: 0.0, reason: None };
    Ok(Slot { job, obs, memory: EpisodeMemory::default(), played: Played { steps: Vec::new(), episode }, stream: j.stream.clone() })
}

/// Σ_t γ^t r_t of a played episode; with no step, its raw reward.
fn discounted(p: &Played, gamma: f64) -> f64 {
    if p.steps.is_empty() {
        return p.episode.raw_reward;
    }
    p.steps.iter().rev().fold(0.0, |g, t| t.reward + gamma * g)
}

#[cfg(test)]
mod tests {
    use burn::prelude::Device;

    use super::*;
    use crate::gminiwob::sim::SiteSim;
    use crate::gminiwob::test_sites::{RandomDesign, test_site};
    use crate::gminiwob::{RewardConfig, Values};
    use crate::navigator::train::site_task;
    use crate::navigator::{Head, NavigatorConfig};
    use crate::util::block_on;

    fn sims(n: usize) -> Vec<SiteSim> {
        (0..n).map(|_| SiteSim::new(test_site("login", 0).unwrap(), 0, Values::default(), RewardConfig::default())).collect()
    }

    /// Episodes as compared: every choice and reward, and how each ended.
    fn trace(played: &[Played]) -> Vec<(Vec<(super::super::NavAction, u64)>, Episode)> {
        played.iter().map(|p| (p.steps.iter().map(|t| (t.action, t.reward.to_bits())).collect(), p.episode.clone())).collect()
    }

    /// Batched and one-at-a-time play give the same episodes for the same seeds and weights
    /// (the vocabulary grown beforehand, as the order states are read in decides new tokens'
    /// ids), sampled and greedy, for both heads.
    #[test]
    fn side_by_side_and_one_at_a_time_play_the_same_episodes() {
        for head in [Head::A2c, Head::Dqn] {
            let cfg = NavigatorConfig {
                head,
                vocab_cap: 400,
                embedding_dim: 16,
                latent_dim: 12,
                dqn_epsilon_start: 0.3,
                dqn_epsilon_end: 0.3,
                ..NavigatorConfig::default()
            };
            let mut nav = Navigator::new(cfg, &Device::flex().autodiff(), 5).unwrap();
            let mut rng = Rng::new(9);
            let tasks: Vec<TaskSpec> = (0..6).map(|i| site_task(&format!("t{i}"), RandomDesign::default().sample(&mut rng))).collect();
            let mut streams = Rng::new(3);
            let jobs: Vec<Job> =
                (0..18).map(|i| Job { task: &tasks[i % tasks.len()], seed: 100 + i as u32, stream: Rng::new(streams.next_u64()) }).collect();
            block_on(play(&mut sims(4), &mut nav, &jobs, false, true)).unwrap();
            for greedy in [false, true] {
                let one = trace(&block_on(play(&mut sims(1), &mut nav, &jobs, greedy, false)).unwrap());
                let many = trace(&block_on(play(&mut sims(7), &mut nav, &jobs, greedy, false)).unwrap());
                let all = trace(&block_on(play(&mut sims(18), &mut nav, &jobs, greedy, false)).unwrap());
                assert_eq!(one, many, "{head:?}, greedy {greedy}");
                assert_eq!(one, all, "{head:?}, greedy {greedy}");
                assert!(one.iter().map(|(s, _)| s.len()).sum::<usize>() > 18, "episodes of several steps");
                if !greedy {
                    let other: Vec<Job> = jobs.iter().map(|j| Job { stream: Rng::new(j.stream.state() ^ 1), ..j.clone() }).collect();
                    assert_ne!(trace(&block_on(play(&mut sims(7), &mut nav, &other, greedy, false)).unwrap()), one, "other streams, other choices");
                }
            }
        }
    }

    #[test]
    fn the_discounted_return_is_the_papers_r() {
        let mut nav = Navigator::new(
            NavigatorConfig { vocab_cap: 300, embedding_dim: 8, latent_dim: 8, ..NavigatorConfig::default() },
            &Device::flex().autodiff(),
            2,
        )
        .unwrap();
        let task = site_task("login-1", test_site("login", 1).unwrap());
        let jobs: Vec<Job> = (0..5).map(|i| Job { task: &task, seed: i, stream: Rng::new(i as u64) }).collect();
        for p in block_on(play(&mut sims(2), &mut nav, &jobs, false, true)).unwrap() {
            let g = nav.cfg.discount;
            let want: f64 = p.steps.iter().enumerate().map(|(t, s)| g.powi(t as i32) * s.reward).sum();
            assert!((p.episode.discounted - want).abs() < 1e-9, "{} vs {want}", p.episode.discounted);
            assert!((p.episode.ret - p.steps.iter().map(|s| s.reward).sum::<f64>()).abs() < 1e-9);
        }
    }
}
