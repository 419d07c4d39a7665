//! Running policies in an environment: one episode at a time, and the running statistics the lab
//! shows (episodes/s, success rate over the last 100 episodes, ...). Generic over
//! [`Environment`], so it serves the live page and native simulators alike.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::env::{Action, EnvError, STEP_LIMIT_REASON, Step};
use crate::policy::Policy;
use crate::task::{Env, TaskSpec};

/// How one episode ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeResult {
    pub seed: u32,
    pub steps: u32,
    pub reward: f64,
    pub raw_reward: f64,
    pub reason: Option<String>,
}

impl EpisodeResult {
    pub fn success(&self) -> bool {
        crate::env::is_success(self.raw_reward)
    }

    /// The page's own judgement ended the episode (success, failure or its clock), not the lab's
    /// step limit or a policy with nothing to do.
    pub fn ended_by_page(&self) -> bool {
        !matches!(self.reason.as_deref(), Some(STEP_LIMIT_REASON | NO_ACTION_REASON))
    }
}

pub const NO_ACTION_REASON: &str = "the policy had no action";

/// Runs one episode of `task` with `seed`. `on_step` sees every action and its result. If the
/// policy has nothing to do the episode counts as failed (the page keeps it until the next reset).
pub async fn run_episode<E: Env, P: Policy + ?Sized>(
    env: &mut E,
    policy: &mut P,
    task: &TaskSpec,
    seed: u32,
    mut on_step: impl FnMut(&Action, &Step),
) -> Result<EpisodeResult, EnvError> {
    let mut obs = env.reset(task, seed).await?;
    policy.reset();
    let mut steps = 0;
    loop {
        let Some(action) = policy.act(&obs) else {
            return Ok(EpisodeResult { seed, steps, reward: -1.0, raw_reward: -1.0, reason: Some(NO_ACTION_REASON.into()) });
        };
        let step = env.step(&action).await?;
        steps += 1;
        on_step(&action, &step);
        if step.done {
            return Ok(EpisodeResult { seed, steps, reward: step.reward, raw_reward: step.raw_reward, reason: step.reason });
        }
        obs = step.observation;
    }
}

/// Running statistics over many episodes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunStats {
    pub episodes: u64,
    pub steps: u64,
    pub successes: u64,
    /// Episodes the page itself ended (not the lab's step limit, nor a policy with no action).
    #[serde(default)]
    pub ended_by_page: u64,
    pub last: Option<EpisodeResult>,
    /// Success rate over the last (up to) 100 episodes.
    pub success_rate_100: f64,
    pub mean_reward_100: f64,
    pub elapsed_s: f64,
    pub episodes_per_s: f64,
    pub steps_per_s: f64,
    /// The last episodes' (success, raw reward), for the moving averages; kept when saved.
    #[serde(default)]
    recent: VecDeque<(bool, f64)>,
}

impl RunStats {
    pub const WINDOW: usize = 100;

    pub fn record(&mut self, ep: &EpisodeResult) {
        self.episodes += 1;
        self.steps += ep.steps as u64;
        self.successes += ep.success() as u64;
        self.ended_by_page += ep.ended_by_page() as u64;
        self.recent.push_back((ep.success(), ep.raw_reward));
        if self.recent.len() > Self::WINDOW {
            self.recent.pop_front();
        }
        let n = self.recent.len() as f64;
        self.success_rate_100 = self.recent.iter().filter(|r| r.0).count() as f64 / n;
        self.mean_reward_100 = self.recent.iter().map(|r| r.1).sum::<f64>() / n;
        self.last = Some(ep.clone());
    }

    /// The statistics of these episodes, recorded in order.
    pub fn of<'a>(episodes: impl IntoIterator<Item = &'a EpisodeResult>) -> Self {
        let mut stats = RunStats::default();
        episodes.into_iter().for_each(|ep| stats.record(ep));
        stats
    }

    pub fn set_elapsed(&mut self, seconds: f64) {
        self.elapsed_s = seconds;
        if seconds > 0.0 {
            self.episodes_per_s = self.episodes as f64 / seconds;
            self.steps_per_s = self.steps as f64 / seconds;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(raw: f64, steps: u32) -> EpisodeResult {
        EpisodeResult { seed: 0, steps, reward: raw, raw_reward: raw, reason: None }
    }

    #[test]
    fn stats_window_and_rates() {
        let mut s = RunStats::default();
        for i in 0..150 {
            s.record(&ep(if i < 50 { -1.0 } else { 1.0 }, 2));
        }
        assert_eq!(s.episodes, 150);
        assert_eq!(s.successes, 100);
        assert_eq!(s.steps, 300);
        assert!((s.success_rate_100 - 1.0).abs() < 1e-12, "window holds only the last 100");
        s.record(&ep(-1.0, 1));
        assert!((s.success_rate_100 - 0.99).abs() < 1e-12);
        s.set_elapsed(2.0);
        assert!((s.episodes_per_s - 75.5).abs() < 1e-12);

        let eps: Vec<_> = (0..150).map(|i| ep(if i % 3 == 0 { 1.0 } else { -1.0 }, 1 + i % 4)).collect();
        let (of, mut one_by_one) = (RunStats::of(&eps), RunStats::default());
        eps.iter().for_each(|e| one_by_one.record(e));
        assert_eq!(serde_json::to_string(&of).unwrap(), serde_json::to_string(&one_by_one).unwrap());
        assert_eq!((of.episodes, of.successes, of.steps), (150, 50, 373));
    }
}
