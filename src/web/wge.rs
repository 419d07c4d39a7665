//! The WGE view's edge: the demonstrations a person gathers for one task (recorded in the app,
//! made by the scripted oracle, or imported in the published WGE format), each demonstration's
//! induced workflow lattice as readable constraints, and the state the view saves so a reload
//! resumes it. Induction and every rule that decides a result live in `crate::wge`; this room
//! only gathers, converts and reports.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::app::{Lab, Slots, js_err};
use super::remote::to_js;
use crate::demo::{DemoStep, Demonstration, MAX_DEMO_BYTES};
use crate::env::{Action, EnvConfig, Environment, NodeRef, Observation, Rect, TaskSpec};
use crate::policy::Policy;
use crate::policy::oracle::{Script, scripted};
use crate::wge::config::WgeConfig;
use crate::wge::demo_import::import_wge_demo;
use crate::wge::explore::{EpisodeEnd, WorkflowEpisode, train_episode};
use crate::wge::domnet_config::NeuralConfig;
use crate::wge::neural::NeuralPolicy;
use crate::wge::policy::{DemoWorkflow, StopReason, WorkflowPolicy};
use crate::wge::replay::ReplayEpisode;

/// Version of the view's saved state; a record of another version is refused and kept.
pub const WGE_VIEW_FORMAT: u32 = 1;
/// Most demonstrations one session holds (the paper learns from ten per task).
pub const MAX_DEMOS: usize = 50;
/// Most steps a scripted demonstration may take before it counts as failed.
const SCRIPTED_MAX_STEPS: u32 = 30;
/// The workflow policy's random seed (its demonstration and step choices); fixed, so a session's
/// exploration is reproducible from its demonstrations and episode seeds.
const POLICY_SEED: u64 = 1;
/// The success rate the view charts is over this many latest exploration episodes.
const SUCCESS_WINDOW: usize = 20;
/// The neural policy is judged greedily on seeds from here (`EVAL_SEEDS_FROM + k`), apart from
/// the exploration seeds, which count up from the seed box.
const EVAL_SEEDS_FROM: u32 = 1 << 30;

/// Where a demonstration came from: a person in the app (Play & record's recorder), the lab's
/// scripted oracle (not a person: labelled so everywhere), or a file in the published format
/// (people on Mechanical Turk, Liu et al. 2018).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DemoSource {
    Person,
    Scripted,
    Imported,
}

/// One demonstration as the view keeps it: the observation before each action and the action,
/// the page after the last one when known, and the outcome. Names a task; never carries a page.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    source: DemoSource,
    /// A file name, or "seed N" for one made in the app.
    label: String,
    task: String,
    steps: Vec<DemoStep>,
    final_observation: Option<Observation>,
    reward: f64,
    raw_reward: f64,
}

impl Entry {
    fn check(&self) -> Result<(), String> {
        TaskSpec::builtin(&self.task).map_err(|_| format!("the lab has no task \"{}\"", self.task))?;
        for o in self.steps.iter().map(|s| &s.observation).chain(self.final_observation.as_ref()) {
            o.dom.validate()?;
        }
        if self.steps.is_empty() {
            return Err("it has no actions".into());
        }
        Ok(())
    }
}

/// How exploration has gone: episodes run, successes, and the latest outcomes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Tally {
    episodes: u32,
    successes: u32,
    /// Success of the latest episodes (at most [`SUCCESS_WINDOW`]).
    recent: Vec<bool>,
    /// The seed the next exploration episode takes.
    next_seed: u32,
}

impl Tally {
    fn record(&mut self, success: bool) {
        self.episodes += 1;
        self.successes += success as u32;
        self.recent.push(success);
        if self.recent.len() > SUCCESS_WINDOW {
            self.recent.remove(0);
        }
    }
    fn recent_rate(&self) -> Option<f64> {
        (!self.recent.is_empty()).then(|| self.recent.iter().filter(|s| **s).count() as f64 / self.recent.len() as f64)
    }
}

#[derive(Serialize, Deserialize)]
struct Saved {
    format: u32,
    task: Option<String>,
    demos: Vec<Entry>,
    tally: Tally,
    /// The workflow policy's weights and baselines (`WorkflowPolicy::to_json`); absent in
    /// sessions saved before they were kept.
    #[serde(default)]
    policy: Option<String>,
}

struct State {
    task: Option<String>,
    demos: Vec<Entry>,
    /// The workflow policy over the demonstrations, in their order (it induces their lattices).
    policy: WorkflowPolicy,
    tally: Tally,
}

impl Default for State {
    fn default() -> Self {
        State { task: None, demos: Vec::new(), policy: fresh_policy(), tally: Tally::default() }
    }
}

fn fresh_policy() -> WorkflowPolicy {
    WorkflowPolicy::new(WgeConfig::default(), POLICY_SEED)
}

impl State {
    /// Adds a demonstration of the session's task (the first one sets it).
    fn add(&mut self, e: Entry) -> Result<usize, String> {
        e.check().map_err(|why| format!("{}: {why}", e.label))?;
        if let Some(t) = &self.task
            && !self.demos.is_empty()
            && *t != e.task
        {
            return Err(format!(
                "{} is a demonstration of {}, but this session learns {t}: clear the demonstrations or pick {} first",
                e.label, e.task, e.task
            ));
        }
        if self.demos.len() >= MAX_DEMOS {
            return Err(format!("a session holds at most {MAX_DEMOS} demonstrations"));
        }
        self.task = Some(e.task.clone());
        self.policy.add_demonstration(&e.steps, e.final_observation.as_ref());
        self.demos.push(e);
        Ok(self.demos.len() - 1)
    }

    /// A fresh policy over the current demonstrations, and exploration counted from zero.
    fn reset_policy(&mut self) {
        self.policy = fresh_policy();
        for e in &self.demos {
            self.policy.add_demonstration(&e.steps, e.final_observation.as_ref());
        }
        self.tally = Tally { next_seed: self.tally.next_seed, ..Tally::default() };
    }
}

/// One thing the workflow policy may do at a lattice position, as the view lists it.
#[derive(Serialize)]
struct OptionView {
    /// The paper's notation, `Click(Like("Submit"))`; empty for a skip.
    notation: String,
    /// Readable: "click an element like 'Submit'", or "skip to step 3".
    text: String,
    /// Where the option moves the cursor.
    to: usize,
    skip: bool,
    /// The policy's weight ψ and its probability π(z) at this position.
    weight: f64,
    probability: f64,
    /// Execution paths on the demonstration's page.
    paths: usize,
}

#[derive(Serialize)]
struct PositionView {
    /// What the demonstration did here, described on its page.
    action: String,
    /// Workflow steps induced on this position's edges (the policy keeps the most specific).
    induced: usize,
    /// The options, most probable first.
    options: Vec<OptionView>,
    /// The value baseline V of this position.
    value: f64,
}

#[derive(Serialize)]
struct DemoView {
    index: usize,
    source: DemoSource,
    label: String,
    task: String,
    reward: f64,
    raw_reward: f64,
    program_count: usize,
    positions: Vec<PositionView>,
}

fn view_of(index: usize, e: &Entry, d: &DemoWorkflow, policy: &WorkflowPolicy) -> DemoView {
    let ins = Some(&d.instruction);
    let positions = d
        .positions
        .iter()
        .enumerate()
        .map(|(v, position)| {
            let probs = policy.probabilities(index, v);
            let mut options: Vec<OptionView> = position
                .options
                .iter()
                .enumerate()
                .map(|(k, o)| {
                    let to = d.lattice.edges[o.edge].to;
                    let (notation, text, skip) = match d.constraint(o) {
                        Some(c) => (c.to_string(), c.describe(ins), false),
                        None if to >= d.lattice.steps => (String::new(), "skip to the end (the page did not change)".into(), true),
                        None => (String::new(), format!("skip to step {} (the page did not change)", to + 1), true),
                    };
                    OptionView { notation, text, to, skip, weight: position.weights[k], probability: probs[k], paths: o.paths }
                })
                .collect();
            options.sort_by(|a, b| b.probability.total_cmp(&a.probability));
            let induced = d
                .lattice
                .edges_from(v)
                .map(|edge| match &edge.kind {
                    crate::wge::induction::EdgeKind::Act(p) => p.len(),
                    crate::wge::induction::EdgeKind::Skip => 0,
                })
                .sum();
            PositionView {
                action: e.steps.get(v).map(|s| s.action.describe(Some(&s.observation.dom))).unwrap_or_default(),
                induced,
                options,
                value: position.value,
            }
        })
        .collect();
    DemoView {
        index,
        source: e.source,
        label: e.label.clone(),
        task: e.task.clone(),
        reward: e.reward,
        raw_reward: e.raw_reward,
        program_count: d.lattice.program_count(),
        positions,
    }
}

/// One action of an explored episode, as the view draws it.
#[derive(Serialize)]
struct ExploredStep {
    /// The lattice position the step was chosen at, and the demonstration's step there.
    vertex: usize,
    /// The workflow step in the paper's notation and as text, with its probability then.
    notation: String,
    text: String,
    /// The action taken (one of the step's execution paths, drawn uniformly), described.
    description: String,
    action: Action,
    /// The elements the workflow step matched on the page (its execution paths' targets).
    matched: Vec<Matched>,
    /// Skip edges taken just before it.
    skipped: usize,
}

#[derive(Serialize)]
struct Matched {
    r#ref: NodeRef,
    rect: Rect,
}

#[derive(Serialize)]
struct ExploredEpisode {
    task: String,
    seed: u32,
    /// The demonstration whose workflow was followed.
    demo: Option<usize>,
    steps: Vec<ExploredStep>,
    success: bool,
    reward: f64,
    raw_reward: f64,
    /// How it ended, in words.
    ending: String,
    episodes: u32,
    successes: u32,
    /// Success over the latest [`SUCCESS_WINDOW`] episodes.
    recent_success: Option<f64>,
}

fn ending(episode: &WorkflowEpisode) -> String {
    match episode.end {
        EpisodeEnd::Done => match &episode.reason {
            Some(r) => format!("the page ended it ({r})"),
            None => "the page ended it".into(),
        },
        EpisodeEnd::StepCap => "the workflow policy's step cap".into(),
        EpisodeEnd::Stopped(StopReason::EndOfLattice) => "the workflow ran out (end of the lattice) before the page ended".into(),
        EpisodeEnd::Stopped(StopReason::NoPrograms) => "no workflow step at this position".into(),
        EpisodeEnd::Stopped(StopReason::NotExecutable) => "the workflow step matched nothing on the page".into(),
        EpisodeEnd::Stopped(StopReason::NoDemonstrations) => "no demonstrations".into(),
    }
}

fn explored_view(episode: &WorkflowEpisode, policy: &WorkflowPolicy, tally: &Tally) -> ExploredEpisode {
    let steps = episode
        .steps
        .iter()
        .map(|s| {
            let d = &policy.demos()[s.choice.demo];
            let option = &d.positions[s.choice.vertex].options[s.choice.option];
            let c = d.constraint(option);
            let dom = &s.observation.dom;
            ExploredStep {
                vertex: s.choice.vertex,
                notation: c.map(|c| c.to_string()).unwrap_or_default(),
                text: c.map(|c| c.describe(Some(&s.observation.instruction))).unwrap_or_default(),
                description: s.action.describe(Some(dom)),
                action: s.action.clone(),
                matched: s.matched.iter().filter_map(|r| dom.get(*r).map(|n| Matched { r#ref: *r, rect: n.rect })).collect(),
                skipped: s.skipped.len(),
            }
        })
        .collect();
    ExploredEpisode {
        task: episode.task.name().to_string(),
        seed: episode.seed,
        demo: episode.demo,
        steps,
        success: episode.succeeded(),
        reward: episode.reward,
        raw_reward: episode.raw_reward,
        ending: ending(episode),
        episodes: tally.episodes,
        successes: tally.successes,
        recent_success: tally.recent_rate(),
    }
}

/// The WGE view's session: its task and demonstrations, on the lab's page #0.
#[wasm_bindgen]
pub struct WgeSession {
    envs: Slots,
    state: Rc<RefCell<State>>,
    /// DOMNet trained from the workflow policy's episodes (`wge::neural`), once asked for; taken
    /// out for the length of an async call.
    neural: Rc<RefCell<Option<NeuralPolicy>>>,
    neural_on: Rc<RefCell<bool>>,
}

#[derive(Serialize)]
struct NeuralView {
    on: bool,
    /// Successful exploration episodes in the grouped replay, and the updates taken.
    replay: usize,
    updates: u64,
    episodes: u64,
    /// Episodes a group needs before it is replayed.
    min_group: usize,
    /// Greedy success over the judging seeds, when judged.
    success: Option<f64>,
    seeds: u32,
}

fn neural_view(n: Option<&NeuralPolicy>, on: bool, success: Option<f64>, seeds: u32) -> NeuralView {
    NeuralView {
        on,
        replay: n.map_or(0, |n| n.replay().len()),
        updates: n.map_or(0, |n| n.counters.updates),
        episodes: n.map_or(0, |n| n.counters.episodes),
        min_group: n.map_or(NeuralConfig::default().replay_min_group, |n| n.cfg.replay_min_group),
        success,
        seeds,
    }
}

#[wasm_bindgen]
impl Lab {
    /// A WGE session acting on the lab's page #0 (the page the Watch and Play views use).
    #[wasm_bindgen(js_name = wgeSession)]
    pub fn wge_session(&self) -> WgeSession {
        WgeSession { envs: self.envs.clone(), state: Rc::default(), neural: Rc::default(), neural_on: Rc::default() }
    }
}

#[wasm_bindgen]
impl WgeSession {
    /// The session's task (set by its first demonstration), or null.
    pub fn task(&self) -> Option<String> {
        self.state.borrow().task.clone()
    }

    /// Every demonstration with its source, actions and induced lattice (each edge's workflow
    /// steps in the paper's notation and as text).
    pub fn demonstrations(&self) -> JsValue {
        let s = self.state.borrow();
        let views: Vec<DemoView> =
            s.demos.iter().zip(s.policy.demos()).enumerate().map(|(i, (e, d))| view_of(i, e, d, &s.policy)).collect();
        to_js(&views)
    }

    /// Reads a demonstration file: the published WGE/MiniWoB++ format (`.json` or `.json.gz`)
    /// or the lab's own (Play & record's files). Throws a clear message for anything else; the
    /// session keeps what it had. Returns the new demonstration's index.
    #[wasm_bindgen(js_name = importFile)]
    pub fn import_file(&self, name: String, bytes: Vec<u8>) -> Result<usize, JsValue> {
        let label = name.chars().take(80).collect::<String>();
        let entry = read_file(&label, &bytes).map_err(|why| js_err(format!("{label}: {why}")))?;
        self.state.borrow_mut().add(entry).map_err(js_err)
    }

    /// Adds a demonstration a person recorded in the app (`Lab.stopRecording`'s JSON).
    #[wasm_bindgen(js_name = addRecorded)]
    pub fn add_recorded(&self, json: String) -> Result<usize, JsValue> {
        let demo = Demonstration::from_json(&json).map_err(js_err)?;
        let label = format!("seed {}", demo.seed);
        let entry = from_lab_demo(demo, DemoSource::Person, label).map_err(js_err)?;
        self.state.borrow_mut().add(entry).map_err(js_err)
    }

    /// Has the lab's scripted oracle play `task` on page #0 with `seed`, recording the
    /// observation before each action and the page after the last (labelled scripted). Only a
    /// successful episode becomes a demonstration (the paper keeps demonstrations with reward 1).
    #[wasm_bindgen(js_name = addScripted)]
    pub fn add_scripted(&self, task: String, seed: u32) -> Promise {
        let (slots, state) = (self.envs.clone(), self.state.clone());
        future_to_promise(async move {
            let spec = TaskSpec::builtin(&task).map_err(js_err)?;
            let mut oracle = scripted(&task, Script::Oracle).ok_or_else(|| js_err(format!("the lab has no scripted oracle for {task}")))?;
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            env.set_config(EnvConfig { max_steps: Some(SCRIPTED_MAX_STEPS), hold_clock: true, ..previous.clone() });
            let result = scripted_episode(&mut env, &mut oracle, &spec, seed).await;
            env.set_config(previous);
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
            };
            if entry.raw_reward < 1.0 {
                return Err(js_err(format!("the scripted oracle failed on seed {seed} ({}): no demonstration", last.reason.unwrap_or_default())));
            }
            let i = state.borrow_mut().add(entry).map_err(js_err)?;
            Ok(JsValue::from(i))
        })
    }

    /// Removes demonstration `index`; the workflow policy starts again over the rest.
    pub fn remove(&self, index: usize) {
        let mut s = self.state.borrow_mut();
        if index < s.demos.len() {
            s.demos.remove(index);
            s.reset_policy();
        }
    }

    /// Removes every demonstration; the session's task is free again.
    pub fn clear(&self) {
        let mut s = self.state.borrow_mut();
        s.demos.clear();
        s.task = None;
        s.reset_policy();
    }

    /// Forgets what exploration learned: fresh weights over the same demonstrations, and a
    /// fresh neural policy when one is being trained.
    #[wasm_bindgen(js_name = resetPolicy)]
    pub fn reset_policy(&self) -> Result<(), JsValue> {
        self.state.borrow_mut().reset_policy();
        if *self.neural_on.borrow() {
            *self.neural.borrow_mut() = None;
            self.set_neural(true)?;
        }
        Ok(())
    }

    /// Trains the neural policy (DOMNet, CPU) from exploration from now on (`true`), or stops
    /// (`false`; the network is kept and goes on learning when asked again).
    #[wasm_bindgen(js_name = setNeural)]
    pub fn set_neural(&self, on: bool) -> Result<JsValue, JsValue> {
        if on && self.neural.borrow().is_none() {
            let device = burn::prelude::Device::flex().autodiff();
            let policy = NeuralPolicy::new(NeuralConfig::default(), &device).map_err(js_err)?;
            *self.neural.borrow_mut() = Some(policy);
        }
        *self.neural_on.borrow_mut() = on;
        let n = self.neural.borrow();
        Ok(to_js(&neural_view(n.as_ref(), on, None, 0)))
    }

    /// Judges the neural policy greedily on `seeds` episodes of the session's task (seeds from
    /// `EVAL_SEEDS_FROM`) on page #0: resolves to its success rate and training counters.
    #[wasm_bindgen(js_name = judgeNeural)]
    pub fn judge_neural(&self, seeds: u32) -> Promise {
        let (slots, state, neural, on) = (self.envs.clone(), self.state.clone(), self.neural.clone(), *self.neural_on.borrow());
        future_to_promise(async move {
            let task = state.borrow().task.clone().ok_or_else(|| js_err("add a demonstration first"))?;
            let spec = TaskSpec::builtin(&task).map_err(js_err)?;
            let mut policy = neural.borrow_mut().take().ok_or_else(|| js_err("the neural policy is not being trained"))?;
            let env = slots.take(0);
            let mut env = match env {
                Ok(env) => env,
                Err(e) => {
                    *neural.borrow_mut() = Some(policy);
                    return Err(js_err(e));
                }
            };
            let previous = env.config().clone();
            env.set_config(EnvConfig { max_steps: None, hold_clock: true, data_mode: "train".into(), ..previous.clone() });
            let result = policy.evaluate(&mut env, &spec, (0..seeds).map(|k| EVAL_SEEDS_FROM + k)).await;
            env.set_config(previous);
            slots.put(0, env);
            let view = neural_view(Some(&policy), on, result.as_ref().ok().copied(), seeds);
            *neural.borrow_mut() = Some(policy);
            result.map_err(js_err)?;
            Ok(to_js(&view))
        })
    }

    /// The neural policy's training counters (null success: not judged here).
    #[wasm_bindgen(js_name = neuralStatus)]
    pub fn neural_status(&self) -> JsValue {
        let n = self.neural.borrow();
        to_js(&neural_view(n.as_ref(), *self.neural_on.borrow(), None, 0))
    }

    /// Episodes explored, successes, the latest success rate and the next episode's seed.
    pub fn tally(&self) -> JsValue {
        let s = self.state.borrow();
        let t = &s.tally;
        to_js(&serde_json::json!({
            "episodes": t.episodes, "successes": t.successes, "recent_success": t.recent_rate(),
            "window": SUCCESS_WINDOW, "next_seed": t.next_seed,
        }))
    }

    /// Sets the seed of the next exploration episode (later ones count up from it).
    #[wasm_bindgen(js_name = setNextSeed)]
    pub fn set_next_seed(&self, seed: u32) {
        self.state.borrow_mut().tally.next_seed = seed;
    }

    /// One exploration episode of the workflow policy on page #0 (the session's task, the next
    /// seed), followed by its update (`wge::explore::train_episode`): resolves to the episode —
    /// each step's workflow step, action and the elements the step matched — and the tally.
    pub fn explore(&self) -> Promise {
        let (slots, state) = (self.envs.clone(), self.state.clone());
        let neural = (*self.neural_on.borrow()).then(|| self.neural.clone());
        future_to_promise(async move {
            let (task, seed, mut policy) = {
                let s = state.borrow();
                let task = s.task.clone().filter(|_| !s.demos.is_empty()).ok_or_else(|| js_err("add a demonstration first"))?;
                (task, s.tally.next_seed, s.policy.clone())
            };
            let spec = TaskSpec::builtin(&task).map_err(js_err)?;
            let mut env = slots.take(0).map_err(js_err)?;
            let previous = env.config().clone();
            // The workflow policy caps its own episodes; the page's clock is held between actions.
            env.set_config(EnvConfig { max_steps: None, hold_clock: true, data_mode: "train".into(), ..previous.clone() });
            let result = train_episode(&mut env, &mut policy, &spec, seed).await;
            env.set_config(previous);
            slots.put(0, env);
            let episode = result.map_err(js_err)?;
            // The neural policy learns from the episode (its replay keeps successes only).
            let mut neural_error = None;
            if let Some(cell) = &neural {
                let taken = cell.borrow_mut().take();
                if let Some(mut n) = taken {
                    let pairs = episode.pairs().map(|(o, a)| (o.clone(), a.clone())).collect();
                    if let Err(e) = n.observe_exploration(ReplayEpisode::new(pairs, episode.ret())).await {
                        neural_error = Some(e);
                    }
                    *cell.borrow_mut() = Some(n);
                }
            }
            if let Some(e) = neural_error {
                return Err(js_err(format!("the neural policy's update failed: {e}")));
            }
            let mut s = state.borrow_mut();
            // The demonstrations may have changed while the page acted: then this episode's
            // update belongs to a policy that is gone, and only its outcome is shown.
            if s.policy.demos().len() == policy.demos().len() && s.task.as_deref() == Some(task.as_str()) {
                s.policy = policy;
                s.tally.record(episode.succeeded());
                s.tally.next_seed = seed.wrapping_add(1);
            }
            Ok(to_js(&explored_view(&episode, &s.policy, &s.tally)))
        })
    }

    /// The session as JSON text, for the view's store (a reload resumes from it).
    pub fn save(&self) -> Result<String, JsValue> {
        let s = self.state.borrow();
        let saved = Saved {
            format: WGE_VIEW_FORMAT,
            task: s.task.clone(),
            demos: s.demos.clone(),
            tally: s.tally.clone(),
            policy: Some(s.policy.to_json()),
        };
        serde_json::to_string(&saved).map_err(js_err)
    }

    /// Restores a saved session, checked as any file is: a record of another version or a
    /// damaged one is refused with a message and the session stays as it was. Resolves whether
    /// the workflow policy's weights came back too: they do when the saved policy's lattices are
    /// the ones the demonstrations induce now; otherwise it starts from its initial weights.
    pub fn restore(&self, json: String) -> Result<bool, JsValue> {
        if json.len() > MAX_DEMO_BYTES * 2 {
            return Err(js_err("the saved WGE session is too large to be one of this lab's"));
        }
        let saved: Saved = serde_json::from_str(&json).map_err(|e| js_err(format!("the saved WGE session is damaged: {e}")))?;
        if saved.format != WGE_VIEW_FORMAT {
            return Err(js_err(format!("the saved WGE session has format {} (this lab reads {WGE_VIEW_FORMAT})", saved.format)));
        }
        let mut fresh = State::default();
        for e in saved.demos {
            fresh.add(e).map_err(|why| js_err(format!("the saved WGE session is damaged: {why}")))?;
        }
        fresh.tally = saved.tally;
        if fresh.tally.recent.len() > SUCCESS_WINDOW || fresh.tally.successes > fresh.tally.episodes {
            return Err(js_err("the saved WGE session is damaged: its exploration counts disagree"));
        }
        fresh.task = fresh.task.or(saved.task.filter(|t| TaskSpec::builtin(t).is_ok()));
        let learned = saved.policy.and_then(|text| WorkflowPolicy::from_json(&text).ok()).filter(|p| {
            p.demos().len() == fresh.policy.demos().len()
                && p.demos().iter().zip(fresh.policy.demos()).all(|(a, b)| a.lattice == b.lattice && a.field_keys == b.field_keys)
        });
        let resumed = learned.is_some();
        if let Some(p) = learned {
            fresh.policy = p;
        }
        *self.state.borrow_mut() = fresh;
        Ok(resumed)
    }
}

/// A WGE/MiniWoB++ file or one of the lab's own demonstration files.
fn read_file(label: &str, bytes: &[u8]) -> Result<Entry, String> {
    if bytes.len() > MAX_DEMO_BYTES {
        return Err(format!("the file is {} MB; a demonstration is at most {} MB", bytes.len() / 1_000_000, MAX_DEMO_BYTES / 1_000_000));
    }
    // The lab's own format is a JSON object with "format" and "steps"; the importer names it.
    match import_wge_demo(bytes) {
        Ok(d) => {
            if d.raw_reward < 1.0 {
                return Err(format!("its episode failed (raw reward {}); workflows are induced from successful demonstrations only", d.raw_reward));
            }
            Ok(Entry {
                source: DemoSource::Imported,
                label: label.to_string(),
                task: d.task,
                steps: d.steps,
                final_observation: Some(d.final_observation),
                reward: d.reward,
                raw_reward: d.raw_reward,
            })
        }
        Err(why) if why.contains("lab's own demonstrations") => {
            let text = std::str::from_utf8(bytes).map_err(|_| "the demonstration is not UTF-8 text".to_string())?;
            let demo = Demonstration::from_json(text)?;
            from_lab_demo(demo, DemoSource::Person, label.to_string())
        }
        Err(why) => Err(why),
    }
}

fn from_lab_demo(demo: Demonstration, source: DemoSource, label: String) -> Result<Entry, String> {
    let TaskSpec::Builtin { name } = &demo.task else {
        return Err("workflow-guided exploration learns the lab's own tasks; this demonstration is of another page".into());
    };
    if demo.raw_reward < 1.0 {
        return Err(format!("{label}: its episode did not succeed (raw reward {}); workflows are induced from successful demonstrations only", demo.raw_reward));
    }
    Ok(Entry {
        source,
        label,
        task: name.clone(),
        steps: demo.steps,
        final_observation: None,
        reward: demo.reward,
        raw_reward: demo.raw_reward,
    })
}

/// The oracle's episode: each observation with the action taken on it, and the last step.
async fn scripted_episode<E: Environment>(
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
