//! The learner, running in a Web Worker: DOM-Q-Net training (Algorithm 1) against the main
//! thread's task pages through [`RemoteEnv`]s, so the page stays responsive while it learns.
//!
//! It picks its backend at start: WebGPU where the browser offers an adapter and a short timing
//! probe shows it faster than the CPU, the CPU (flex) otherwise, and says why. If WebGPU fails
//! mid-run (e.g. the device is lost) it carries on with the CPU from its last checkpoint.

use std::cell::RefCell;
use std::rc::Rc;

use burn::prelude::Device;
use js_sys::Promise;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::remote::{RemoteEnv, to_js};
use super::util::{now_ms, sleep};
use crate::dom_q_net::agent::probe_update;
use crate::dom_q_net::checkpoint::Checkpoint;
use crate::dom_q_net::train::{Control, TaskProgress, TrainEvent, Trainer};
use crate::dom_q_net::{DomQNetAgent, DqnConfig};
use crate::env::TaskSpec;

#[wasm_bindgen]
extern "C" {
    /// Defined by the worker script: sends a message to the main thread.
    #[wasm_bindgen(js_namespace = globalThis, js_name = weblabPost)]
    fn post(message: JsValue);
}

/// What the page asks the learner to do.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct TrainRequest {
    pub config: DqnConfig,
    pub tasks: Vec<TaskSpec>,
    /// Stop after this many environment steps, all tasks together.
    pub frames: u64,
    pub seed: u32,
    /// "auto", "webgpu" or "cpu".
    pub backend: String,
    /// The WebGPU adapter the page found (e.g. "google swiftshader (fallback)"), or none.
    pub adapter: Option<String>,
    /// How often to report progress.
    pub progress_ms: f64,
    /// Keep a checkpoint every this many updates (for recovery, and to hand to the page).
    pub checkpoint_every: u64,
}

impl Default for TrainRequest {
    fn default() -> Self {
        TrainRequest {
            config: DqnConfig::default(),
            tasks: Vec::new(),
            frames: 50_000,
            seed: 1,
            backend: "auto".into(),
            adapter: None,
            progress_ms: 250.0,
            checkpoint_every: 2_000,
        }
    }
}

#[derive(Default)]
struct Flags {
    stop: bool,
    pause: bool,
    checkpoint: bool,
}

/// Timings and recent values between two progress reports.
#[derive(Default)]
struct Meter {
    acts: u32,
    act_ms: f64,
    updates: u32,
    update_ms: f64,
    loss: f64,
    steps: u32,
    episodes: Vec<EpisodeNote>,
    warnings: Vec<String>,
}

#[derive(Clone, Serialize)]
struct EpisodeNote {
    task: usize,
    raw_reward: f64,
    steps: u32,
}

#[derive(Serialize)]
struct Progress<'a> {
    kind: &'static str,
    backend: &'a str,
    env_steps: u64,
    updates: u64,
    episodes: u64,
    tasks: &'a [TaskProgress],
    replay_len: usize,
    replay_capacity: usize,
    positive_fraction: f64,
    /// Mean TD loss of the updates since the last report.
    loss: Option<f64>,
    act_ms: Option<f64>,
    update_ms: Option<f64>,
    steps_per_s: f64,
    updates_per_s: f64,
    elapsed_s: f64,
    new_episodes: Vec<EpisodeNote>,
    warnings: Vec<String>,
    paused: bool,
}

fn message(kind: &str, fields: serde_json::Value) -> JsValue {
    let mut obj = fields;
    obj["kind"] = kind.into();
    to_js(&obj)
}

async fn time_probe(cfg: &DqnConfig, device: &Device) -> Result<f64, String> {
    probe_update(cfg, device).await?; // warm-up: kernels compile, buffers allocate
    let t0 = now_ms();
    for _ in 0..2 {
        probe_update(cfg, device).await?;
    }
    Ok((now_ms() - t0) / 2.0)
}

/// Chooses the training device; returns it (with autodiff), its name, and why.
async fn choose_backend(req: &TrainRequest) -> (Device, &'static str, String) {
    let cpu = Device::flex();
    if req.backend == "cpu" {
        return (cpu.autodiff(), "cpu", "the CPU was chosen in the settings".into());
    }
    let Some(adapter) = req.adapter.clone() else {
        return (cpu.autodiff(), "cpu", "this browser offers no WebGPU adapter".into());
    };
    let gpu = match Device::wgpu_options().init_async().await {
        Ok(d) => d,
        Err(e) => return (cpu.autodiff(), "cpu", format!("WebGPU did not start ({e}); training on the CPU")),
    };
    if req.backend == "webgpu" {
        return (gpu.autodiff(), "webgpu", format!("WebGPU ({adapter}) was chosen in the settings"));
    }
    post(message("status", serde_json::json!({ "text": format!("timing WebGPU ({adapter}) against the CPU…") })));
    let probe_cfg = DqnConfig { batch_size: req.config.batch_size.min(32), ..req.config.clone() };
    let t_gpu = time_probe(&probe_cfg, &gpu.clone().autodiff()).await;
    let t_cpu = time_probe(&probe_cfg, &cpu.clone().autodiff()).await;
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

#[wasm_bindgen]
pub struct Learner {
    flags: Rc<RefCell<Flags>>,
}

impl Default for Learner {
    fn default() -> Self {
        Self::new()
    }
}

#[wasm_bindgen]
impl Learner {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Learner {
        Learner { flags: Rc::default() }
    }

    /// Trains as `request` says (a `TrainRequest` object), starting from `checkpoint` when given.
    /// Posts `backend`, `status`, `progress`, `checkpoint` and `warning` messages; resolves with the
    /// final progress, or rejects with a message.
    pub fn train(&self, request: JsValue, checkpoint: Option<Vec<u8>>) -> Promise {
        let flags = self.flags.clone();
        future_to_promise(async move {
            let req: TrainRequest = serde_wasm_bindgen::from_value(request)
                .map_err(|e| JsValue::from_str(&format!("bad training request: {e}")))?;
            run(req, checkpoint, flags).await.map_err(|e| JsValue::from_str(&e))
        })
    }

    pub fn pause(&self, paused: bool) {
        self.flags.borrow_mut().pause = paused;
    }

    pub fn stop(&self) {
        self.flags.borrow_mut().stop = true;
    }

    /// Asks for a checkpoint message at the next safe point.
    #[wasm_bindgen(js_name = requestCheckpoint)]
    pub fn request_checkpoint(&self) {
        self.flags.borrow_mut().checkpoint = true;
    }
}

async fn run(req: TrainRequest, checkpoint: Option<Vec<u8>>, flags: Rc<RefCell<Flags>>) -> Result<JsValue, String> {
    req.config.validate()?;
    if req.tasks.is_empty() {
        return Err("no tasks to train on".into());
    }
    let (device, mut backend, reason) = choose_backend(&req).await;
    post(message("backend", serde_json::json!({ "name": backend, "reason": reason })));
    let task_names: Vec<String> = req.tasks.iter().map(|t| t.name().to_string()).collect();
    let mut agent = match checkpoint {
        Some(bytes) => {
            let ckpt = Checkpoint::from_bytes(&bytes).map_err(|e| e.to_string())?;
            ckpt.check_fits(&req.config).map_err(|e| e.to_string())?;
            DomQNetAgent::from_checkpoint(ckpt, &device).map_err(|e| e.to_string())?
        }
        None => DomQNetAgent::new(req.config.clone(), &device)?,
    };
    let mut envs: Vec<RemoteEnv> = (0..req.tasks.len()).map(|task| RemoteEnv { task }).collect();
    let mut trainer = Trainer::new(req.tasks.clone(), req.seed).with_clock(now_ms);
    let mut last_good = agent.save(&task_names).await?;
    let mut last_good_at = agent.counters.updates;
    let t_start = now_ms();
    let (start_steps, start_updates) = (agent.counters.env_steps, agent.counters.updates);

    loop {
        let mut meter = Meter::default();
        let chunk_start = now_ms();
        let chunk_flags = flags.clone();
        let result = trainer
            .run(&mut agent, &mut envs, req.frames, |ev| {
                match ev {
                    TrainEvent::Step { act_ms, .. } => {
                        meter.acts += 1;
                        meter.act_ms += act_ms;
                        meter.steps += 1;
                    }
                    TrainEvent::Update { stats, update_ms } => {
                        meter.updates += 1;
                        meter.update_ms += update_ms;
                        meter.loss += stats.loss as f64;
                    }
                    TrainEvent::Episode { task, result, .. } => {
                        meter.episodes.push(EpisodeNote { task, raw_reward: result.raw_reward, steps: result.steps });
                    }
                    TrainEvent::Warning { message, .. } => {
                        if meter.warnings.len() < 4 {
                            meter.warnings.push(message.to_string());
                        }
                    }
                }
                let f = chunk_flags.borrow();
                if f.stop || f.pause || f.checkpoint || now_ms() - chunk_start > req.progress_ms {
                    Control::Stop
                } else {
                    Control::Continue
                }
            })
            .await;

        if let Err(e) = result {
            let agent_failed = matches!(&e, crate::env::EnvError::Browser(m) if m.starts_with("agent:"));
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

        let elapsed_s = (now_ms() - t_start) / 1000.0;
        let paused = flags.borrow().pause;
        let progress = Progress {
            kind: "progress",
            backend,
            env_steps: agent.counters.env_steps,
            updates: agent.counters.updates,
            episodes: agent.counters.episodes,
            tasks: &trainer.progress,
            replay_len: agent.replay().len(),
            replay_capacity: agent.replay().capacity(),
            positive_fraction: agent.replay().positive_fraction(),
            loss: (meter.updates > 0).then(|| meter.loss / meter.updates as f64),
            act_ms: (meter.acts > 0).then(|| meter.act_ms / meter.acts as f64),
            update_ms: (meter.updates > 0).then(|| meter.update_ms / meter.updates as f64),
            steps_per_s: (agent.counters.env_steps - start_steps) as f64 / elapsed_s.max(1e-9),
            updates_per_s: (agent.counters.updates - start_updates) as f64 / elapsed_s.max(1e-9),
            elapsed_s,
            new_episodes: meter.episodes,
            warnings: meter.warnings,
            paused,
        };
        post(to_js(&progress));

        if agent.counters.updates >= last_good_at + req.checkpoint_every {
            last_good = agent.save(&task_names).await?;
            last_good_at = agent.counters.updates;
        }
        if std::mem::take(&mut flags.borrow_mut().checkpoint) {
            let bytes = agent.save(&task_names).await?;
            let msg = message("checkpoint", serde_json::json!({ "updates": agent.counters.updates }));
            js_sys::Reflect::set(&msg, &"bytes".into(), &js_sys::Uint8Array::from(bytes.as_slice()))
                .map_err(|_| "could not attach the checkpoint".to_string())?;
            post(msg);
        }
        if flags.borrow().stop || agent.counters.env_steps >= req.frames {
            break;
        }
        while flags.borrow().pause && !flags.borrow().stop {
            sleep(100).await;
        }
    }
    Ok(to_js(&serde_json::json!({
        "kind": "done",
        "backend": backend,
        "env_steps": agent.counters.env_steps,
        "updates": agent.counters.updates,
        "tasks": trainer.progress,
        "elapsed_s": (now_ms() - t_start) / 1000.0,
    })))
}
