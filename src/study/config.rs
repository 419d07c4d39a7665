//! What one training run of the population loop is asked to do: the generator, the seed, how long,
//! how often to judge and to snapshot, and the navigators' and loop's settings. The command line
//! (`examples/train_adversary.rs`), the Python package and the studies on Ray all build this one
//! struct (JSON or a dict), so a run means the same wherever it is started.

use serde::{Deserialize, Serialize};

use crate::curriculum::Generator;
use crate::curriculum::train::LoopConfig;
use crate::navigator::NavigatorConfig;
use crate::navigator::train::{JUDGE_SEEDS_FROM, REPORT_SEEDS_FROM};
use crate::request::GeneratorSpec;
use burn::prelude::Device;

/// Most seeds per judged cell (the papers judge on 50; more is still quick on the simulator).
pub const MAX_JUDGE_SEEDS: u32 = 10_000;
// The judgings that pick a run's best navigator stay below the seeds its reported figures use.
const _: () = assert!(JUDGE_SEEDS_FROM + MAX_JUDGE_SEEDS <= REPORT_SEEDS_FROM);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunConfig {
    /// The generator (`{"kind": "adversary", "objective": "code"}`, `{"kind": "dr"}`, ...).
    pub generator: GeneratorSpec,
    /// Seeds the navigators, the generator and the designs' episodes.
    pub seed: u64,
    /// Training minutes (judging not counted), summed over the run's sittings.
    pub minutes: f64,
    /// Stop after this many iterations instead (whichever comes first). A run that stops by
    /// iterations is the same run however it was interrupted and resumed.
    pub iterations: Option<u64>,
    /// Judge the population on the test sites every this many seconds of training...
    pub judge_every_s: f64,
    /// ...or, when set, every this many iterations (judging points then do not depend on speed).
    pub judge_every_iterations: Option<u64>,
    /// Print the curves every this many seconds of training between judgings (default: at judgings).
    pub report_every_s: Option<f64>,
    /// Seeds per judged cell (greedy, on the simulator, seeds never trained on).
    pub judge_seeds: u32,
    /// With a run folder: write the run's snapshot every this many seconds of wall-clock...
    pub snapshot_every_s: f64,
    /// ...or, when set, every this many iterations.
    pub snapshot_every_iterations: Option<u64>,
    /// Navigators in the population of DR, CL and a fixed site (an adversary's objective fixes
    /// its own: ALP 1, the others 2).
    pub population: Option<usize>,
    /// The navigators take turns on one thread (default: a thread each; the same results).
    pub sequential: bool,
    /// The loop's M, D and revival (`curriculum::train::LoopConfig`).
    #[serde(rename = "loop")]
    pub loop_cfg: LoopConfig,
    /// The navigators' settings (partial: unset fields keep their defaults).
    pub navigator: NavigatorConfig,
    /// Also write the best navigator here (a run folder keeps it as `best.wln`).
    pub out: Option<String>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            generator: GeneratorSpec::adversary(crate::adversary::Objective::Code),
            seed: 1,
            minutes: 5.0,
            iterations: None,
            judge_every_s: 60.0,
            judge_every_iterations: None,
            report_every_s: None,
            judge_seeds: 20,
            snapshot_every_s: 300.0,
            snapshot_every_iterations: None,
            population: None,
            sequential: false,
            loop_cfg: LoopConfig::default(),
            navigator: NavigatorConfig::default(),
            out: None,
        }
    }
}

impl RunConfig {
    /// Reads a config from JSON; unknown keys and bad values are refused with the key's name.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let cfg: RunConfig = serde_json::from_str(json).map_err(|e| format!("run config: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 { Ok(()) } else { Err(format!("{name} must be a positive number of seconds or minutes, not {v}")) }
        };
        positive("minutes", self.minutes)?;
        positive("judge_every_s", self.judge_every_s)?;
        positive("snapshot_every_s", self.snapshot_every_s)?;
        for (name, v) in [
            ("iterations", self.iterations),
            ("judge_every_iterations", self.judge_every_iterations),
            ("snapshot_every_iterations", self.snapshot_every_iterations),
        ] {
            if v == Some(0) {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if let Some(r) = self.report_every_s {
            positive("report_every_s", r)?;
        }
        if !(1..=MAX_JUDGE_SEEDS).contains(&self.judge_seeds) {
            return Err(format!("judge_seeds must be 1 to {MAX_JUDGE_SEEDS}, not {}", self.judge_seeds));
        }
        if let Some(p) = self.population {
            if !(1..=8).contains(&p) {
                return Err(format!("population must be 1 to 8, not {p}"));
            }
            if let GeneratorSpec::Adversary { objective, .. } = &self.generator
                && p != objective.population()
            {
                return Err(format!("population: {} trains {} navigator(s), not {p}", objective.label(), objective.population()));
            }
        }
        self.generator.check().map_err(|e| format!("generator: {e}"))?;
        self.navigator.validate().map_err(|e| format!("navigator: {e}"))?;
        self.loop_cfg.validate().map_err(|e| format!("loop: {e}"))
    }

    /// Navigators the run trains.
    pub fn population_size(&self) -> usize {
        match &self.generator {
            GeneratorSpec::Adversary { objective, .. } => objective.population(),
            _ => self.population.unwrap_or(1),
        }
    }

    /// A fresh generator as the config names it (an adversary on `device`, seeded by the run).
    pub fn build_generator(&self, device: &Device) -> Result<Box<dyn Generator + Send>, String> {
        match &self.generator {
            GeneratorSpec::Adversary { .. } => Ok(Box::new(self.generator.build_adversary(device, self.seed)?)),
            other => other.build(),
        }
    }

    /// The run's name in tables and folders: generator and seed.
    pub fn label(&self) -> String {
        format!("{} seed {}", self.generator.label(), self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_is_read_from_json_and_bad_keys_and_values_are_named() {
        let cfg = RunConfig::from_json(r#"{"generator": {"kind": "dr"}, "seed": 3, "iterations": 20, "loop": {"episodes": 2}}"#).unwrap();
        assert_eq!((cfg.seed, cfg.iterations, cfg.population_size()), (3, Some(20), 1));
        let err = |json: &str| RunConfig::from_json(json).unwrap_err();
        assert!(err(r#"{"sed": 3}"#).contains("unknown field `sed`"), "{}", err(r#"{"sed": 3}"#));
        assert!(err(r#"{"minutes": -1}"#).contains("minutes"));
        assert!(err(r#"{"judge_seeds": 0}"#).contains("judge_seeds"));
        assert!(err(r#"{"iterations": 0}"#).contains("iterations"));
        assert!(err(r#"{"generator": {"kind": "adversary", "objective": "nope"}}"#).contains("unknown variant `nope`"));
        assert!(err(r#"{"generator": {"kind": "adversary", "objective": "paired"}, "population": 1}"#).contains("population"));
        assert!(err(r#"{"navigator": {"max_elements": 0}}"#).contains("navigator"));
        let code = RunConfig::from_json(r#"{"generator": {"kind": "adversary", "objective": "code"}}"#).unwrap();
        assert_eq!(code.population_size(), 2);
        assert_eq!(RunConfig::from_json(r#"{"generator": {"kind": "adversary", "objective": "alp"}}"#).unwrap().population_size(), 1);
    }
}
