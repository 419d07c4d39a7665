//! The lab as the page's JavaScript sees it: one `Lab` object that owns the task iframes'
//! environments and runs agents in them. Its calls are split by what they serve: here the pages,
//! the environment and fast runs; `watch.rs` watching an agent, `play.rs` playing and recording,
//! `settings.rs` links, presets and files, `navigator.rs` the gMiniWoB navigator.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::HtmlIFrameElement;

use super::env::IframeEnv;
use super::recorder::Recorder;
use super::remote::{EnvReply, EnvRequest, to_js};
use super::util::{now_ms, yield_now};
use super::watch::Watch;
use crate::env::{Action, EnvConfig, EnvError, Environment, Observation, builtin_tasks};
use crate::policy::gminiwob::{SiteOracle, SiteRandom};
use crate::policy::oracle::{Script, scripted_for};
use crate::policy::{Policy, RandomPolicy};
use crate::runner::{EpisodeResult, RunStats, run_episode};
use crate::task::TaskSpec;

pub(super) fn js_err(e: impl std::fmt::Display) -> JsValue {
    js_sys::Error::new(&e.to_string()).into()
}

thread_local! {
    /// Folders a person typed into this tab's task picker (`Lab.allowFolder`), each a
    /// `plain_folder`: their pages open here besides MiniWoB++'s. Never filled from a link, a
    /// file or the store, and gone with the tab.
    static TYPED_FOLDERS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// The folders a person typed into this tab.
pub(super) fn typed_folders() -> Vec<String> {
    TYPED_FOLDERS.with(|f| f.borrow().clone())
}

/// Parses a task given from JS: a plain name (one of the lab's tasks, or `miniwob/<name>` for a
/// real MiniWoB++ page) or a `TaskSpec` object, checked as any task from outside the lab's own
/// code is (`TaskSpec::check_untrusted`; a whole page is refused).
pub(super) fn parse_task(task: JsValue) -> Result<TaskSpec, EnvError> {
    if let Some(name) = task.as_string() {
        return TaskSpec::from_name(&name);
    }
    let spec: TaskSpec = serde_wasm_bindgen::from_value(task).map_err(|e| EnvError::UnknownTask(format!("(malformed task description: {e})")))?;
    spec.check_untrusted_with(&typed_folders())?;
    Ok(spec)
}

pub(super) fn make_policy(kind: &str, task: &TaskSpec, seed: u32) -> Result<Box<dyn Policy>, EnvError> {
    if let Some(design) = task.design() {
        return match kind {
            "random" => Ok(Box::new(SiteRandom::new(seed as u64))),
            "oracle" => Ok(Box::new(SiteOracle::new(design.pages()))),
            "wrong" => Ok(Box::new(SiteOracle::wrong(design.pages(), None))),
            other => Err(EnvError::Browser(format!("unknown policy \"{other}\" for a generated site (random or oracle)"))),
        };
    }
    match kind {
        "random" => Ok(Box::new(RandomPolicy::for_task(seed as u64, task))),
        // The element actions alone on every page (what "random" was before MiniWoB++'s other
        // actions), for comparisons (`RANDOM_POLICY=random-elements scripts/bench-miniwob.sh`).
        "random-elements" => Ok(Box::new(RandomPolicy::new(seed as u64))),
        "oracle" => scripted_for(task, Script::Oracle)
            .map(|p| Box::new(p) as Box<dyn Policy>)
            .ok_or_else(|| EnvError::Browser(format!("no scripted oracle for \"{}\"", task.name()))),
        other => Err(EnvError::Browser(format!("unknown policy \"{other}\" (random or oracle)"))),
    }
}

/// One environment per task iframe. Each lives in a slot it is taken out of for the length of an
/// async call, so two overlapping calls on one page get `Busy` instead of a panic.
#[derive(Clone, Default)]
pub(super) struct Slots(pub(super) Rc<RefCell<Vec<Option<IframeEnv>>>>);

impl Slots {
    pub(super) fn take(&self, i: usize) -> Result<IframeEnv, EnvError> {
        let mut v = self.0.borrow_mut();
        let n = v.len();
        v.get_mut(i).ok_or_else(|| EnvError::Browser(format!("no task page #{i} (the lab has {n})")))?.take().ok_or(EnvError::Busy)
    }
    pub(super) fn put(&self, i: usize, env: IframeEnv) {
        self.0.borrow_mut()[i] = Some(env);
    }
}

/// Answers one environment request from the learner worker with the page's env.
async fn serve(slots: &Slots, request: EnvRequest) -> EnvReply {
    // The worker's page requests name tasks like anything from outside the page's own code.
    if let Err(e) = request.check(&typed_folders()) {
        return EnvReply::Error(e);
    }
    let task = request.page();
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
pub(super) struct AgentRun {
    pub(super) running: bool,
    pub(super) task: String,
    pub(super) policy: String,
    pub(super) stats: RunStats,
    pub(super) error: Option<String>,
    #[serde(skip)]
    pub(super) stop: bool,
}

impl AgentRun {
    /// The fast-run loop `runAgent` and `runNavigator` share: `episode(i)` plays the i-th episode, up to `episodes` of them (0: until
    /// `stop()`), recording each into the statistics and yielding to the page about every frame
    /// so it paints and the task page's own timers run. Returns the error that ended the run.
    pub(super) async fn drive(
        run: &RefCell<AgentRun>,
        episodes: u32,
        mut episode: impl AsyncFnMut(u32) -> Result<EpisodeResult, String>,
    ) -> Option<String> {
        let t0 = now_ms();
        let mut last_yield = t0;
        let mut ep: u32 = 0;
        let mut failure = None;
        while (episodes == 0 || ep < episodes) && !run.borrow().stop {
            match episode(ep).await {
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
            if now_ms() - last_yield > 16.0 {
                yield_now().await;
                last_yield = now_ms();
            }
        }
        let mut r = run.borrow_mut();
        r.running = false;
        r.stop = false;
        r.stats.set_elapsed((now_ms() - t0) / 1000.0);
        r.error.clone_from(&failure);
        failure
    }
}

#[wasm_bindgen]
pub struct Lab {
    pub(super) envs: Slots,
    pub(super) cfg: RefCell<EnvConfig>,
    pub(super) run: Rc<RefCell<AgentRun>>,
    pub(super) watch: Rc<RefCell<Watch>>,
    pub(super) recorder: Rc<RefCell<Option<Recorder>>>,
    /// A loaded gMiniWoB navigator (CPU, inference only); see `super::navigator`.
    pub(super) navigator: Rc<RefCell<Option<crate::navigator::Navigator>>>,
    /// The navigator's episode a person is watching; see `super::navigator`.
    pub(super) nav_watch: Rc<RefCell<super::navigator::NavWatch>>,
    /// What `loadNavigator` said of the loaded navigator (null before one).
    pub(super) navigator_loaded: RefCell<serde_json::Value>,
}

#[wasm_bindgen]
impl Lab {
    /// A lab driving the task page in `iframe` (page #0). Agents run with a step cap and a held
    /// clock: episodes end by steps, not by the page's wall-clock limit.
    #[wasm_bindgen(constructor)]
    pub fn new(iframe: HtmlIFrameElement) -> Lab {
        let cfg = EnvConfig { max_steps: Some(20), hold_clock: true, ..EnvConfig::default() };
        let lab = Lab {
            envs: Slots::default(),
            cfg: RefCell::new(cfg),
            run: Rc::default(),
            watch: Rc::default(),
            recorder: Rc::default(),
            navigator: Rc::default(),
            nav_watch: Rc::default(),
            navigator_loaded: RefCell::new(serde_json::Value::Null),
        };
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

    /// Lets pages of `folder`, which a person typed into the task picker, open in this tab (and
    /// in its training's page requests); returns the folder's normalised spelling, or throws what
    /// is wrong with it (`plain_folder`: a plain path on the app's origin). Call it for what a
    /// person typed, never for a folder read from a link, a file or the store.
    #[wasm_bindgen(js_name = allowFolder)]
    pub fn allow_folder(&self, folder: String) -> Result<String, JsValue> {
        let folder = crate::env::task::plain_folder(folder.trim())
            .map_err(|why| js_err(format!("the folder \"{}\" {why}", crate::env::task::shown(&folder))))?;
        TYPED_FOLDERS.with(|f| {
            let mut f = f.borrow_mut();
            if !f.contains(&folder) {
                f.push(folder.clone());
            }
        });
        Ok(folder)
    }

    /// The folders a person typed into this tab (`allowFolder`), for the learner worker's check.
    #[wasm_bindgen(js_name = typedFolders)]
    pub fn typed_folders_js(&self) -> Vec<String> {
        typed_folders()
    }

    /// The largest file of each kind the lab reads, in bytes (`demo`, `design`, `checkpoint`),
    /// so the page refuses a larger one before reading it: a file read whole that is too large
    /// for the tab's memory aborts the wasm.
    #[wasm_bindgen(js_name = fileLimits)]
    pub fn file_limits() -> JsValue {
        to_js(&serde_json::json!({
            "demo": crate::demo::MAX_DEMO_BYTES,
            "design": crate::gminiwob::design::MAX_JSON_BYTES,
            "checkpoint": crate::learn::checkpoint::MAX_CHECKPOINT_BYTES,
        }))
    }

    /// The lab's own tasks (`tasks/index.json`).
    pub fn tasks() -> JsValue {
        to_js(&builtin_tasks())
    }

    /// The page names the scripted oracles know (they act on the lab's page of that name and on
    /// the real MiniWoB++ page of that name).
    #[wasm_bindgen(js_name = oracleTasks)]
    pub fn oracle_tasks() -> JsValue {
        to_js(&crate::policy::oracle::script_tasks())
    }

    /// The real MiniWoB++ benchmark as the shell needs it: `{version, mount, base, prefix,
    /// tasks}` (`src/env/miniwob.rs`; served when `scripts/setup.sh` fetched the package).
    pub fn miniwob() -> JsValue {
        use crate::env::miniwob::*;
        to_js(&serde_json::json!({
            "version": MINIWOB_VERSION,
            "mount": MINIWOB_MOUNT,
            "base": MINIWOB_BASE,
            "prefix": MINIWOB_PREFIX,
            "tasks": miniwob_tasks(),
        }))
    }

    pub fn config(&self) -> JsValue {
        to_js(&*self.cfg.borrow())
    }

    /// Replaces the environment settings (fields left out keep their defaults) of the pages listed
    /// in `frames`, or of every page (and pages added later) when it is left out. Watching and
    /// training use different pages with different settings.
    #[wasm_bindgen(js_name = setConfig)]
    pub fn set_config(&self, cfg: JsValue, frames: Option<Vec<u32>>) -> Result<(), JsValue> {
        let cfg: EnvConfig = serde_wasm_bindgen::from_value(cfg).map_err(|e| js_err(format!("bad config: {e}")))?;
        let all = frames.is_none();
        let frames: Vec<usize> = match frames {
            Some(f) => f.into_iter().map(|i| i as usize).collect(),
            None => (0..self.frame_count()).collect(),
        };
        for i in frames {
            let mut env = self.envs.take(i).map_err(js_err)?;
            env.set_config(cfg.clone());
            self.envs.put(i, env);
        }
        if all {
            *self.cfg.borrow_mut() = cfg;
        }
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

    /// Each field of the generated site on page #0 and whether it is right, Φ, the page showing,
    /// and the page's outcome so far; null when page #0 does not show a generated site.
    #[wasm_bindgen(js_name = siteStatus)]
    pub fn site_status(&self) -> Result<JsValue, JsValue> {
        let env = self.envs.take(0).map_err(js_err)?;
        let status = env.site_status();
        let outcome = env.page_outcome();
        self.envs.put(0, env);
        let (Some(status), Some(o)) = (status, outcome) else { return Ok(JsValue::NULL) };
        Ok(to_js(&serde_json::json!({
            "potential": status.potential,
            "page": status.page,
            "pages": status.pages,
            "fields": status.fields,
            "done": o.done,
            "reward": o.reward,
            "raw_reward": o.raw_reward,
            "reason": o.reason,
        })))
    }

    /// Whether an episode that ended with `raw_reward` succeeded (`env::is_success`, the one rule;
    /// the views colour and keep by it).
    #[wasm_bindgen(js_name = isSuccess)]
    pub fn is_success(raw_reward: f64) -> bool {
        crate::env::is_success(raw_reward)
    }

    /// A one-line description of `action` on the page `observation` shows (step lists).
    #[wasm_bindgen(js_name = describeAction)]
    pub fn describe_action(observation: JsValue, action: JsValue) -> Result<String, JsValue> {
        let action: Action = serde_wasm_bindgen::from_value(action).map_err(|e| js_err(format!("malformed action: {e}")))?;
        let obs: Option<Observation> = serde_wasm_bindgen::from_value(observation).ok();
        Ok(action.describe(obs.as_ref().map(|o| &o.dom)))
    }

    /// Performs one action: the lab's element actions (`{"click": ref}`, `{"type": [ref, text]}`,
    /// `{"select": [ref, option]}`, `{"set_value": [ref, value]}`) or MiniWoB++'s others
    /// (`{"click_at": [x, y]}`, `{"drag": [[x, y], …]}`, `{"key": "C-c"}`, …; `docs/actions.md`).
    pub fn step(&self, action: JsValue) -> Promise {
        let slots = self.envs.clone();
        future_to_promise(async move {
            let action: Action = serde_wasm_bindgen::from_value(action).map_err(|e| js_err(format!("malformed action: {e}")))?;
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
            *run.borrow_mut() = AgentRun { running: true, task: spec.name().to_string(), policy: policy.clone(), ..Default::default() };
            let failure = AgentRun::drive(&run, episodes, async |ep| {
                run_episode(&mut env, agent.as_mut(), &spec, seed.wrapping_add(ep), |_, _| {}).await.map_err(|e| e.to_string())
            })
            .await;
            slots.put(0, env);
            let r = run.borrow();
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
