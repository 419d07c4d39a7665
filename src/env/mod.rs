//! The environment API: `reset(task, seed) -> Observation` and `step(action) -> Step`.
//!
//! This module is the pure core (no web-sys): the types every environment shares, and the
//! [`Environment`] trait. The browser edge (`crate::web`) implements it on a live task page in an
//! iframe; tests and trainers can implement it on anything else (e.g. a page-graph simulator).
//!
//! Both calls are `async` because a real page loads, settles and becomes ready asynchronously.
//! Native implementations simply return ready futures.

pub mod action;
pub mod episode;
pub mod error;
pub mod fields;
pub mod instruction;
pub mod key;
pub mod messages;
pub mod miniwob;
pub mod observation;
pub mod task;

use serde::{Deserialize, Serialize};

pub use action::{Action, CLICKED_INPUT_TYPES, Point};
pub use episode::{EpisodeGuard, STEP_LIMIT_REASON};
pub use error::EnvError;
pub use instruction::{Field, Instruction, goal_tokens};
pub use key::KeyPress;
pub use miniwob::{MINIWOB_BASE, MiniwobTask, miniwob_task, miniwob_tasks};
pub use observation::{DomGraph, DomNode, NodeRef, NodeValue, Observation, ObservationMeta, Rect, Settle, TEXT_TAG};
pub use task::{Difficulty, TaskInfo, TaskSpec, builtin_task, builtin_tasks};

/// Whether an episode that ended with `raw_reward` succeeded: the one rule behind every success
/// rate, replay buffer, kept recording and outcome colour. A positive raw reward, as MiniWoB++'s
/// binary reward reads its pages (+1 on success, −1 or a partial credit otherwise); gMiniWoB's
/// sites give +1 on completion, −1 on a wrong end and the step limit's reward (0) otherwise.
pub fn is_success(raw_reward: f64) -> bool {
    raw_reward > 0.0
}

#[cfg(test)]
mod success_tests {
    #[test]
    fn a_positive_raw_reward_is_a_success_partial_credit_included() {
        assert!(super::is_success(1.0) && super::is_success(0.5));
        assert!(!super::is_success(0.0) && !super::is_success(-1.0) && !super::is_success(-0.2));
    }
}

/// The result of one action.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub observation: Observation,
    /// The page's reward (`WOB_REWARD_GLOBAL`), decayed with episode time on success.
    pub reward: f64,
    /// The undecayed reward (`WOB_RAW_REWARD_GLOBAL`): the learning signal.
    pub raw_reward: f64,
    pub done: bool,
    /// Why the episode ended, when the page (or the lab) gave a reason.
    pub reason: Option<String>,
    /// The task's shaped reward, for tasks that define one (generated sites: the papers'
    /// potential-based reward, see `gminiwob::reward`); passed through unclamped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaped_reward: Option<f64>,
    /// The task's potential Φ after this step, for tasks that define one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub potential: Option<f64>,
}

impl Step {
    /// The reward a learner should use: the task's shaped reward where it has one, else the
    /// page's raw reward.
    pub fn learning_reward(&self) -> f64 {
        self.shaped_reward.unwrap_or(self.raw_reward)
    }
}

/// A task environment. Implementations keep the guarantees documented on [`Action`] and
/// [`Observation`]: refs are stable within an episode, and an action after the episode ended is
/// refused with [`EnvError::EpisodeDone`] without reaching the page.
/// `S` is what the generated sites it may be asked for are made from (see [`TaskSpec`]); an
/// environment that has no generated sites takes any `S` and refuses them.
#[allow(async_fn_in_trait)]
pub trait Environment<S> {
    /// Starts a new episode of `task` with `seed`; the same seed gives the same instruction and
    /// the same page.
    async fn reset(&mut self, task: &TaskSpec<S>, seed: u32) -> Result<Observation, EnvError>;
    /// Performs one action in the running episode.
    async fn step(&mut self, action: &Action) -> Result<Step, EnvError>;
}

/// Settings of an environment, with defaults that suit the lab's own tasks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvConfig {
    /// End the episode (raw reward -1, reason "step limit") after this many actions.
    pub max_steps: Option<u32>,
    /// Passed to `core.setDataMode` before each episode (`train` or `test`).
    pub data_mode: String,
    /// Wait this long after each action before observing, for pages that animate.
    pub settle_ms: u32,
    /// How long a page may take to load.
    pub load_timeout_ms: u32,
    /// How long `WOB_TASK_READY` may stay false after an episode starts.
    pub ready_timeout_ms: u32,
    /// Stop the page's time limit from counting between actions, so that an agent's thinking
    /// time is not punished (pages without `core.holdClock` get a long limit instead).
    pub hold_clock: bool,
    /// Most nodes an observation keeps; the rest are cut and counted in `DomGraph::truncated`.
    pub max_nodes: usize,
    /// How long a reset may wait for the images and fonts a new episode's page is loading (the
    /// wait is reported in `Observation::meta`), and a step for the page's reaction to its action
    /// (the short timers the action started, such as a widget's delay or an animation, and the
    /// images it began to show).
    pub settle_timeout_ms: u32,
    /// When to load the page afresh before an episode, so that nothing an earlier episode did
    /// reaches the next one.
    pub fresh_page: FreshPage,
}

/// When a reset loads the task's page afresh (its cost is a page load, measured by
/// `scripts/bench-miniwob.sh`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreshPage {
    /// Only for the real MiniWoB++ pages whose state outlives an episode (`leaks` in
    /// `tasks/miniwob.json`), so that a seed gives the same page whatever ran before.
    #[default]
    WhenItLeaks,
    /// Before every episode.
    Always,
    /// Never (to measure what a page keeps between episodes).
    Never,
}

impl Default for EnvConfig {
    fn default() -> Self {
        EnvConfig {
            max_steps: None,
            data_mode: "train".into(),
            settle_ms: 0,
            load_timeout_ms: 10_000,
            ready_timeout_ms: 2_000,
            hold_clock: false,
            max_nodes: 1_000,
            settle_timeout_ms: 2_000,
            fresh_page: FreshPage::WhenItLeaks,
        }
    }
}
