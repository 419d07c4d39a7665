//! The adversary's objectives as pure functions of the navigators' returns on a design and the
//! design's SKIP log-probabilities.
//!
//! Each gives a [`Signal`]: the scalar `reward` the A2C term of the adversary's loss uses, and
//! `skip_weight`, the coefficient of the differentiable budget term the loss adds,
//! `skip_weight · Σ_i log π(a_i = SKIP | a_<i)`. Minimising that term with a positive weight
//! lowers the SKIP probabilities (more primitives); with a negative weight it raises them.
//!
//! - AEG Eq. 3: J = J_rl(REGRET) + α·J_budget, J_budget = R_A · Σ log π(SKIP): the loss's budget
//!   term is α·R_A·Σ log π(SKIP), so `skip_weight` = α·R_A — more primitives when the best
//!   navigator's return is positive, fewer when it is negative.
//! - CoDE Eq. 4: J = (1 − α)·PopRegret + α·Difficulty, Difficulty = (1[R_best > β] −
//!   1[R_best < δ]) · N̂ / N_max with N̂ = −Σ log π(SKIP), "scaled by the reward received by the
//!   best-performing agent". We scale by |R_best| so the indicator keeps the sign (scaling by
//!   R_best itself would reward more primitives when R_best < δ < 0); with CoDE's β = δ = 0 it
//!   is R_best · N̂ / N_max. The regret part is the A2C reward; the difficulty part is
//!   differentiated through N̂ directly ("a more direct control over generator policy"), as AEG's
//!   budget loss is: maximising α·D is minimising α·s·|R_best|/N_max · Σ log π(SKIP).
//!
//! Returns here are each episode's discounted return, one row per navigator (M each).

use serde::{Deserialize, Serialize};

use super::config::{Objective, ObjectiveConfig};

/// What an objective makes of one design's results.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// The A2C term's reward.
    pub reward: f64,
    /// Coefficient of Σ log π(SKIP) in the loss (0: no budget term).
    pub skip_weight: f64,
    /// The regret estimate the objective uses (ALP: its learning progress).
    pub regret: f64,
    /// The best navigator's mean return (PAIRED: the antagonist's best episode).
    pub best: f64,
    /// The objective's value J at the design's SKIP log-probabilities (what the adversary
    /// maximises; for b-PAIRED the reward minus the budget loss).
    pub value: f64,
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() { 0.0 } else { xs.iter().sum::<f64>() / xs.len() as f64 }
}

/// Mean return of each navigator.
pub fn means(returns: &[Vec<f64>]) -> Vec<f64> {
    returns.iter().map(|r| mean(r)).collect()
}

/// PAIRED's regret (AEG App. A.1): the antagonist's (row 1) best return − the protagonist's
/// (row 0) mean return.
pub fn paired_regret(returns: &[Vec<f64>]) -> Result<(f64, f64), String> {
    let [protagonist, antagonist] = returns else {
        return Err(format!("PAIRED needs a protagonist and an antagonist, not {} navigators", returns.len()));
    };
    let best = antagonist.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() || protagonist.is_empty() {
        return Err("PAIRED needs at least one episode per navigator".into());
    }
    Ok((best - mean(protagonist), best))
}

/// The flexible / population regret (AEG Eq. 4, CoDE Eq. 1): max_i E_m[R_i,m] − mean_i E_m[R_i,m];
/// also the best mean return R_A.
pub fn population_regret(returns: &[Vec<f64>]) -> Result<(f64, f64), String> {
    if returns.is_empty() || returns.iter().any(|r| r.is_empty()) {
        return Err("the regret needs at least one episode per navigator".into());
    }
    let m = means(returns);
    let best = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Ok((best - mean(&m), best))
}

/// CoDE's difficulty (Eq. 2, scaled as the module says): (1[R > β] − 1[R < δ]) · |R| · N̂ / N_max.
pub fn difficulty(best: f64, n_hat: f64, n_max: usize, beta: f64, delta: f64) -> f64 {
    indicator(best, beta, delta) * best.abs() * n_hat / n_max.max(1) as f64
}

fn indicator(best: f64, beta: f64, delta: f64) -> f64 {
    (best > beta) as i32 as f64 - (best < delta) as i32 as f64
}

/// The adversary's signal under `cfg` for one design. `skip_log_probs` are the design's
/// log π(SKIP) at each of its N steps (N_max = their count); `previous` is, for ALP, the
/// navigator's mean return on the design before (`None` on the first: no progress yet, reward 0).
pub fn signal(cfg: &ObjectiveConfig, returns: &[Vec<f64>], skip_log_probs: &[f64], previous: Option<f64>) -> Result<Signal, String> {
    let sum_skip: f64 = skip_log_probs.iter().sum();
    let n_hat = -sum_skip;
    let alpha = cfg.alpha;
    Ok(match cfg.objective {
        Objective::Paired => {
            let (regret, best) = paired_regret(returns)?;
            Signal { reward: regret, skip_weight: 0.0, regret, best, value: regret }
        }
        Objective::FlexiblePaired => {
            let (regret, best) = population_regret(returns)?;
            Signal { reward: regret, skip_weight: 0.0, regret, best, value: regret }
        }
        Objective::FlexibleBPaired => {
            let (regret, best) = population_regret(returns)?;
            let skip_weight = alpha * best;
            Signal { reward: regret, skip_weight, regret, best, value: regret - skip_weight * sum_skip }
        }
        Objective::Code => {
            let (regret, best) = population_regret(returns)?;
            let n_max = skip_log_probs.len();
            let d = difficulty(best, n_hat, n_max, cfg.beta, cfg.delta);
            let skip_weight = alpha * indicator(best, cfg.beta, cfg.delta) * best.abs() / n_max.max(1) as f64;
            Signal { reward: (1.0 - alpha) * regret, skip_weight, regret, best, value: (1.0 - alpha) * regret + alpha * d }
        }
        Objective::Alp => {
            let [row] = returns else {
                return Err(format!("ALP trains one navigator, not {}", returns.len()));
            };
            if row.is_empty() {
                return Err("ALP needs at least one episode".into());
            }
            let now = mean(row);
            let progress = previous.map_or(0.0, |p| (now - p).abs());
            Signal { reward: progress, skip_weight: 0.0, regret: progress, best: now, value: progress }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Two navigators, M = 2: means 0.5 and −0.25.
    fn returns() -> Vec<Vec<f64>> {
        vec![vec![1.0, 0.0], vec![-0.5, 0.0]]
    }

    #[test]
    fn paired_is_the_antagonists_best_minus_the_protagonists_mean() {
        let s = signal(&ObjectiveConfig::new(Objective::Paired), &returns(), &[-1.0; 4], None).unwrap();
        // Antagonist (row 1) best 0.0, protagonist (row 0) mean 0.5: regret −0.5.
        assert!(close(s.reward, -0.5) && close(s.regret, -0.5) && close(s.best, 0.0), "{s:?}");
        assert_eq!(s.skip_weight, 0.0);
        let flipped = vec![returns()[1].clone(), returns()[0].clone()];
        // Antagonist best 1.0, protagonist mean −0.25: regret 1.25.
        assert!(close(signal(&ObjectiveConfig::new(Objective::Paired), &flipped, &[], None).unwrap().reward, 1.25));
        assert!(signal(&ObjectiveConfig::new(Objective::Paired), &[vec![1.0]], &[], None).is_err());
    }

    #[test]
    fn flexible_paired_is_the_best_mean_minus_the_population_mean() {
        let s = signal(&ObjectiveConfig::new(Objective::FlexiblePaired), &returns(), &[-1.0; 4], None).unwrap();
        // max(0.5, −0.25) − (0.5 − 0.25)/2 = 0.5 − 0.125 = 0.375.
        assert!(close(s.reward, 0.375) && close(s.best, 0.5), "{s:?}");
        assert_eq!(s.skip_weight, 0.0);
        // Order does not matter, and equal agents give zero regret.
        let swapped = vec![returns()[1].clone(), returns()[0].clone()];
        assert!(close(signal(&ObjectiveConfig::new(Objective::FlexiblePaired), &swapped, &[], None).unwrap().reward, 0.375));
        assert!(close(signal(&ObjectiveConfig::new(Objective::FlexiblePaired), &[vec![0.3, 0.1], vec![0.2, 0.2]], &[], None).unwrap().reward, 0.0));
    }

    #[test]
    fn flexible_b_paired_adds_alpha_times_the_best_return_on_the_skip_log_probs() {
        let skips = [-0.5, -1.0, -0.25, -2.0]; // Σ = −3.75
        let cfg = ObjectiveConfig::new(Objective::FlexibleBPaired);
        assert_eq!(cfg.alpha, 1.25);
        let s = signal(&cfg, &returns(), &skips, None).unwrap();
        assert!(close(s.reward, 0.375));
        // α·R_A = 1.25 · 0.5 = 0.625; J = regret − budget loss = 0.375 − 0.625·(−3.75) = 2.71875.
        assert!(close(s.skip_weight, 0.625) && close(s.value, 2.71875), "{s:?}");
        // A failing population (R_A < 0) turns the weight negative: more SKIPs.
        let s = signal(&cfg, &[vec![-1.0, -0.6], vec![-0.4, -1.0]], &skips, None).unwrap();
        assert!(close(s.best, -0.7) && close(s.skip_weight, -0.875), "{s:?}");
    }

    #[test]
    fn code_mixes_regret_and_the_difficulty_incentive() {
        let skips = [-0.5, -1.0, -0.25, -2.0]; // N̂ = 3.75, N_max = 4
        let cfg = ObjectiveConfig::new(Objective::Code);
        assert_eq!((cfg.alpha, cfg.beta, cfg.delta), (0.9, 0.0, 0.0));
        let s = signal(&cfg, &returns(), &skips, None).unwrap();
        // Regret 0.375, R_best 0.5 > β: D = 1 · 0.5 · 3.75 / 4 = 0.46875.
        // J = 0.1 · 0.375 + 0.9 · 0.46875 = 0.459375.
        assert!(close(s.reward, 0.0375) && close(s.value, 0.459375), "{s:?}");
        // skip_weight = α · 1 · 0.5 / 4 = 0.1125.
        assert!(close(s.skip_weight, 0.1125), "{s:?}");
        // R_best < δ: D = −1 · 0.7 · 3.75 / 4 = −0.65625, and the weight is negative.
        let failing = [vec![-1.0, -0.6], vec![-0.4, -1.0]];
        let s = signal(&cfg, &failing, &skips, None).unwrap();
        // Regret −0.7 − (−0.75) = 0.05.
        assert!(close(s.value, 0.1 * 0.05 + 0.9 * -0.65625) && close(s.skip_weight, -0.9 * 0.7 / 4.0), "{s:?}");
        // Between the thresholds (δ ≤ R_best ≤ β) no difficulty term.
        let wide = ObjectiveConfig { beta: 0.8, delta: -0.8, ..cfg.clone() };
        let s = signal(&wide, &failing, &skips, None).unwrap();
        assert!(close(s.skip_weight, 0.0) && close(s.value, 0.1 * 0.05), "{s:?}");
        assert!(close(difficulty(0.5, 3.75, 4, 0.0, 0.0), 0.46875));
    }

    #[test]
    fn alp_rewards_the_change_in_return() {
        let cfg = ObjectiveConfig::new(Objective::Alp);
        let s = signal(&cfg, &[vec![0.2, -0.6]], &[-1.0], Some(0.3)).unwrap();
        // Mean −0.2, previous 0.3: |−0.2 − 0.3| = 0.5.
        assert!(close(s.reward, 0.5) && close(s.best, -0.2) && s.skip_weight == 0.0, "{s:?}");
        assert_eq!(signal(&cfg, &[vec![0.2]], &[], None).unwrap().reward, 0.0, "no progress before a previous design");
        assert!(signal(&cfg, &returns(), &[], Some(0.0)).is_err(), "one navigator");
    }

    #[test]
    fn bad_constants_are_named() {
        let mut c = ObjectiveConfig::new(Objective::Code);
        c.alpha = 1.5;
        assert!(c.validate().unwrap_err().contains("alpha"));
        let c = ObjectiveConfig { beta: -0.1, delta: 0.1, ..ObjectiveConfig::new(Objective::Code) };
        assert!(c.validate().unwrap_err().contains("δ"));
        assert!(ObjectiveConfig::new(Objective::FlexibleBPaired).validate().is_ok());
    }
}
