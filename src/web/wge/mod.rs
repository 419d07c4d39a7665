//! The WGE view's edge: the demonstrations a person gathers for one task (recorded in the app,
//! made by the scripted oracle, or imported in the published WGE format), each demonstration's
//! induced workflow lattice as readable constraints, and the state the view saves so a reload
//! resumes it. Induction and every rule that decides a result live in `crate::wge`; this room
//! only gathers, converts and reports.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::IframeEnv;
use super::app::{Lab, Slots, js_err};
use super::remote::to_js;
use crate::demo::{DemoStep, Demonstration};
use crate::env::{EnvConfig, Environment};
use crate::learn::Agent;
use crate::learn::checkpoint::{FNV_START, Precision, fnv1a_on};
use crate::policy::Policy;
use crate::policy::oracle::{Script, scripted};
use crate::share::{
    DemoMaker, MAX_WGE_DEMOS, MAX_WGE_EPISODES, MAX_WGE_EVENTS, Replay, SHARE_VERSION, ShareState, SharedDemo, WgeEvent, WgeRecipe, WgeResult,
};
use crate::task::{Env, TaskSpec};
use crate::wge::config::WgeConfig;
use crate::wge::demo_import::MAX_WGE_FILE_BYTES;
use crate::wge::domnet_config::{NeuralConfig, Words};
use crate::wge::explore::{run_episode, train_episode};
use crate::wge::neural::NeuralPolicy;
use crate::wge::policy::{Mode, WorkflowPolicy};
use crate::wge::replay::ReplayEpisode;

pub mod import;
mod share;
mod view;
mod words;
pub use crate::wge::session::{DemoSource, MAX_DEMOS, WGE_VIEW_FORMAT};
use crate::wge::session::{Entry, LEGACY_MAX_STEPS, Played, SUCCESS_WINDOW, SavedNeural, State, Tally, spec_of};
use import::{ImportReport, from_lab_demo, induce_yielding, read_file};
use share::Plan;
use view::{DemoView, ExploredEpisode, NeuralView, explored_view, neural_view, view_of};

/// Most steps a scripted demonstration may take before it counts as failed.
const SCRIPTED_MAX_STEPS: u32 = 30;
/// The neural policy is judged greedily on seeds from here (`EVAL_SEEDS_FROM + k`), apart from
/// the exploration seeds, which count up from the seed box.
const EVAL_SEEDS_FROM: u32 = 1 << 30;
/// A shared run's policies are evaluated greedily on this many seeds from `EVAL_SEEDS_FROM`.
const SHARE_EVAL_SEEDS: u32 = 10;

/// The session's parts an async call takes along (each shared with the [`WgeSession`]).
#[derive(Clone)]
struct Core {
    envs: Slots,
    state: Rc<RefCell<State>>,
    /// DOMNet trained from the workflow policy's episodes (`wge::neural`), once asked for; taken
    /// out for the length of an async call.
    neural: Rc<RefCell<Option<NeuralPolicy>>>,
    neural_on: Rc<RefCell<bool>>,
}

/// The WGE view's session: its task and demonstrations, on the lab's page #0.
#[wasm_bindgen]
pub struct WgeSession {
    core: Core,
    /// What the restored session said of DOMNet, until its checkpoint is read (`restoreNeural`).
    pending_neural: Rc<RefCell<Option<SavedNeural>>>,
    /// A shared run being re-run (`openRun`, `reproduceStep`, `evaluateRun`).
    plan: Rc<RefCell<Option<Plan>>>,
}

fn new_neural(cfg: NeuralConfig) -> Result<NeuralPolicy, String> {
    let vectors = words::vectors_for(&cfg)?;
    NeuralPolicy::with_word_vectors(cfg, vectors, &burn::prelude::Device::flex().autodiff())
}

/// DOMNet as a reload brings it back: from its checkpoint (weights, vocabularies, counters) and
/// Adam's moments; its replay and sampling start afresh. Refused unless it has the view's settings
/// for the run (`State::domnet_config`).
fn neural_from_bytes(checkpoint: &[u8], optimizer: Option<&[u8]>, cfg: &NeuralConfig) -> Result<NeuralPolicy, String> {
    let vectors = words::vectors_for(cfg)?;
    let mut n =
        NeuralPolicy::from_checkpoint_with_word_vectors(checkpoint, vectors, &burn::prelude::Device::flex().autodiff()).map_err(|e| e.to_string())?;
    if n.cfg != *cfg {
        return Err("it was trained with other settings than the view's".into());
    }
    if let Some(o) = optimizer {
        n.load_optimizer_state(o)?;
    }
    Ok(n)
}

impl Core {
    fn with_env(&self) -> Result<IframeEnv, String> {
        self.envs.take(0).map_err(|e| e.to_string())
    }

    /// Starts DOMNet learning (built afresh when there is none) or stops it, and logs a change.
    fn set_neural(&self, on: bool) -> Result<(), String> {
        if on && self.neural.borrow().is_none() {
            let cfg = self.state.borrow().domnet_config();
            *self.neural.borrow_mut() = Some(new_neural(cfg)?);
        }
        if on != *self.neural_on.borrow() {
            *self.neural_on.borrow_mut() = on;
            self.state.borrow_mut().log(if on { WgeEvent::NeuralOn } else { WgeEvent::NeuralOff });
        }
        Ok(())
    }

    fn drop_neural(&self) {
        *self.neural.borrow_mut() = None;
        *self.neural_on.borrow_mut() = false;
        self.state.borrow_mut().log(WgeEvent::NeuralDropped);
    }

    /// Both policies start afresh over the demonstrations (DOMNet too, when it is learning).
    fn restart(&self) -> Result<(), String> {
        self.state.borrow_mut().reset_policy();
        *self.neural.borrow_mut() = None;
        if *self.neural_on.borrow() {
            *self.neural_on.borrow_mut() = false;
            if let Err(e) = self.set_neural(true) {
                return Err(format!("the neural policy could not start again: {e}"));
            }
        }
        Ok(())
    }

    /// DOMNet's checkpoint and Adam's moments, when there is a DOMNet.
    async fn neural_bytes(&self) -> Result<Option<(Vec<u8>, Option<Vec<u8>>)>, String> {
        let Some(n) = self.neural.borrow_mut().take() else { return Ok(None) };
        let task: Vec<String> = self.state.borrow().task.iter().cloned().collect();
        let result = async { Ok::<_, String>((n.checkpoint(&task, Precision::Full).await?, n.optimizer_state().await?)) }.await;
        *self.neural.borrow_mut() = Some(n);
        result.map(Some)
    }

    /// What a reload does to the policies, without the page: each through its saved form.
    async fn reload(&self) -> Result<(), String> {
        let bytes = self.neural_bytes().await?;
        let mut s = self.state.borrow_mut();
        s.policy = WorkflowPolicy::from_json(&s.policy.to_json())?;
        if let Some((c, o)) = bytes {
            *self.neural.borrow_mut() = Some(neural_from_bytes(&c, o.as_deref(), &s.domnet_config())?);
        }
        s.log(WgeEvent::Reload);
        Ok(())
    }

    /// One exploration episode and both policies' updates from it.
    async fn explore(&self) -> Result<ExploredEpisode, String> {
        let (task, seed, mut policy) = {
            let s = self.state.borrow();
            let task = s.task.clone().filter(|_| !s.demos.is_empty()).ok_or("add a demonstration first")?;
            (task, s.tally.next_seed, s.policy.clone())
        };
        let learning = (*self.neural_on.borrow()).then(|| self.neural.clone());
        let spec = spec_of(&task)?;
        let mut env = self.with_env()?;
        let previous = env.config().clone();
        // The workflow policy caps its own episodes; the page's clock is held between actions.
        env.set_config(EnvConfig { max_steps: None, hold_clock: true, data_mode: "train".into(), ..previous.clone() });
        let result = train_episode(&mut env, &mut policy, &spec, seed).await;
        env.set_config(previous);
        self.envs.put(0, env);
        let episode = result.map_err(|e| e.to_string())?;
        // The neural policy learns from the episode (its replay keeps successes only).
        if let Some(cell) = &learning {
            let taken = cell.borrow_mut().take();
            if let Some(mut n) = taken {
                let pairs = episode.pairs().map(|(o, a)| (o.clone(), a.clone())).collect();
                let learned = n.observe_exploration(ReplayEpisode::new(pairs, episode.ret())).await;
                *cell.borrow_mut() = Some(n);
                learned.map_err(|e| format!("the neural policy's update failed: {e}"))?;
            }
        }
        let mut s = self.state.borrow_mut();
        // The demonstrations may have changed while the page acted: then this episode's
        // update belongs to a policy that is gone, and only its outcome is shown.
        if s.policy.demos().len() == policy.demos().len() && s.task.as_deref() == Some(task.as_str()) {
            s.policy = policy;
            if s.tally.episodes == 0
                && let Some(run) = &mut s.run
            {
                run.first_seed = Some(seed);
            }
            s.tally.record(episode.succeeded());
            s.tally.next_seed = seed.wrapping_add(1);
        }
        Ok(explored_view(&episode, &s.policy, &s.tally))
    }

    /// DOMNet, greedy, on `seeds` held-out pages (logged: the pages' words join its vocabularies).
    async fn judge(&self, seeds: u32) -> Result<NeuralView, String> {
        let task = self.state.borrow().task.clone().ok_or("add a demonstration first")?;
        let spec = spec_of(&task)?;
        let on = *self.neural_on.borrow();
        let mut policy = self.neural.borrow_mut().take().ok_or("the neural policy is not being trained")?;
        self.state.borrow_mut().log(WgeEvent::Judge(seeds));
        let mut env = match self.with_env() {
            Ok(env) => env,
            Err(e) => {
                *self.neural.borrow_mut() = Some(policy);
                return Err(e);
            }
        };
        let previous = env.config().clone();
        env.set_config(EnvConfig { max_steps: None, hold_clock: true, data_mode: "train".into(), ..previous.clone() });
        let result = policy.evaluate(&mut env, &spec, (0..seeds).map(|k| EVAL_SEEDS_FROM + k)).await;
        env.set_config(previous);
        self.envs.put(0, env);
        let view = neural_view(Some(&policy), on, result.as_ref().ok().copied(), seeds);
        *self.neural.borrow_mut() = Some(policy);
        result?;
        Ok(view)
    }
}

#[wasm_bindgen]
impl Lab {
    /// A WGE session acting on the lab's page #0 (the page the Watch and Play views use).
    #[wasm_bindgen(js_name = wgeSession)]
    pub fn wge_session(&self) -> WgeSession {
        WgeSession {
            core: Core { envs: self.envs.clone(), state: Rc::default(), neural: Rc::default(), neural_on: Rc::default() },
            pending_neural: Rc::default(),
            plan: Rc::default(),
        }
    }
}

#[wasm_bindgen]
impl WgeSession {
    /// The session's task (set by its first demonstration), or null.
    pub fn task(&self) -> Option<String> {
        self.core.state.borrow().task.clone()
    }

    /// Every demonstration with its source, actions and induced lattice (each edge's workflow
    /// steps in the paper's notation and as text).
    pub fn demonstrations(&self) -> JsValue {
        let s = self.core.state.borrow();
        let views: Vec<DemoView> = s.demos.iter().zip(s.policy.demos()).enumerate().map(|(i, (e, d))| view_of(i, e, d, &s.policy)).collect();
        to_js(&views)
    }

    /// Reads a demonstration file: the published WGE/MiniWoB++ format (`.json` or `.json.gz`)
    /// or the lab's own (Play & record's files); `path` is its name, or its path within a folder
    /// opened whole (a file without `taskName` takes its task from its name or folder). Checked
    /// before any work on it; its lattice is induced in slices between which the page stays
    /// live. Resolves to what was read and how (`ImportReport`); rejects with a clear message
    /// (the file's name, then why), the session keeping what it had.
    #[wasm_bindgen(js_name = importFile)]
    pub fn import_file(&self, path: String, bytes: Vec<u8>) -> Promise {
        let state = self.core.state.clone();
        future_to_promise(async move {
            let named = |why: String| js_err(format!("{}: {why}", import::label_of(&path)));
            let (entry, mut notes) = read_file(&path, &bytes).map_err(named)?;
            drop(bytes);
            let config = {
                let s = state.borrow();
                s.why_not(&entry).map_err(named)?;
                s.policy.config.induction.clone()
            };
            let lattice = induce_yielding(&entry.steps, entry.final_observation.as_ref(), &config).await;
            if !lattice.cut_short.is_empty() {
                let at: Vec<String> = lattice.cut_short.iter().map(|i| (i + 1).to_string()).collect();
                notes.push(format!(
                    "the search for workflow steps was cut short at step {} (a page with more text than the induction's budget reads)",
                    at.join(", ")
                ));
            }
            let (label, task, actions) = (entry.label.clone(), entry.task.clone(), entry.steps.len());
            let index = state.borrow_mut().add_induced(entry, lattice).map_err(js_err)?;
            Ok(to_js(&ImportReport { index, label, task, actions, notes }))
        })
    }

    /// Throws the importer's message for a file of `size` bytes too large to read, so a page
    /// checks a file before reading it.
    #[wasm_bindgen(js_name = checkFileSize)]
    pub fn check_file_size(&self, name: &str, size: f64) -> Result<(), JsValue> {
        if size > MAX_WGE_FILE_BYTES as f64 {
            let mb = (size / 1e6).floor();
            return Err(js_err(format!(
                "{}: the file is {mb} MB; a demonstration is at most {} MB",
                import::label_of(name),
                MAX_WGE_FILE_BYTES / 1_000_000
            )));
        }
        Ok(())
    }

    /// Adds a demonstration a person recorded in the app (`Lab.stopRecording`'s JSON).
    #[wasm_bindgen(js_name = addRecorded)]
    pub fn add_recorded(&self, json: String) -> Result<usize, JsValue> {
        let demo = Demonstration::from_json(&json).map_err(js_err)?;
        let label = format!("seed {}", demo.seed);
        let entry = from_lab_demo(demo, DemoSource::Person, label).map_err(js_err)?;
        self.core.state.borrow_mut().add(entry).map_err(js_err)
    }

    /// Has the lab's scripted oracle play `task` on page #0 with `seed`, recording the
    /// observation before each action and the page after the last (labelled scripted). Only a
    /// successful episode becomes a demonstration (the paper keeps demonstrations with reward 1).
    #[wasm_bindgen(js_name = addScripted)]
    pub fn add_scripted(&self, task: String, seed: u32) -> Promise {
        let (slots, state) = (self.core.envs.clone(), self.core.state.clone());
        future_to_promise(async move {
            let spec = spec_of(&task).map_err(js_err)?;
            let mut oracle = scripted(spec.name(), Script::Oracle).ok_or_else(|| js_err(format!("the lab has no scripted oracle for {task}")))?;
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            env.set_config(EnvConfig { max_steps: Some(SCRIPTED_MAX_STEPS), hold_clock: true, ..previous.clone() });
            let result = scripted_episode(&mut env, &mut oracle, &spec, seed).await;
            env.set_config(previous.clone());
            slots.put(0, env);
            let (steps, last) = result.map_err(js_err)?;
            let entry = Entry {
                source: DemoSource::Scripted,
                label: format!("seed {seed}"),
                task,
                steps,
                final_observation: Some(last.observation),
                reward: last.reward,
                raw_reward: last.raw_reward,
                played: Some(Played { seed, data_mode: previous.data_mode, exact: true }),
            };
            if !crate::env::is_success(entry.raw_reward) {
                return Err(js_err(format!("the scripted oracle failed on seed {seed} ({}): no demonstration", last.reason.unwrap_or_default())));
            }
            let i = state.borrow_mut().add(entry).map_err(js_err)?;
            Ok(JsValue::from(i))
        })
    }

    /// Removes demonstration `index`; both policies start again over the rest.
    pub fn remove(&self, index: usize) -> Result<(), JsValue> {
        if index >= self.core.state.borrow().demos.len() {
            return Ok(());
        }
        self.core.state.borrow_mut().remove(index);
        self.core.restart().map_err(js_err)
    }

    /// Removes every demonstration; the session's task is free again.
    pub fn clear(&self) -> Result<(), JsValue> {
        self.core.state.borrow_mut().clear();
        self.core.restart().map_err(js_err)
    }

    /// Forgets what exploration learned: fresh weights over the same demonstrations, and a
    /// fresh neural policy when one is being trained.
    #[wasm_bindgen(js_name = resetPolicy)]
    pub fn reset_policy(&self) -> Result<(), JsValue> {
        self.core.restart().map_err(js_err)
    }

    /// Trains the neural policy (DOMNet, CPU) from exploration from now on (`true`), or stops
    /// (`false`; the network is kept and goes on learning when asked again).
    #[wasm_bindgen(js_name = setNeural)]
    pub fn set_neural(&self, on: bool) -> Result<JsValue, JsValue> {
        self.core.set_neural(on).map_err(js_err)?;
        Ok(self.neural_status())
    }

    /// How DOMNet reads words (`learned`, `glove`, `glove_cosine`: `Words`), fetching the shipped
    /// GloVe table the first time it is asked for. A DOMNet already built reads words otherwise,
    /// so it starts afresh (learning again if it was); a run whose DOMNet read words the other
    /// way is one no link can carry (Reset the policy starts one). Resolves DOMNet's status.
    #[wasm_bindgen(js_name = setWords)]
    pub fn set_words(&self, name: String) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move {
            let w = Words::from_name(&name).map_err(js_err)?;
            words::load(w).await.map_err(js_err)?;
            if core.state.borrow().words != w {
                let had = core.neural.borrow().is_some();
                {
                    let mut s = core.state.borrow_mut();
                    s.words = w;
                    if s.run.as_ref().is_some_and(|r| r.events.iter().any(|e| e.event == WgeEvent::NeuralOn)) {
                        s.run = None;
                    }
                }
                if had {
                    let on = *core.neural_on.borrow();
                    core.drop_neural();
                    core.set_neural(on).map_err(js_err)?;
                }
            }
            let n = core.neural.borrow();
            Ok(to_js(&neural_view(n.as_ref(), *core.neural_on.borrow(), None, 0)))
        })
    }

    /// How DOMNet reads words in this session (`setWords`' names).
    pub fn words(&self) -> String {
        serde_json::to_value(self.core.state.borrow().words).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
    }

    /// Judges the neural policy greedily on `seeds` episodes of the session's task (seeds from
    /// `EVAL_SEEDS_FROM`) on page #0: resolves to its success rate and training counters.
    #[wasm_bindgen(js_name = judgeNeural)]
    pub fn judge_neural(&self, seeds: u32) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move { core.judge(seeds).await.map(|v| to_js(&v)).map_err(js_err) })
    }

    /// The neural policy's training counters (null success: not judged here).
    #[wasm_bindgen(js_name = neuralStatus)]
    pub fn neural_status(&self) -> JsValue {
        let n = self.core.neural.borrow();
        to_js(&neural_view(n.as_ref(), *self.core.neural_on.borrow(), None, 0))
    }

    /// Episodes explored, successes, the latest success rate and the next episode's seed.
    pub fn tally(&self) -> JsValue {
        let s = self.core.state.borrow();
        let t = &s.tally;
        to_js(&serde_json::json!({
            "episodes": t.episodes, "successes": t.successes, "recent_success": t.recent_rate(),
            "window": SUCCESS_WINDOW, "next_seed": t.next_seed,
        }))
    }

    /// Sets the seed of the next exploration episode (later ones count up from it). Mid-run,
    /// another seed than the next one leaves a run no link can carry.
    #[wasm_bindgen(js_name = setNextSeed)]
    pub fn set_next_seed(&self, seed: u32) {
        let mut s = self.core.state.borrow_mut();
        if s.tally.episodes > 0 && seed != s.tally.next_seed {
            s.run = None;
        }
        s.tally.next_seed = seed;
    }

    /// One exploration episode of the workflow policy on page #0 (the session's task, the next
    /// seed), followed by its update (`wge::explore::train_episode`) and DOMNet's when it is
    /// learning: resolves to the episode — each step's workflow step, action and the elements
    /// the step matched — and the tally.
    pub fn explore(&self) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move { core.explore().await.map(|e| to_js(&e)).map_err(js_err) })
    }

    /// The session as JSON text, for the view's store (a reload resumes from it). DOMNet's
    /// checkpoint goes beside it as bytes (`saveNeural`).
    pub fn save(&self) -> Result<String, JsValue> {
        let s = self.core.state.borrow();
        let neural = self.core.neural.borrow().is_some().then(|| SavedNeural { on: *self.core.neural_on.borrow(), task: s.task.clone() });
        s.save(neural).map_err(js_err)
    }

    /// DOMNet's checkpoint and Adam's moments as bytes (`{checkpoint, optimizer}`, optimizer
    /// null before the first update), or null when there is no DOMNet.
    #[wasm_bindgen(js_name = saveNeural)]
    pub fn save_neural(&self) -> Promise {
        let core = self.core.clone();
        future_to_promise(async move {
            let Some((c, o)) = core.neural_bytes().await.map_err(js_err)? else { return Ok(JsValue::NULL) };
            let out = js_sys::Object::new();
            js_sys::Reflect::set(&out, &"checkpoint".into(), &js_sys::Uint8Array::from(&c[..]))?;
            let o = o.map_or(JsValue::NULL, |o| js_sys::Uint8Array::from(&o[..]).into());
            js_sys::Reflect::set(&out, &"optimizer".into(), &o)?;
            Ok(out.into())
        })
    }

    /// Restores a saved session, checked as any file is: a record of another version or a
    /// damaged one is refused with a message and the session stays as it was. Resolves whether
    /// the workflow policy's weights came back too: they do when the saved policy's lattices are
    /// the ones the demonstrations induce now; otherwise it starts from its initial weights.
    /// DOMNet comes back with `restoreNeural`, called next.
    pub fn restore(&self, json: String) -> Promise {
        let (core, pending) = (self.core.clone(), self.pending_neural.clone());
        future_to_promise(async move { restore(core, pending, json).await.map(JsValue::from).map_err(js_err) })
    }
    /// Brings DOMNet back after `restore` from its saved checkpoint and Adam's moments (absent:
    /// the store did not hold them). Resolves `{resumed, on, why}`: `why` says why a saved DOMNet
    /// did not come back (damaged, another task or other settings); the rest of the session stays.
    #[wasm_bindgen(js_name = restoreNeural)]
    pub fn restore_neural(&self, checkpoint: Option<Vec<u8>>, optimizer: Option<Vec<u8>>) -> JsValue {
        let Some(saved) = self.pending_neural.borrow_mut().take() else {
            return to_js(&serde_json::json!({ "resumed": false, "on": false, "why": null }));
        };
        let (task, cfg) = {
            let s = self.core.state.borrow();
            (s.task.clone(), s.domnet_config())
        };
        let back = match checkpoint {
            None => Err("its checkpoint was not in the store (the browser's storage may have been full)".to_string()),
            Some(_) if saved.task != task => Err(format!(
                "it learned {}, and this session learns {}",
                saved.task.as_deref().unwrap_or("no task"),
                task.as_deref().unwrap_or("no task yet")
            )),
            Some(c) => neural_from_bytes(&c, optimizer.as_deref(), &cfg).map_err(|e| format!("its saved checkpoint could not be used ({e})")),
        };
        match back {
            Ok(n) => {
                *self.core.neural.borrow_mut() = Some(n);
                *self.core.neural_on.borrow_mut() = saved.on;
                to_js(&serde_json::json!({ "resumed": true, "on": saved.on, "why": null }))
            }
            Err(why) => {
                self.core.drop_neural();
                to_js(&serde_json::json!({ "resumed": false, "on": false, "why": why }))
            }
        }
    }
}

/// The oracle's episode: each observation with the action taken on it, and the last step.
async fn scripted_episode<E: Env>(
    env: &mut E,
    oracle: &mut dyn Policy,
    spec: &TaskSpec,
    seed: u32,
) -> Result<(Vec<DemoStep>, crate::env::Step), String> {
    let mut obs = env.reset(spec, seed).await.map_err(|e| e.to_string())?;
    let mut steps = Vec::new();
    loop {
        let action = oracle.act(&obs).ok_or("the scripted oracle has no action on this page")?;
        let step = env.step(&action).await.map_err(|e| e.to_string())?;
        steps.push(DemoStep { observation: obs, action });
        if step.done {
            return Ok((steps, step));
        }
        obs = step.observation.clone();
    }
}

/// [`WgeSession::restore`]: the session read back (`State::restore_with`), each lattice induced
/// in slices that let the browser in.
async fn restore(core: Core, pending: Rc<RefCell<Option<SavedNeural>>>, json: String) -> Result<bool, String> {
    let (fresh, resumed, neural) = State::restore_with(json, async |steps, last, cfg| induce_yielding(steps, last, cfg).await).await?;
    // The table its DOMNet reads through, before `restoreNeural` needs it (when it cannot be
    // had, that says why DOMNet did not come back; the rest of the session does).
    let _ = words::load(fresh.words).await;
    *core.state.borrow_mut() = fresh;
    *core.neural.borrow_mut() = None;
    *core.neural_on.borrow_mut() = false;
    *pending.borrow_mut() = neural;
    Ok(resumed)
}
