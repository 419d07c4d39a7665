//! The generator a training request names, and building it: the baselines of
//! `crate::curriculum` (DR, CL, a fixed site) and the learning adversaries of `crate::adversary`.
//! It lives above both, so the curriculum knows no adversary and the adversaries know only the
//! curriculum's `Generator` trait.

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use crate::adversary::config::{AdversaryConfig, Budget, Objective, ObjectiveConfig};
use crate::adversary::generator::Adversary;
use crate::curriculum::{CurriculumLearning, DomainRandomization, Fixed, Generator};
use crate::gminiwob::Design;
use crate::gminiwob::test_sites::RandomDesign;

/// A generator as a training request names it (JSON: `{"kind": "dr"}`, `{"kind": "cl", "ramp":
/// 5000}`, `{"kind": "site", "name": "login-0", "design": {...}}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum GeneratorSpec {
    Dr {
        #[serde(default)]
        max_pages: Option<u32>,
        #[serde(default)]
        slots: Option<u32>,
    },
    Cl {
        #[serde(default)]
        p_start: Option<f64>,
        #[serde(default)]
        ramp: Option<u64>,
        #[serde(default)]
        max_pages: Option<u32>,
    },
    /// One fixed site (its design is checked as it is read).
    Site { name: String, design: Design },
    /// A learning adversary (`crate::adversary`) with one of the papers' objectives
    /// (`{"kind": "adversary", "objective": "code"}`); unset constants take the papers' values.
    /// It trains a population of navigators (`curriculum::train::PopulationTrainer`), so it is
    /// built with [`GeneratorSpec::build_adversary`], not [`GeneratorSpec::build`].
    Adversary {
        objective: Objective,
        #[serde(default)]
        alpha: Option<f64>,
        #[serde(default)]
        beta: Option<f64>,
        #[serde(default)]
        delta: Option<f64>,
        /// The budget estimate (`adversary::config::Budget`; unset: the default).
        #[serde(default)]
        budget: Option<Budget>,
        #[serde(default)]
        config: Option<AdversaryConfig>,
    },
}

impl GeneratorSpec {
    /// An adversary with `objective` and the papers' constants and config.
    pub fn adversary(objective: Objective) -> Self {
        GeneratorSpec::Adversary { objective, alpha: None, beta: None, delta: None, budget: None, config: None }
    }

    /// The generator, or what is wrong with the request.
    pub fn build(&self) -> Result<Box<dyn Generator + Send>, String> {
        Ok(match self {
            GeneratorSpec::Dr { max_pages, slots } => {
                let d = RandomDesign::default();
                let shape = RandomDesign { max_pages: max_pages.unwrap_or(d.max_pages), slots: slots.unwrap_or(d.slots) };
                shape.validate()?;
                Box::new(DomainRandomization { shape })
            }
            GeneratorSpec::Cl { p_start, ramp, max_pages } => {
                let d = CurriculumLearning::default();
                let cl = CurriculumLearning {
                    p_start: p_start.unwrap_or(d.p_start),
                    ramp: ramp.unwrap_or(d.ramp),
                    max_pages: max_pages.unwrap_or(d.max_pages),
                };
                cl.validate()?;
                Box::new(cl)
            }
            GeneratorSpec::Site { design, .. } => Box::new(Fixed(design.clone())),
            GeneratorSpec::Adversary { objective, .. } => {
                return Err(format!(
                    "the {} adversary trains a population of {} navigator(s) in the population loop, which this trainer does not run",
                    objective.label(),
                    objective.population()
                ));
            }
        })
    }

    /// What is wrong with a request's generator, found without building it: the shapes and
    /// schedules as `build` checks them, a site's label as a generated site's, an adversary's
    /// constants and config.
    pub fn check(&self) -> Result<(), String> {
        match self {
            GeneratorSpec::Site { name, design } => {
                crate::task::TaskSpec::Generated { name: name.clone(), site: design.clone().into() }.check_generated_name().map_err(|e| e.to_string())
            }
            GeneratorSpec::Adversary { config, .. } => {
                self.objective_config().expect("an adversary").validate()?;
                config.clone().unwrap_or_default().validate()
            }
            _ => self.build().map(|_| ()),
        }
    }

    /// The adversary a request names (on `device`, seeded with `seed`), or what is wrong.
    pub fn build_adversary(&self, device: &Device, seed: u64) -> Result<Adversary, String> {
        let (GeneratorSpec::Adversary { config, .. }, Some(obj)) = (self, self.objective_config()) else {
            return Err(format!("{} is not an adversary", self.label()));
        };
        Adversary::new(config.clone().unwrap_or_default(), obj, device, seed)
    }

    /// An adversary's objective: the constants the request sets over the paper's defaults.
    fn objective_config(&self) -> Option<ObjectiveConfig> {
        let GeneratorSpec::Adversary { objective, alpha, beta, delta, budget, .. } = self else {
            return None;
        };
        let d = ObjectiveConfig::new(*objective);
        Some(ObjectiveConfig {
            objective: *objective,
            alpha: alpha.unwrap_or(d.alpha),
            beta: beta.unwrap_or(d.beta),
            delta: delta.unwrap_or(d.delta),
            budget: budget.unwrap_or(d.budget),
        })
    }

    /// What a run with it trained on, for checkpoints and charts.
    pub fn label(&self) -> String {
        match self {
            GeneratorSpec::Dr { .. } => "DR".into(),
            GeneratorSpec::Cl { .. } => "CL".into(),
            GeneratorSpec::Site { name, .. } => format!("site {name}"),
            GeneratorSpec::Adversary { objective, .. } => objective.label().into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gminiwob::primitive::PRIMITIVE_COUNT;
    use crate::rng::Rng;

    #[test]
    fn generators_are_named_by_requests_and_bad_ones_refused() {
        let dr: GeneratorSpec = serde_json::from_str(r#"{"kind":"dr"}"#).unwrap();
        assert_eq!(dr.build().unwrap().name(), "DR");
        let cl: GeneratorSpec = serde_json::from_str(r#"{"kind":"cl","ramp":10}"#).unwrap();
        let mut g = cl.build().unwrap();
        assert_eq!(g.propose(&mut Rng::new(1), 10).placed().len(), PRIMITIVE_COUNT, "ramp 10: p = 1 at 10");
        let site: GeneratorSpec =
            serde_json::from_str(r#"{"kind":"site","name":"mine","design":{"number_of_pages":1,"action":["username"],"action_page":[0]}}"#).unwrap();
        assert_eq!(site.label(), "site mine");
        assert!(serde_json::from_str::<GeneratorSpec>(r#"{"kind":"paired"}"#).is_err());
        assert!(serde_json::from_str::<GeneratorSpec>(r#"{"kind":"dr","k":3}"#).is_err());
        let bad: GeneratorSpec = serde_json::from_str(r#"{"kind":"cl","p_start":2}"#).unwrap();
        assert!(bad.build().err().unwrap().contains("p_start"));
        let bad: GeneratorSpec = serde_json::from_str(r#"{"kind":"dr","max_pages":99}"#).unwrap();
        assert!(bad.build().err().unwrap().contains("max_pages"));
        assert!(serde_json::from_str::<GeneratorSpec>(r#"{"kind":"site","name":"x","design":{"action":[999],"action_page":[0]}}"#).is_err());
    }

    #[test]
    fn adversaries_are_named_by_requests_and_built_for_the_population_loop() {
        let spec: GeneratorSpec = serde_json::from_str(r#"{"kind":"adversary","objective":"flexible_b_paired"}"#).unwrap();
        assert_eq!(spec.label(), "Flexible b-PAIRED");
        assert!(spec.build().err().unwrap().contains("population"), "the single-navigator trainer refuses it with a reason");
        let adv = spec.build_adversary(&Device::flex().autodiff(), 1).unwrap();
        assert_eq!((adv.objective.alpha, adv.name()), (1.25, "Flexible b-PAIRED"));
        let code: GeneratorSpec = serde_json::from_str(r#"{"kind":"adversary","objective":"code","alpha":0.8,"beta":-0.2,"delta":-0.2}"#).unwrap();
        let adv = code.build_adversary(&Device::flex().autodiff(), 1).unwrap();
        assert_eq!((adv.objective.alpha, adv.objective.beta), (0.8, -0.2));
        let bad: GeneratorSpec = serde_json::from_str(r#"{"kind":"adversary","objective":"code","alpha":2}"#).unwrap();
        assert!(bad.build_adversary(&Device::flex().autodiff(), 1).err().unwrap().contains("alpha"));
        let bad: GeneratorSpec = serde_json::from_str(r#"{"kind":"adversary","objective":"alp","config":{"max_pages":0}}"#).unwrap();
        assert!(bad.build_adversary(&Device::flex().autodiff(), 1).err().unwrap().contains("max_pages"));
        assert!(serde_json::from_str::<GeneratorSpec>(r#"{"kind":"adversary","objective":"minimax"}"#).is_err());
        assert!(GeneratorSpec::Dr { max_pages: None, slots: None }.build_adversary(&Device::flex(), 1).is_err());
    }
}
