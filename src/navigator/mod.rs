//! The gMiniWoB navigator: the agent both generation papers train to fill forms on websites it
//! has never seen (after Gur et al. 2019, "Learning to navigate the web"; the reference's
//! `DQNWebLSTM`), trained with A2C and entropy regularisation, or with the reference code's DQN
//! head.
//!
//! - `config`: every hyperparameter, with its value and source;
//! - `features`: from an observation to tokens, element features and open choices;
//! - `padded`: a batch of states laid out for the network;
//! - `model`: the network (burn), its element LSTM in `lstm`;
//! - `agent`: acting and the learners (A2C; DQN with its target network);
//! - `replay`: the DQN head's replay buffer;
//! - `checkpoint`: `.wln` files (the container shared with DOM-Q-Net's);
//! - `rollout`: episodes played side by side in lock-step, one forward pass per step;
//! - `train`: judging (training is the population loop, `crate::curriculum::train`).

pub mod agent;
pub mod checkpoint;
pub mod config;
pub mod features;
mod lstm;
pub mod model;
pub mod padded;
pub mod replay;
pub mod rollout;
pub mod train;

pub use agent::{Navigator, Transition, UpdateStats};
pub use config::{Head, NavigatorConfig};
pub use features::{EpisodeMemory, NavAction, NavState};
