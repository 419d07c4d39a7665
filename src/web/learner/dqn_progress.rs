//! What a DOM-Q-Net run in the worker reports: the progress message the page's live charts read,
//! and the chunk's meter and rates it is built from.

use serde::Serialize;

use crate::dom_q_net::train::TaskProgress;
use crate::learn::failures::EnvFailureNote;

/// Timings and recent values of a chunk.
#[derive(Default)]
pub(super) struct Meter {
    pub(super) acts: u32,
    pub(super) act_ms: f64,
    pub(super) env_ms: f64,
    pub(super) updates: u32,
    pub(super) update_ms: f64,
    pub(super) loss: f64,
    pub(super) batch_positives: f64,
    pub(super) episodes: Vec<EpisodeNote>,
    pub(super) warnings: Vec<String>,
}

#[derive(Clone, Serialize)]
pub(super) struct EpisodeNote {
    pub(super) task: usize,
    /// The page's reward (time-decayed) and the raw learning signal (+1 success, −1 failure).
    pub(super) reward: f64,
    pub(super) raw_reward: f64,
    pub(super) steps: u32,
}

/// What the page's live charts read, several times a second.
#[derive(Serialize)]
pub(super) struct Progress<'a> {
    pub(super) kind: &'static str,
    pub(super) backend: &'a str,
    pub(super) env_steps: u64,
    /// The step budget of the run.
    pub(super) frames: u64,
    pub(super) updates: u64,
    pub(super) episodes: u64,
    /// Per task: success rate over the last 100 episodes (`stats.success_rate_100`), frames, and
    /// when it was first solved.
    pub(super) tasks: &'a [TaskProgress],
    pub(super) replay_len: usize,
    pub(super) replay_capacity: usize,
    /// Fraction of the buffer's transitions with a positive n-step return.
    pub(super) positive_fraction: f64,
    /// Mean TD loss (Huber) of the updates since the last report.
    pub(super) loss: Option<f64>,
    /// Mean positive transitions per sampled batch since the last report.
    pub(super) batch_positives: Option<f64>,
    /// Mean ms per action choice (one forward pass), per environment step (the page's side), and
    /// per update, since the last report.
    pub(super) act_ms: Option<f64>,
    pub(super) env_ms: Option<f64>,
    pub(super) update_ms: Option<f64>,
    /// Rates over the run's training time (pauses excluded; `None` in a resumed run's first
    /// report, which shows its restored counters before it takes a step) ...
    pub(super) steps_per_s: Option<f64>,
    pub(super) updates_per_s: Option<f64>,
    /// ... and since the last report.
    pub(super) recent_steps_per_s: Option<f64>,
    pub(super) recent_updates_per_s: Option<f64>,
    /// Training time (pauses excluded) and wall time since the start, in seconds.
    pub(super) active_s: f64,
    pub(super) elapsed_s: f64,
    /// Episodes that ended since the last report (for the reward chart).
    pub(super) new_episodes: Vec<EpisodeNote>,
    /// Episodes a failing page ended since the last report (the run went on), with the reason,
    /// and how many there were over the run.
    pub(super) env_failures: Vec<EnvFailureNote>,
    pub(super) env_failures_total: u64,
    pub(super) warnings: Vec<String>,
    pub(super) paused: bool,
}

/// Rates over the run's training time and over the last chunk.
pub(super) struct Rates {
    pub(super) steps_per_s: f64,
    pub(super) updates_per_s: f64,
    pub(super) recent_steps_per_s: Option<f64>,
    pub(super) recent_updates_per_s: Option<f64>,
    pub(super) active_s: f64,
}
