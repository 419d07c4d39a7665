//! The learner, running in a Web Worker: it trains DOM-Q-Net on the main thread's task pages
//! (through `RemoteEnv`s), or the gMiniWoB navigator on a generator or with an adversary, so the
//! page stays responsive while it learns. Control from the page: pause/resume, a single step
//! while paused, stop, and checkpoint requests (served while paused too).
//!
//! - `protocol`: the messages posted to the page, the control flags, checkpoints and snapshots;
//! - `backend`: WebGPU or the CPU, chosen by a timing probe at the start;
//! - `driver`: the outer loop, once, over [`driver::TrainingRun`];
//! - `dqn`, `navigator`, `adversary`: one file per run kind.
//!
//! The page's build (without the `learner` feature) keeps only what the page calls here
//! (`checkSnapshotSchema`, `checkTrainRequest`, `trainingPageConfig`); the loops are not
//! compiled into it.

#[cfg(feature = "learner")]
mod adversary;
#[cfg(feature = "learner")]
mod backend;
#[cfg(feature = "learner")]
mod dqn;
#[cfg(feature = "learner")]
mod dqn_progress;
#[cfg(feature = "learner")]
mod driver;
#[cfg(feature = "learner")]
mod navigator;
#[cfg(feature = "learner")]
mod protocol;

#[cfg(feature = "learner")]
use std::cell::RefCell;
#[cfg(feature = "learner")]
use std::rc::Rc;

#[cfg(feature = "learner")]
use js_sys::Promise;
use wasm_bindgen::prelude::*;
#[cfg(feature = "learner")]
use wasm_bindgen_futures::future_to_promise;

use super::remote::to_js;

pub use crate::request::{DOM_Q_NET, NAVIGATOR, SNAPSHOT_SCHEMA, SavedRun, TrainRequest, check_schema};

/// The page's check of a stored record's version before it resumes it (`schema` as stored:
/// anything; not a whole number reads as no version).
#[wasm_bindgen(js_name = checkSnapshotSchema)]
pub fn check_snapshot_schema(schema: JsValue) -> Result<(), JsValue> {
    let v = schema.as_f64().filter(|v| v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(v)).unwrap_or(0.0);
    check_schema(v as u32).map_err(|e| JsValue::from_str(&e))
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

#[cfg(feature = "learner")]
#[wasm_bindgen]
pub struct Learner {
    flags: Rc<RefCell<protocol::Flags>>,
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
            let adversarial = matches!(req.generator, Some(crate::request::GeneratorSpec::Adversary { .. }));
            let done = match req.agent.as_str() {
                NAVIGATOR if adversarial => adversary::run(req, checkpoint, saved, flags).await,
                NAVIGATOR => navigator::run(req, checkpoint, saved, optimizer, flags).await,
                DOM_Q_NET => dqn::run(req, checkpoint, saved, optimizer, flags).await,
                other => Err(format!("bad training request: no agent \"{other}\" (\"{DOM_Q_NET}\" or \"{NAVIGATOR}\")")),
            };
            done.map_err(|e| JsValue::from_str(&e))
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
