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
use super::recorder::Recorder;
use super::remote::{EnvReply, EnvRequest};
use super::util::{now_ms, yield_now};
use crate::demo::{Demonstration, replay};
use crate::dom_q_net::checkpoint::Checkpoint;
use crate::dom_q_net::train::{GreedyEpisode, held_out_seed};
use crate::dom_q_net::{DomQNetAgent, DqnConfig, QView};
use crate::env::{Action, EnvConfig, EnvError, Environment, Observation, builtin_tasks};
use crate::policy::gminiwob::{SiteOracle, SiteRandom};
use crate::policy::oracle::{Script, scripted_for};
use crate::policy::{Policy, RandomPolicy};
use crate::runner::{EpisodeResult, RunStats, run_episode};
use crate::share::ShareState;
use crate::task::TaskSpec;

use super::remote::to_js;

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

fn make_policy(kind: &str, task: &TaskSpec, seed: u32) -> Result<Box<dyn Policy>, EnvError> {
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
pub(super) struct Slots(Rc<RefCell<Vec<Option<IframeEnv>>>>);

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

/// One step of the watched DOM-Q-Net agent under its evaluation rules ([`GreedyEpisode`], the
/// trainer's `evaluate` rules): greedy, a misfit action is a step that changes nothing, the
/// agent's step cap ends the episode, and its vocabularies are put back when the episode ends.
async fn agent_step(slots: &Slots, watch: &Rc<RefCell<Watch>>, obs: Observation) -> Result<JsValue, JsValue> {
    let (agent, episode) = {
        let mut w = watch.borrow_mut();
        (w.agent.take(), w.episode.take())
    };
    let (Some((name, mut agent)), Some(mut episode)) = (agent, episode) else {
        return Err(js_err("no DOM-Q-Net agent is loaded"));
    };
    let decided = episode.decide(&mut agent, &obs).await;
    let env = slots.take(0);
    let (d, mut env) = match (decided, env) {
        (Ok(d), Ok(env)) => (d, env),
        (decided, env) => {
            // Nothing was sent: the episode ends here, and the agent gets its vocabularies back.
            let error = match (&decided, &env) {
                (Err(e), _) => js_err(e),
                (_, Err(e)) => js_err(e),
                _ => js_err("unreachable"),
            };
            if let Ok(env) = env {
                slots.put(0, env);
            }
            episode.abandon(&mut agent, ());
            let mut w = watch.borrow_mut();
            w.agent = Some((name, agent));
            w.done = true;
            return Err(error);
        }
    };
    let outcome = env.step(&d.env_action).await;
    slots.put(0, env);
    let misfit = matches!(outcome, Err(EnvError::BadTarget { .. }));
    let recorded = episode.record(&mut agent, &obs, outcome);
    let mut w = watch.borrow_mut();
    w.agent = Some((name, agent));
    let (step, end) = match recorded {
        Ok(r) => r,
        Err(e) => {
            w.done = true;
            return Err(js_err(e));
        }
    };
    if end.is_none() {
        w.episode = Some(episode);
    }
    w.obs = Some(step.observation.clone());
    w.done = step.done;
    let mut description = d.env_action.describe(Some(&obs.dom));
    if misfit {
        description.push_str(" (it does not fit its target: nothing happened)");
    }
    Ok(to_js(&WatchStep { description, action: d.env_action, q: Some(d.q), step }))
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

/// An agent acting step by step on page #0 while a person watches.
#[derive(Default)]
struct Watch {
    /// The loaded DOM-Q-Net agent (CPU, inference only) and its name.
    agent: Option<(String, DomQNetAgent)>,
    policy: String,
    scripted: Option<Box<dyn Policy>>,
    obs: Option<Observation>,
    done: bool,
    /// The agent's episode under its evaluation rules (`GreedyEpisode`), while it runs.
    episode: Option<GreedyEpisode>,
    /// The page's seed.
    seed: u32,
}

#[derive(Serialize)]
struct WatchStep {
    action: Action,
    description: String,
    q: Option<QView>,
    step: crate::env::Step,
}

#[wasm_bindgen]
pub struct Lab {
    pub(super) envs: Slots,
    cfg: RefCell<EnvConfig>,
    pub(super) run: Rc<RefCell<AgentRun>>,
    watch: Rc<RefCell<Watch>>,
    recorder: Rc<RefCell<Option<Recorder>>>,
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

    // ------------------------------------------------------------------ watching an agent

    /// Loads a DOM-Q-Net checkpoint as the agent to watch (CPU, inference only). A file that is
    /// not a valid checkpoint is refused with a message and the current agent stays.
    #[wasm_bindgen(js_name = loadAgent)]
    pub fn load_agent(&self, bytes: Vec<u8>, name: String) -> Result<JsValue, JsValue> {
        let ckpt = Checkpoint::from_bytes(&bytes).map_err(js_err)?;
        let header = to_js(&ckpt.header);
        let agent = DomQNetAgent::from_checkpoint(ckpt, &burn::prelude::Device::flex()).map_err(js_err)?;
        let mut w = self.watch.borrow_mut();
        w.agent = Some((name, agent));
        w.episode = None;
        Ok(header)
    }

    /// The loaded agent's name, tasks and counters, or null.
    #[wasm_bindgen(js_name = agentInfo)]
    pub fn agent_info(&self) -> JsValue {
        match &self.watch.borrow().agent {
            Some((name, a)) => to_js(&serde_json::json!({ "name": name, "counters": a.counters, "config": a.cfg })),
            None => JsValue::NULL,
        }
    }

    /// Starts an episode for watching `policy` ("dqn", "random" or "oracle") act step by step.
    #[wasm_bindgen(js_name = watchReset)]
    pub fn watch_reset(&self, task: JsValue, seed: u32, policy: String) -> Promise {
        let (slots, watch) = (self.envs.clone(), self.watch.clone());
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let scripted = match policy.as_str() {
                "dqn" if watch.borrow().agent.is_none() => return Err(js_err("no DOM-Q-Net agent is loaded")),
                "dqn" => None,
                other => Some(make_policy(other, &spec, seed).map_err(js_err)?),
            };
            // An agent is watched under its evaluation rules (`GreedyEpisode`): on a seed it
            // never trained on, cut by its own step cap (not the page's).
            let agent = scripted.is_none();
            let seed = if agent { held_out_seed(seed) } else { seed };
            {
                // An unfinished episode gives the agent its vocabularies back first.
                let w = &mut *watch.borrow_mut();
                if let (Some(ep), Some((_, a))) = (w.episode.take(), w.agent.as_mut()) {
                    ep.abandon(a, ());
                }
            }
            let mut env = slots.take(0).map_err(js_err)?;
            if agent {
                env.set_config(EnvConfig { max_steps: None, ..env.config().clone() });
            }
            let result = env.reset(&spec, seed).await;
            slots.put(0, env);
            let obs = result.map_err(js_err)?;
            let mut w = watch.borrow_mut();
            w.episode = if agent { w.agent.as_ref().map(|(_, a)| GreedyEpisode::begin(a, seed)) } else { None };
            w.seed = seed;
            w.policy = policy;
            w.scripted = scripted;
            w.obs = Some(obs.clone());
            w.done = false;
            Ok(to_js(&obs))
        })
    }

    /// The watched policy's next action, performed; with DOM-Q-Net's Q-values when it acts.
    #[wasm_bindgen(js_name = watchStep)]
    pub fn watch_step(&self) -> Promise {
        let (slots, watch) = (self.envs.clone(), self.watch.clone());
        future_to_promise(async move {
            let (obs, policy) = {
                let w = watch.borrow();
                if w.done {
                    return Err(js_err(EnvError::EpisodeDone));
                }
                (w.obs.clone().ok_or_else(|| js_err(EnvError::NoEpisode))?, w.policy.clone())
            };
            if policy == "dqn" {
                return agent_step(&slots, &watch, obs).await;
            }
            let a = watch.borrow_mut().scripted.as_mut().and_then(|p| p.act(&obs));
            let action = a.ok_or_else(|| js_err("the policy has no action here"))?;
            let mut env = slots.take(0).map_err(js_err)?;
            let result = env.step(&action).await;
            slots.put(0, env);
            let step = result.map_err(js_err)?;
            let mut w = watch.borrow_mut();
            w.obs = Some(step.observation.clone());
            w.done = step.done;
            Ok(to_js(&WatchStep { description: action.describe(Some(&obs.dom)), action, q: None, step }))
        })
    }

    /// The page seed of the watched episode: the seed `watchReset` was given, or for an agent the
    /// held-out seed that stands for it (`train::held_out_seed`).
    #[wasm_bindgen(js_name = watchSeed)]
    pub fn watch_seed(&self) -> u32 {
        self.watch.borrow().seed
    }

    // ------------------------------------------------------------------ recording a person

    /// Starts an episode of `task` with `seed` for a person to play on page #0, recording it.
    /// The page keeps its own time limit (people are not held).
    #[wasm_bindgen(js_name = startRecording)]
    pub fn start_recording(&self, task: JsValue, seed: u32) -> Promise {
        if let Some(old) = self.recorder.borrow_mut().take() {
            old.finish(&self.envs.0);
        }
        let (slots, recorder) = (self.envs.clone(), self.recorder.clone());
        let cfg = EnvConfig { max_steps: None, hold_clock: false, ..self.cfg.borrow().clone() };
        future_to_promise(async move {
            let spec = parse_task(task).map_err(js_err)?;
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            env.set_config(cfg);
            let result = env.reset(&spec, seed).await;
            env.set_config(previous);
            slots.put(0, env);
            let obs = result.map_err(js_err)?;
            *recorder.borrow_mut() = Some(Recorder::start(&slots.0, spec, seed).map_err(js_err)?);
            Ok(to_js(&obs))
        })
    }

    /// What has been recorded so far: step descriptions, and the outcome once the episode ended.
    #[wasm_bindgen(js_name = recordingState)]
    pub fn recording_state(&self) -> JsValue {
        let rec = self.recorder.borrow();
        let Some(rec) = rec.as_ref() else { return JsValue::NULL };
        let s = rec.state.borrow();
        let steps: Vec<String> = s.steps.iter().map(|st| st.action.describe(Some(&st.observation.dom))).collect();
        let actions: Vec<&Action> = s.steps.iter().map(|st| &st.action).collect();
        to_js(&serde_json::json!({
            "steps": steps,
            "actions": actions,
            "done": s.outcome.is_some(),
            "reward": s.outcome.as_ref().map(|o| o.0),
            "raw_reward": s.outcome.as_ref().map(|o| o.1),
            "reason": s.outcome.as_ref().and_then(|o| o.2.clone()),
            "exact": s.exact,
        }))
    }

    /// Stops recording; returns the demonstration as JSON text.
    #[wasm_bindgen(js_name = stopRecording)]
    pub fn stop_recording(&self) -> Result<String, JsValue> {
        let rec = self.recorder.borrow_mut().take().ok_or_else(|| js_err("nothing is being recorded"))?;
        serde_json::to_string(&rec.finish(&self.envs.0)).map_err(js_err)
    }

    /// Reads a demonstration file's text as `replayDemonstration` would (size, format, task), so
    /// the page shows its task and seed only once it is known to be one; throws what is wrong.
    /// Returns `{task, seed, steps, raw_reward}`.
    #[wasm_bindgen(js_name = readDemonstration)]
    pub fn read_demonstration(&self, json: String) -> Result<JsValue, JsValue> {
        let demo = Demonstration::from_json_in(&json, &typed_folders()).map_err(js_err)?;
        Ok(to_js(&serde_json::json!({ "task": demo.task, "seed": demo.seed, "steps": demo.steps.len(), "raw_reward": demo.raw_reward })))
    }

    /// Replays a demonstration file on page #0; resolves with how it went.
    #[wasm_bindgen(js_name = replayDemonstration)]
    pub fn replay_demonstration(&self, json: String) -> Promise {
        let slots = self.envs.clone();
        future_to_promise(async move {
            let demo = Demonstration::from_json_in(&json, &typed_folders()).map_err(js_err)?;
            let actions: Vec<Action> = demo.actions().cloned().collect();
            let expected: Vec<Observation> = demo.steps.iter().map(|s| s.observation.clone()).collect();
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            // A person's pace is not replayed: hold the clock, and allow exactly the recorded steps.
            let steps = Some(actions.len().max(1) as u32);
            env.set_config(EnvConfig { data_mode: demo.data_mode.clone(), max_steps: steps, hold_clock: true, ..previous.clone() });
            let result = replay(&mut env, &demo.task, demo.seed, &actions, Some(&expected)).await;
            env.set_config(previous);
            slots.put(0, env);
            result.map(|r| to_js(&r)).map_err(js_err)
        })
    }

    // ------------------------------------------------------------------ links, configs, files

    /// Parses a share-link fragment; throws a message when it is malformed or tampered with.
    #[wasm_bindgen(js_name = parseShare)]
    pub fn parse_share(fragment: String, known_agents: JsValue) -> Result<JsValue, JsValue> {
        let agents: Vec<String> = serde_wasm_bindgen::from_value(known_agents).unwrap_or_default();
        ShareState::decode(&fragment, &agents).map(|s| to_js(&s)).map_err(js_err)
    }

    /// The fragment (`s=...`) for a share state.
    #[wasm_bindgen(js_name = encodeShare)]
    pub fn encode_share(state: JsValue, known_agents: JsValue) -> Result<String, JsValue> {
        let state: ShareState = serde_wasm_bindgen::from_value(state).map_err(|e| js_err(format!("bad share state: {e}")))?;
        let agents: Vec<String> = serde_wasm_bindgen::from_value(known_agents).unwrap_or_default();
        state.validate(&agents).map_err(js_err)?;
        Ok(state.encode())
    }

    /// When a DOM-Q-Net task counts as solved: `rate` success over the last `window` episodes
    /// (`dom_q_net::train::SOLVE_RATE`), for the Train view's words.
    #[wasm_bindgen(js_name = dqnSolveRule)]
    pub fn dqn_solve_rule() -> JsValue {
        to_js(&serde_json::json!({ "rate": crate::dom_q_net::train::SOLVE_RATE, "window": crate::runner::RunStats::WINDOW }))
    }

    /// DOM-Q-Net's hyperparameters with the paper's values.
    #[wasm_bindgen(js_name = defaultDqnConfig)]
    pub fn default_dqn_config() -> JsValue {
        to_js(&DqnConfig::default())
    }

    /// The reference code's choices where it differs from the paper ([`DqnConfig::reference_code`]):
    /// every choice of the authors' code (37-d local module, T = 7, deeper streams, α = β = 0.8, …).
    #[wasm_bindgen(js_name = referenceCodeDqnConfig)]
    pub fn reference_code_dqn_config() -> JsValue {
        to_js(&DqnConfig::reference_code())
    }

    /// The paper's settings with the reference code's smaller network ([`DqnConfig::code_sizes`]),
    /// the preset the README's multitask figure was measured with.
    #[wasm_bindgen(js_name = codeSizesDqnConfig)]
    pub fn code_sizes_dqn_config() -> JsValue {
        to_js(&DqnConfig::code_sizes())
    }

    /// The preset for the 9-task set in a tab ([`DqnConfig::fast_tab`]): the code's sizes with
    /// a minibatch of 32 and Adam 3e-4.
    #[wasm_bindgen(js_name = fastTabDqnConfig)]
    pub fn fast_tab_dqn_config() -> JsValue {
        to_js(&DqnConfig::fast_tab())
    }

    /// The preset `name` (paper, reference-code, code-sizes or fast-tab) for training on `tasks`
    /// (names): the paper's buffer and T follow the tasks ([`DqnConfig::named_for_tasks`]).
    #[wasm_bindgen(js_name = dqnPreset)]
    pub fn dqn_preset(name: String, tasks: Vec<String>) -> Result<JsValue, JsValue> {
        DqnConfig::named_for_tasks(&name, &tasks).map(|c| to_js(&c)).map_err(js_err)
    }

    /// Times DOM-Q-Net's update on the CPU backend in this tab, phase by phase, with the
    /// simulator's pages (`dom_q_net::bench`; `bench-dqn --update-profile`). A benchmark: it
    /// runs on the calling thread. `preset`: paper, reference-code, code-sizes or fast-tab.
    #[wasm_bindgen(js_name = benchDqnUpdate)]
    pub fn bench_dqn_update(preset: String, updates: usize, batch: usize) -> Promise {
        use crate::dom_q_net::bench;
        future_to_promise(async move {
            let cfg = bench::preset(&preset).map_err(|e| JsValue::from_str(&e))?;
            let cfg = DqnConfig { batch_size: batch, seed: 7, ..cfg };
            let device = burn::prelude::Device::flex().autodiff();
            let result = bench::bench_updates(cfg, &device, updates, now_ms).await.map_err(|e| JsValue::from_str(&e))?;
            Ok(to_js(&result))
        })
    }

    /// Checks edited hyperparameters; returns the complete config or throws what is wrong.
    #[wasm_bindgen(js_name = checkDqnConfig)]
    pub fn check_dqn_config(cfg: JsValue) -> Result<JsValue, JsValue> {
        let cfg: DqnConfig = serde_wasm_bindgen::from_value(cfg).map_err(|e| js_err(format!("bad settings: {e}")))?;
        cfg.validate().map_err(js_err)?;
        Ok(to_js(&cfg))
    }

    /// Reads a checkpoint file's header; throws a clear message for anything that is not one.
    #[wasm_bindgen(js_name = inspectCheckpoint)]
    pub fn inspect_checkpoint(bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        Checkpoint::from_bytes(&bytes).map(|c| to_js(&c.header)).map_err(js_err)
    }
}
