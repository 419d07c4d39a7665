//! Recording a person's play as a [`Demonstration`]: their clicks, typing and list choices on the
//! live page become `Click`/`Type`/`Select` actions on the environment's refs, each with the
//! observation the person acted on.
//!
//! - A click is recorded from its `click` event; a click a label forwards to its control is not
//!   recorded twice.
//! - A run of `input` events on one text field becomes one `Type` of what was appended (edits
//!   that are not appends are recorded as typing the new text and mark the demonstration
//!   inexact).
//! - A `<select>` change becomes a `Select` of the chosen option.
//! - After each action the observation is refreshed once the page's handlers have run.
//!
//! Where element actions cannot say what the person did, MiniWoB++'s other actions are recorded
//! ([`input`]): drags, clicks at points, double-clicks, the wheel, pointer moves and waits on the
//! real pages that need them, and keys the page itself reacts to on any page.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use web_sys::{Document, Element, Event, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};

mod input;

use super::env::IframeEnv;
use super::util::{as_element, as_html_tag, call, now_ms};
use crate::demo::{DEMO_FORMAT, DemoStep, Demonstration};
use crate::env::action::MAX_WAIT_MS;
use crate::env::miniwob::Interaction;
use crate::env::{Action, NodeRef, Observation};
use crate::task::TaskSpec;

/// Access to the environment the recording runs on (it lives in the lab's slot).
pub type EnvCell = Rc<RefCell<Vec<Option<IframeEnv>>>>;

struct Typing {
    element: Element,
    target: NodeRef,
    start: String,
    observation: Observation,
    /// When the typing began (the lab's clock, ms).
    at: f64,
}

pub struct RecordingState {
    pub task: TaskSpec,
    pub seed: u32,
    pub data_mode: String,
    pub steps: Vec<DemoStep>,
    pub snapshot: Observation,
    typing: Option<Typing>,
    /// A control whose forwarded click (from its label) must not be recorded.
    forwarded: Option<Element>,
    pub outcome: Option<(f64, f64, Option<String>)>,
    pub exact: bool,
    /// What the page needs beyond element actions (a real MiniWoB++ page's `interaction`).
    interaction: Interaction,
    /// When the last action happened (the lab's clock, ms), for the waits between actions.
    last_at: f64,
    /// Drags, scrolls and keys under way ([`input`]).
    input: input::Pending,
}

pub struct Recorder {
    pub state: Rc<RefCell<RecordingState>>,
    document: Document,
    listeners: Vec<Listener>,
    /// Watch the page change by itself and while a key's handlers run ([`input`]).
    observers: Vec<web_sys::MutationObserver>,
}

/// An event listener the recorder added: where, the event's name, whether it listens in the
/// capture phase, and the handler.
type Listener = (web_sys::EventTarget, &'static str, bool, Closure<dyn FnMut(Event)>);

fn value_of(el: &Element) -> Option<String> {
    as_html_tag::<HtmlInputElement>(el, "INPUT").map(|i| i.value()).or_else(|| as_html_tag::<HtmlTextAreaElement>(el, "TEXTAREA").map(|t| t.value()))
}

fn is_text_field(el: &Element) -> bool {
    match el.tag_name().as_str() {
        "TEXTAREA" => true,
        "INPUT" => !matches!(
            el.get_attribute("type").unwrap_or_default().to_ascii_lowercase().as_str(),
            "checkbox" | "radio" | "button" | "submit" | "reset" | "image" | "file" | "range" | "color"
        ),
        _ => false,
    }
}

impl RecordingState {
    fn with_env<R>(envs: &EnvCell, f: impl FnOnce(&mut IframeEnv) -> R) -> Option<R> {
        let mut v = envs.borrow_mut();
        v.get_mut(0).and_then(|e| e.as_mut()).map(f)
    }

    /// Records an action the person took at `at` (the lab's clock), after what is still open
    /// (typing, keys, a scroll) is recorded.
    fn record_at(&mut self, observation: Observation, action: Action, at: f64) {
        self.flush_open();
        self.push(observation, action, at);
    }

    fn record(&mut self, observation: Observation, action: Action) {
        self.record_at(observation, action, now_ms());
    }

    /// Appends a step. Where the time between actions matters (hover and timing pages, or a
    /// page that changed by itself meanwhile) the time the person let pass since the last action
    /// is recorded first as a wait, so the replay gives the page the same time.
    fn push(&mut self, observation: Observation, action: Action, at: f64) {
        let gap = (at - self.last_at).max(0.0);
        let timed = matches!(self.interaction, Interaction::Hover | Interaction::Timing);
        if (timed || std::mem::take(&mut self.input.autonomous)) && gap >= 50.0 {
            let wait = (gap.round() as u32).min(MAX_WAIT_MS);
            self.steps.push(DemoStep { observation: observation.clone(), action: Action::Wait(wait) });
        }
        self.last_at = self.last_at.max(at);
        self.steps.push(DemoStep { observation, action });
    }

    /// Records whatever run of input is still open.
    fn flush_open(&mut self) {
        self.flush_typing();
        self.flush_input();
    }

    /// Ends a run of typing, recording what was appended.
    fn flush_typing(&mut self) {
        let Some(t) = self.typing.take() else { return };
        let now = value_of(&t.element).unwrap_or_default();
        let text = match now.strip_prefix(t.start.as_str()) {
            Some(appended) => appended.to_string(),
            None => {
                self.exact = false;
                now
            }
        };
        if !text.is_empty() {
            self.push(t.observation, Action::Type(t.target, text), t.at);
        }
    }
}

fn refresh_later(state: &Rc<RefCell<RecordingState>>, envs: &EnvCell) {
    let (state, envs) = (state.clone(), envs.clone());
    let cb = Closure::once_into_js(move || refresh(&state, &envs));
    let _ = call(&js_sys::global(), "setTimeout", &[cb, JsValue::from(0)]);
}

/// Takes a new observation and notices the end of the episode.
fn refresh(state: &Rc<RefCell<RecordingState>>, envs: &EnvCell) {
    let Some((obs, outcome)) = RecordingState::with_env(envs, |env| (env.observe().ok(), env.page_outcome())) else {
        return;
    };
    let mut s = state.borrow_mut();
    if let Some(obs) = obs {
        s.snapshot = obs;
    }
    if let Some(o) = outcome.filter(|o| o.done)
        && s.outcome.is_none()
    {
        s.flush_open();
        s.outcome = Some((o.reward, o.raw_reward, o.reason));
    }
}

impl Recorder {
    /// Starts recording on the page of env 0, which must have just been reset.
    pub fn start(envs: &EnvCell, task: TaskSpec, seed: u32) -> Result<Recorder, String> {
        let (document, snapshot, data_mode) =
            RecordingState::with_env(envs, |env| (env.page_document(), env.observe().ok(), env.config().data_mode.clone()))
                .ok_or("the task page is busy")?;
        let (Some(document), Some(snapshot)) = (document, snapshot) else {
            return Err("no episode is running on the task page".into());
        };
        let task_interaction = task.miniwob_task().map_or(Interaction::ClickType, |t| t.interaction);
        let state = Rc::new(RefCell::new(RecordingState {
            task,
            seed,
            data_mode,
            steps: Vec::new(),
            snapshot,
            typing: None,
            forwarded: None,
            outcome: None,
            exact: true,
            interaction: task_interaction,
            last_at: now_ms(),
            input: input::Pending::default(),
        }));
        let mut rec = Recorder { state: state.clone(), document: document.clone(), listeners: Vec::new(), observers: Vec::new() };

        let on_click = {
            let (state, envs) = (state.clone(), envs.clone());
            move |ev: Event| {
                let Some(target) = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned()) else { return };
                let mut s = state.borrow_mut();
                if s.outcome.is_some() || target.closest("#sync-task-cover").ok().flatten().is_some() {
                    return;
                }
                if matches!(target.tag_name().as_str(), "SELECT" | "OPTION") {
                    return; // a list choice is recorded from its change event
                }
                if s.forwarded.as_ref() == Some(&target) {
                    s.forwarded = None;
                    return;
                }
                if s.click_was_recorded(&ev) {
                    drop(s);
                    refresh_later(&state, &envs);
                    return;
                }
                s.flush_open();
                // A click on a label is forwarded to its control as a second click event.
                s.forwarded = target
                    .closest("label")
                    .ok()
                    .flatten()
                    .and_then(|l| js_sys::Reflect::get(&l, &"control".into()).ok())
                    .and_then(|c| if c.is_object() { Some(c.unchecked_into::<Element>()) } else { None })
                    .filter(|c| c != &target);
                let Some(target_ref) = RecordingState::with_env(&envs, |env| env.ref_of(&target)) else { return };
                let obs = s.snapshot.clone();
                s.record(obs, Action::Click(target_ref));
                drop(s);
                refresh_later(&state, &envs);
            }
        };
        let on_input = {
            let (state, envs) = (state.clone(), envs.clone());
            move |ev: Event| {
                let Some(target) = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned()) else { return };
                if !is_text_field(&target) {
                    return;
                }
                let mut s = state.borrow_mut();
                if s.outcome.is_some() || s.typing.as_ref().is_some_and(|t| t.element == target) || s.input_is_recorded(&ev) {
                    return;
                }
                s.flush_open();
                let Some(target_ref) = RecordingState::with_env(&envs, |env| env.ref_of(&target)) else { return };
                let start = s.snapshot.dom.get(target_ref).and_then(|n| n.value.as_text()).unwrap_or("").to_string();
                let observation = s.snapshot.clone();
                s.typing = Some(Typing { element: target, target: target_ref, start, observation, at: now_ms() });
            }
        };
        let on_change = {
            let (state, envs) = (state.clone(), envs.clone());
            move |ev: Event| {
                let Some(target) = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned()) else { return };
                let mut s = state.borrow_mut();
                if s.outcome.is_some() {
                    return;
                }
                if let Some(sel) = as_html_tag::<HtmlSelectElement>(&target, "SELECT") {
                    s.flush_open();
                    let i = sel.selected_index();
                    let option = (i >= 0)
                        .then(|| sel.options().item(i as u32))
                        .flatten()
                        .map(|o| o.text_content().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" "))
                        .unwrap_or_default();
                    let Some(target_ref) = RecordingState::with_env(&envs, |env| env.ref_of(&target)) else { return };
                    let obs = s.snapshot.clone();
                    s.record(obs, Action::Select(target_ref, option));
                } else if s.typing.is_some() {
                    s.flush_typing();
                }
                drop(s);
                refresh_later(&state, &envs);
            }
        };
        rec.listen("click", on_click)?;
        rec.listen("input", on_input)?;
        rec.listen("change", on_change)?;
        input::listen(&mut rec, envs)?;
        Ok(rec)
    }

    fn listen(&mut self, kind: &'static str, f: impl FnMut(Event) + 'static) -> Result<(), String> {
        let document: web_sys::EventTarget = self.document.clone().into();
        self.listen_on(&document, kind, true, f)
    }

    fn listen_on(&mut self, target: &web_sys::EventTarget, kind: &'static str, capture: bool, f: impl FnMut(Event) + 'static) -> Result<(), String> {
        let closure = Closure::<dyn FnMut(Event)>::new(f);
        target
            .add_event_listener_with_callback_and_bool(kind, closure.as_ref().unchecked_ref(), capture)
            .map_err(|_| format!("could not listen for {kind} events"))?;
        self.listeners.push((target.clone(), kind, capture, closure));
        Ok(())
    }

    /// Stops listening and returns what was recorded.
    pub fn finish(self, envs: &EnvCell) -> Demonstration {
        for (target, kind, capture, closure) in &self.listeners {
            let _ = target.remove_event_listener_with_callback_and_bool(kind, closure.as_ref().unchecked_ref(), *capture);
        }
        for o in &self.observers {
            o.disconnect();
        }
        refresh(&self.state, envs);
        let mut s = self.state.borrow_mut();
        s.flush_open();
        let (reward, raw_reward, reason) = s.outcome.clone().unwrap_or((0.0, 0.0, Some("not finished".into())));
        Demonstration {
            format: DEMO_FORMAT,
            task: s.task.clone(),
            seed: s.seed,
            data_mode: s.data_mode.clone(),
            steps: std::mem::take(&mut s.steps),
            reward,
            raw_reward,
            reason,
            exact: s.exact,
        }
    }
}
