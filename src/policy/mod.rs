//! Policies that need no learning: the random baseline and the scripted oracles.

pub mod gminiwob;
pub mod oracle;

use crate::env::{Action, Observation};
use crate::rng::Rng;

/// Chooses the next action from an observation; `None` means it has nothing to do.
pub trait Policy {
    fn act(&mut self, obs: &Observation) -> Option<Action>;
    /// Called when a new episode starts, for policies that keep per-episode state.
    fn reset(&mut self) {}
}

/// Uniform over DOM-Q-Net's action space: a random leaf; typed into with a random goal token when
/// it takes text (half the time), a random option when it is a `<select>`, clicked otherwise.
pub struct RandomPolicy {
    rng: Rng,
}

impl RandomPolicy {
    pub fn new(seed: u64) -> Self {
        RandomPolicy { rng: Rng::new(seed) }
    }
}

impl Policy for RandomPolicy {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        let leaves: Vec<_> = obs.dom.leaves().collect();
        let leaf = *self.rng.choose(&leaves)?;
        if leaf.tag == "SELECT" && !leaf.options.is_empty() {
            let opt = self.rng.choose(&leaf.options)?;
            return Some(Action::Select(leaf.r#ref, opt.clone()));
        }
        if leaf.accepts_text() && !obs.instruction.tokens.is_empty() && self.rng.below(2) == 0 {
            let tok = self.rng.choose(&obs.instruction.tokens)?;
            return Some(Action::Type(leaf.r#ref, tok.clone()));
        }
        Some(Action::Click(leaf.r#ref))
    }
}
