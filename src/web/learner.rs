//! The learner, running in a Web Worker: DOM-Q-Net training (Algorithm 1) against the main
//! thread's task pages through [`RemoteEnv`]s, so the page stays responsive while it learns.
//!
//! It picks its backend at start: WebGPU where the browser offers an adapter and a short timing
//! probe shows it faster than the CPU, the CPU (flex) otherwise, and says why. A WebGPU start or
//! probe that hangs falls back to the CPU after a timeout. If WebGPU fails mid-run (e.g. the
//! device is lost) it carries on with the CPU from its last checkpoint.
//!
//! Control from the page: pause/resume, a single step while paused (one environment step and its
//! update), stop, and checkpoint requests (served while paused too).
//!
//! The page's build (without the `learner` feature) keeps only what the page calls here
//! (`checkSnapshotSchema`, `checkTrainRequest`, `trainingPageConfig`); the training loop is compiled there but never
//! exported, so the linker drops it.
#![cfg_attr(not(feature = "learner"), allow(dead_code, unused_imports))]

use std::cell::RefCell;
use std::rc::Rc;

use burn::prelude::Device;
use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::remote::{RemoteEnv, to_js};
use super::util::{now_ms, sleep};
use crate::dom_q_net::agent::{NOT_FINITE, probe_update};
use crate::dom_q_net::checkpoint::{Checkpoint, Precision};
use crate::dom_q_net::train::{Control, TaskProgress, TrainEvent, Trainer, evaluate};
use crate::dom_q_net::{DomQNetAgent, DqnConfig};
use crate::env::{EnvError, Environment, Observation, Step, TaskSpec};
use crate::learn::Agent;
use crate::learn::failures::EnvFailures;
use crate::util::before;

pub use crate::learn::request::{DOM_Q_NET, NAVIGATOR, SNAPSHOT_SCHEMA, SavedRun, TrainRequest, check_schema};

#[wasm_bindgen]
extern "C" {
    /// Defined by the worker script: sends a message to the main thread.
    #[wasm_bindgen(js_namespace = globalThis, js_name = weblabPost)]
    pub(super) fn post(message: JsValue);
}

/// The page's check of a stored record's version before it resumes it (`schema` as stored:
/// anything; not a whole number reads as no version).
#[wasm_bindgen(js_name = checkSnapshotSchema)]
pub fn check_snapshot_schema(schema: JsValue) -> Result<(), JsValue> {
    let v = schema.as_f64().filter(|v| v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(v)).unwrap_or(0.0);
    check_schema(v as u32).map_err(|e| JsValue::from_str(&e))
}

/// A task page's environment that keeps its last failure, so the learner knows which task's
/// page failed and how (the training loops report only the error), and counts the episodes
/// the page ended.
pub(super) struct Watched {
    pub(super) env: RemoteEnv,
    pub(super) failure: Option<EnvError>,
    pub(super) ended: u64,
}

impl Watched {
    pub(super) fn new(task: usize) -> Self {
        Watched { env: RemoteEnv { task }, failure: None, ended: 0 }
    }
}

impl Environment for Watched {
    async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
        let r = self.env.reset(task, seed).await;
        if let Err(e) = &r {
            self.failure = Some(e.clone());
        }
        r
    }
    async fn step(&mut self, action: &crate::env::Action) -> Result<Step, EnvError> {
        let r = self.env.step(action).await;
        match &r {
            Err(EnvError::BadTarget { .. }) => {} // a no-op for the loops, not a failure
            Err(e) => self.failure = Some(e.clone()),
            Ok(step) if step.done => self.ended += 1,
            Ok(_) => {}
        }
        r
    }
}

/// A request object from JS, read and checked (`TrainRequest::from_json`). Through JSON: JS
/// numbers arrive as serde_json numbers that fit the config's integer and float fields alike.
fn read_request(request: &JsValue, folders: &[String]) -> Result<TrainRequest, String> {
    let json: String = js_sys::JSON::stringify(request).map_err(|_| "bad training request: not JSON-serialisable".to_string())?.into();
    TrainRequest::from_json(&json, folders)
}

/// The page's check of a stored run's request before it resumes it (the same as the worker's,
/// with the folders a person typed into this tab): throws what is wrong.
#[wasm_bindgen(js_name = checkTrainRequest)]
pub fn check_train_request(request: JsValue) -> Result<(), JsValue> {
    read_request(&request, &super::app::typed_folders()).map(|_| ()).map_err(|e| JsValue::from_str(&e))
}

/// The settings a training request's task pages run under (what `Lab.setConfig` takes): a
/// DOM-Q-Net run's step cap is its config's (the paper's preset for its tasks where the request
/// is silent); a navigator's generated sites end at their own step limit. The page's clock is
/// held between actions in both. Throws what is wrong with the request.
#[wasm_bindgen(js_name = trainingPageConfig)]
pub fn training_page_config(request: JsValue) -> Result<JsValue, JsValue> {
    let req = read_request(&request, &super::app::typed_folders()).map_err(|e| JsValue::from_str(&e))?;
    let fields = if req.agent == NAVIGATOR {
        serde_json::json!({ "hold_clock": true })
    } else {
        let cfg = req.dqn_config().map_err(|e| JsValue::from_str(&e))?;
        serde_json::json!({ "max_steps": cfg.max_episode_steps, "hold_clock": true })
    };
    Ok(to_js(&fields))
}

#[derive(Default)]
pub(super) struct Flags {
    pub(super) stop: bool,
    pub(super) pause: bool,
    pub(super) checkpoint: bool,
    /// One environment step (and its update) is asked for, then stay paused.
    pub(super) step: bool,
}

/// Timings and recent values between two progress reports.
#[derive(Default)]
struct Meter {
    acts: u32,
    act_ms: f64,
    env_ms: f64,
    updates: u32,
    update_ms: f64,
    loss: f64,
    batch_positives: f64,
    episodes: Vec<EpisodeNote>,
    warnings: Vec<String>,
}

#[derive(Clone, Serialize)]
struct EpisodeNote {
    task: usize,
    /// The page's reward (time-decayed) and the raw learning signal (+1 success, −1 failure).
    reward: f64,
    raw_reward: f64,
    steps: u32,
}

/// What the page's live charts read, several times a second.
#[derive(Serialize)]
struct Progress<'a> {
    kind: &'static str,
    backend: &'a str,
    env_steps: u64,
    /// The step budget of the run.
    frames: u64,
    updates: u64,
    episodes: u64,
    /// Per task: success rate over the last 100 episodes (`stats.success_rate_100`), frames, and
    /// when it was first solved.
    tasks: &'a [TaskProgress],
    replay_len: usize,
    replay_capacity: usize,
    /// Fraction of the buffer's transitions with a positive n-step return.
    positive_fraction: f64,
    /// Mean TD loss (Huber) of the updates since the last report.
    loss: Option<f64>,
    /// Mean positive transitions per sampled batch since the last report.
    batch_positives: Option<f64>,
    /// Mean ms per action choice (one forward pass), per environment step (the page's side), and
    /// per update, since the last report.
    act_ms: Option<f64>,
    env_ms: Option<f64>,
    update_ms: Option<f64>,
    /// Rates over the run's training time (pauses excluded; `None` in a resumed run's first
    /// report, which shows its restored counters before it takes a step) ...
    steps_per_s: Option<f64>,
    updates_per_s: Option<f64>,
    /// ... and since the last report.
    recent_steps_per_s: Option<f64>,
    recent_updates_per_s: Option<f64>,
    /// Training time (pauses excluded) and wall time since the start, in seconds.
    active_s: f64,
    elapsed_s: f64,
    /// Episodes that ended since the last report (for the reward chart).
    new_episodes: Vec<EpisodeNote>,
    /// Episodes a failing page ended since the last report (the run went on), with the reason,
    /// and how many there were over the run.
    env_failures: Vec<crate::learn::failures::EnvFailureNote>,
    env_failures_total: u64,
    warnings: Vec<String>,
    paused: bool,
}

/// Rates over the run's training time and over the last chunk.
struct Rates {
    steps_per_s: f64,
    updates_per_s: f64,
    recent_steps_per_s: Option<f64>,
    recent_updates_per_s: Option<f64>,
    active_s: f64,
}

/// What a progress report says besides the agent's, the trainer's and the chunk's own figures.
struct Report<'a> {
    backend: &'a str,
    frames: u64,
    elapsed_s: f64,
    paused: bool,
}

impl<'a> Report<'a> {
    /// The report after a chunk (`meter`: what happened in it, `rates`), or with no rates and an
    /// empty meter the restored counters of a resumed run.
    fn progress(self, agent: &'a DomQNetAgent, trainer: &'a Trainer, meter: Meter, rates: Option<Rates>, failures: &mut EnvFailures) -> Progress<'a> {
        let mean = |sum: f64, n: u32| (n > 0).then(|| sum / n as f64);
        Progress {
            kind: "progress",
            backend: self.backend,
            env_steps: agent.counters.env_steps,
            frames: self.frames,
            updates: agent.counters.updates,
            episodes: agent.counters.episodes,
            tasks: &trainer.progress,
            replay_len: agent.replay().len(),
            replay_capacity: agent.replay().capacity(),
            positive_fraction: agent.replay().positive_fraction(),
            loss: mean(meter.loss, meter.updates),
            batch_positives: mean(meter.batch_positives, meter.updates),
            act_ms: mean(meter.act_ms, meter.acts),
            env_ms: mean(meter.env_ms, meter.acts),
            update_ms: mean(meter.update_ms, meter.updates),
            steps_per_s: rates.as_ref().map(|r| r.steps_per_s),
            updates_per_s: rates.as_ref().map(|r| r.updates_per_s),
            recent_steps_per_s: rates.as_ref().and_then(|r| r.recent_steps_per_s),
            recent_updates_per_s: rates.as_ref().and_then(|r| r.recent_updates_per_s),
            active_s: rates.as_ref().map_or(0.0, |r| r.active_s),
            elapsed_s: self.elapsed_s,
            new_episodes: meter.episodes,
            env_failures: failures.take_notes(),
            env_failures_total: failures.total,
            warnings: meter.warnings,
            paused: self.paused,
        }
    }
}

pub(super) fn message(kind: &str, fields: serde_json::Value) -> JsValue {
    let mut obj = fields;
    obj["kind"] = kind.into();
    to_js(&obj)
}

/// A message with `bytes` attached as a Uint8Array (transferred without a JSON detour).
fn message_with_bytes(kind: &str, fields: serde_json::Value, bytes: &[u8]) -> Result<JsValue, String> {
    let msg = message(kind, fields);
    js_sys::Reflect::set(&msg, &"bytes".into(), &js_sys::Uint8Array::from(bytes))
        .map_err(|_| format!("could not attach the {kind} bytes"))?;
    Ok(msg)
}

/// One update of the agent being trained, on a made-up batch, on a device: what the backend
/// choice times.
pub(super) trait Probe {
    async fn update(&self, device: &Device) -> Result<(), String>;
}

struct DqnProbe(DqnConfig);
impl Probe for DqnProbe {
    async fn update(&self, device: &Device) -> Result<(), String> {
        probe_update(&self.0, device).await
    }
}

#[cfg(feature = "learner")]
async fn time_probe(probe: &impl Probe, device: &Device) -> Result<f64, String> {
    probe.update(device).await?; // warm-up: kernels compile, buffers allocate
    let t0 = now_ms();
    for _ in 0..2 {
        probe.update(device).await?;
    }
    Ok((now_ms() - t0) / 2.0)
}

/// Chooses the training device; returns it (with autodiff), its name, and why.
#[cfg(feature = "learner")]
pub(super) async fn choose_backend(req: &TrainRequest, probe: &impl Probe) -> (Device, &'static str, String) {
    let cpu = Device::flex();
    if req.backend == "cpu" {
        return (cpu.autodiff(), "cpu", "the CPU was chosen in the settings".into());
    }
    let Some(adapter) = req.adapter.clone() else {
        return (cpu.autodiff(), "cpu", "this browser offers no WebGPU adapter".into());
    };
    let start_limit = req.webgpu_start_timeout_ms;
    let gpu = match before(Device::wgpu_options().init_async(), sleep(start_limit)).await {
        Some(Ok(d)) => d,
        Some(Err(e)) => return (cpu.autodiff(), "cpu", format!("WebGPU did not start ({e}); training on the CPU")),
        None => {
            let why = format!("WebGPU ({adapter}) did not start within {:.0} s; training on the CPU", start_limit as f64 / 1000.0);
            return (cpu.autodiff(), "cpu", why);
        }
    };
    let probe_limit = req.webgpu_probe_timeout_ms;
    if req.backend == "webgpu" {
        // Chosen, but a device that cannot finish one update would hang the run: try one.
        post(message("status", serde_json::json!({ "text": format!("starting WebGPU ({adapter})…") })));
        return match before(probe.update(&gpu.clone().autodiff()), sleep(probe_limit)).await {
            Some(Ok(())) => (gpu.autodiff(), "webgpu", format!("WebGPU ({adapter}) was chosen in the settings")),
            Some(Err(e)) => (cpu.autodiff(), "cpu", format!("WebGPU ({adapter}) was chosen but failed an update ({e}); training on the CPU")),
            None => (cpu.autodiff(), "cpu", format!("WebGPU ({adapter}) was chosen but one update took over {} s; training on the CPU", probe_limit / 1000)),
        };
    }
    post(message("status", serde_json::json!({ "text": format!("timing WebGPU ({adapter}) against the CPU…") })));
    let t_gpu = match before(time_probe(probe, &gpu.clone().autodiff()), sleep(probe_limit)).await {
        Some(r) => r,
        None => {
            let why = format!("WebGPU ({adapter}) did not finish its timing probe within {} s; training on the CPU", probe_limit / 1000);
            return (cpu.autodiff(), "cpu", why);
        }
    };
    let t_cpu = time_probe(probe, &cpu.clone().autodiff()).await;
    match (t_gpu, t_cpu) {
        (Ok(g), Ok(c)) if g <= c => {
            (gpu.autodiff(), "webgpu", format!("WebGPU ({adapter}): {g:.0} ms per probe update against {c:.0} ms on the CPU"))
        }
        (Ok(g), Ok(c)) => {
            (cpu.autodiff(), "cpu", format!("the CPU: {c:.0} ms per probe update against {g:.0} ms on WebGPU ({adapter})"))
        }
        (Err(e), _) => (cpu.autodiff(), "cpu", format!("WebGPU ({adapter}) failed its probe ({e}); training on the CPU")),
        (Ok(_), Err(e)) => (gpu.autodiff(), "webgpu", format!("the CPU failed its probe ({e}); training on WebGPU ({adapter})")),
    }
}

#[cfg(feature = "learner")]
#[wasm_bindgen]
pub struct Learner {
    flags: Rc<RefCell<Flags>>,
}

#[cfg(feature = "learner")]
impl Default for Learner {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "learner")]
#[wasm_bindgen]
impl Learner {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Learner {
        Learner { flags: Rc::default() }
    }

    /// Trains as `request` says (a `TrainRequest` object), starting from `checkpoint` when given,
    /// and continuing a saved run when `saved` (a snapshot's `state`) is given too. Posts `backend`,
    /// `status`, `progress`, `checkpoint` and `snapshot` messages; resolves with the final
    /// progress, or rejects with a message.
    /// `optimizer`: the snapshot's Adam state, when it has one.
    /// `folders`: the folders a person typed into the page's tab (`Lab.typedFolders`), which its
    /// tasks may name besides MiniWoB++'s; never read from the request or the store.
    pub fn train(
        &self,
        request: JsValue,
        checkpoint: Option<Vec<u8>>,
        saved: Option<String>,
        optimizer: Option<Vec<u8>>,
        folders: Option<Vec<String>>,
    ) -> Promise {
        let flags = self.flags.clone();
        future_to_promise(async move {
            let req = read_request(&request, &folders.unwrap_or_default()).map_err(|e| JsValue::from_str(&e))?;
            if req.start_paused {
                flags.borrow_mut().pause = true;
            }
            if req.agent == NAVIGATOR && matches!(req.generator, Some(crate::curriculum::GeneratorSpec::Adversary { .. })) {
                return super::learner_adversary::run(req, checkpoint, saved, flags).await.map_err(|e| JsValue::from_str(&e));
            }
            if req.agent == NAVIGATOR {
                return super::learner_navigator::run(req, checkpoint, saved, optimizer, flags).await.map_err(|e| JsValue::from_str(&e));
            }
            if req.agent != DOM_Q_NET {
                return Err(JsValue::from_str(&format!("bad training request: no agent \"{}\" (\"{DOM_Q_NET}\" or \"{NAVIGATOR}\")", req.agent)));
            }
            let saved: Option<SavedRun> = match saved {
                Some(json) => Some(
                    serde_json::from_str(&json).map_err(|e| JsValue::from_str(&format!("the saved run is damaged: {e}")))?,
                ),
                None => None,
            };
            run(req, checkpoint, saved, optimizer, flags).await.map_err(|e| JsValue::from_str(&e))
        })
    }

    pub fn pause(&self, paused: bool) {
        let mut f = self.flags.borrow_mut();
        f.pause = paused;
        if !paused {
            f.step = false;
        }
    }

    /// Pauses (if running) and takes exactly one environment step and its update; stays paused.
    pub fn step(&self) {
        let mut f = self.flags.borrow_mut();
        f.pause = true;
        f.step = true;
    }

    pub fn stop(&self) {
        self.flags.borrow_mut().stop = true;
    }

    /// Asks for a checkpoint message at the next safe point (at once while paused).
    #[wasm_bindgen(js_name = requestCheckpoint)]
    pub fn request_checkpoint(&self) {
        self.flags.borrow_mut().checkpoint = true;
    }
}

/// Posts a `checkpoint` message when one was asked for.
pub(super) async fn serve_checkpoint<A: Agent>(agent: &A, trained_on: &[String], flags: &RefCell<Flags>, half: bool) -> Result<(), String> {
    if !std::mem::take(&mut flags.borrow_mut().checkpoint) {
        return Ok(());
    }
    let precision = if half { Precision::Half } else { Precision::Full };
    let bytes = agent.checkpoint(trained_on, precision).await?;
    let c = agent.counters();
    let fields = serde_json::json!({ "updates": c.updates, "env_steps": c.env_steps, "agent": agent.kind() });
    post(message_with_bytes("checkpoint", fields, &bytes)?);
    Ok(())
}

/// Posts the whole run: the checkpoint (`bytes`), the trainer's state and recent replay
/// (`state`), and Adam's moments (`optimizer`, once learning has begun).
async fn post_snapshot(agent: &DomQNetAgent, trainer: &Trainer, task_names: &[String], keep: usize) -> Result<(), String> {
    let state = SavedRun { schema: SNAPSHOT_SCHEMA, trainer: trainer.state(), replay: agent.replay().recent(keep) };
    post_run_snapshot(agent, task_names, serde_json::to_string(&state).map_err(|e| e.to_string())?).await
}

/// Posts a snapshot of any agent's run: its checkpoint (f32), `state` (the loop's own, as JSON
/// text) and Adam's moments.
pub(super) async fn post_run_snapshot<A: Agent>(agent: &A, trained_on: &[String], state: String) -> Result<(), String> {
    let bytes = agent.checkpoint(trained_on, Precision::Full).await?;
    let optimizer = agent.optimizer_state().await?;
    let c = agent.counters();
    let fields = serde_json::json!({
        "updates": c.updates,
        "env_steps": c.env_steps,
        "agent": agent.kind(),
        "state": state,
        "schema": SNAPSHOT_SCHEMA,
    });
    let msg = message_with_bytes("snapshot", fields, &bytes)?;
    if let Some(adam) = optimizer {
        js_sys::Reflect::set(&msg, &"optimizer".into(), &js_sys::Uint8Array::from(&adam[..]))
            .map_err(|_| "could not attach the optimizer state".to_string())?;
    }
    post(msg);
    Ok(())
}

/// Gives a resumed agent its snapshot's Adam moments; damaged ones are replaced by fresh moments
/// (the agent refuses them and keeps its own), and the page is told.
pub(super) fn restore_optimizer<A: Agent>(agent: &mut A, optimizer: Option<Vec<u8>>) {
    if let Some(adam) = optimizer
        && let Err(e) = agent.load_optimizer_state(&adam)
    {
        post(message("status", serde_json::json!({ "text": format!("Resumed with fresh Adam moments: {e}.") })));
    }
}

/// What the learner does next after waiting out a pause.
pub(super) enum Next {
    Run,
    SingleStep,
    Stop,
}

/// Waits while paused, serving checkpoint requests; returns when resumed, stopped, or a single
/// step is asked for.
pub(super) async fn wait_while_paused<A: Agent>(agent: &A, task_names: &[String], flags: &RefCell<Flags>, half: bool) -> Result<Next, String> {
    loop {
        serve_checkpoint(agent, task_names, flags, half).await?;
        {
            let mut f = flags.borrow_mut();
            if f.stop {
                return Ok(Next::Stop);
            }
            if std::mem::take(&mut f.step) {
                return Ok(Next::SingleStep);
            }
            if !f.pause {
                return Ok(Next::Run);
            }
        }
        sleep(50).await;
    }
}

#[cfg(feature = "learner")]
async fn run(
    req: TrainRequest,
    checkpoint: Option<Vec<u8>>,
    saved: Option<SavedRun>,
    optimizer: Option<Vec<u8>>,
    flags: Rc<RefCell<Flags>>,
) -> Result<JsValue, String> {
    if req.tasks.is_empty() {
        return Err("no tasks to train on".into());
    }
    let cfg = req.dqn_config()?;
    let probe = DqnProbe(DqnConfig { batch_size: cfg.batch_size.min(32), ..cfg.clone() });
    let (device, mut backend, reason) = choose_backend(&req, &probe).await;
    post(message("backend", serde_json::json!({ "name": backend, "reason": reason })));
    // Labels tell a real MiniWoB++ page from the lab's page of the same name.
    let task_names: Vec<String> = req.tasks.iter().map(|t| t.label()).collect();
    let mut agent = match checkpoint {
        Some(bytes) => {
            let ckpt = Checkpoint::from_bytes(&bytes).map_err(|e| e.to_string())?;
            ckpt.check_fits(&cfg).map_err(|e| e.to_string())?;
            DomQNetAgent::from_checkpoint(ckpt, &device).map_err(|e| e.to_string())?
        }
        None => DomQNetAgent::new(cfg.clone(), &device)?,
    };
    let mut envs: Vec<Watched> = (0..req.tasks.len()).map(Watched::new).collect();
    let mut failures = EnvFailures::new(req.tasks.len());
    let resumed = saved.is_some();
    let mut trainer = match saved {
        Some(saved) => {
            saved.check(&req, &agent.cfg)?;
            agent.replay_mut().restore(saved.replay).map_err(|e| format!("the saved run is damaged: {e}"))?;
            restore_optimizer(&mut agent, optimizer);
            Trainer::from_state(saved.trainer)
        }
        None => Trainer::new(req.tasks.clone(), req.seed),
    }
    .with_clock(now_ms);
    let mut last_snapshot = now_ms();
    let mut last_good = agent.save(&task_names).await?;
    let mut last_good_at = agent.counters.updates;
    let t_start = now_ms();
    let active_start = trainer.elapsed_ms();
    let (start_steps, start_updates) = (agent.counters.env_steps, agent.counters.updates);
    // A resumed run shows its restored counters at once, paused or not, instead of zeros until
    // its first chunk ends (a run resumed paused takes none until the person resumes it).
    if resumed {
        let report = Report { backend, frames: req.frames, elapsed_s: 0.0, paused: flags.borrow().pause };
        post(to_js(&report.progress(&agent, &trainer, Meter::default(), None, &mut failures)));
    }
    let mut was_paused = flags.borrow().pause;

    loop {
        let single = match wait_while_paused(&agent, &task_names, &flags, req.checkpoint_half).await? {
            Next::Stop => break,
            Next::SingleStep => true,
            Next::Run => false,
        };
        let until = if single { (agent.counters.env_steps + 1).min(req.frames) } else { req.frames };
        let mut meter = Meter::default();
        let chunk_start = now_ms();
        let chunk_steps = agent.counters.env_steps;
        let chunk_updates = agent.counters.updates;
        let chunk_flags = flags.clone();
        let result = trainer
            .run(&mut agent, &mut envs, until, |ev| {
                match ev {
                    TrainEvent::Step { act_ms, env_ms, .. } => {
                        meter.acts += 1;
                        meter.act_ms += act_ms;
                        meter.env_ms += env_ms;
                    }
                    TrainEvent::Update { stats, update_ms } => {
                        meter.updates += 1;
                        meter.update_ms += update_ms;
                        meter.loss += stats.loss as f64;
                        meter.batch_positives += stats.positives_in_batch as f64;
                    }
                    TrainEvent::Episode { task, result, .. } => {
                        meter.episodes.push(EpisodeNote {
                            task,
                            reward: result.reward,
                            raw_reward: result.raw_reward,
                            steps: result.steps,
                        });
                    }
                    TrainEvent::Warning { message, .. } => {
                        if meter.warnings.len() < 4 {
                            meter.warnings.push(message.to_string());
                        }
                    }
                }
                let f = chunk_flags.borrow();
                // A single step ends by its step budget; anything but stop waits for it.
                let interrupt = f.pause || f.checkpoint || f.step || now_ms() - chunk_start > req.progress_ms;
                if f.stop || (!single && interrupt) { Control::Stop } else { Control::Continue }
            })
            .await;

        // Episodes the pages ended break their task's row of failures; a page that failed ends
        // its episode (the loop dropped it) and the run goes on, unless the rule says stop.
        for note in &meter.episodes {
            failures.ended(note.task);
        }
        let failed_page = envs.iter_mut().enumerate().find_map(|(k, w)| w.failure.take().map(|f| (k, f)));
        match (result, failed_page) {
            (Ok(()), _) => {}
            (Err(e), Some((k, failure))) if e == failure => {
                failures.failed(k, &task_names[k], &failure).map_err(|why| {
                    format!("{why}. Training stopped at update {}; the run's last snapshot is kept", agent.counters.updates)
                })?;
            }
            (Err(e), _) => {
                // A number that is not finite (a NaN reward, an overflowing update) is no device
                // failure: the agent refused it and kept its network, but going on (here or on
                // the CPU) would meet it again. Stop, and save nothing more: the page keeps the
                // run's last snapshot, from before it.
                if let EnvError::Browser(m) = &e
                    && let Some(why) = m.strip_prefix("agent: ").filter(|m| m.starts_with(NOT_FINITE))
                {
                    return Err(format!(
                        "{why}. Training stopped at update {}; the run's last snapshot, from before this, is kept",
                        agent.counters.updates
                    ));
                }
                let agent_failed = matches!(&e, EnvError::Browser(m) if m.starts_with("agent:"));
                if backend == "webgpu" && agent_failed {
                    // The GPU went away: carry on with the CPU from the last good checkpoint.
                    let ckpt = Checkpoint::from_bytes(&last_good).map_err(|e| e.to_string())?;
                    agent = DomQNetAgent::from_checkpoint(ckpt, &Device::flex().autodiff()).map_err(|e| e.to_string())?;
                    trainer.drop_running_episodes(&mut agent);
                    backend = "cpu";
                    post(message(
                        "backend",
                        serde_json::json!({ "name": "cpu", "reason": format!("WebGPU stopped working ({e}); continuing on the CPU from update {last_good_at}") }),
                    ));
                    continue;
                }
                return Err(e.to_string());
            }
        }

        let chunk_s = (now_ms() - chunk_start) / 1000.0;
        let active_s = (trainer.elapsed_ms() - active_start) / 1000.0;
        let paused = flags.borrow().pause;
        let (steps_now, updates_now) = (agent.counters.env_steps - chunk_steps, agent.counters.updates - chunk_updates);
        let rates = Rates {
            steps_per_s: (agent.counters.env_steps - start_steps) as f64 / active_s.max(1e-9),
            updates_per_s: (agent.counters.updates - start_updates) as f64 / active_s.max(1e-9),
            recent_steps_per_s: (chunk_s > 0.0 && steps_now > 0).then(|| steps_now as f64 / chunk_s),
            recent_updates_per_s: (chunk_s > 0.0 && steps_now > 0).then(|| updates_now as f64 / chunk_s),
            active_s,
        };
        let report = Report { backend, frames: req.frames, elapsed_s: (now_ms() - t_start) / 1000.0, paused };
        let progress = report.progress(&agent, &trainer, meter, Some(rates), &mut failures);
        post(to_js(&progress));

        if agent.counters.updates >= last_good_at + req.checkpoint_every {
            last_good = agent.save(&task_names).await?;
            last_good_at = agent.counters.updates;
        }
        let finished = flags.borrow().stop || agent.counters.env_steps >= req.frames;
        // Snapshots: periodically, at the end, and when a pause begins (a reload then resumes
        // from where the run was paused).
        let pause_began = paused && !was_paused;
        was_paused = paused;
        if req.snapshot_every_s > 0.0
            && (finished || pause_began || now_ms() - last_snapshot > req.snapshot_every_s * 1000.0)
        {
            post_snapshot(&agent, &trainer, &task_names, req.snapshot_replay).await?;
            last_snapshot = now_ms();
        }
        serve_checkpoint(&agent, &task_names, &flags, req.checkpoint_half).await?;
        if finished {
            break;
        }
    }
    // A checkpoint asked for just before the end still gets its answer.
    if req.checkpoint_at_end {
        flags.borrow_mut().checkpoint = true;
    }
    serve_checkpoint(&agent, &task_names, &flags, req.checkpoint_half).await?;

    // Greedy evaluation on held-out seeds; it leaves the agent as it was (and as checkpointed).
    let mut evaluation = Vec::new();
    if req.eval_episodes > 0 {
        for (k, task) in req.tasks.iter().enumerate() {
            let text = format!("evaluating {} greedily on {} held-out episodes…", task.label(), req.eval_episodes);
            post(message("status", serde_json::json!({ "text": text })));
            let t0 = now_ms();
            let stats = evaluate(&mut agent, &mut envs[k], task, req.eval_episodes, req.eval_seed)
                .await
                .map_err(|e| format!("evaluating {}: {e}", task.label()))?;
            let result = serde_json::json!({
                "task": task.label(),
                "episodes": stats.episodes,
                "successes": stats.successes,
                "success_rate": stats.successes as f64 / stats.episodes.max(1) as f64,
                "mean_reward": stats.mean_reward_100,
                "first_seed": req.eval_seed,
                "seconds": (now_ms() - t0) / 1000.0,
            });
            post(message("evaluation", result.clone()));
            evaluation.push(result);
        }
    }
    Ok(to_js(&serde_json::json!({
        "evaluation": evaluation,
        "kind": "done",
        "backend": backend,
        "env_steps": agent.counters.env_steps,
        "updates": agent.counters.updates,
        "tasks": trainer.progress,
        "elapsed_s": (now_ms() - t_start) / 1000.0,
        "active_s": (trainer.elapsed_ms() - active_start) / 1000.0,
    })))
}
