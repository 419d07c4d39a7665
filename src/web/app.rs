//! The lab as the page's JavaScript sees it: one `Lab` object that owns the task iframe's
//! environment and runs agents in it.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::HtmlIFrameElement;

use super::env::IframeEnv;
use super::util::{now_ms, yield_now};
use crate::env::{Action, EnvConfig, EnvError, Environment, TaskSpec, builtin_tasks};
use crate::policy::oracle::{Script, scripted};
use crate::policy::{Policy, RandomPolicy};
use crate::runner::{RunStats, run_episode};

fn to_js<T: Serialize>(v: &T) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

fn js_err(e: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&e.to_string()).into()
}

/// Parses a task given from JS: a plain name (one of the lab's tasks) or a `TaskSpec` object.
fn parse_task(task: JsValue) -> Result<TaskSpec, EnvError> {
    if let Some(name) = task.as_string() {
        return TaskSpec::builtin(&name);
    }
    let spec: TaskSpec = serde_wasm_bindgen::from_value(task)
        .map_err(|e| EnvError::UnknownTask(format!("(malformed task description: {e})")))?;
    match &spec {
        TaskSpec::Builtin { name } => TaskSpec::builtin(name),
        TaskSpec::External { base_url, name } => TaskSpec::external(base_url, name),
        TaskSpec::Inline { .. } => Ok(spec),
    }
}

fn make_policy(kind: &str, task: &TaskSpec, seed: u32) -> Result<Box<dyn Policy>, EnvError> {
    match kind {
        "random" => Ok(Box::new(RandomPolicy::new(seed as u64))),
        "oracle" => scripted(task.name(), Script::Oracle)
            .map(|p| Box::new(p) as Box<dyn Policy>)
            .ok_or_else(|| EnvError::Browser(format!("no scripted oracle for \"{}\"", task.name()))),
        other => Err(EnvError::Browser(format!("unknown policy \"{other}\" (random or oracle)"))),
    }
}

/// The environment lives in a slot it is taken out of for the length of an async call, so two
/// overlapping calls get `Busy` instead of a panic.
#[derive(Clone)]
struct Slot(Rc<RefCell<Option<IframeEnv>>>);

impl Slot {
    fn take(&self) -> Result<IframeEnv, EnvError> {
        self.0.borrow_mut().take().ok_or(EnvError::Busy)
    }
    fn put(&self, env: IframeEnv) {
        *self.0.borrow_mut() = Some(env);
    }
}

#[derive(Default, Serialize)]
struct AgentRun {
    running: bool,
    task: String,
    policy: String,
    stats: RunStats,
    error: Option<String>,
    #[serde(skip)]
    stop: bool,
}

#[wasm_bindgen]
pub struct Lab {
    env: Slot,
    run: Rc<RefCell<AgentRun>>,
}

#[wasm_bindgen]
impl Lab {
    /// A lab driving the task page in `iframe`. Agents run with a step cap and a held clock:
    /// episodes end by steps, not by the page's wall-clock limit.
    #[wasm_bindgen(constructor)]
    pub fn new(iframe: HtmlIFrameElement) -> Lab {
        let cfg = EnvConfig { max_steps: Some(20), hold_clock: true, ..EnvConfig::default() };
        Lab { env: Slot(Rc::new(RefCell::new(Some(IframeEnv::new(iframe, cfg))))), run: Rc::default() }
    }

    /// The lab's own tasks (`tasks/index.json`).
    pub fn tasks() -> JsValue {
        to_js(&builtin_tasks())
    }

    pub fn config(&self) -> Result<JsValue, JsValue> {
        let env = self.env.take().map_err(js_err)?;
        let cfg = to_js(env.config());
        self.env.put(env);
        Ok(cfg)
    }

    /// Replaces the environment settings (fields left out keep their defaults).
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&self, cfg: JsValue) -> Result<(), JsValue> {
        let cfg: EnvConfig = serde_wasm_bindgen::from_value(cfg).map_err(|e| js_err(format!("bad config: {e}")))?;
        let mut env = self.env.take().map_err(js_err)?;
        env.set_config(cfg);
        self.env.put(env);
        Ok(())
    }

    /// Starts an episode; resolves to the first observation.
    pub fn reset(&self, task: JsValue, seed: u32) -> Promise {
        let slot = self.env.clone();
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut env = slot.take().map_err(js_err)?;
            let result = env.reset(&spec, seed).await;
            slot.put(env);
            result.map(|o| to_js(&o)).map_err(js_err)
        })
    }

    /// Performs one action (`{"click": ref}`, `{"type": [ref, text]}`, `{"select": [ref, option]}`).
    pub fn step(&self, action: JsValue) -> Promise {
        let slot = self.env.clone();
        future_to_promise(async move {
            let action: Action =
                serde_wasm_bindgen::from_value(action).map_err(|e| js_err(format!("malformed action: {e}")))?;
            let mut env = slot.take().map_err(js_err)?;
            let result = env.step(&action).await;
            slot.put(env);
            result.map(|s| to_js(&s)).map_err(js_err)
        })
    }

    /// A fresh observation of the running episode.
    pub fn observe(&self) -> Result<JsValue, JsValue> {
        let mut env = self.env.take().map_err(js_err)?;
        let obs = env.observe();
        self.env.put(env);
        obs.map(|o| to_js(&o)).map_err(js_err)
    }

    /// Runs `policy` ("random" or "oracle") on `task` for `episodes` episodes (0: until `stop()`),
    /// with seeds `seed, seed+1, ...`. Progress is visible through `agentStats()` while it runs;
    /// resolves to the final statistics.
    #[wasm_bindgen(js_name = runAgent)]
    pub fn run_agent(&self, task: JsValue, policy: String, seed: u32, episodes: u32) -> Promise {
        let slot = self.env.clone();
        let run = self.run.clone();
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut agent = make_policy(&policy, &spec, seed).map_err(js_err)?;
            let mut env = slot.take().map_err(js_err)?;
            *run.borrow_mut() =
                AgentRun { running: true, task: spec.name().to_string(), policy: policy.clone(), ..Default::default() };
            let t0 = now_ms();
            let mut last_yield = t0;
            let mut ep: u32 = 0;
            let mut failure = None;
            while (episodes == 0 || ep < episodes) && !run.borrow().stop {
                match run_episode(&mut env, agent.as_mut(), &spec, seed.wrapping_add(ep), |_, _| {}).await {
                    Ok(result) => {
                        let mut r = run.borrow_mut();
                        r.stats.record(&result);
                        r.stats.set_elapsed((now_ms() - t0) / 1000.0);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
                ep += 1;
                // Let the page paint and the task page's own timers run about every frame.
                if now_ms() - last_yield > 16.0 {
                    yield_now().await;
                    last_yield = now_ms();
                }
            }
            slot.put(env);
            let mut r = run.borrow_mut();
            r.running = false;
            r.stop = false;
            r.stats.set_elapsed((now_ms() - t0) / 1000.0);
            r.error = failure.as_ref().map(ToString::to_string);
            match failure {
                Some(e) => Err(js_err(e)),
                None => Ok(to_js(&*r)),
            }
        })
    }

    /// Asks a running agent to stop after its current episode.
    pub fn stop(&self) {
        let mut r = self.run.borrow_mut();
        if r.running {
            r.stop = true;
        }
    }

    #[wasm_bindgen(js_name = agentStats)]
    pub fn agent_stats(&self) -> JsValue {
        to_js(&*self.run.borrow())
    }
}
