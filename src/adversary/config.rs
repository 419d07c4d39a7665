//! Every constant of the adversary and of its training loop, with its value and its source.
//!
//! Sources: AEG ("Adversarial environment generation for learning to navigate the web": §4.2
//! the decoder, §4.3 Eq. 3–4 Flexible (b-)PAIRED, App. A.1 PAIRED, App. A.8 the α ablation,
//! App. A.12 the network) and CoDE ("Environment generation for zero-shot compositional RL":
//! Eq. 1 PopRegret, Eq. 2 and 4 the difficulty objective, §7 the baselines, App. A.3 Table 3
//! and A.14 β, δ, M). Where both papers are silent the value is marked "our choice" with why.

use serde::{Deserialize, Serialize};

use crate::gminiwob::design::{MAX_PAGES, MAX_PLACED};
use crate::gminiwob::test_sites::RandomDesign;

/// What the adversary's reward is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// PAIRED (Dennis et al. 2020; AEG App. A.1): a fixed protagonist and antagonist; reward =
    /// the antagonist's best return − the protagonist's mean return.
    Paired,
    /// Flexible PAIRED (AEG Eq. 4 = CoDE's PopRegret, Eq. 1): reward = the best navigator's mean
    /// return − the population's mean return.
    FlexiblePaired,
    /// Flexible b-PAIRED (AEG Eq. 3): Flexible PAIRED's reward, plus the budget loss
    /// α · R_A · Σ log π(SKIP).
    FlexibleBPaired,
    /// CoDE (CoDE Eq. 4): (1 − α) · PopRegret + α · Difficulty (Eq. 2 with N̂ = −Σ log π(SKIP)).
    Code,
    /// ALP (Portelas et al. 2020, as CoDE §7 runs it): one navigator; reward = |R_t − R_{t−1}|,
    /// no budget.
    Alp,
}

impl Objective {
    pub const ALL: [Objective; 5] = [Objective::Paired, Objective::FlexiblePaired, Objective::FlexibleBPaired, Objective::Code, Objective::Alp];

    /// The papers' names, for charts and logs.
    pub fn label(self) -> &'static str {
        match self {
            Objective::Paired => "PAIRED",
            Objective::FlexiblePaired => "Flexible PAIRED",
            Objective::FlexibleBPaired => "Flexible b-PAIRED",
            Objective::Code => "CoDE",
            Objective::Alp => "ALP",
        }
    }

    /// The command-line / request spelling.
    pub fn key(self) -> &'static str {
        match self {
            Objective::Paired => "paired",
            Objective::FlexiblePaired => "flexible_paired",
            Objective::FlexibleBPaired => "flexible_b_paired",
            Objective::Code => "code",
            Objective::Alp => "alp",
        }
    }

    pub fn from_key(key: &str) -> Option<Objective> {
        Objective::ALL.into_iter().find(|o| o.key() == key || o.key().replace('_', "-") == key)
    }

    /// How many navigators it trains. PAIRED: a protagonist and an antagonist. The flexible
    /// objectives and CoDE: 2 — CoDE §7 holds its population to |P| = 2 when it is compared
    /// with PAIRED, and AEG never states its n_a, so every regret estimate here compares two
    /// agents. ALP: one navigator (CoDE §7).
    pub fn population(self) -> usize {
        match self {
            Objective::Alp => 1,
            _ => 2,
        }
    }

    /// The weight α of its budget / difficulty term (0 where it has none).
    pub fn default_alpha(self) -> f64 {
        match self {
            // AEG App. A.8: "we used α = 1.25 for our main results".
            Objective::FlexibleBPaired => 1.25,
            // CoDE App. A.3 Table 3 tries α ∈ {0.8, 0.9} and App. A.10 finds results improve as
            // α grows; the main runs' α is not stated. Our choice: 0.9.
            Objective::Code => 0.9,
            _ => 0.0,
        }
    }
}

/// The adversary's network and its learner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdversaryConfig {
    /// Size of the initial observation o ~ N(0, I) (unstated; our choice: the hidden width, 100,
    /// with which the parameter count comes to within 0.1% of AEG A.12's 152,461 at K = 10).
    pub noise_dim: usize,
    /// Width of every dense layer and of the LSTM (AEG A.12 / CoDE A.14: 100).
    pub hidden: usize,
    /// K: most pages; fK is a categorical over the last page's index 0..K−1, fL over pages
    /// 0..K−1 masked to ≤ k. The papers leave K unstated; our choice is DR's K = 4
    /// (`RandomDesign`), so the adversaries and the baselines draw from one design space.
    pub max_pages: u32,
    /// N: LSTM steps, each a primitive or SKIP (unstated; our choice: DR's N = 24).
    pub slots: u32,
    /// Adam learning rate (unstated; our choice: the navigator's 3e-4).
    pub learning_rate: f64,
    pub adam_epsilon: f32,
    /// Entropy bonus of the A2C loss (the papers use "A2C with entropy regularisation" without
    /// its weight; our choice: Mnih et al.'s 0.01, on the summed entropy of every decision).
    pub entropy_coef: f64,
    /// Weight of the value loss (our choice, common A2C practice; the critic is V(h0)).
    pub value_coef: f64,
    /// Close (primitive, page) pairs already placed in the design being drawn (and primitives on
    /// every page), so every non-SKIP decision adds a primitive the rendered site contains. The
    /// papers' decoder has no such mask, but their budget is "the number of primitives added"
    /// (CoDE Eq. 2) and the renderer drops repeated pairs (reference §3.7): without the mask
    /// a budget term can be satisfied by repeating one pair, which adds nothing (issue 31: at
    /// 15 min of CoDE the expected budget read 23.9 of 24 slots while 2.7 primitives rendered).
    pub mask_repeats: bool,
}

impl Default for AdversaryConfig {
    fn default() -> Self {
        let dr = RandomDesign::default();
        AdversaryConfig {
            noise_dim: 100,
            hidden: 100,
            max_pages: dr.max_pages,
            slots: dr.slots,
            learning_rate: 3e-4,
            adam_epsilon: 1e-8,
            entropy_coef: 0.01,
            value_coef: 0.5,
            mask_repeats: true,
        }
    }
}

impl AdversaryConfig {
    /// What is wrong with it, if anything; every size is bounded so a request or a file cannot
    /// ask for an unbounded network.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=1024).contains(&self.noise_dim) {
            return Err(format!("noise_dim must be 1 to 1024, not {}", self.noise_dim));
        }
        if !(1..=1024).contains(&self.hidden) {
            return Err(format!("hidden must be 1 to 1024, not {}", self.hidden));
        }
        if !(1..=MAX_PAGES).contains(&self.max_pages) {
            return Err(format!("max_pages must be 1 to {MAX_PAGES}, not {}", self.max_pages));
        }
        if !(1..=MAX_PLACED as u32).contains(&self.slots) {
            return Err(format!("slots must be 1 to {MAX_PLACED}, not {}", self.slots));
        }
        for (name, v, hi) in
            [("learning_rate", self.learning_rate, 1.0), ("entropy_coef", self.entropy_coef, 10.0), ("value_coef", self.value_coef, 100.0)]
        {
            if !(v.is_finite() && (0.0..=hi).contains(&v)) {
                return Err(format!("{name} must be 0 to {hi}, not {v}"));
            }
        }
        if !(self.adam_epsilon.is_finite() && self.adam_epsilon > 0.0) {
            return Err(format!("adam_epsilon must be positive, not {}", self.adam_epsilon));
        }
        Ok(())
    }
}

/// The least π(SKIP) the floored budget counts (our choice: 1 %).
pub const SKIP_FLOOR: f64 = 0.01;

/// How the budget N̂ — what the difficulty term (CoDE Eq. 2) and the budget loss (AEG Eq. 3)
/// weigh — is estimated from the design's SKIP probabilities π_i = π(a_i = SKIP | a_<i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    /// N̂ = −Σ_i log max(π_i, SKIP_FLOOR): the papers' printed formula with π(SKIP) floored, so
    /// the objective is bounded (N̂ ≤ N·ln 100) and nothing is gained by pushing a SKIP
    /// probability below 1 %; above the floor the gradient is the printed one, as strong at both
    /// ends (the early shrinking of designs when the navigators fail depends on it). Our choice.
    #[default]
    FlooredLogSkip,
    /// N̂ = Σ_i (1 − π_i), the expected number of non-SKIP decisions: AEG §4.3.1's words ("we
    /// approximate the effective budget of the adversary as the expected number of non-SKIP
    /// actions over N time steps") and CoDE's ("the amount of probability the generator places on
    /// the SKIP action"). Bounded by N; but its gradient π_i(1 − π_i) is about 40× weaker than the
    /// printed form's at π_i ≈ 1/41 (an untrained decoder), so designs shrink slowly when the
    /// navigators fail (one smoke run: 12.6 primitives after 344 designs, ≈ 3 only after half a minute).
    Expected,
    /// N̂ = −Σ_i log π_i, the papers' formulas as printed (CoDE §5, AEG's J_budget). Unbounded:
    /// with a positive weight every step pushes log π_i further down, whatever the design
    /// holds (issue 31: the objective reached 3,364 and rising while the sites shrank).
    LogSkip,
}

/// The objective and its constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectiveConfig {
    pub objective: Objective,
    /// Budget / difficulty weight (see [`Objective::default_alpha`]).
    pub alpha: f64,
    /// CoDE's success threshold β and failure threshold δ (CoDE A.14: β = δ = 0.0 "based on a
    /// hyper-parameter search").
    pub beta: f64,
    pub delta: f64,
    /// The budget estimate N̂ (see [`Budget`]); files from before it was chosen read `log_skip`,
    /// as they were trained.
    #[serde(default = "Budget::before_the_choice")]
    pub budget: Budget,
}

impl Budget {
    fn before_the_choice() -> Budget {
        Budget::LogSkip
    }

    pub fn key(self) -> &'static str {
        match self {
            Budget::FlooredLogSkip => "floored_log_skip",
            Budget::Expected => "expected",
            Budget::LogSkip => "log_skip",
        }
    }

    pub fn from_key(key: &str) -> Option<Budget> {
        [Budget::FlooredLogSkip, Budget::Expected, Budget::LogSkip].into_iter().find(|b| b.key() == key || b.key().replace('_', "-") == key)
    }

    /// N̂ for a design's log π(SKIP) at each step.
    pub fn estimate(self, skip_log_probs: &[f64]) -> f64 {
        match self {
            Budget::FlooredLogSkip => -skip_log_probs.iter().map(|lp| lp.max(SKIP_FLOOR.ln())).sum::<f64>(),
            Budget::Expected => skip_log_probs.iter().map(|lp| 1.0 - lp.exp()).sum(),
            Budget::LogSkip => -skip_log_probs.iter().sum::<f64>(),
        }
    }
}

impl ObjectiveConfig {
    pub fn new(objective: Objective) -> Self {
        ObjectiveConfig { objective, alpha: objective.default_alpha(), beta: 0.0, delta: 0.0, budget: Budget::default() }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha.is_finite() && (0.0..=10.0).contains(&self.alpha)) {
            return Err(format!("alpha must be 0 to 10, not {}", self.alpha));
        }
        if self.objective == Objective::Code && self.alpha > 1.0 {
            return Err(format!("CoDE's alpha weighs (1 − α)·regret against α·difficulty: 0 to 1, not {}", self.alpha));
        }
        if !(self.beta.is_finite() && self.delta.is_finite()) || self.delta > self.beta {
            return Err(format!("CoDE's thresholds need δ ≤ β (finite), not δ = {}, β = {}", self.delta, self.beta));
        }
        Ok(())
    }
}
