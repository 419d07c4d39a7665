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
use super::remote::{EnvReply, EnvRequest};
use super::util::{now_ms, yield_now};
use crate::env::{Action, EnvConfig, EnvError, Environment, TaskSpec, builtin_tasks};
use crate::policy::oracle::{Script, scripted};
use crate::policy::{Policy, RandomPolicy};
use crate::runner::{RunStats, run_episode};

use super::remote::to_js;

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

/// One environment per task iframe. Each lives in a slot it is taken out of for the length of an
/// async call, so two overlapping calls on one page get `Busy` instead of a panic.
#[derive(Clone, Default)]
struct Slots(Rc<RefCell<Vec<Option<IframeEnv>>>>);

impl Slots {
    fn take(&self, i: usize) -> Result<IframeEnv, EnvError> {
        let mut v = self.0.borrow_mut();
        let n = v.len();
        v.get_mut(i)
            .ok_or_else(|| EnvError::Browser(format!("no task page #{i} (the lab has {n})")))?
            .take()
            .ok_or(EnvError::Busy)
    }
    fn put(&self, i: usize, env: IframeEnv) {
        self.0.borrow_mut()[i] = Some(env);
    }
}

/// Answers one environment request from the learner worker with the page's env.
async fn serve(slots: &Slots, request: EnvRequest) -> EnvReply {
    let task = match &request {
        EnvRequest::Reset { task, .. } | EnvRequest::Step { task, .. } => *task,
    };
    let mut env = match slots.take(task) {
        Ok(env) => env,
        Err(e) => return EnvReply::Error(e),
    };
    let reply = match request {
        EnvRequest::Reset { spec, seed, .. } => match env.reset(&spec, seed).await {
            Ok(o) => EnvReply::Observation(o),
            Err(e) => EnvReply::Error(e),
        },
        EnvRequest::Step { action, .. } => match env.step(&action).await {
            Ok(s) => EnvReply::Step(s),
            Err(e) => EnvReply::Error(e),
        },
    };
    slots.put(task, env);
    reply
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
    envs: Slots,
    cfg: RefCell<EnvConfig>,
    run: Rc<RefCell<AgentRun>>,
}

#[wasm_bindgen]
impl Lab {
    /// A lab driving the task page in `iframe` (page #0). Agents run with a step cap and a held
    /// clock: episodes end by steps, not by the page's wall-clock limit.
    #[wasm_bindgen(constructor)]
    pub fn new(iframe: HtmlIFrameElement) -> Lab {
        let cfg = EnvConfig { max_steps: Some(20), hold_clock: true, ..EnvConfig::default() };
        let lab = Lab { envs: Slots::default(), cfg: RefCell::new(cfg), run: Rc::default() };
        lab.add_frame(iframe);
        lab
    }

    /// Adds another task page (for multitask training); returns its index.
    #[wasm_bindgen(js_name = addFrame)]
    pub fn add_frame(&self, iframe: HtmlIFrameElement) -> usize {
        let mut v = self.envs.0.borrow_mut();
        v.push(Some(IframeEnv::new(iframe, self.cfg.borrow().clone())));
        v.len() - 1
    }

    /// Number of task pages.
    #[wasm_bindgen(js_name = frameCount)]
    pub fn frame_count(&self) -> usize {
        self.envs.0.borrow().len()
    }

    /// Answers an environment request from the learner worker (`{op: "reset", task, spec, seed}`
    /// or `{op: "step", task, action}`); resolves with the reply to post back.
    #[wasm_bindgen(js_name = serveEnv)]
    pub fn serve_env(&self, request: JsValue) -> Promise {
        let slots = self.envs.clone();
        future_to_promise(async move {
            let reply = match serde_wasm_bindgen::from_value::<EnvRequest>(request) {
                Ok(req) => serve(&slots, req).await,
                Err(e) => EnvReply::Error(EnvError::Browser(format!("malformed request: {e}"))),
            };
            Ok(to_js(&reply))
        })
    }

    /// The lab's own tasks (`tasks/index.json`).
    pub fn tasks() -> JsValue {
        to_js(&builtin_tasks())
    }

    pub fn config(&self) -> JsValue {
        to_js(&*self.cfg.borrow())
    }

    /// Replaces the environment settings of every page (fields left out keep their defaults).
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&self, cfg: JsValue) -> Result<(), JsValue> {
        let cfg: EnvConfig = serde_wasm_bindgen::from_value(cfg).map_err(|e| js_err(format!("bad config: {e}")))?;
        for i in 0..self.frame_count() {
            let mut env = self.envs.take(i).map_err(js_err)?;
            env.set_config(cfg.clone());
            self.envs.put(i, env);
        }
        *self.cfg.borrow_mut() = cfg;
        Ok(())
    }

    /// Starts an episode; resolves to the first observation.
    pub fn reset(&self, task: JsValue, seed: u32) -> Promise {
        let slots = self.envs.clone();
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut env = slots.take(0).map_err(js_err)?;
            let result = env.reset(&spec, seed).await;
            slots.put(0, env);
            result.map(|o| to_js(&o)).map_err(js_err)
        })
    }

    /// Performs one action (`{"click": ref}`, `{"type": [ref, text]}`, `{"select": [ref, option]}`).
    pub fn step(&self, action: JsValue) -> Promise {
        let slots = self.envs.clone();
        future_to_promise(async move {
            let action: Action =
                serde_wasm_bindgen::from_value(action).map_err(|e| js_err(format!("malformed action: {e}")))?;
            let mut env = slots.take(0).map_err(js_err)?;
            let result = env.step(&action).await;
            slots.put(0, env);
            result.map(|s| to_js(&s)).map_err(js_err)
        })
    }

    /// A fresh observation of the running episode.
    pub fn observe(&self) -> Result<JsValue, JsValue> {
        let mut env = self.envs.take(0).map_err(js_err)?;
        let obs = env.observe();
        self.envs.put(0, env);
        obs.map(|o| to_js(&o)).map_err(js_err)
    }

    /// Runs `policy` ("random" or "oracle") on `task` for `episodes` episodes (0: until `stop()`),
    /// with seeds `seed, seed+1, ...`. Progress is visible through `agentStats()` while it runs;
    /// resolves to the final statistics.
    #[wasm_bindgen(js_name = runAgent)]
    pub fn run_agent(&self, task: JsValue, policy: String, seed: u32, episodes: u32) -> Promise {
        let slots = self.envs.clone();
        let run = self.run.clone();
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut agent = make_policy(&policy, &spec, seed).map_err(js_err)?;
            let mut env = slots.take(0).map_err(js_err)?;
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
            slots.put(0, env);
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
