//! The adversary's objectives as pure functions of the navigators' returns on a design and the
//! design's SKIP log-probabilities.
//!
//! Each gives a [`Signal`]: the scalar `reward` the A2C term of the adversary's loss uses, and
//! `budget_weight` w, the coefficient of the differentiable budget term: the loss adds −w·N̂,
//! N̂ the budget estimate (`config::Budget`: by default the papers' printed −Σ_i log π(SKIP) with
//! π(SKIP) floored at 1 % so it is bounded; or the expected number of non-SKIP decisions
//! Σ_i (1 − π(a_i = SKIP | a_<i)); or the printed form unbounded).
//! Minimising it with w > 0 lowers the SKIP probabilities (more primitives); with w < 0 it raises
//! them.
//!
//! - AEG Eq. 3: J = J_rl(REGRET) + α·J_budget, J_budget = R_A · Σ log π(SKIP) = −R_A·N̂: the
//!   loss's budget term is −α·R_A·N̂, so w = α·R_A — more primitives when the best navigator's
//!   return is positive, fewer when it is negative.
//! - CoDE Eq. 4: J = (1 − α)·PopRegret + α·Difficulty, Difficulty = (1[R_best > β] −
//!   1[R_best < δ]) · N̂ / N_max, "scaled by the reward received by the best-performing agent".
//!   We scale by |R_best| so the indicator keeps the sign (scaling by R_best itself would reward
//!   more primitives when R_best < δ < 0); with CoDE's β = δ = 0 it is R_best · N̂ / N_max. The
//!   regret part is the A2C reward; the difficulty part is differentiated through N̂ directly
//!   ("a more direct control over generator policy"), as AEG's budget loss is: maximising α·D is
//!   minimising −α·s·|R_best|/N_max · N̂.
//!
//! Returns here are each episode's discounted return, one row per navigator (M each).

use serde::{Deserialize, Serialize};

use super::config::{Objective, ObjectiveConfig};

/// What an objective makes of one design's results.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// The A2C term's reward.
    pub reward: f64,
    /// w: the loss adds −w·N̂ (0: no budget term).
    pub budget_weight: f64,
    /// N̂, the budget estimate, at the design's SKIP log-probabilities as sampled.
    pub n_hat: f64,
    /// The regret estimate the objective uses (ALP: its learning progress).
    pub regret: f64,
    /// The best navigator's mean return (PAIRED: the antagonist's best episode).
    pub best: f64,
    /// The objective's value J at the design's SKIP log-probabilities (what the adversary
    /// maximises; for b-PAIRED the regret plus α·R_A·N̂).
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
    let n_hat = cfg.budget.estimate(skip_log_probs);
    let alpha = cfg.alpha;
    let plain = |reward: f64, regret: f64, best: f64| Signal { reward, budget_weight: 0.0, n_hat, regret, best, value: reward };
    Ok(match cfg.objective {
        Objective::Paired => {
            let (regret, best) = paired_regret(returns)?;
            plain(regret, regret, best)
        }
        Objective::FlexiblePaired => {
            let (regret, best) = population_regret(returns)?;
            plain(regret, regret, best)
        }
        Objective::FlexibleBPaired => {
            let (regret, best) = population_regret(returns)?;
            let w = alpha * best;
            Signal { reward: regret, budget_weight: w, n_hat, regret, best, value: regret + w * n_hat }
        }
        Objective::Code => {
            let (regret, best) = population_regret(returns)?;
            let n_max = skip_log_probs.len();
            let d = difficulty(best, n_hat, n_max, cfg.beta, cfg.delta);
            let w = alpha * indicator(best, cfg.beta, cfg.delta) * best.abs() / n_max.max(1) as f64;
            Signal { reward: (1.0 - alpha) * regret, budget_weight: w, n_hat, regret, best, value: (1.0 - alpha) * regret + alpha * d }
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
            plain(progress, progress, now)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adversary::config::Budget;

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
        assert_eq!(s.budget_weight, 0.0);
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
        assert_eq!(s.budget_weight, 0.0);
        // Order does not matter, and equal agents give zero regret.
        let swapped = vec![returns()[1].clone(), returns()[0].clone()];
        assert!(close(signal(&ObjectiveConfig::new(Objective::FlexiblePaired), &swapped, &[], None).unwrap().reward, 0.375));
        assert!(close(signal(&ObjectiveConfig::new(Objective::FlexiblePaired), &[vec![0.3, 0.1], vec![0.2, 0.2]], &[], None).unwrap().reward, 0.0));
    }

    #[test]
    fn flexible_b_paired_adds_alpha_times_the_best_return_on_the_skip_log_probs() {
        let skips = [-0.5, -1.0, -0.25, -2.0]; // Σ = −3.75
        // The printed formula's estimate, N̂ = −Σ log π(SKIP) = 3.75.
        let cfg = ObjectiveConfig { budget: Budget::LogSkip, ..ObjectiveConfig::new(Objective::FlexibleBPaired) };
        assert_eq!(cfg.alpha, 1.25);
        let s = signal(&cfg, &returns(), &skips, None).unwrap();
        assert!(close(s.reward, 0.375));
        // α·R_A = 1.25 · 0.5 = 0.625; J = regret + α·R_A·N̂ = 0.375 + 0.625·3.75 = 2.71875.
        assert!(close(s.budget_weight, 0.625) && close(s.value, 2.71875), "{s:?}");
        // A failing population (R_A < 0) turns the weight negative: more SKIPs.
        let s = signal(&cfg, &[vec![-1.0, -0.6], vec![-0.4, -1.0]], &skips, None).unwrap();
        assert!(close(s.best, -0.7) && close(s.budget_weight, -0.875), "{s:?}");
    }

    #[test]
    fn code_mixes_regret_and_the_difficulty_incentive() {
        let skips = [-0.5, -1.0, -0.25, -2.0]; // N̂ = 3.75, N_max = 4
        let cfg = ObjectiveConfig { budget: Budget::LogSkip, ..ObjectiveConfig::new(Objective::Code) };
        assert_eq!((cfg.alpha, cfg.beta, cfg.delta), (0.9, 0.0, 0.0));
        let s = signal(&cfg, &returns(), &skips, None).unwrap();
        // Regret 0.375, R_best 0.5 > β: D = 1 · 0.5 · 3.75 / 4 = 0.46875.
        // J = 0.1 · 0.375 + 0.9 · 0.46875 = 0.459375.
        assert!(close(s.reward, 0.0375) && close(s.value, 0.459375), "{s:?}");
        // budget_weight = α · 1 · 0.5 / 4 = 0.1125.
        assert!(close(s.budget_weight, 0.1125), "{s:?}");
        // R_best < δ: D = −1 · 0.7 · 3.75 / 4 = −0.65625, and the weight is negative.
        let failing = [vec![-1.0, -0.6], vec![-0.4, -1.0]];
        let s = signal(&cfg, &failing, &skips, None).unwrap();
        // Regret −0.7 − (−0.75) = 0.05.
        assert!(close(s.value, 0.1 * 0.05 + 0.9 * -0.65625) && close(s.budget_weight, -0.9 * 0.7 / 4.0), "{s:?}");
        // Between the thresholds (δ ≤ R_best ≤ β) no difficulty term.
        let wide = ObjectiveConfig { beta: 0.8, delta: -0.8, ..cfg.clone() };
        let s = signal(&wide, &failing, &skips, None).unwrap();
        assert!(close(s.budget_weight, 0.0) && close(s.value, 0.1 * 0.05), "{s:?}");
        assert!(close(difficulty(0.5, 3.75, 4, 0.0, 0.0), 0.46875));
    }

    #[test]
    fn alp_rewards_the_change_in_return() {
        let cfg = ObjectiveConfig::new(Objective::Alp);
        let s = signal(&cfg, &[vec![0.2, -0.6]], &[-1.0], Some(0.3)).unwrap();
        // Mean −0.2, previous 0.3: |−0.2 − 0.3| = 0.5.
        assert!(close(s.reward, 0.5) && close(s.best, -0.2) && s.budget_weight == 0.0, "{s:?}");
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
    #[test]
    fn the_expected_budget_counts_the_non_skip_probability() {
        let skips = [0.5f64.ln(), 0.25f64.ln(), 1.0f64.ln(), 0.0f64.ln().max(-1e9)];
        // Σ (1 − π): 0.5 + 0.75 + 0 + 1 = 2.25.
        assert!(close(Budget::Expected.estimate(&skips), 2.25));
        assert!(close(Budget::LogSkip.estimate(&skips[..3]), -(0.5f64.ln() + 0.25f64.ln())));
        let cfg = ObjectiveConfig { budget: Budget::Expected, ..ObjectiveConfig::new(Objective::Code) };
        assert_eq!(ObjectiveConfig::new(Objective::Code).budget, Budget::FlooredLogSkip, "the default");
        // The floored printed form counts −ln 0.01 at most per step.
        assert!(close(Budget::FlooredLogSkip.estimate(&[-1.0, -20.0]), 1.0 + 100f64.ln()));
        let s = signal(&cfg, &returns(), &skips, None).unwrap();
        // D = 0.5 · 2.25 / 4; J = 0.1 · 0.375 + 0.9 · D.
        assert!(close(s.n_hat, 2.25) && close(s.value, 0.0375 + 0.9 * 0.5 * 2.25 / 4.0), "{s:?}");
        // The weight does not depend on the estimate.
        assert!(close(s.budget_weight, 0.1125));
    }

    /// Issue 31: with the printed N̂ = −Σ log π(SKIP) an adversary that drives π(SKIP) toward 0
    /// raises its objective without limit; the expected budget keeps it within α·|R|·N/N_max
    /// (CoDE) and α·|R_A|·N (b-PAIRED) beside the regret, however small π(SKIP) gets.
    #[test]
    fn the_expected_budget_keeps_the_objective_bounded() {
        let n = 24;
        let returns = [vec![1.9, 1.8], vec![1.7, 1.9]];
        for lp in [-1.0, -10.0, -1e3, -1e6] {
            let skips = vec![lp; n];
            for (objective, budget) in
                [Objective::Code, Objective::FlexibleBPaired].into_iter().flat_map(|o| [(o, Budget::Expected), (o, Budget::FlooredLogSkip)])
            {
                let bounded = signal(&ObjectiveConfig { budget, ..ObjectiveConfig::new(objective) }, &returns, &skips, None).unwrap();
                let per_step = if budget == Budget::Expected { 1.0 } else { 100f64.ln() };
                let printed =
                    signal(&ObjectiveConfig { budget: Budget::LogSkip, ..ObjectiveConfig::new(objective) }, &returns, &skips, None).unwrap();
                let alpha = ObjectiveConfig::new(objective).alpha;
                let limit = match objective {
                    Objective::Code => (1.0 - alpha) * 2.0 * 1.9 + alpha * 1.9 * per_step,
                    _ => 2.0 * 1.9 + alpha * 1.9 * n as f64 * per_step,
                };
                assert!(
                    bounded.n_hat <= n as f64 * per_step + 1e-9 && bounded.value <= limit + 1e-9,
                    "{objective:?} {budget:?} at log π(SKIP) = {lp}: {bounded:?}"
                );
                if lp <= -1e3 {
                    assert!(printed.value > 100.0 * limit, "the printed estimate grows without limit: {printed:?}");
                }
            }
        }
    }
}
