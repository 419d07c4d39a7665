//! What the learning agents share: the [`Agent`] interface the learner worker drives, their
//! counters, Adam with its moments kept for snapshots, gradient clipping, vocabularies grown online with caps, and
//! the checkpoint container.

pub mod adam;
pub mod checkpoint;
pub mod clip;
pub mod embedding_bag;
pub mod failures;
pub mod init;
pub mod lstm_op;
pub mod vocab;

use serde::{Deserialize, Serialize};

use checkpoint::Precision;

/// How far an agent has come: environment steps, updates, finished episodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub env_steps: u64,
    pub updates: u64,
    pub episodes: u64,
}

/// What the learner worker needs of any agent besides its own training loop: counters, a
/// checkpoint in the agent's own format, and Adam's moments for snapshots that resume exactly.
#[allow(async_fn_in_trait)]
pub trait Agent {
    /// "DOM-Q-Net", "navigator".
    fn kind(&self) -> &'static str;
    fn counters(&self) -> Counters;
    /// The agent as a checkpoint file; `trained_on` names what it trained on.
    async fn checkpoint(&self, trained_on: &[String], precision: Precision) -> Result<Vec<u8>, String>;
    /// Adam's moments, `None` before the first update.
    async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String>;
    /// Continues with moments saved by [`Agent::optimizer_state`]; a damaged record or one of
    /// another network is refused and the optimizer stays as it was.
    fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String>;
}
