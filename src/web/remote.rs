//! Environments across threads: the learner runs in a Web Worker, the task pages live in the main
//! thread's iframes. [`RemoteEnv`] (worker side) forwards `reset`/`step` as messages; the main
//! thread answers them with its [`super::IframeEnv`]s (see `Lab::serveEnv`).

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::util::js_message;
use crate::env::{Action, EnvError, Environment, Observation, Step};
use crate::task::{GeneratedSite, TaskSpec};

pub use crate::env::messages::EnvReply;
pub use crate::task::EnvRequest;

#[wasm_bindgen]
extern "C" {
    /// Defined by the worker script: posts an environment request to the main thread and
    /// resolves with its reply.
    #[wasm_bindgen(js_namespace = globalThis, js_name = weblabEnvCall)]
    fn env_call(request: JsValue) -> Promise;
}

pub(crate) fn to_js<T: Serialize>(v: &T) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

/// Task `task`'s environment, living in the main thread.
pub struct RemoteEnv {
    pub task: usize,
}

impl RemoteEnv {
    async fn call(&self, request: EnvRequest) -> Result<EnvReply, EnvError> {
        let reply =
            JsFuture::from(env_call(to_js(&request))).await.map_err(|e| EnvError::Browser(format!("the page did not answer: {}", js_message(&e))))?;
        serde_wasm_bindgen::from_value(reply).map_err(|e| EnvError::Browser(format!("malformed reply from the page: {e}")))
    }
}

impl Environment<GeneratedSite> for RemoteEnv {
    async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
        match self.call(EnvRequest::Reset { task: self.task, spec: task.clone(), seed }).await? {
            EnvReply::Observation(o) => Ok(o),
            EnvReply::Error(e) => Err(e),
            EnvReply::Step(_) => Err(EnvError::Browser("the page answered a reset with a step".into())),
        }
    }

    async fn step(&mut self, action: &Action) -> Result<Step, EnvError> {
        match self.call(EnvRequest::Step { task: self.task, action: action.clone() }).await? {
            EnvReply::Step(s) => Ok(s),
            EnvReply::Error(e) => Err(e),
            EnvReply::Observation(_) => Err(EnvError::Browser("the page answered a step with a reset".into())),
        }
    }
}
