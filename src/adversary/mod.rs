//! The adversary: an LSTM decoder that designs gMiniWoB websites and learns, against a
//! population of navigators, to present them "just the right challenge" (AEG: Flexible
//! b-PAIRED; CoDE), with PAIRED, Flexible PAIRED and ALP as the papers' baselines.
//!
//! - `config`: every constant, with its source or the reason for our choice;
//! - `model`: the decoder o → f0 → h0 → fK, LSTM with fP, fL, fI (burn, any device);
//! - `objective`: the objectives as pure functions of returns and SKIP log-probabilities;
//! - `generator`: sampling designs, the A2C update with the budget term, checkpoints — and the
//!   adversary as a `curriculum::Generator`;
//! - `history`: the primitives it generated over training, in early/middle/late thirds.
//!
//! It trains in the one population loop every generator runs in, `crate::curriculum::train`.

pub mod config;
pub mod generator;
pub mod history;
pub mod model;
pub mod objective;

pub use config::{AdversaryConfig, Budget, Objective, ObjectiveConfig};
pub use generator::{Adversary, Proposal};
