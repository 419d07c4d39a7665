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
use crate::env::{EnvConfig, Environment, Observation, TaskSpec};
use crate::policy::Policy;
use crate::policy::oracle::{Script, scripted};
use crate::wge::demo_import::import_wge_demo;
use crate::wge::induction::{EdgeKind, InductionConfig, WorkflowLattice, induce};

/// Version of the view's saved state; a record of another version is refused and kept.
pub const WGE_VIEW_FORMAT: u32 = 1;
/// Most demonstrations one session holds (the paper learns from ten per task).
pub const MAX_DEMOS: usize = 50;
/// Most steps a scripted demonstration may take before it counts as failed.
const SCRIPTED_MAX_STEPS: u32 = 30;

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
    /// Induced from the steps on arrival and again on restore (induction is deterministic).
    #[serde(skip)]
    lattice: Option<WorkflowLattice>,
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
    fn induce(&mut self, config: &InductionConfig) {
        self.lattice = Some(induce(&self.steps, self.final_observation.as_ref(), config));
    }
}

#[derive(Default, Serialize, Deserialize)]
struct Saved {
    format: u32,
    task: Option<String>,
    demos: Vec<Entry>,
}

#[derive(Default)]
struct State {
    task: Option<String>,
    demos: Vec<Entry>,
    induction: InductionConfig,
}

impl State {
    /// Adds a demonstration of the session's task (the first one sets it).
    fn add(&mut self, mut e: Entry) -> Result<usize, String> {
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
        e.induce(&self.induction);
        self.demos.push(e);
        Ok(self.demos.len() - 1)
    }
}

/// One workflow step offered on an edge, as the view lists it.
#[derive(Serialize)]
struct ProgramView {
    /// The paper's notation, `Click(Like("Submit"))`.
    notation: String,
    /// Readable: "click an element like 'Submit'".
    text: String,
}

#[derive(Serialize)]
struct EdgeView {
    from: usize,
    to: usize,
    skip: bool,
    programs: Vec<ProgramView>,
}

#[derive(Serialize)]
struct DemoView {
    index: usize,
    source: DemoSource,
    label: String,
    task: String,
    /// The demonstrated actions, described on the page they were taken on.
    actions: Vec<String>,
    reward: f64,
    raw_reward: f64,
    program_count: usize,
    edges: Vec<EdgeView>,
}

fn view_of(index: usize, e: &Entry) -> DemoView {
    let lattice = e.lattice.as_ref();
    let edges = lattice
        .map(|l| {
            l.edges
                .iter()
                .map(|edge| {
                    // The instruction the constraint is read against: the page at the edge's start.
                    let ins = e.steps.get(edge.from).map(|s| &s.observation.instruction);
                    let programs = match &edge.kind {
                        EdgeKind::Skip => Vec::new(),
                        EdgeKind::Act(ps) => {
                            ps.iter().map(|p| ProgramView { notation: p.to_string(), text: p.describe(ins) }).collect()
                        }
                    };
                    EdgeView { from: edge.from, to: edge.to, skip: edge.kind == EdgeKind::Skip, programs }
                })
                .collect()
        })
        .unwrap_or_default();
    DemoView {
        index,
        source: e.source,
        label: e.label.clone(),
        task: e.task.clone(),
        actions: e.steps.iter().map(|s| s.action.describe(Some(&s.observation.dom))).collect(),
        reward: e.reward,
        raw_reward: e.raw_reward,
        program_count: lattice.map_or(0, WorkflowLattice::program_count),
        edges,
    }
}

/// The WGE view's session: its task and demonstrations, on the lab's page #0.
#[wasm_bindgen]
pub struct WgeSession {
    envs: Slots,
    state: Rc<RefCell<State>>,
}

#[wasm_bindgen]
impl Lab {
    /// A WGE session acting on the lab's page #0 (the page the Watch and Play views use).
    #[wasm_bindgen(js_name = wgeSession)]
    pub fn wge_session(&self) -> WgeSession {
        WgeSession { envs: self.envs.clone(), state: Rc::default() }
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
        to_js(&s.demos.iter().enumerate().map(|(i, e)| view_of(i, e)).collect::<Vec<_>>())
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
                lattice: None,
            };
            if entry.raw_reward < 1.0 {
                return Err(js_err(format!("the scripted oracle failed on seed {seed} ({}): no demonstration", last.reason.unwrap_or_default())));
            }
            let i = state.borrow_mut().add(entry).map_err(js_err)?;
            Ok(JsValue::from(i))
        })
    }

    /// Removes demonstration `index`.
    pub fn remove(&self, index: usize) {
        let mut s = self.state.borrow_mut();
        if index < s.demos.len() {
            s.demos.remove(index);
        }
    }

    /// Removes every demonstration; the session's task is free again.
    pub fn clear(&self) {
        let mut s = self.state.borrow_mut();
        s.demos.clear();
        s.task = None;
    }

    /// The session as JSON text, for the view's store (a reload resumes from it).
    pub fn save(&self) -> Result<String, JsValue> {
        let s = self.state.borrow();
        let saved = Saved { format: WGE_VIEW_FORMAT, task: s.task.clone(), demos: s.demos.clone() };
        serde_json::to_string(&saved).map_err(js_err)
    }

    /// Restores a saved session, checked as any file is: a record of another version or a
    /// damaged one is refused with a message and the session stays as it was.
    pub fn restore(&self, json: String) -> Result<(), JsValue> {
        if json.len() > MAX_DEMO_BYTES * 2 {
            return Err(js_err("the saved WGE session is too large to be one of this lab's"));
        }
        let saved: Saved = serde_json::from_str(&json).map_err(|e| js_err(format!("the saved WGE session is damaged: {e}")))?;
        if saved.format != WGE_VIEW_FORMAT {
            return Err(js_err(format!("the saved WGE session has format {} (this lab reads {WGE_VIEW_FORMAT})", saved.format)));
        }
        let mut fresh = State { induction: self.state.borrow().induction.clone(), ..State::default() };
        for e in saved.demos {
            fresh.add(e).map_err(|why| js_err(format!("the saved WGE session is damaged: {why}")))?;
        }
        fresh.task = fresh.task.or(saved.task.filter(|t| TaskSpec::builtin(t).is_ok()));
        *self.state.borrow_mut() = fresh;
        Ok(())
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
                lattice: None,
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
        lattice: None,
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
