//! Environment generators: what proposes the next design a navigator trains on. The papers'
//! non-learning baselines live here — Domain Randomization (DR) and the scheduled Curriculum
//! (CL, AEG §5 after Gur et al. 2019) — and a fixed site for training on one design. The
//! learning adversaries (`crate::adversary`, which this module does not know) implement the same
//! trait: they learn in `observe`,
//! say what they learned in `report`, and carry their state through `save_state`/`load_state`.

use serde::{Deserialize, Serialize};

use crate::gminiwob::design::{Design, MAX_PAGES};
use crate::gminiwob::primitive::PRIMITIVE_COUNT;
use crate::gminiwob::test_sites::RandomDesign;
use crate::rng::Rng;

pub mod train;

/// What a generator hears back about the design it proposed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Each navigator's returns on the design (one row per navigator, M episodes each): the
    /// discounted returns, the papers' R_i,j (`navigator::rollout::Episode::discounted`).
    pub returns: Vec<Vec<f64>>,
}

/// What a learning generator made of its last design (the adversaries; the others have none).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratorReport {
    /// The objective's value J.
    pub objective: f64,
    /// The reward of the A2C term.
    pub reward: f64,
    /// The regret estimate (ALP: its learning progress).
    pub regret: f64,
    /// The best navigator's mean return.
    pub best_return: f64,
    /// w: the loss adds −w·N̂.
    pub budget_weight: f64,
    /// N̂, the objective's budget estimate (`adversary::config::Budget`).
    pub n_hat: f64,
    /// Σ_i (1 − π(SKIP_i)) along the design: the expected number of non-SKIP decisions.
    pub expected_budget: f64,
    /// Non-SKIP decisions in the design, and how many of them repeated a (primitive, page) pair
    /// already placed (the design format drops those; 0 when the decoder masks them).
    pub chosen: u32,
    pub repeats: u32,
    /// The smallest log π(SKIP) along the design.
    pub min_skip_log_prob: f64,
    pub log_prob: f64,
    pub pages: u32,
    pub active: u32,
    pub passive: u32,
    pub loss: f64,
    pub policy_loss: f64,
    pub value_loss: f64,
    pub entropy: f64,
    pub budget_loss: f64,
    /// The critic's V(h0).
    pub value: f64,
    pub updates: u64,
}

pub trait Generator {
    /// Short name for charts and logs.
    fn name(&self) -> &'static str;
    /// The next design. `index` counts the designs proposed from 0 (schedules read it).
    fn propose(&mut self, rng: &mut Rng, index: u64) -> Design;
    /// The navigators' results on every design proposed since the last call, in the order they
    /// were proposed (the non-learning generators ignore them).
    fn observe(&mut self, _outcomes: &[Outcome]) {}
    /// What the last `observe` learned, a report per design (learning generators only).
    fn reports(&self) -> Vec<GeneratorReport> {
        Vec::new()
    }
    /// Why the generator could not propose or learn, if it could not (the loop stops with it).
    fn failure(&self) -> Option<String> {
        None
    }
    /// State a snapshot must carry to resume exactly, beyond the loop's design generator
    /// (`None`: nothing, as for DR, CL and fixed sites).
    fn save_state(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(None)
    }
    /// Continues from [`Generator::save_state`]; a damaged state is refused and nothing changes.
    fn load_state(&mut self, _bytes: &[u8]) -> Result<(), String> {
        Err(format!("the {} generator keeps no state to load", self.name()))
    }
}

impl<G: Generator + ?Sized> Generator for Box<G> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn propose(&mut self, rng: &mut Rng, index: u64) -> Design {
        (**self).propose(rng, index)
    }
    fn observe(&mut self, outcomes: &[Outcome]) {
        (**self).observe(outcomes)
    }
    fn reports(&self) -> Vec<GeneratorReport> {
        (**self).reports()
    }
    fn failure(&self) -> Option<String> {
        (**self).failure()
    }
    fn save_state(&self) -> Result<Option<Vec<u8>>, String> {
        (**self).save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        (**self).load_state(bytes)
    }
}

/// Domain Randomization: k ~ U{0..K−1}, then N slots each of a uniform primitive or SKIP on a
/// uniform page ≤ k (AEG §5, after Dennis et al. 2020). See [`RandomDesign`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DomainRandomization {
    pub shape: RandomDesign,
}

impl Generator for DomainRandomization {
    fn name(&self) -> &'static str {
        "DR"
    }
    fn propose(&mut self, rng: &mut Rng, _iteration: u64) -> Design {
        self.shape.sample(rng)
    }
}

/// The scheduled curriculum: every primitive is included with probability p (on a uniform page
/// ≤ k, k ~ U{0..K−1}), p rising linearly from `p_start` to 1 over `ramp` proposals (AEG §5:
/// "p is initialized with a small number and scheduled to reach 1.0 during training"; the start
/// and the ramp's length are not given, these are our choice).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CurriculumLearning {
    pub p_start: f64,
    /// Proposals until p = 1.
    pub ramp: u64,
    /// K: most pages.
    pub max_pages: u32,
}

impl Default for CurriculumLearning {
    fn default() -> Self {
        CurriculumLearning { p_start: 0.05, ramp: 20_000, max_pages: 4 }
    }
}

impl CurriculumLearning {
    pub fn p(&self, iteration: u64) -> f64 {
        if iteration >= self.ramp {
            return 1.0;
        }
        self.p_start + (1.0 - self.p_start) * iteration as f64 / self.ramp.max(1) as f64
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.p_start.is_finite() && (0.0..=1.0).contains(&self.p_start)) {
            return Err(format!("p_start must be 0 to 1, not {}", self.p_start));
        }
        if !(1..=MAX_PAGES).contains(&self.max_pages) {
            return Err(format!("max_pages must be 1 to {MAX_PAGES}, not {}", self.max_pages));
        }
        Ok(())
    }
}

impl Generator for CurriculumLearning {
    fn name(&self) -> &'static str {
        "CL"
    }
    fn propose(&mut self, rng: &mut Rng, iteration: u64) -> Design {
        let p = self.p(iteration);
        let k = rng.below(self.max_pages.max(1) as usize) as u32;
        let entries: Vec<(usize, u32)> = (1..=PRIMITIVE_COUNT)
            .filter_map(|index| {
                let page = rng.below(k as usize + 1) as u32;
                (rng.next_f64() < p).then_some((index, page))
            })
            .collect();
        Design::from_entries(None, &entries).expect("one of each primitive stays within the caps")
    }
}

/// One design, always (training on a single site, e.g. a test site).
#[derive(Clone, Debug, PartialEq)]
pub struct Fixed(pub Design);

impl Generator for Fixed {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn propose(&mut self, _rng: &mut Rng, _iteration: u64) -> Design {
        self.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_curriculum_grows_from_few_primitives_to_all() {
        let mut cl = CurriculumLearning { ramp: 100, ..CurriculumLearning::default() };
        cl.validate().unwrap();
        let mut rng = Rng::new(1);
        let mean =
            |cl: &mut CurriculumLearning, rng: &mut Rng, it: u64| (0..200).map(|_| cl.propose(rng, it).placed().len()).sum::<usize>() as f64 / 200.0;
        let early = mean(&mut cl, &mut rng, 0);
        let mid = mean(&mut cl, &mut rng, 50);
        assert!((1.0..3.5).contains(&early), "p = 0.05 of 40: {early}");
        assert!(mid > 4.0 * early, "{early} → {mid}");
        assert_eq!(cl.propose(&mut rng, 100).placed().len(), PRIMITIVE_COUNT, "p = 1: every primitive");
        assert_eq!(cl.p(1_000), 1.0);
        assert!(CurriculumLearning { p_start: 1.5, ..cl.clone() }.validate().is_err());
    }

    #[test]
    fn domain_randomization_spans_pages_and_sizes() {
        let mut dr = DomainRandomization::default();
        let mut rng = Rng::new(2);
        let designs: Vec<Design> = (0..300).map(|i| dr.propose(&mut rng, i)).collect();
        let pages: std::collections::BTreeSet<u32> = designs.iter().map(|d| d.pages()).collect();
        assert_eq!(pages.into_iter().collect::<Vec<_>>(), [1, 2, 3, 4]);
        let sizes: Vec<usize> = designs.iter().map(|d| d.placed().len()).collect();
        assert!(sizes.iter().min() < Some(&20) && sizes.iter().max() > Some(&20), "{sizes:?}");
    }
}
