//! The worker's side of its conversation with the page: the messages it posts (`progress`,
//! `status`, `backend`, `grid`, `checkpoint`, `snapshot`, …), the page's control flags (pause,
//! single step, stop, checkpoint requests), the task pages as environments that remember how they
//! failed, and the checkpoints and snapshots every run kind answers with.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use super::super::remote::{RemoteEnv, to_js};
use super::super::util::sleep;
use crate::env::{EnvError, Environment, Observation, Step};
use crate::learn::Agent;
use crate::learn::checkpoint::Precision;
use crate::request::SNAPSHOT_SCHEMA;
use crate::task::{GeneratedSite, TaskSpec};

#[wasm_bindgen]
extern "C" {
    /// Defined by the worker script: sends a message to the main thread.
    #[wasm_bindgen(js_namespace = globalThis, js_name = weblabPost)]
    pub(super) fn post(message: JsValue);
}

/// What the page asked for; read between steps and chunks.
#[derive(Default)]
pub(super) struct Flags {
    pub(super) stop: bool,
    pub(super) pause: bool,
    pub(super) checkpoint: bool,
    /// One step of the run (an environment step and its update, or an iteration) is asked for,
    /// then stay paused.
    pub(super) step: bool,
}

impl Flags {
    /// Whether a chunk that began at `chunk_start` (ms) should end now to let the page in.
    pub(super) fn interrupts(&self, chunk_start: f64, progress_ms: f64) -> bool {
        self.pause || self.checkpoint || self.step || super::super::util::now_ms() - chunk_start > progress_ms
    }
}

pub(super) fn message(kind: &str, fields: serde_json::Value) -> JsValue {
    let mut obj = fields;
    obj["kind"] = kind.into();
    to_js(&obj)
}

pub(super) fn status(text: impl Into<String>) {
    post(message("status", serde_json::json!({ "text": text.into() })));
}

/// Attaches `bytes` to a message as a Uint8Array under `field` (transferred without a JSON detour).
pub(super) fn attach(msg: &JsValue, field: &str, bytes: &[u8]) -> Result<(), String> {
    js_sys::Reflect::set(msg, &field.into(), &js_sys::Uint8Array::from(bytes)).map(|_| ()).map_err(|_| format!("could not attach the {field}"))
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

impl Environment<GeneratedSite> for Watched {
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

/// Posts a `checkpoint` message when one was asked for.
pub(super) async fn serve_checkpoint<A: Agent>(agent: &A, trained_on: &[String], flags: &RefCell<Flags>, half: bool) -> Result<(), String> {
    if !std::mem::take(&mut flags.borrow_mut().checkpoint) {
        return Ok(());
    }
    let precision = if half { Precision::Half } else { Precision::Full };
    let bytes = agent.checkpoint(trained_on, precision).await?;
    let c = agent.counters();
    let msg = message("checkpoint", serde_json::json!({ "updates": c.updates, "env_steps": c.env_steps, "agent": agent.kind() }));
    attach(&msg, "bytes", &bytes)?;
    post(msg);
    Ok(())
}

/// Posts a snapshot of an agent's run: its checkpoint (f32) as `bytes`, `state` (the run's own,
/// as JSON text) and Adam's moments as `optimizer` (once learning has begun).
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
    let msg = message("snapshot", fields);
    attach(&msg, "bytes", &bytes)?;
    if let Some(adam) = optimizer {
        attach(&msg, "optimizer", &adam)?;
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
        status(format!("Resumed with fresh Adam moments: {e}."));
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
pub(super) async fn wait_while_paused<A: Agent>(agent: &A, trained_on: &[String], flags: &RefCell<Flags>, half: bool) -> Result<Next, String> {
    loop {
        serve_checkpoint(agent, trained_on, flags, half).await?;
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
