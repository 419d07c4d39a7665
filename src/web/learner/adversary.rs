//! The learner worker's population loop: an adversary (PAIRED, Flexible PAIRED, Flexible
//! b-PAIRED, CoDE, ALP) designs the sites and a population of navigators plays them on the page's
//! task iframe — `curriculum::train::PopulationTrainer`, the loop `examples/train_adversary.rs`
//! runs natively, here against the live page (a pool of one: the episodes play one at a time). Progress carries what the curriculum view draws
//! (`www/curriculum.js`): each iteration's design sizes, budget, regret and returns per navigator,
//! the latest designs with their site seeds, and the primitives' histogram over training; the
//! success grid is judged on the site simulator in the worker, per navigator. Snapshots hold the
//! whole run (`PopulationTrainer::snapshot`) beside the histogram, so a reload resumes it.

use std::cell::RefCell;
use std::rc::Rc;

use burn::prelude::Device;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::super::util::yield_now;
use super::backend::choose_backend;
use super::driver::{TrainingRun, drive};
use super::navigator::{NavProbe, NavRun, config as navigator_config};
use super::protocol::{Flags, attach, message, post, status};
use crate::adversary::Adversary;
use crate::adversary::history::PrimitiveHistory;
use crate::curriculum::Generator;
use crate::curriculum::train::{LoopConfig, PopIteration, PopulationTrainer, population};
use crate::gminiwob::Design;
use crate::gminiwob::test_sites::{LEVELS, TEST_SITES};
use crate::learn::Agent;
use crate::learn::checkpoint::Precision;
use crate::navigator::Navigator;
use crate::navigator::train::judge_population;
use crate::request::{GeneratorSpec, SNAPSHOT_SCHEMA, TrainRequest, check_schema};

/// How many of the newest designs a progress message carries (the view's thumbnails).
const DESIGNS_SHOWN: usize = 4;

/// An adversarial run's `state` in its snapshot (the run itself is the snapshot's bytes).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedPopRun {
    schema: u32,
    /// The generator the run was started with, checked on resume against the request's.
    generator: GeneratorSpec,
    history: PrimitiveHistory,
    /// The navigator the last judging found best.
    best: usize,
}

/// One iteration as the curriculum view reads it.
#[derive(Serialize)]
struct PopNote {
    iteration: u64,
    env_steps: u64,
    pages: u32,
    primitives: u32,
    active: u32,
    passive: u32,
    fields: u32,
    /// Each navigator's mean discounted return on the design.
    returns: Vec<f64>,
    /// Over every navigator's episodes: the mean return and length (the navigator charts').
    mean_return: f64,
    mean_steps: f64,
    success_rate: f64,
    expected_budget: Option<f64>,
    regret: Option<f64>,
    objective: Option<f64>,
}

/// One note per design of the iteration.
fn notes(it: &PopIteration, env_steps: u64) -> Vec<PopNote> {
    (0..it.designs.len())
        .map(|d| {
            let (active, passive) = it.designs[d].counts();
            let r = it.reports.get(d);
            let eps = it.on_design(d);
            let returns = it.returns(d);
            let episodes = eps.iter().map(|e| e.len()).sum::<usize>().max(1) as f64;
            PopNote {
                iteration: it.iteration,
                env_steps,
                pages: it.designs[d].pages(),
                primitives: (active + passive) as u32,
                active: active as u32,
                passive: passive as u32,
                fields: it.fields[d],
                returns: returns.iter().map(|r| r.iter().sum::<f64>() / r.len().max(1) as f64).collect(),
                mean_return: returns.iter().flatten().sum::<f64>() / episodes,
                mean_steps: eps.iter().flat_map(|e| e.iter()).map(|e| e.steps as f64).sum::<f64>() / episodes,
                success_rate: eps.iter().flat_map(|e| e.iter()).filter(|e| e.success()).count() as f64 / episodes,
                expected_budget: r.map(|r| r.expected_budget),
                regret: r.map(|r| r.regret),
                objective: r.map(|r| r.objective),
            }
        })
        .collect()
}

/// A design the view shows: the site is the design and the seed of its first episode.
#[derive(Serialize)]
struct Shown {
    iteration: u64,
    name: String,
    seed: u32,
    design: Design,
}

/// An adversarial run: the adversary and its population of navigators.
struct AdversaryRun {
    req: TrainRequest,
    spec: GeneratorSpec,
    trainer: PopulationTrainer<Adversary>,
    run: NavRun,
    trained_on: Vec<String>,
    /// The primitives of every design so far (the view's early / middle / late histogram).
    history: PrimitiveHistory,
    /// The navigator the last judging found best: the one checkpoints and snapshots carry.
    best: usize,
    /// The last chunk's iterations and newest designs, for its progress message.
    notes: Vec<PopNote>,
    shown: Vec<Shown>,
}

pub(super) async fn run(req: TrainRequest, checkpoint: Option<Vec<u8>>, saved: Option<String>, flags: Rc<RefCell<Flags>>) -> Result<JsValue, String> {
    let spec = req.generator.clone().ok_or("bad training request: the population loop needs an adversary")?;
    let cfg = navigator_config(&req)?;
    let seed = req.seed as u64;
    // As a `Generator` the adversary samples on the CPU (its N dependent LSTM steps are far too
    // small for a GPU); the navigators go where the backend choice puts them.
    let adversary = spec.build_adversary(&Device::flex().autodiff(), seed).map_err(|e| format!("bad generator: {e}"))?;
    let trained_on = vec![spec.label()];
    let (device, backend, reason) = choose_backend(&req, &NavProbe(cfg.clone())).await;
    post(message("backend", serde_json::json!({ "name": backend, "reason": reason })));
    let resumed = saved.is_some();
    let (trainer, history, best) = match (saved, checkpoint) {
        (Some(json), Some(bytes)) => {
            let saved: SavedPopRun = serde_json::from_str(&json).map_err(|e| format!("the saved run is damaged: {e}"))?;
            check_schema(saved.schema)?;
            if saved.generator != spec {
                return Err(format!(
                    "the saved run is of another generator ({}) than this request names ({})",
                    saved.generator.label(),
                    spec.label()
                ));
            }
            saved.history.check()?;
            let t = PopulationTrainer::resume(&bytes, adversary, &device)?;
            let best = saved.best.min(t.population.len() - 1);
            (t, saved.history, best)
        }
        (Some(_), None) => return Err("the saved run is damaged: it has no snapshot of the population".into()),
        (None, Some(_)) => {
            return Err("an adversarial run starts from fresh navigators (continuing one navigator is for DR, CL and single sites)".into());
        }
        (None, None) => {
            let pop = population(&cfg, spec_population(&spec), &device, seed)?;
            (PopulationTrainer::new(pop, adversary, LoopConfig::default(), seed)?, PrimitiveHistory::default(), 0)
        }
    };
    post(message(
        "adversary",
        serde_json::json!({
            "generator": trainer.generator.name(),
            "population": trainer.population.len(),
            "episodes": trainer.cfg.episodes,
            "objective": trainer.generator.objective,
            "config": trainer.generator.cfg,
        }),
    ));
    let run = NavRun::new(&req, backend, &trained_on[0], trainer.counters());
    let run = AdversaryRun { req: req.clone(), spec, trainer, run, trained_on, history, best, notes: Vec::new(), shown: Vec::new() };
    drive(run, &req, flags, resumed).await
}

impl TrainingRun for AdversaryRun {
    type Agent = Navigator;
    fn agent(&self) -> &Navigator {
        &self.trainer.population[self.best]
    }
    fn trained_on(&self) -> &[String] {
        &self.trained_on
    }
    fn env_steps(&self) -> u64 {
        self.trainer.counters().env_steps
    }

    async fn chunk(&mut self, flags: &RefCell<Flags>, single: bool) -> Result<bool, String> {
        let (notes, shown, history) = (&mut self.notes, &mut self.shown, &mut self.history);
        shown.clear();
        let name = self.trainer.generator.name().replace(' ', "-");
        self.run
            .chunk(&mut self.trainer, flags, self.req.progress_ms, single, |t, it| {
                notes.extend(self::notes(&it, t.counters().env_steps));
                for (d, design) in it.designs.iter().enumerate() {
                    history.add(it.iteration, design);
                    let seed = it.on_design(d)[0].first().map(|e| e.seed).unwrap_or(0);
                    shown.push(Shown { iteration: it.iteration, name: format!("{name}-design-{}", it.iteration), seed, design: design.clone() });
                    if shown.len() > DESIGNS_SHOWN {
                        shown.remove(0);
                    }
                }
            })
            .await?;
        Ok(true)
    }

    fn progress(&mut self, paused: bool) -> JsValue {
        let notes = std::mem::take(&mut self.notes);
        let extra = serde_json::json!({
            "adversarial": true,
            "adversary_updates": self.trainer.generator.updates,
            "vocabulary": self.trainer.population.iter().map(|n| n.vocab.len()).collect::<Vec<_>>(),
            "designs": self.shown,
            "histogram": self.history.thirds(),
        });
        self.run.progress(&self.trainer, paused, &notes, extra)
    }

    /// Every navigator, greedily, as examples/train_adversary.rs does; the view shows the best
    /// one's grid beside every navigator's mean.
    async fn judge(&mut self) -> Result<(), String> {
        status("judging the population on the test sites…");
        let c = self.trainer.counters();
        let judged = judge_population(&mut self.trainer.population, self.req.judge_seeds, yield_now).await?;
        self.best = judged.best;
        post(message(
            "grid",
            serde_json::json!({
                "sites": TEST_SITES, "levels": LEVELS, "success": judged.best_grid(), "mean": judged.means[judged.best],
                "env_steps": c.env_steps, "updates": c.updates, "seeds": self.req.judge_seeds, "navigator": judged.best,
                "means": judged.means, "iteration": self.trainer.iteration,
            }),
        ));
        Ok(())
    }

    /// The whole run (`PopulationTrainer::snapshot`) as `bytes`, the best navigator's checkpoint
    /// as `navigator`, and the histogram and choice of best in `state`.
    async fn snapshot(&mut self) -> Result<(), String> {
        let state = SavedPopRun { schema: SNAPSHOT_SCHEMA, generator: self.spec.clone(), history: self.history.clone(), best: self.best };
        let state = serde_json::to_string(&state).map_err(|e| e.to_string())?;
        let bytes = self.trainer.snapshot().await?;
        let nav = self.trainer.population[self.best].checkpoint(&self.trained_on, Precision::Full).await?;
        let c = self.trainer.counters();
        let msg = message(
            "snapshot",
            serde_json::json!({
                "updates": c.updates, "env_steps": c.env_steps, "agent": "navigator", "state": state, "schema": SNAPSHOT_SCHEMA,
                "adversarial": true, "navigator_index": self.best,
            }),
        );
        attach(&msg, "bytes", &bytes)?;
        attach(&msg, "navigator", &nav)?;
        post(msg);
        Ok(())
    }

    async fn finish(self) -> Result<JsValue, String> {
        Ok(self.run.done(&self.trainer, serde_json::json!({ "adversarial": true })))
    }
}

fn spec_population(spec: &GeneratorSpec) -> usize {
    match spec {
        GeneratorSpec::Adversary { objective, .. } => objective.population(),
        _ => 1,
    }
}
