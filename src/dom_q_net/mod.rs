//! DOM-Q-Net (Jia, Kiros & Ba, ICLR 2019): a graph network over the DOM with factorized Q heads
//! (DOM element, goal token, click/type mode), trained with double DQN, n-step returns,
//! prioritized replay and noisy nets; multitask over one shared buffer.
//!
//! - `config`: every hyperparameter, with the paper's value and source;
//! - `vocab`, `features`, `batch`: from an observation to padded host arrays;
//! - `model`: the network (burn);
//! - `replay`: n-step transitions and the prioritized buffer;
//! - `agent`: acting and the double-DQN update;
//! - `train`: Algorithm 1 (round-robin multitask training) and greedy evaluation;
//! - `bench`: the update timed phase by phase (a benchmark, natively and in the tab).

pub mod agent;
pub mod batch;
pub mod bench;
pub mod checkpoint;
pub mod config;
pub mod features;
pub mod model;
pub mod replay;
pub mod train;
pub mod vocab;

pub use agent::{Decision, DomQNetAgent, QView, UpdatePhases};
pub use config::DqnConfig;
