//! Episode bookkeeping shared by every environment: refusing actions after the end, counting
//! steps, and the optional step cap.

use super::error::EnvError;

/// Why an episode ended, when the lab (not the page) ended it.
pub const STEP_LIMIT_REASON: &str = "step limit";

#[derive(Clone, Debug, Default)]
pub struct EpisodeGuard {
    started: bool,
    done: bool,
    steps: u32,
    max_steps: Option<u32>,
}

impl EpisodeGuard {
    pub fn new(max_steps: Option<u32>) -> Self {
        EpisodeGuard { max_steps, ..Default::default() }
    }
    pub fn set_max_steps(&mut self, max_steps: Option<u32>) {
        self.max_steps = max_steps;
    }
    pub fn begin(&mut self) {
        self.started = true;
        self.done = false;
        self.steps = 0;
    }
    /// Whether an action may be sent now.
    pub fn admit(&self) -> Result<(), EnvError> {
        if !self.started {
            Err(EnvError::NoEpisode)
        } else if self.done {
            Err(EnvError::EpisodeDone)
        } else {
            Ok(())
        }
    }
    /// Records a sent action. Returns true when this step reached the step cap (the caller ends
    /// the episode with [`STEP_LIMIT_REASON`] unless the page already ended it).
    pub fn record(&mut self, page_done: bool) -> bool {
        self.steps += 1;
        let capped = !page_done && self.max_steps.is_some_and(|m| self.steps >= m);
        self.done = page_done || capped;
        capped
    }
    /// Marks the episode over without a step (e.g. the page timed out or navigated away).
    pub fn finish(&mut self) {
        self.done = true;
    }
    pub fn steps(&self) -> u32 {
        self.steps
    }
    pub fn is_done(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_before_reset_and_after_done() {
        let mut g = EpisodeGuard::new(None);
        assert_eq!(g.admit(), Err(EnvError::NoEpisode));
        g.begin();
        assert!(g.admit().is_ok());
        assert!(!g.record(false));
        assert!(g.admit().is_ok());
        g.record(true);
        assert_eq!(g.admit(), Err(EnvError::EpisodeDone));
        g.begin();
        assert!(g.admit().is_ok());
        assert_eq!(g.steps(), 0);
    }

    #[test]
    fn step_cap_ends_the_episode() {
        let mut g = EpisodeGuard::new(Some(3));
        g.begin();
        assert!(!g.record(false));
        assert!(!g.record(false));
        assert!(g.record(false));
        assert!(g.is_done());
        assert_eq!(g.admit(), Err(EnvError::EpisodeDone));
    }

    #[test]
    fn page_end_on_the_capped_step_is_not_a_cap() {
        let mut g = EpisodeGuard::new(Some(1));
        g.begin();
        assert!(!g.record(true));
        assert!(g.is_done());
    }
}
