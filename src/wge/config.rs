//! The workflow policy's hyperparameters, in one place, each with its source.

use serde::{Deserialize, Serialize};

use super::induction::InductionConfig;

/// How the workflow policy's per-position weights turn into choices and learn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum WeightUpdate {
    /// π(z) ∝ exp(ψ_z), trained by REINFORCE with a per-position value baseline (paper Eq. 2 and
    /// 5; the authors' default).
    Softmax,
    /// π(z) ∝ ψ_z; after a successful episode, `rate` is added to the weight of every chosen
    /// program (the authors' linear variant; its rate is ours, the reference gives none).
    Linear { rate: f64 },
}

/// Workflow policy settings (Liu et al., 2018, §4.2; reference-implementations.md §2.4 and §2.6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WgeConfig {
    /// Softmax (default) or linear weights.
    pub update: WeightUpdate,
    /// Step size of the softmax update w += lr·g·(G − V): 0.8 (reference §2.4).
    pub learning_rate: f64,
    /// Baseline V ← decay·V + (1 − decay)·G: 0.9 (reference §2.4).
    pub baseline_decay: f64,
    /// Programs kept per lattice position, those with the fewest execution paths on the
    /// demonstration's page first: 50 (reference §2.4).
    pub keep_programs: usize,
    /// Initial weight of the kept programs with the fewest execution paths (the most specific
    /// ones); every other program and skip starts at 0 (reference §2.4).
    pub init_weight: f64,
    /// Actions per episode: 10 (reference §2.6, `default-base.txt`); a task whose environment caps
    /// episodes lower ends them sooner.
    pub max_steps: u32,
    /// How lattices are induced from demonstrations (reference §2.3).
    pub induction: InductionConfig,
}

impl Default for WgeConfig {
    fn default() -> Self {
        WgeConfig {
            update: WeightUpdate::Softmax,
            learning_rate: 0.8,
            baseline_decay: 0.9,
            keep_programs: 50,
            init_weight: 1.0,
            max_steps: 10,
            induction: InductionConfig::default(),
        }
    }
}
