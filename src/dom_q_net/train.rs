//! Training DOM-Q-Net (Algorithm 1 of the paper): one network and one shared replay buffer over
//! one or more tasks. Each round visits the tasks in turn; for each: act with noisy exploration,
//! step that task's environment, store the transition, and make one update.
//!
//! Generic over [`Environment`]: the same loop drives the page-graph simulator in native tests
//! and live task pages in the browser.

use serde::{Deserialize, Serialize};

use super::agent::{Decision, DomQNetAgent, UpdateStats};
use super::features::Encoded;
use super::vocab::Vocabs;
use crate::env::{EnvError, Observation, STEP_LIMIT_REASON, Step};
use crate::runner::{EpisodeResult, RunStats};
use crate::task::{Env, TaskSpec};

/// A task counts as solved once the success rate over its last 100 episodes reaches 90%.
pub const SOLVE_RATE: f64 = 0.9;

/// Progress of one task during training.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TaskProgress {
    pub task: String,
    pub stats: RunStats,
    /// Environment steps taken on this task.
    pub frames: u64,
    /// Frames of this task when it was first solved.
    pub solved_at_frames: Option<u64>,
    /// All frames (every task's) when this task was first solved.
    pub solved_at_total: Option<u64>,
    /// Training time (ms, by the trainer's clock, pauses excluded) when this task was first solved.
    #[serde(default)]
    pub solved_at_ms: Option<f64>,
}

/// Something that happened during training, for charts and logs.
pub enum TrainEvent<'a> {
    /// One action: the decision, its result, how long choosing it took and how long the
    /// environment took to perform it (ms).
    Step {
        task: usize,
        decision: &'a Decision,
        step: &'a Step,
        act_ms: f64,
        env_ms: f64,
    },
    Episode {
        task: usize,
        result: &'a EpisodeResult,
        progress: &'a TaskProgress,
    },
    /// One update and how long it took (ms).
    Update {
        stats: &'a UpdateStats,
        update_ms: f64,
    },
    /// The page was larger than the model's caps (once per episode at most).
    Warning {
        task: usize,
        message: &'a str,
    },
}

/// What the loop may ask between steps: keep going, or stop now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
}

struct Running {
    state: Encoded,
    steps: u32,
    seed: u32,
}

/// Seeds are split in two: training episodes draw below this, and everything that judges or
/// shows an agent (the held-out evaluation of `scripts/train-agents.sh`, whose `eval_seed` in
/// `agents/manifest.json` starts here, and agents in the Watch view, see [`held_out_seed`]) from
/// here on, so an agent is never judged or shown on a page it trained on.
pub const HELD_OUT_SEEDS: u32 = 1_000_000_000;

/// Seed of the `episode`-th episode of task `task`: distinct per task, reproducible, and below
/// [`HELD_OUT_SEEDS`] (it wraps there; every run before the split stayed far below it, so they
/// reproduce unchanged).
pub fn episode_seed(base: u32, task: usize, episode: u64) -> u32 {
    base.wrapping_add((task as u32).wrapping_mul(1_000_003)).wrapping_add(episode as u32) % HELD_OUT_SEEDS
}

/// The held-out seed for a seed a person picked: `HELD_OUT_SEEDS + seed` below the split, the
/// seed itself from it on (so a held-out seed, e.g. from a share link, names the same page).
pub fn held_out_seed(seed: u32) -> u32 {
    if seed >= HELD_OUT_SEEDS { seed } else { HELD_OUT_SEEDS + seed }
}

/// What a [`Trainer`] needs to continue a run after a reload.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainerState {
    pub tasks: Vec<TaskSpec>,
    pub progress: Vec<TaskProgress>,
    pub episodes: Vec<u64>,
    pub seed: u32,
    /// Milliseconds spent inside [`Trainer::run`] so far.
    #[serde(default)]
    pub elapsed_ms: f64,
    /// The task the round-robin steps next.
    #[serde(default)]
    pub next_task: usize,
    /// Turns each solved task has sat out since its last episode ([`super::DqnConfig::solved_task_rest`]).
    #[serde(default)]
    pub rested: Vec<u32>,
}

/// The state of a training run that outlives one call: each task's progress, its running
/// episode, and how many episodes it has started. [`Trainer::run`] can be called again to
/// continue where it stopped (after a pause, a checkpoint, a change of page).
pub struct Trainer {
    pub tasks: Vec<TaskSpec>,
    pub progress: Vec<TaskProgress>,
    seed: u32,
    /// Milliseconds from some fixed origin (the platform's clock; the core has none on wasm).
    clock: fn() -> f64,
    running: Vec<Option<Running>>,
    episodes: Vec<u64>,
    /// Milliseconds spent inside `run` (so pauses between calls do not count).
    elapsed_ms: f64,
    /// The task the round-robin steps next: a call of `run` that stops early (for a progress
    /// report, a pause) hands on to the next call here, so every task gets its turn however
    /// short the calls are.
    next_task: usize,
    /// Per task, turns sat out since its last episode (only a solved task rests, see
    /// [`super::DqnConfig::solved_task_rest`]).
    rested: Vec<u32>,
}

impl Trainer {
    pub fn new(tasks: Vec<TaskSpec>, seed: u32) -> Self {
        let n = tasks.len();
        Trainer {
            clock: || 0.0,
            progress: tasks.iter().map(|t| TaskProgress { task: t.label(), ..Default::default() }).collect(),
            running: tasks.iter().map(|_| None).collect(),
            episodes: vec![0; tasks.len()],
            tasks,
            seed,
            elapsed_ms: 0.0,
            next_task: 0,
            rested: vec![0; n],
        }
    }

    /// A trainer that continues from a saved state (running episodes start afresh).
    pub fn from_state(state: TrainerState) -> Self {
        let n = state.tasks.len();
        Trainer {
            clock: || 0.0,
            running: state.tasks.iter().map(|_| None).collect(),
            tasks: state.tasks,
            progress: state.progress,
            episodes: state.episodes,
            seed: state.seed,
            elapsed_ms: state.elapsed_ms,
            // `run` takes it modulo the task count, so a saved value needs no check here.
            next_task: state.next_task,
            // One per task whatever the saved list holds (older states have none).
            rested: (0..n).map(|k| state.rested.get(k).copied().unwrap_or(0)).collect(),
        }
    }

    pub fn state(&self) -> TrainerState {
        TrainerState {
            tasks: self.tasks.clone(),
            progress: self.progress.clone(),
            episodes: self.episodes.clone(),
            seed: self.seed,
            elapsed_ms: self.elapsed_ms,
            next_task: self.next_task,
            rested: self.rested.clone(),
        }
    }

    /// Milliseconds spent training (inside [`Self::run`]), by the trainer's clock.
    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }

    /// Times acting and updates with `clock` (milliseconds).
    pub fn with_clock(mut self, clock: fn() -> f64) -> Self {
        self.clock = clock;
        self
    }

    /// Forgets the running episodes (their pages will be reset on the next step).
    pub fn drop_running_episodes(&mut self, agent: &mut DomQNetAgent) {
        for (k, r) in self.running.iter_mut().enumerate() {
            if r.take().is_some() {
                agent.abandon_episode(k);
            }
        }
    }

    /// Trains until `until_frames` environment steps (all tasks together) have been taken, or
    /// `on_event` says stop. One environment per task.
    pub async fn run<E: Env>(
        &mut self,
        agent: &mut DomQNetAgent,
        envs: &mut [E],
        until_frames: u64,
        mut on_event: impl FnMut(TrainEvent) -> Control,
    ) -> Result<(), EnvError> {
        assert_eq!(envs.len(), self.tasks.len(), "one environment per task");
        if self.tasks.is_empty() {
            return Ok(());
        }
        let max_steps = agent.cfg.max_episode_steps;
        let failed = |e: String| EnvError::Browser(format!("agent: {e}"));
        let (tasks, progress, running, episodes, next_task, rested) =
            (&self.tasks, &mut self.progress, &mut self.running, &mut self.episodes, &mut self.next_task, &mut self.rested);
        let rest = if tasks.len() > 1 { agent.cfg.solved_task_rest } else { 0 };
        let clock = self.clock;
        let (run_start, elapsed_before, base_seed) = (clock(), self.elapsed_ms, self.seed);
        // An async block so that `?` ends the loop and the time spent is still counted.
        let result: Result<(), EnvError> = async {
            // Round-robin over the tasks (Algorithm 1), continuing from where the last call stopped.
            'outer: loop {
                if agent.counters.env_steps >= until_frames {
                    break 'outer;
                }
                let k = *next_task % tasks.len();
                *next_task = (k + 1) % tasks.len();
                // A solved task sits out `rest` turns before each new episode (0: Algorithm 1).
                // Some task is always unsolved or due, so this cannot skip forever.
                if running[k].is_none() && progress[k].solved_at_frames.is_some() && rested[k] < rest {
                    rested[k] += 1;
                    continue;
                }
                rested[k] = 0;
                // Start an episode if the task has none running.
                let run = match running[k].take() {
                    Some(r) => r,
                    None => {
                        let seed = episode_seed(base_seed, k, episodes[k]);
                        episodes[k] += 1;
                        let obs = envs[k].reset(&tasks[k], seed).await?;
                        let state = agent.encode(&obs);
                        if let Some(w) = &state.warning
                            && on_event(TrainEvent::Warning { task: k, message: w }) == Control::Stop
                        {
                            running[k] = Some(Running { state, steps: 0, seed });
                            break 'outer;
                        }
                        Running { state, steps: 0, seed }
                    }
                };

                // Act, step the page, store the transition.
                let t0 = clock();
                let decision = agent.act(k, &run.state, true).await.map_err(failed)?;
                let t1 = clock();
                let act_ms = t1 - t0;
                let step = match envs[k].step(&decision.env_action).await {
                    Ok(step) => step,
                    // An action that does not fit its target (e.g. a bad option) changes nothing.
                    Err(EnvError::BadTarget { .. }) => Step::default(),
                    Err(e) => {
                        agent.abandon_episode(k);
                        return Err(e);
                    }
                };
                let next = if step.observation.dom.nodes.is_empty() { run.state.clone() } else { agent.encode(&step.observation) };
                let steps = run.steps + 1;
                let cut = !step.done && steps >= max_steps;
                if let Err(e) = agent.observe(k, step.learning_reward(), &next, step.done || cut) {
                    agent.abandon_episode(k);
                    return Err(failed(e));
                }
                progress[k].frames += 1;
                let env_ms = clock() - t1;
                let mut control = on_event(TrainEvent::Step { task: k, decision: &decision, step: &step, act_ms, env_ms });

                if step.done || cut {
                    let result = EpisodeResult {
                        seed: run.seed,
                        steps,
                        reward: if cut { -1.0 } else { step.reward },
                        raw_reward: if cut { -1.0 } else { step.raw_reward },
                        reason: if cut { Some(crate::env::STEP_LIMIT_REASON.into()) } else { step.reason.clone() },
                    };
                    let p = &mut progress[k];
                    p.stats.record(&result);
                    if p.solved_at_frames.is_none() && p.stats.episodes >= RunStats::WINDOW as u64 && p.stats.success_rate_100 >= SOLVE_RATE {
                        p.solved_at_frames = Some(p.frames);
                        p.solved_at_total = Some(agent.counters.env_steps);
                        p.solved_at_ms = Some(elapsed_before + (clock() - run_start));
                    }
                    if on_event(TrainEvent::Episode { task: k, result: &result, progress: p }) == Control::Stop {
                        control = Control::Stop;
                    }
                } else {
                    running[k] = Some(Running { state: next, steps, seed: run.seed });
                }

                // One update per environment step (Table 1).
                for _ in 0..agent.cfg.updates_per_step {
                    let t0 = clock();
                    if let Some(stats) = agent.learn().await.map_err(failed)? {
                        let update_ms = clock() - t0;
                        if on_event(TrainEvent::Update { stats: &stats, update_ms }) == Control::Stop {
                            control = Control::Stop;
                        }
                    }
                }
                if control == Control::Stop {
                    break 'outer;
                }
            }
            Ok(())
        }
        .await;
        self.elapsed_ms = elapsed_before + (clock() - run_start);
        result
    }
}

/// Trains `agent` on `tasks` (one environment each) until `total_frames` environment steps have
/// been taken over all tasks, or `on_event` says stop. Returns each task's progress.
pub async fn train<E: Env>(
    agent: &mut DomQNetAgent,
    envs: &mut [E],
    tasks: &[TaskSpec],
    total_frames: u64,
    seed: u32,
    on_event: impl FnMut(TrainEvent) -> Control,
) -> Result<Vec<TaskProgress>, EnvError> {
    let mut trainer = Trainer::new(tasks.to_vec(), seed);
    trainer.run(agent, envs, total_frames, on_event).await?;
    Ok(trainer.progress)
}

/// Greedy evaluation (noise off): success rate of `episodes` episodes from seed `seed` on, each
/// under the rules of a [`GreedyEpisode`].
pub async fn evaluate<E: Env>(agent: &mut DomQNetAgent, env: &mut E, task: &TaskSpec, episodes: u32, seed: u32) -> Result<RunStats, EnvError> {
    Ok(RunStats::of(&evaluate_episodes(agent, env, task, episodes, seed).await?))
}

/// [`evaluate`]'s episodes one by one (seed, steps, reward, how each ended), for a report that
/// says why the failures failed.
pub async fn evaluate_episodes<E: Env>(
    agent: &mut DomQNetAgent,
    env: &mut E,
    task: &TaskSpec,
    episodes: u32,
    seed: u32,
) -> Result<Vec<EpisodeResult>, EnvError> {
    let mut out = Vec::with_capacity(episodes as usize);
    for e in 0..episodes {
        out.push(greedy_episode(agent, env, task, seed.wrapping_add(e)).await?);
    }
    Ok(out)
}

async fn greedy_episode<E: Env>(agent: &mut DomQNetAgent, env: &mut E, task: &TaskSpec, ep_seed: u32) -> Result<EpisodeResult, EnvError> {
    let mut obs = env.reset(task, ep_seed).await?;
    let mut episode = GreedyEpisode::begin(agent, ep_seed);
    loop {
        let d = match episode.decide(agent, &obs).await {
            Ok(d) => d,
            Err(e) => return Err(episode.abandon(agent, EnvError::Browser(e))),
        };
        let outcome = env.step(&d.env_action).await;
        let (step, end) = episode.record(agent, &obs, outcome)?;
        if let Some(result) = end {
            return Ok(result);
        }
        obs = step.observation;
    }
}

/// The rules of a greedy (evaluation) episode, one step at a time, for [`evaluate`] and for an
/// agent a person watches (`web::app`), so the two count alike:
/// - the noisy layers are off (μ only) and each head acts by its argmax;
/// - an action that does not fit its target ([`EnvError::BadTarget`]) is a step that changes
///   nothing;
/// - the episode is cut after the agent's `max_episode_steps` (the reference code's 22) with
///   reward and raw reward −1 and the reason [`STEP_LIMIT_REASON`];
/// - the agent's vocabularies are put back as they were when the episode ends (or is
///   abandoned): watching or evaluating changes nothing in the agent, and each episode's result
///   does not depend on the ones before.
pub struct GreedyEpisode {
    seed: u32,
    steps: u32,
    vocabs: Vocabs,
}

impl GreedyEpisode {
    /// Starts the rules for an episode on the page of `seed`, whose first observation the
    /// environment has just given.
    pub fn begin(agent: &DomQNetAgent, seed: u32) -> Self {
        GreedyEpisode { seed, steps: 0, vocabs: agent.vocabs.clone() }
    }

    /// The agent's greedy decision in `obs`.
    pub async fn decide(&self, agent: &mut DomQNetAgent, obs: &Observation) -> Result<Decision, String> {
        let enc = agent.encode(obs);
        agent.act(usize::MAX, &enc, false).await
    }

    /// Counts the outcome of the step taken from `before`: the step as the rules see it (a
    /// misfit action leaves `before` as it was; the step cap ends the episode), and the episode's
    /// result once it is over. An environment error ends the episode and is passed on.
    pub fn record(
        &mut self,
        agent: &mut DomQNetAgent,
        before: &Observation,
        outcome: Result<Step, EnvError>,
    ) -> Result<(Step, Option<EpisodeResult>), EnvError> {
        let mut step = match outcome {
            Ok(step) => step,
            Err(EnvError::BadTarget { .. }) => Step { observation: before.clone(), ..Step::default() },
            Err(e) => return Err(self.abandon(agent, e)),
        };
        self.steps += 1;
        if !step.done && self.steps >= agent.cfg.max_episode_steps {
            step.done = true;
            (step.reward, step.raw_reward) = (-1.0, -1.0);
            step.reason = Some(STEP_LIMIT_REASON.into());
        }
        if !step.done {
            return Ok((step, None));
        }
        agent.vocabs = self.vocabs.clone();
        let result =
            EpisodeResult { seed: self.seed, steps: self.steps, reward: step.reward, raw_reward: step.raw_reward, reason: step.reason.clone() };
        Ok((step, Some(result)))
    }

    /// Ends the episode early (an error, or a new episode started before this one ended): the
    /// vocabularies go back as they were. Returns `error`, for `?`-style use.
    pub fn abandon<T>(&self, agent: &mut DomQNetAgent, error: T) -> T {
        agent.vocabs = self.vocabs.clone();
        error
    }

    pub fn seed(&self) -> u32 {
        self.seed
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use burn::prelude::Device;

    use super::*;
    use crate::dom_q_net::DqnConfig;
    use crate::env::Environment;
    use crate::env::{Action, Observation};
    use crate::sim::SimEnv;
    use crate::util::block_on;

    #[derive(Clone, Debug, PartialEq)]
    enum Call {
        Reset { task: usize, seed: u32 },
        Step { task: usize },
        Update,
    }

    /// A simulator that writes every call into a log shared by all tasks.
    struct Logged {
        task: usize,
        inner: SimEnv,
        log: Rc<RefCell<Vec<Call>>>,
    }

    impl crate::env::Environment<crate::task::GeneratedSite> for Logged {
        async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
            self.log.borrow_mut().push(Call::Reset { task: self.task, seed });
            self.inner.reset(task, seed).await
        }
        async fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
            self.log.borrow_mut().push(Call::Step { task: self.task });
            self.inner.step(action).await
        }
    }

    /// A page that never ends, where every second action misses its target.
    struct Endless {
        obs: Observation,
        steps: u32,
    }

    impl crate::env::Environment<crate::task::GeneratedSite> for Endless {
        async fn reset(&mut self, _: &TaskSpec, _: u32) -> Result<Observation, EnvError> {
            Ok(self.obs.clone())
        }
        async fn step(&mut self, _: &Action) -> Result<Step, EnvError> {
            self.steps += 1;
            if self.steps.is_multiple_of(2) {
                return Err(EnvError::BadTarget { action: "click".into(), detail: "gone".into() });
            }
            Ok(Step { observation: self.obs.clone(), ..Step::default() })
        }
    }

    #[test]
    fn greedy_episodes_count_misfits_stop_at_the_cap_and_leave_the_agent_as_it_was() {
        let cfg = DqnConfig { max_episode_steps: 5, dom_hidden: 16, token_hidden: 8, mode_hidden: 8, ..DqnConfig::default() };
        let mut agent = DomQNetAgent::new(cfg, &Device::flex()).unwrap();
        let spec = SimEnv::spec("sim-click");
        let obs = block_on(SimEnv::new(None).reset(&spec, 3)).unwrap();
        let fresh = agent.vocabs.clone();
        let mut env = Endless { obs: obs.clone(), steps: 0 };
        let stats = block_on(evaluate(&mut agent, &mut env, &spec, 3, 10)).unwrap();
        assert_eq!((stats.episodes, stats.successes, env.steps), (3, 0, 15), "5 steps each, misfits counted");
        let cut = EpisodeResult { seed: 12, steps: 5, reward: -1.0, raw_reward: -1.0, reason: Some(STEP_LIMIT_REASON.into()) };
        assert_eq!(stats.last, Some(cut));
        assert_eq!(agent.vocabs, fresh, "evaluating grew no vocabulary");

        // Step by step, as the Watch view drives it.
        let mut ep = GreedyEpisode::begin(&agent, 7);
        for i in 1..=5u32 {
            block_on(ep.decide(&mut agent, &obs)).unwrap();
            assert_ne!(agent.vocabs, fresh, "acting reads the page into the vocabularies");
            let outcome = if i % 2 == 0 {
                Err(EnvError::BadTarget { action: "click".into(), detail: "gone".into() })
            } else {
                Ok(Step { observation: obs.clone(), reward: 0.5, ..Step::default() })
            };
            let (step, end) = ep.record(&mut agent, &obs, outcome).unwrap();
            assert_eq!(step.observation, obs, "a misfit leaves the page as it was");
            if i < 5 {
                assert!(end.is_none() && !step.done, "step {i}");
            } else {
                assert!(step.done && step.raw_reward == -1.0 && step.reason.as_deref() == Some(STEP_LIMIT_REASON));
                assert_eq!(end.unwrap().steps, 5);
            }
        }
        assert_eq!(agent.vocabs, fresh, "the episode's end put the vocabularies back");

        // A page that ends the episode on the last allowed step gives its own outcome; an
        // environment error is passed on; either way the vocabularies go back.
        let mut ep = GreedyEpisode::begin(&agent, 8);
        let done = Step { observation: obs.clone(), reward: 0.9, raw_reward: 1.0, done: true, ..Step::default() };
        block_on(ep.decide(&mut agent, &obs)).unwrap();
        let (_, end) = ep.record(&mut agent, &obs, Ok(done)).unwrap();
        assert_eq!(end.map(|r| (r.steps, r.raw_reward, r.reason)), Some((1, 1.0, None)));
        assert_eq!(agent.vocabs, fresh);
        let mut ep = GreedyEpisode::begin(&agent, 9);
        block_on(ep.decide(&mut agent, &obs)).unwrap();
        assert_eq!(ep.record(&mut agent, &obs, Err(EnvError::NoEpisode)).unwrap_err(), EnvError::NoEpisode);
        assert_eq!(agent.vocabs, fresh);
    }

    #[test]
    fn training_seeds_stay_below_the_held_out_ones() {
        for base in [0, 1, 7, 999_999_999, u32::MAX] {
            for task in [0, 1, 10] {
                for episode in [0u64, 1, 50_000, 1 << 32] {
                    assert!(episode_seed(base, task, episode) < HELD_OUT_SEEDS, "{base} {task} {episode}");
                }
            }
        }
        assert_eq!(episode_seed(1, 0, 41), 42, "seeds of runs before the split are unchanged");
        assert_eq!(episode_seed(40, 2, 3), 40 + 2 * 1_000_003 + 3);
        for seed in [0, 1, 17, HELD_OUT_SEEDS - 1] {
            assert_eq!(held_out_seed(seed), HELD_OUT_SEEDS + seed);
        }
        for seed in [HELD_OUT_SEEDS, HELD_OUT_SEEDS + 5, u32::MAX] {
            assert_eq!(held_out_seed(seed), seed, "a held-out seed names its own page");
        }
        // The shipped agents: trained from seed 1 (scripts/train-agents.sh's default) for fewer
        // episodes than steps, judged from `eval_seed`; both sides of the split.
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/agents/manifest.json")).unwrap()).unwrap();
        let dqn = manifest["agents"].as_array().unwrap().iter().filter(|a| a["file"].as_str().unwrap().ends_with(".wlq"));
        for a in dqn {
            let steps = a["env_steps"].as_u64().unwrap();
            assert!(episode_seed(1, 0, steps) < HELD_OUT_SEEDS && 1 + steps < HELD_OUT_SEEDS as u64, "{a}");
            assert!(a["eval_seed"].as_u64().unwrap() >= HELD_OUT_SEEDS as u64, "{a}");
        }
    }

    #[test]
    fn calls_that_stop_after_every_step_still_give_every_task_its_turn() {
        // The browser learner stops `run` for a progress report every few hundred milliseconds,
        // which can be after a single step: the next call must go on with the next task, not
        // start over at the first (which would starve all tasks but the first few).
        let cfg = DqnConfig { batch_size: 4, replay_capacity: 64, dom_hidden: 16, token_hidden: 8, mode_hidden: 8, ..DqnConfig::default() };
        let mut agent = DomQNetAgent::new(cfg, &Device::flex().autodiff()).unwrap();
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut envs: Vec<Logged> = (0..3).map(|task| Logged { task, inner: SimEnv::new(None), log: log.clone() }).collect();
        let tasks: Vec<TaskSpec> = ["sim-click", "sim-type", "sim-click"].iter().map(|n| SimEnv::spec(n)).collect();
        let mut trainer = Trainer::new(tasks, 5);
        for until in 1..=4 {
            block_on(trainer.run(&mut agent, &mut envs, 100, |ev| match ev {
                TrainEvent::Step { .. } => Control::Stop,
                _ => Control::Continue,
            }))
            .unwrap();
            assert_eq!(agent.counters.env_steps, until);
        }
        // And a trainer restored from a saved state goes on with the task that was next.
        let mut trainer = Trainer::from_state(trainer.state());
        for _ in 0..2 {
            block_on(trainer.run(&mut agent, &mut envs, 100, |ev| match ev {
                TrainEvent::Step { .. } => Control::Stop,
                _ => Control::Continue,
            }))
            .unwrap();
        }
        let steps: Vec<usize> = log.borrow().iter().filter_map(|c| if let Call::Step { task } = c { Some(*task) } else { None }).collect();
        assert_eq!(steps, [0, 1, 2, 0, 1, 2]);
    }

    /// A page whose reward is not a number after a few steps.
    struct NanReward {
        inner: SimEnv,
        steps: u32,
    }

    impl crate::env::Environment<crate::task::GeneratedSite> for NanReward {
        async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
            self.inner.reset(task, seed).await
        }
        async fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
            let mut step = self.inner.step(action).await?;
            self.steps += 1;
            if self.steps >= 20 {
                step.raw_reward = f64::NAN;
                step.shaped_reward = None;
            }
            Ok(step)
        }
    }

    #[test]
    fn a_reward_that_is_not_a_number_stops_the_run_with_a_message() {
        // Clamping to 0/1 used to turn NaN into 0 without a word (`NaN.max(0.0)` is 0); without
        // clamping NaN reached the replay and poisoned the network.
        for clamp in [true, false] {
            let cfg = DqnConfig {
                batch_size: 4,
                replay_capacity: 64,
                learning_starts: 0,
                dom_hidden: 16,
                token_hidden: 8,
                mode_hidden: 8,
                clamp_negative_rewards: clamp,
                ..DqnConfig::default()
            };
            let mut agent = DomQNetAgent::new(cfg, &Device::flex().autodiff()).unwrap();
            let mut envs = [NanReward { inner: SimEnv::new(None), steps: 0 }];
            let mut trainer = Trainer::new(vec![SimEnv::spec("sim-click")], 3);
            let result = block_on(trainer.run(&mut agent, &mut envs, 100, |_| Control::Continue));
            let err = result.expect_err("the run stops").to_string();
            assert!(err.contains(crate::dom_q_net::agent::NOT_FINITE) && err.contains("reward NaN"), "{err}");
            assert_eq!(agent.counters.env_steps, 19, "the NaN step was not stored");
            assert!(agent.counters.updates > 0);
        }
    }

    #[test]
    fn algorithm_1_steps_the_tasks_round_robin_with_one_update_each() {
        let names = ["sim-click", "sim-type", "sim-click"];
        let cfg = DqnConfig {
            batch_size: 4,
            replay_capacity: 256,
            learning_starts: 6,
            dom_hidden: 16,
            token_hidden: 8,
            mode_hidden: 8,
            max_episode_steps: 4,
            ..DqnConfig::default()
        };
        let mut agent = DomQNetAgent::new(cfg, &Device::flex().autodiff()).unwrap();
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut envs: Vec<Logged> = (0..3).map(|task| Logged { task, inner: SimEnv::new(None), log: log.clone() }).collect();
        let tasks: Vec<TaskSpec> = names.iter().map(|n| SimEnv::spec(n)).collect();
        let mut trainer = Trainer::new(tasks, 40);
        let on_update = log.clone();
        block_on(trainer.run(&mut agent, &mut envs, 30, |ev| {
            if let TrainEvent::Update { .. } = ev {
                on_update.borrow_mut().push(Call::Update);
            }
            Control::Continue
        }))
        .unwrap();

        let log = log.borrow();
        let steps: Vec<usize> = log.iter().filter_map(|c| if let Call::Step { task } = c { Some(*task) } else { None }).collect();
        assert_eq!(steps, (0..30).map(|i| i % 3).collect::<Vec<_>>(), "one step per task per round, in order");
        assert_eq!(trainer.progress.iter().map(|p| p.frames).collect::<Vec<_>>(), [10, 10, 10]);

        // Resets come right before their task's step, with that task's own seed sequence.
        let mut started = [0u64; 3];
        for (i, c) in log.iter().enumerate() {
            if let Call::Reset { task, seed } = *c {
                assert_eq!(log[i + 1], Call::Step { task }, "a reset is followed by its task's step");
                assert_eq!(seed, episode_seed(40, task, started[task]));
                started[task] += 1;
            }
        }
        assert!(started.iter().all(|&n| n >= 3), "episodes of at most 4 steps restart: {started:?}");

        // Once the buffer holds a batch and the 6 exploration steps are done, exactly one update
        // follows each step (Table 1); none before.
        let mut step_no = 0;
        let mut first_update = None;
        for (i, c) in log.iter().enumerate() {
            if let Call::Step { .. } = c {
                step_no += 1;
                let updated = log.get(i + 1) == Some(&Call::Update);
                if updated && first_update.is_none() {
                    first_update = Some(step_no);
                }
                if first_update.is_some() {
                    assert!(updated, "step {step_no} is followed by its update");
                    assert_ne!(log.get(i + 2), Some(&Call::Update), "one update per step, not more");
                }
            }
        }
        let first = first_update.expect("learning started");
        assert!((6..20).contains(&first), "learning starts after the exploration steps, at step {first}");
        assert_eq!(agent.counters.updates as usize, log.iter().filter(|c| **c == Call::Update).count());
    }

    #[test]
    fn a_solved_task_sits_out_its_rest_between_episodes_and_unsolved_ones_never_do() {
        let cfg = DqnConfig {
            batch_size: 4,
            replay_capacity: 256,
            dom_hidden: 16,
            token_hidden: 8,
            mode_hidden: 8,
            max_episode_steps: 3,
            solved_task_rest: 2,
            ..DqnConfig::default()
        };
        let tasks: Vec<TaskSpec> = ["sim-click", "sim-type"].iter().map(|n| SimEnv::spec(n)).collect();
        let steps_of = |solved: &[usize], frames: u64| {
            let mut agent = DomQNetAgent::new(cfg.clone(), &Device::flex().autodiff()).unwrap();
            let log = Rc::new(RefCell::new(Vec::new()));
            let mut envs: Vec<Logged> = (0..tasks.len()).map(|task| Logged { task, inner: SimEnv::new(None), log: log.clone() }).collect();
            let mut state = Trainer::new(tasks.clone(), 9).state();
            for &k in solved {
                state.progress[k].solved_at_frames = Some(0);
            }
            let mut trainer = Trainer::from_state(state);
            block_on(trainer.run(&mut agent, &mut envs, frames, |_| Control::Continue)).unwrap();
            let log = log.borrow().clone();
            (log, trainer)
        };

        // Task 0 solved: each of its episodes waits 2 of its turns (task 1 steps in each of
        // them, and in its own turn after), then runs at the round-robin's pace to its end.
        let (log, trainer) = steps_of(&[0], 60);
        let mut since_task_0 = 0;
        let mut first = true;
        let mut episodes = 0;
        for (i, c) in log.iter().enumerate() {
            match *c {
                Call::Step { task: 1 } => since_task_0 += 1,
                Call::Step { task: 0 } => {
                    let new_episode = i > 0 && log[i - 1] == Call::Reset { task: 0, seed: episode_seed(9, 0, episodes) };
                    let want = if first {
                        2
                    } else if new_episode {
                        3
                    } else {
                        1
                    };
                    if new_episode {
                        episodes += 1;
                    }
                    assert_eq!(since_task_0, want, "call {i}: task 1's steps before this step of task 0");
                    (since_task_0, first) = (0, false);
                }
                _ => {}
            }
        }
        assert!(episodes >= 4, "task 0 kept starting episodes: {episodes}");
        let frames: Vec<u64> = trainer.progress.iter().map(|p| p.frames).collect();
        assert!(frames[1] > frames[0] && frames[0] > 0, "{frames:?}");
        assert_eq!(trainer.state().rested.len(), 2);

        // Nothing solved: Algorithm 1's round-robin, as with no rest at all.
        let (log, _) = steps_of(&[], 20);
        let steps: Vec<usize> = log.iter().filter_map(|c| if let Call::Step { task } = c { Some(*task) } else { None }).collect();
        assert_eq!(steps, (0..20).map(|i| i % 2).collect::<Vec<_>>());

        // Everything solved: every task rests in turn and the run still ends.
        let (log, trainer) = steps_of(&[0, 1], 20);
        assert_eq!(log.iter().filter(|c| matches!(c, Call::Step { .. })).count(), 20);
        assert!(trainer.progress.iter().all(|p| p.frames > 0));
    }
}
