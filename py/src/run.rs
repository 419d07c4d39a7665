//! The population loop for Python: a whole run ([`train`], `weblab::study::train` — the loop the
//! command line runs), and an iteration split for navigators on other processes ([`Driver`] holds
//! the generator and proposes; each [`Learner`] holds one navigator and plays its part), which
//! gives the serial loop's iteration exactly. Judging a saved navigator on the test sites.

use std::sync::Mutex;

use burn::prelude::Device;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use weblab::curriculum::Generator;
use weblab::curriculum::train::{Learned, PopulationTrainer, play_and_learn, population, population_member};
use weblab::gminiwob::Design;
use weblab::gminiwob::SiteSim;
use weblab::navigator::Navigator;
use weblab::navigator::train::{judge_test_sites, sim_pool, site_task};
use weblab::study::run::{DIGEST_START, digest};
use weblab::study::{RunConfig, Summary};
use weblab::task::TaskSpec;
use weblab::util::block_on;

use crate::{bad_value, guarded, native};

fn config(json: &str) -> PyResult<RunConfig> {
    RunConfig::from_json(json).map_err(bad_value)
}

/// The config after defaults, as JSON (raises `ValueError` naming a bad key or value).
#[pyfunction]
pub fn check_config(config_json: &str) -> PyResult<String> {
    guarded(|| serde_json::to_string(&config(config_json)?).map_err(bad_value))
}

/// Runs (or resumes, when `run_dir` holds one) a training run; returns its summary as JSON. Each
/// log line goes to `log(line)` when given. The GIL is released while it trains.
#[pyfunction]
#[pyo3(signature = (config_json, run_dir=None, log=None))]
pub fn train(py: Python<'_>, config_json: &str, run_dir: Option<String>, log: Option<Py<PyAny>>) -> PyResult<String> {
    let cfg = guarded(|| config(config_json))?;
    let summary: Summary = native(py, move || {
        let mut sink = |line: &str| {
            if let Some(f) = &log {
                // A failing callback must not stop the run: the line is dropped.
                let _ = Python::attach(|py| f.call1(py, (line,)));
            }
        };
        weblab::study::train(&cfg, run_dir.as_deref(), &mut sink)
    })?;
    serde_json::to_string(&summary).map_err(bad_value)
}

/// A saved navigator (`.wln` bytes) judged greedily on the test sites: a grid (sites × levels).
#[pyfunction]
#[pyo3(signature = (checkpoint, seeds=50))]
pub fn judge(py: Python<'_>, checkpoint: Vec<u8>, seeds: u32) -> PyResult<Vec<Vec<f64>>> {
    if !(1..=weblab::study::config::MAX_JUDGE_SEEDS).contains(&seeds) {
        return Err(bad_value(format!("seeds must be 1 to {}, not {seeds}", weblab::study::config::MAX_JUDGE_SEEDS)));
    }
    let (mut nav, _) = guarded(|| Navigator::load(&checkpoint, &Device::flex().autodiff(), 0).map_err(bad_value))?;
    native(py, move || block_on(judge_test_sites(&mut nav, seeds, || std::future::ready(()))))
}

/// A study's runs side by side as a PNG: `runs` is JSON `[[name, run folder], ...]`; each
/// folder's `progress.json` gives its curve (a folder without one is left out).
#[pyfunction]
pub fn study_plot<'py>(py: Python<'py>, title: &str, runs: &str) -> PyResult<Bound<'py, PyBytes>> {
    let runs: Vec<(String, String)> = serde_json::from_str(runs).map_err(|e| bad_value(format!("runs: {e}")))?;
    let mut loaded = Vec::new();
    for (name, dir) in runs {
        if let Ok(text) = std::fs::read(std::path::Path::new(&dir).join("progress.json")) {
            let p: weblab::study::run_dir::Progress = serde_json::from_slice(&text).map_err(|e| bad_value(format!("{dir}/progress.json: {e}")))?;
            loaded.push((name, p));
        }
    }
    let png = guarded(|| Ok(weblab::study::run_dir::study_plot(&loaded, title)))?;
    Ok(PyBytes::new(py, &png))
}

/// The generator's side of the population loop: proposes each iteration's designs and learns
/// from the navigators' results. Its own copies of the navigators are not trained.
#[pyclass(module = "weblab._native")]
pub struct Driver {
    // A Mutex only so the object is Sync, as pyo3 asks; reached through `get_mut`.
    trainer: Mutex<PopulationTrainer<Box<dyn Generator + Send>>>,
    pending: Option<Vec<weblab::gminiwob::Design>>,
    trajectory: u64,
}

#[pymethods]
impl Driver {
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        guarded(|| {
            let cfg = config(config_json)?;
            let dev = Device::flex().autodiff();
            let make = || -> Result<_, String> {
                let pop = population(&cfg.navigator, cfg.population_size(), &dev, cfg.seed)?;
                PopulationTrainer::new(pop, cfg.build_generator(&dev)?, cfg.loop_cfg.clone(), cfg.seed)
            };
            Ok(Driver { trainer: Mutex::new(make().map_err(bad_value)?), pending: None, trajectory: DIGEST_START })
        })
    }

    /// The next iteration's tasks and episode seeds, as JSON `{"tasks": [...], "seeds": [...]}`.
    fn propose(&mut self) -> PyResult<String> {
        guarded(|| {
            if self.pending.is_some() {
                return Err(bad_value("the last proposal has not been finished"));
            }
            let (designs, tasks, seeds) = self.trainer().propose_remote().map_err(bad_value)?;
            // Designs and names, not the tasks: a design's JSON is all integers, so it crosses
            // exactly; the learner makes the same tasks from them.
            let names: Vec<&str> = tasks.iter().map(|t| t.name()).collect();
            let json = serde_json::to_string(&serde_json::json!({ "names": names, "designs": designs, "seeds": seeds })).map_err(bad_value);
            self.pending = Some(designs);
            json
        })
    }

    /// Ends the iteration with each navigator's result (JSON, population order); returns the
    /// iteration's returns (per navigator, per episode) and the trajectory digest so far.
    fn finish(&mut self, learned: Vec<String>) -> PyResult<(Vec<Vec<f64>>, String)> {
        guarded(|| {
            let designs = self.pending.take().ok_or_else(|| bad_value("finish before propose"))?;
            let learned: Vec<Learned> =
                learned.iter().map(|j| exact::from_str(j)).collect::<Result<_, _>>().map_err(|e| bad_value(format!("a navigator's result: {e}")))?;
            let it = self.trainer().finish_remote(designs, learned).map_err(bad_value)?;
            self.trajectory = digest(self.trajectory, &it);
            Ok((it.episodes.iter().map(|e| e.iter().map(|e| e.discounted).collect()).collect(), format!("{:016x}", self.trajectory)))
        })
    }

    #[getter]
    fn iteration(&mut self) -> u64 {
        self.trainer().iteration
    }

    #[getter]
    fn population(&mut self) -> usize {
        self.trainer().population.len()
    }
}

impl Driver {
    fn trainer(&mut self) -> &mut PopulationTrainer<Box<dyn Generator + Send>> {
        self.trainer.get_mut().unwrap_or_else(|p| p.into_inner())
    }
}

/// One navigator of the population (navigator `index` of the run's seed), playing its part of
/// each iteration on its own simulators.
#[pyclass(module = "weblab._native")]
pub struct Learner {
    nav: Navigator,
    envs: Vec<SiteSim>,
    label: String,
}

#[pymethods]
impl Learner {
    #[new]
    fn new(config_json: &str, index: usize) -> PyResult<Self> {
        guarded(|| {
            let cfg = config(config_json)?;
            if index >= cfg.population_size() {
                return Err(bad_value(format!("index {index}: the population has {} navigators", cfg.population_size())));
            }
            let nav = population_member(&cfg.navigator, &Device::flex().autodiff(), cfg.seed, index).map_err(bad_value)?;
            Ok(Learner { nav, envs: sim_pool(cfg.loop_cfg.designs * cfg.loop_cfg.episodes), label: cfg.label() })
        })
    }

    /// Plays a proposal (`Driver.propose`'s JSON) and learns from it; the result as JSON.
    fn play(&mut self, py: Python<'_>, proposal: &str) -> PyResult<String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Proposal {
            names: Vec<String>,
            designs: Vec<Design>,
            seeds: Vec<u32>,
        }
        let p: Proposal = serde_json::from_str(proposal).map_err(|e| bad_value(format!("proposal: {e}")))?;
        if p.designs.is_empty() || p.names.len() != p.designs.len() || !p.seeds.len().is_multiple_of(p.designs.len()) {
            return Err(bad_value(format!("proposal: {} names, {} designs, {} seeds", p.names.len(), p.designs.len(), p.seeds.len())));
        }
        let tasks: Vec<TaskSpec> = p.names.iter().zip(p.designs).map(|(n, d)| site_task(n, d)).collect();
        let (nav, envs) = (&mut self.nav, &mut self.envs);
        let learned = native(py, move || block_on(play_and_learn(envs, nav, &tasks, &p.seeds)))?;
        exact::to_string(&learned).map_err(bad_value)
    }

    /// The navigator as a `.wln` checkpoint.
    fn save<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = guarded(|| block_on(self.nav.save(&self.label, weblab::learn::checkpoint::Precision::Full)).map_err(bad_value))?;
        Ok(PyBytes::new(py, &bytes))
    }
}

/// JSON whose floating-point numbers cross exactly: serde_json writes the shortest decimal that
/// reads back to the same f64, but its default reader may land one unit in the last place away,
/// and the driver must hear each return to the bit (the serial loop's result). Each float is
/// sent as `{"$f64": "<bits in hex>"}` instead.
mod exact {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Map, Number, Value};

    const KEY: &str = "$f64";

    fn wrap(v: Value) -> Value {
        match v {
            Value::Number(n) if n.is_f64() => {
                let bits = n.as_f64().unwrap_or(0.0).to_bits();
                Value::Object(Map::from_iter([(KEY.to_string(), Value::String(format!("{bits:016x}")))]))
            }
            Value::Array(a) => Value::Array(a.into_iter().map(wrap).collect()),
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, wrap(v))).collect()),
            other => other,
        }
    }

    fn unwrap(v: Value) -> Result<Value, String> {
        Ok(match v {
            Value::Object(o) if o.len() == 1 && o.contains_key(KEY) => {
                let hex = o[KEY].as_str().ok_or("a float's bits must be a string")?;
                let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("not a float's bits: {hex}"))?;
                Value::Number(Number::from_f64(f64::from_bits(bits)).ok_or("a float that is not finite")?)
            }
            Value::Array(a) => Value::Array(a.into_iter().map(unwrap).collect::<Result<_, _>>()?),
            Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| Ok((k, unwrap(v)?))).collect::<Result<_, String>>()?),
            other => other,
        })
    }

    pub fn to_string<T: Serialize>(value: &T) -> Result<String, String> {
        serde_json::to_value(value).map(|v| wrap(v).to_string()).map_err(|e| e.to_string())
    }

    pub fn from_str<T: DeserializeOwned>(json: &str) -> Result<T, String> {
        let v: Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        serde_json::from_value(unwrap(v)?).map_err(|e| e.to_string())
    }
}
