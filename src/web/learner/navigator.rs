//! The learner worker's runs of the gMiniWoB navigator alone (DR, CL, a site): the population
//! loop (`curriculum::train`) with a population of one, its episodes on the page's task iframe
//! (the site renders there as it trains; a pool of one page, so they play one at a time), one
//! update per iteration; the success grid on the test sites is judged on the site simulator in
//! the worker (equal to the live DOM, see `tests/web_gminiwob_sim.rs`). Pause, single
//! iteration, stop, checkpoints and snapshots go through the same helpers as DOM-Q-Net's loop
//! (`super::learner`), over the shared `Agent` interface. Its chunks of iterations and its
//! progress messages ([`NavRun`]) serve the adversaries' runs too.

use std::cell::RefCell;
use std::rc::Rc;

use burn::prelude::Device;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::super::remote::to_js;
use super::super::util::{now_ms, yield_now};
use super::backend::{Probe, choose_backend};
use super::driver::{TrainingRun, drive};
use super::protocol::{Flags, Watched, message, post, post_run_snapshot, restore_optimizer};
use crate::curriculum::Generator;
use crate::curriculum::train::{LoopConfig, PopIteration, PopState, PopulationTrainer};
use crate::gminiwob::test_sites::{LEVELS, TEST_SITES};
use crate::learn::Counters;
use crate::learn::failures::EnvFailures;
use crate::navigator::agent::probe_update;
use crate::navigator::train::{grid_mean, judge_test_sites};
use crate::navigator::{Navigator, NavigatorConfig};
use crate::request::{GeneratorSpec, SNAPSHOT_SCHEMA, TrainRequest, check_schema};

pub(super) struct NavProbe(pub(super) NavigatorConfig);
impl Probe for NavProbe {
    async fn update(&self, device: &Device) -> Result<(), String> {
        probe_update(&self.0, device).await
    }
}

/// The request's config (a partial `NavigatorConfig`) over the defaults.
pub(super) fn config(req: &TrainRequest) -> Result<NavigatorConfig, String> {
    let mut base = serde_json::to_value(NavigatorConfig::default()).map_err(|e| e.to_string())?;
    if let serde_json::Value::Object(over) = &req.config {
        for (k, v) in over {
            base[k] = v.clone();
        }
    } else if !req.config.is_null() {
        return Err("bad training request: the navigator's config must be an object".into());
    }
    let cfg: NavigatorConfig = serde_json::from_value(base).map_err(|e| format!("bad navigator config: {e}"))?;
    cfg.validate().map_err(|e| format!("bad navigator config: {e}"))?;
    Ok(cfg)
}

/// A navigator run's `state` in its snapshot: the loop's counters (a population of one) and the
/// format's version.
#[derive(Serialize, Deserialize)]
struct SavedNavRun {
    #[serde(default)]
    schema: u32,
    iteration: u64,
    #[serde(default)]
    designs: Option<u64>,
    next_seed: u32,
    design_rng: u64,
    sampling_rng: u64,
}

impl SavedNavRun {
    fn of(t: &PopulationTrainer<Box<dyn Generator>>) -> Self {
        let s = t.state();
        SavedNavRun {
            schema: SNAPSHOT_SCHEMA,
            iteration: s.iteration,
            designs: s.designs,
            next_seed: s.next_seed,
            design_rng: s.design_rng,
            sampling_rng: s.sampling_rngs[0],
        }
    }

    fn state(&self) -> PopState {
        PopState {
            iteration: self.iteration,
            designs: self.designs,
            next_seed: self.next_seed,
            design_rng: self.design_rng,
            sampling_rngs: vec![self.sampling_rng],
            since_success: Vec::new(),
        }
    }
}

/// One design's iteration as the charts read it.
#[derive(Serialize)]
struct IterationNote {
    iteration: u64,
    env_steps: u64,
    pages: u32,
    primitives: u32,
    fields: u32,
    mean_return: f64,
    success_rate: f64,
    mean_steps: f64,
    loss: f32,
    entropy: f32,
}

fn notes(it: &PopIteration, env_steps: u64) -> Vec<IterationNote> {
    (0..it.designs.len())
        .map(|d| {
            let eps = it.on_design(d)[0];
            let n = eps.len().max(1) as f64;
            IterationNote {
                iteration: it.iteration,
                env_steps,
                pages: it.designs[d].pages(),
                primitives: it.designs[d].placed().len() as u32,
                fields: it.fields[d],
                mean_return: eps.iter().map(|e| e.ret).sum::<f64>() / n,
                success_rate: eps.iter().filter(|e| e.success()).count() as f64 / n,
                mean_steps: eps.iter().map(|e| e.steps as f64).sum::<f64>() / n,
                loss: it.updates[0].loss,
                entropy: it.updates[0].entropy,
            }
        })
        .collect()
}

/// A navigator run's bookkeeping between progress messages: its training page, the page's
/// failures, the training time (pauses left out) and the counters it started from, for the rates.
pub(super) struct NavRun {
    env: Watched,
    failures: EnvFailures,
    backend: &'static str,
    /// What it trains on (the generator's label), as the messages name it.
    generator: String,
    frames: u64,
    start: Counters,
    t_start: f64,
    active_ms: f64,
}

impl NavRun {
    pub(super) fn new(req: &TrainRequest, backend: &'static str, generator: &str, start: Counters) -> Self {
        NavRun {
            env: Watched::new(0),
            failures: EnvFailures::new(1),
            backend,
            generator: generator.to_string(),
            frames: req.frames,
            start,
            t_start: now_ms(),
            active_ms: 0.0,
        }
    }

    /// Iterations until `single`'s one is done, a pause, checkpoint, step or stop is asked for,
    /// `progress_ms` is up or the budget is spent; each finished iteration goes to `done`. A page
    /// that fails ends its episode and with it the iteration (its episodes are not learned from)
    /// and the run goes on with the next design, until `EnvFailures` says stop.
    pub(super) async fn chunk<G: Generator>(
        &mut self,
        trainer: &mut PopulationTrainer<G>,
        flags: &RefCell<Flags>,
        progress_ms: f64,
        single: bool,
        mut done: impl FnMut(&PopulationTrainer<G>, PopIteration),
    ) -> Result<(), String> {
        let chunk_start = now_ms();
        loop {
            let ended = self.env.ended;
            let stepped = trainer.step(std::slice::from_mut(&mut self.env)).await;
            // Episodes the site ended break the row of failures (see `EnvFailures`).
            if self.env.ended > ended {
                self.failures.ended(0);
            }
            match (stepped, self.env.failure.take()) {
                (Ok(it), _) => done(trainer, it),
                (Err(_), Some(failure)) => self
                    .failures
                    .failed(0, &self.generator, &failure)
                    .map_err(|why| format!("{why}. Training stopped at iteration {}; the run's last snapshot is kept", trainer.iteration))?,
                (Err(e), None) => return Err(e),
            }
            let f = flags.borrow();
            if single || f.stop || f.interrupts(chunk_start, progress_ms) || trainer.counters().env_steps >= self.frames {
                break;
            }
        }
        self.active_ms += now_ms() - chunk_start;
        Ok(())
    }

    /// The progress message: counters, rates over the training time (none before the first
    /// chunk: a resumed run's first message shows its restored counters at once), the chunk's
    /// `iterations` and the page's failures; `extra` adds the loop's own fields.
    pub(super) fn progress(
        &mut self,
        trainer: &PopulationTrainer<impl Generator>,
        paused: bool,
        iterations: &impl Serialize,
        extra: serde_json::Value,
    ) -> JsValue {
        let c = trainer.counters();
        let active_s = self.active_s();
        let rate = |n: u64| (self.active_ms > 0.0).then(|| n as f64 / active_s.max(1e-9));
        let mut msg = serde_json::json!({
            "kind": "progress",
            "agent": "navigator",
            "backend": self.backend,
            "generator": self.generator,
            "env_steps": c.env_steps,
            "frames": self.frames,
            "updates": c.updates,
            "episodes": c.episodes,
            "iterations": trainer.iteration,
            "steps_per_s": rate(c.env_steps - self.start.env_steps),
            "updates_per_s": rate(c.updates - self.start.updates),
            "active_s": active_s,
            "elapsed_s": self.elapsed_s(),
            "new_iterations": iterations,
            "env_failures": self.failures.take_notes(),
            "env_failures_total": self.failures.total,
            "paused": paused,
        });
        extend(&mut msg, extra);
        to_js(&msg)
    }

    /// What the run resolves with when it ends.
    pub(super) fn done(&self, trainer: &PopulationTrainer<impl Generator>, extra: serde_json::Value) -> JsValue {
        let c = trainer.counters();
        let mut msg = serde_json::json!({
            "kind": "done",
            "agent": "navigator",
            "backend": self.backend,
            "env_steps": c.env_steps,
            "updates": c.updates,
            "episodes": c.episodes,
            "iterations": trainer.iteration,
            "elapsed_s": self.elapsed_s(),
            "active_s": self.active_s(),
        });
        extend(&mut msg, extra);
        to_js(&msg)
    }

    fn active_s(&self) -> f64 {
        self.active_ms / 1000.0
    }

    fn elapsed_s(&self) -> f64 {
        (now_ms() - self.t_start) / 1000.0
    }
}

fn extend(msg: &mut serde_json::Value, extra: serde_json::Value) {
    if let (Some(m), serde_json::Value::Object(x)) = (msg.as_object_mut(), extra) {
        m.extend(x);
    }
}

fn post_grid(rows: &[Vec<f64>], c: Counters, seeds: u32) {
    post(message(
        "grid",
        serde_json::json!({
            "sites": TEST_SITES, "levels": LEVELS, "success": rows, "mean": grid_mean(rows), "env_steps": c.env_steps, "updates": c.updates,
            "seeds": seeds,
        }),
    ));
}

/// A navigator alone on a generator: a population of one.
struct NavigatorRun {
    req: TrainRequest,
    trainer: PopulationTrainer<Box<dyn Generator>>,
    run: NavRun,
    trained_on: Vec<String>,
    /// The last chunk's iterations, for its progress message.
    notes: Vec<IterationNote>,
}

pub(super) async fn run(
    req: TrainRequest,
    checkpoint: Option<Vec<u8>>,
    saved: Option<String>,
    optimizer: Option<Vec<u8>>,
    flags: Rc<RefCell<Flags>>,
) -> Result<JsValue, String> {
    let spec: GeneratorSpec = req.generator.clone().ok_or("bad training request: the navigator needs a generator (dr, cl or a site)")?;
    let generator: Box<dyn Generator> = spec.build().map_err(|e| format!("bad generator: {e}"))?;
    let trained_on = vec![spec.label()];
    let cfg = config(&req)?;
    let (device, backend, reason) = choose_backend(&req, &NavProbe(cfg.clone())).await;
    post(message("backend", serde_json::json!({ "name": backend, "reason": reason })));
    let navigator = match checkpoint {
        Some(bytes) => Navigator::load(&bytes, &device, req.seed as u64).map_err(|e| e.to_string())?.0,
        None => Navigator::new(cfg, &device, req.seed as u64)?,
    };
    let resumed = saved.is_some();
    // Alone, M is the navigator's episodes_per_update, one design an iteration.
    let loop_cfg = LoopConfig { episodes: navigator.cfg.episodes_per_update, designs: 1, ..LoopConfig::default() };
    let trainer = match saved {
        Some(json) => {
            let saved: SavedNavRun = serde_json::from_str(&json).map_err(|e| format!("the saved run is damaged: {e}"))?;
            check_schema(saved.schema)?;
            let mut t = PopulationTrainer::from_state(vec![navigator], generator, loop_cfg, &saved.state())?;
            restore_optimizer(&mut t.population[0], optimizer);
            t
        }
        None => PopulationTrainer::new(vec![navigator], generator, loop_cfg, req.seed as u64)?,
    };
    let run = NavRun::new(&req, backend, &trained_on[0], trainer.counters());
    drive(NavigatorRun { req: req.clone(), trainer, run, trained_on, notes: Vec::new() }, &req, flags, resumed).await
}

impl TrainingRun for NavigatorRun {
    type Agent = Navigator;
    fn agent(&self) -> &Navigator {
        &self.trainer.population[0]
    }
    fn trained_on(&self) -> &[String] {
        &self.trained_on
    }
    fn env_steps(&self) -> u64 {
        self.trainer.counters().env_steps
    }

    async fn chunk(&mut self, flags: &RefCell<Flags>, single: bool) -> Result<bool, String> {
        let notes = &mut self.notes;
        self.run
            .chunk(&mut self.trainer, flags, self.req.progress_ms, single, |t, it| notes.extend(self::notes(&it, t.population[0].counters.env_steps)))
            .await?;
        Ok(true)
    }

    fn progress(&mut self, paused: bool) -> JsValue {
        let notes = std::mem::take(&mut self.notes);
        let extra = serde_json::json!({ "vocabulary": self.trainer.population[0].vocab.len() });
        self.run.progress(&self.trainer, paused, &notes, extra)
    }

    async fn judge(&mut self) -> Result<(), String> {
        super::protocol::status("judging on the test sites…");
        let rows = judge_test_sites(&mut self.trainer.population[0], self.req.judge_seeds, yield_now).await?;
        post_grid(&rows, self.trainer.counters(), self.req.judge_seeds);
        Ok(())
    }

    async fn snapshot(&mut self) -> Result<(), String> {
        let state = serde_json::to_string(&SavedNavRun::of(&self.trainer)).map_err(|e| e.to_string())?;
        post_run_snapshot(&self.trainer.population[0], &self.trained_on, state).await
    }

    async fn finish(self) -> Result<JsValue, String> {
        Ok(self.run.done(&self.trainer, serde_json::json!({})))
    }
}
