//! Recording what element actions cannot say, as MiniWoB++'s other actions:
//!
//! - on the real pages whose input is not click-and-type (`interaction` in
//!   `tasks/miniwob.json`): a press, a move of more than a few pixels and a release become one
//!   `Drag` along the path (the click that follows is not recorded again); a double-click becomes
//!   a `DoubleClickAt`; the wheel (or a scroll bar, or scrolling keys) scrolling a box becomes a
//!   `Scroll` of what it moved, at the wheel's point;
//! - on pages where a click's place matters (coordinates), clicks are `ClickAt`; on hover pages the
//!   pointer's moves are `MoveTo` (each new element it enters, and at most every 100 ms);
//! - on any page, a key whose own handlers changed the page or cancelled it (a terminal, a menu
//!   driven by the arrows) is a `PressKey`, a run of such typed characters one `TypeText`, and
//!   Ctrl+A/C/X (and Ctrl+V of what was copied here) are keys, so the replay copies and pastes on
//!   the page (the lab's clipboard); other typing stays `Type`;
//! - a wait: on hover and timing pages every pause, and on any page a pause in which the page
//!   changed by itself (a menu opening after its delay, a delayed button), so the replay gives
//!   the page the time the person gave it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use web_sys::{Element, Event, KeyboardEvent, MouseEvent, MutationObserver, MutationObserverInit, MutationRecord, WheelEvent};

use super::{EnvCell, Recorder, RecordingState, refresh_later};
use crate::env::action::MAX_DRAG_POINTS;
use crate::env::miniwob::Interaction;
use crate::env::{Action, KeyPress, Observation, Point};
use crate::web::util::{as_element, call, get, now_ms, set};

/// How far (px) the pointer must travel while pressed for a press to be a drag, not a click.
const DRAG_SLOP_PX: i32 = 4;
/// Points of a drag's path closer than this (px) to the last kept one are dropped.
const PATH_STEP_PX: i32 = 3;
/// On hover pages, the most often a move within one element is recorded (ms).
const HOVER_EVERY_MS: f64 = 100.0;
/// How long after the wheel (or a scrolling key, or a scroll bar's release) the page's scrolling
/// counts as the person's (ms).
const SCROLL_WINDOW_MS: f64 = 500.0;
/// Where the recorder keeps an element's last known scroll position.
const SCROLL_KEY: &str = "__weblabScrollTop";

/// What is under way between events.
#[derive(Default)]
pub(super) struct Pending {
    press: Option<Press>,
    /// The next click ends a press already recorded (a drag) or on a scroll bar.
    suppress_click: bool,
    /// The last recorded move on a hover page: where, when, onto what.
    hover: Option<(Point, f64, Element)>,
    scroll: Option<ScrollRun>,
    /// Until when the page's scrolling is the person's (the lab's clock, ms).
    scrolling_until: f64,
    wheel_at: Option<(Point, f64)>,
    /// Characters typed through keys the page reacts to, not yet recorded.
    keys: Option<(String, Observation, f64)>,
    /// A key going down: recorded once its handlers have run (or were seen to stop it).
    key: Option<KeyDown>,
    /// The `input` events of the key going down are the key's own (it is recorded as a key).
    key_owns_input: bool,
    /// Ctrl+C or Ctrl+X was recorded: a Ctrl+V pastes what the replay copies too.
    copied: bool,
    /// The page changed by itself since the last action (a timer, an animation, a load).
    pub(super) autonomous: bool,
}

struct Press {
    path: Vec<Point>,
    observation: Observation,
    at: f64,
    far: bool,
}

struct ScrollRun {
    element: Element,
    point: Point,
    dy: i32,
    observation: Observation,
    at: f64,
}

struct KeyDown {
    event: KeyboardEvent,
    observation: Observation,
    at: f64,
}

fn point_of(ev: &MouseEvent) -> Point {
    (ev.client_x(), ev.client_y())
}

fn distance((ax, ay): Point, (bx, by): Point) -> i32 {
    (ax - bx).abs().max((ay - by).abs())
}

impl RecordingState {
    fn needs_pointer(&self) -> bool {
        self.interaction != Interaction::ClickType
    }

    /// Records what is still open: characters typed as keys, a scroll.
    pub(super) fn flush_input(&mut self) {
        if let Some((text, observation, at)) = self.input.keys.take() {
            self.push(observation, Action::TypeText(text), at);
        }
        if let Some(run) = self.input.scroll.take()
            && run.dy != 0
        {
            self.push(run.observation, Action::Scroll(run.point.0, run.point.1, run.dy), run.at);
        }
    }

    /// A click the input recording already stands for (the end of a drag, a press on a scroll
    /// bar) or records itself (a click at a point where the place matters): true when the click
    /// is not to be recorded as an element click.
    pub(super) fn click_was_recorded(&mut self, ev: &Event) -> bool {
        if std::mem::take(&mut self.input.suppress_click) {
            return true;
        }
        if self.interaction == Interaction::Coordinates && ev.is_trusted() {
            let ev: &MouseEvent = ev.unchecked_ref();
            let (x, y) = point_of(ev);
            let obs = self.snapshot.clone();
            self.record(obs, Action::ClickAt(x, y));
            return true;
        }
        false
    }

    /// An `input` event that a recorded key caused (its text is in the key's action).
    pub(super) fn input_is_recorded(&self, _ev: &Event) -> bool {
        self.input.key_owns_input
    }

    fn on_mousedown(&mut self, ev: &MouseEvent) {
        if !self.needs_pointer() || ev.button() != 0 {
            return;
        }
        let p = point_of(ev);
        if let Some(el) = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned())
            && on_scrollbar(&el, ev)
        {
            // The scroll bar's own drag is recorded as the scroll it makes.
            self.input.scrolling_until = f64::INFINITY;
            self.input.suppress_click = true;
            return;
        }
        self.input.press = Some(Press { path: vec![p], observation: self.snapshot.clone(), at: now_ms(), far: false });
    }

    fn on_mousemove(&mut self, ev: &MouseEvent) {
        let p = point_of(ev);
        if let Some(press) = &mut self.input.press {
            let start = press.path[0];
            press.far |= distance(p, start) > DRAG_SLOP_PX;
            if distance(p, *press.path.last().expect("a press has its point")) >= PATH_STEP_PX {
                press.path.push(p);
                if press.path.len() >= MAX_DRAG_POINTS {
                    // Keep every other point between the first and the last.
                    let last = press.path.len() - 1;
                    press.path = press.path.iter().enumerate().filter(|(i, _)| i % 2 == 0 || *i == last).map(|(_, q)| *q).collect();
                }
            }
            return;
        }
        if self.interaction != Interaction::Hover {
            return;
        }
        let Some(el) = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned()) else { return };
        let now = now_ms();
        let due = match &self.input.hover {
            None => true,
            Some((q, t, on)) => *on != el || (now - t >= HOVER_EVERY_MS && distance(p, *q) >= PATH_STEP_PX),
        };
        if due {
            let obs = self.snapshot.clone();
            self.record_at(obs, Action::MoveTo(p.0, p.1), now);
            self.input.hover = Some((p, now, el));
        }
    }

    fn on_mouseup(&mut self, ev: &MouseEvent) {
        if self.input.scrolling_until == f64::INFINITY {
            self.input.scrolling_until = now_ms() + SCROLL_WINDOW_MS;
        }
        let Some(mut press) = self.input.press.take() else { return };
        if !press.far {
            return; // a click: recorded from its click event
        }
        let p = point_of(ev);
        if press.path.last() != Some(&p) {
            press.path.push(p);
        }
        self.record_at(press.observation, Action::Drag(press.path), press.at);
        self.input.suppress_click = true;
    }

    /// A double-click: its two clicks, just recorded, become one `DoubleClickAt`.
    fn on_dblclick(&mut self, ev: &MouseEvent) {
        if !self.needs_pointer() {
            return;
        }
        self.flush_open();
        let n = self.steps.len();
        let clicks = n >= 2 && self.steps[n - 2..].iter().all(|s| matches!(s.action, Action::Click(_) | Action::ClickAt(..)));
        if clicks {
            let first = self.steps.drain(n - 2..).next().expect("two steps");
            let (x, y) = point_of(ev);
            self.steps.push(crate::demo::DemoStep { observation: first.observation, action: Action::DoubleClickAt(x, y) });
        }
    }

    fn on_wheel(&mut self, ev: &WheelEvent) {
        let now = now_ms();
        self.input.scrolling_until = self.input.scrolling_until.max(now + SCROLL_WINDOW_MS);
        self.input.wheel_at = Some((point_of(ev), now));
    }

    /// A box scrolled: by the person (the wheel, a scroll bar, a scrolling key just now) on a
    /// page that needs scrolling, it is part of a `Scroll`; every scroll updates what the box is
    /// known to hold.
    fn on_scroll(&mut self, el: Element, win: &web_sys::Window) {
        let top = el.scroll_top();
        let before = get(&el, SCROLL_KEY).as_f64().unwrap_or(0.0) as i32;
        set(&el, SCROLL_KEY, &JsValue::from(top));
        let now = now_ms();
        let dy = top - before;
        if !self.needs_pointer() || now > self.input.scrolling_until || dy == 0 {
            return;
        }
        if let Some(run) = &mut self.input.scroll
            && run.element == el
        {
            run.dy += dy;
            return;
        }
        self.flush_open();
        let point = match self.input.wheel_at {
            Some((p, t)) if now - t <= SCROLL_WINDOW_MS => p,
            _ => visible_center(&el, win),
        };
        let observation = self.snapshot.clone();
        self.input.scroll = Some(ScrollRun { element: el, point, dy, observation, at: now });
    }

    /// A key went down and its handlers have run: `reacted` when they changed the page or
    /// cancelled the key (or stopped it before the recorder saw it end).
    fn on_key(&mut self, down: KeyDown, reacted: bool) {
        let ev = &down.event;
        let key = ev.key();
        if matches!(key.as_str(), "Shift" | "Control" | "Alt" | "Meta" | "CapsLock" | "Dead" | "Unidentified") {
            return;
        }
        let printable = key.chars().count() == 1;
        let Some(name) = miniwob_key(&key, ev.ctrl_key(), ev.alt_key(), ev.meta_key(), ev.shift_key()) else { return };
        if ev.ctrl_key() || ev.meta_key() {
            let letter = key.to_ascii_lowercase();
            let record = match letter.as_str() {
                "c" | "x" => {
                    self.input.copied = true;
                    true
                }
                "a" => true,
                "v" => self.input.copied,
                _ => reacted,
            };
            if record {
                self.record_at(down.observation, Action::PressKey(name), down.at);
                self.input.key_owns_input = true;
            }
            return;
        }
        if !reacted {
            let editing = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned()).is_some_and(|el| {
                matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT") || get(&el, "isContentEditable").as_bool() == Some(true)
            });
            if !editing && matches!(key.as_str(), "PageUp" | "PageDown" | "ArrowUp" | "ArrowDown" | "Home" | "End" | " ") {
                self.input.scrolling_until = now_ms() + SCROLL_WINDOW_MS;
            }
            return;
        }
        self.input.key_owns_input = true;
        if printable {
            match &mut self.input.keys {
                Some((text, _, _)) => text.push_str(&key),
                None => {
                    self.flush_open();
                    self.input.keys = Some((key, down.observation, down.at));
                }
            }
        } else {
            self.record_at(down.observation, Action::PressKey(name), down.at);
        }
    }
}

/// A DOM key as MiniWoB++'s `PRESS_KEY` names it (`a`, `A`, `<Enter>`, `C-c`), when it names it.
fn miniwob_key(key: &str, ctrl: bool, alt: bool, meta: bool, shift: bool) -> Option<String> {
    let printable = key.chars().count() == 1;
    let base = if printable {
        match key {
            " " => "<Space>".to_string(),
            k if ctrl || alt || meta => k.to_ascii_lowercase(),
            k => k.to_string(),
        }
    } else {
        format!("<{key}>")
    };
    let mut name = String::new();
    for (on, prefix) in [(ctrl, "C-"), (alt, "A-"), (meta, "M-"), (shift && (!printable || ctrl || alt || meta), "S-")] {
        if on {
            name.push_str(prefix);
        }
    }
    name.push_str(&base);
    KeyPress::parse(&name).ok().map(|_| name)
}

/// Whether a press landed on the element's own scroll bar (right of its content box).
fn on_scrollbar(el: &Element, ev: &MouseEvent) -> bool {
    let r = el.get_bounding_client_rect();
    let inside_x = ev.client_x() as f64 - r.left() - el.client_left() as f64;
    let inside_y = ev.client_y() as f64 - r.top() - el.client_top() as f64;
    (el.scroll_height() > el.client_height() && inside_x >= el.client_width() as f64 && inside_x < r.width())
        || (el.scroll_width() > el.client_width() && inside_y >= el.client_height() as f64 && inside_y < r.height())
}

/// The centre of the part of `el` inside the page's viewport.
fn visible_center(el: &Element, win: &web_sys::Window) -> Point {
    let r = el.get_bounding_client_rect();
    let w = win.inner_width().ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let h = win.inner_height().ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let (l, t) = (r.left().max(0.0), r.top().max(0.0));
    let (rr, b) = (r.right().min(w - 1.0), r.bottom().min(h - 1.0));
    (((l + rr) / 2.0) as i32, ((t + b) / 2.0) as i32)
}

/// Marks the scroll position of every box the page has already scrolled, so the first scroll
/// the person makes is measured from where the box was.
fn note_scroll_positions(doc: &web_sys::Document) {
    let Ok(all) = doc.query_selector_all("*") else { return };
    for i in 0..all.length() {
        if let Some(el) = all.item(i).and_then(|n| as_element(&n).cloned())
            && el.scroll_top() != 0
        {
            set(&el, SCROLL_KEY, &JsValue::from(el.scroll_top()));
        }
    }
}

/// Whether a change is in the page contract's own chrome (the reward panel's clock, the cover).
fn in_chrome(record: &MutationRecord) -> bool {
    let Some(node) = record.target() else { return false };
    let el = as_element(&node).cloned().or_else(|| node.parent_element());
    el.is_some_and(|e| e.closest("#reward-display, #sync-task-cover, #click-canvas, #query").ok().flatten().is_some())
}

fn observe_all(observer: &MutationObserver, doc: &web_sys::Document) -> Result<(), String> {
    let init = MutationObserverInit::new();
    init.set_subtree(true);
    init.set_child_list(true);
    init.set_attributes(true);
    init.set_character_data(true);
    let root = doc.document_element().ok_or("the task page has no document element")?;
    observer.observe_with_options(&root, &init).map_err(|_| "could not watch the task page".to_string())
}

/// Adds the listeners and observers of the input recording to `rec`.
pub(super) fn listen(rec: &mut Recorder, envs: &EnvCell) -> Result<(), String> {
    let doc = rec.document.clone();
    let win = doc.default_view().ok_or("the task page has no window")?;
    note_scroll_positions(&doc);
    let state = rec.state.clone();

    // Person-driven work in flight: mutations made meanwhile are the page answering the person;
    // mutations at any other time are the page changing by itself.
    let busy = Rc::new(Cell::new(0u32));
    let autonomous = {
        let (state, busy) = (state.clone(), busy.clone());
        Closure::<dyn FnMut(js_sys::Array, JsValue)>::new(move |records: js_sys::Array, _: JsValue| {
            if busy.get() > 0 {
                return;
            }
            if records.iter().any(|r| !in_chrome(r.unchecked_ref())) {
                state.borrow_mut().input.autonomous = true;
            }
        })
    };
    let watcher = MutationObserver::new(autonomous.as_ref().unchecked_ref()).map_err(|_| "could not watch the task page")?;
    autonomous.forget();
    observe_all(&watcher, &doc)?;
    rec.observers.push(watcher);
    // What changed while a key's handlers ran. A trusted event runs a microtask checkpoint after
    // each listener, so the page's changes reach this callback before the window's bubble
    // listener runs, and what is still queued there is read with takeRecords.
    let key_changed = Rc::new(Cell::new(false));
    let note_change = {
        let key_changed = key_changed.clone();
        Closure::<dyn FnMut(js_sys::Array, JsValue)>::new(move |records: js_sys::Array, _: JsValue| {
            if records.iter().any(|r| !in_chrome(r.unchecked_ref())) {
                key_changed.set(true);
            }
        })
    };
    let key_watcher = MutationObserver::new(note_change.as_ref().unchecked_ref()).map_err(|_| "could not watch the task page")?;
    note_change.forget();
    observe_all(&key_watcher, &doc)?;
    let key_watcher = Rc::new(key_watcher);
    rec.observers.push((*key_watcher).clone());

    let window_target: web_sys::EventTarget = win.clone().into();
    for kind in ["mousedown", "mouseup", "mousemove", "click", "dblclick", "keydown", "keypress", "keyup", "input", "change", "wheel"] {
        let busy = busy.clone();
        rec.listen_on(&window_target, kind, true, move |ev: Event| {
            if !ev.is_trusted() {
                return;
            }
            busy.set(busy.get() + 1);
            let busy = busy.clone();
            let done = Closure::once_into_js(move || busy.set(busy.get().saturating_sub(1)));
            let _ = call(&js_sys::global(), "setTimeout", &[done, JsValue::from(0)]);
        })?;
    }

    let live = |state: &Rc<RefCell<RecordingState>>, ev: &Event| ev.is_trusted() && state.borrow().outcome.is_none();
    let mouse = |f: fn(&mut RecordingState, &MouseEvent)| {
        let (state, envs) = (state.clone(), envs.clone());
        move |ev: Event| {
            if live(&state, &ev) {
                f(&mut state.borrow_mut(), ev.unchecked_ref());
                if matches!(ev.type_().as_str(), "mouseup" | "dblclick") {
                    refresh_later(&state, &envs);
                }
            }
        }
    };
    rec.listen("mousedown", mouse(RecordingState::on_mousedown))?;
    rec.listen("mousemove", mouse(RecordingState::on_mousemove))?;
    rec.listen("mouseup", mouse(RecordingState::on_mouseup))?;
    rec.listen("dblclick", mouse(RecordingState::on_dblclick))?;
    rec.listen("wheel", {
        let state = state.clone();
        move |ev: Event| {
            if live(&state, &ev) {
                state.borrow_mut().on_wheel(ev.unchecked_ref());
            }
        }
    })?;
    rec.listen("scroll", {
        let (state, doc, win) = (state.clone(), doc.clone(), win.clone());
        move |ev: Event| {
            // Scrolling is the browser's doing, so its events are trusted whoever caused it.
            if state.borrow().outcome.is_some() {
                return;
            }
            let target = ev.target().and_then(|t| as_element(t.unchecked_ref()).cloned());
            let el = target.or_else(|| {
                let root = get(&doc, "scrollingElement");
                root.is_object().then(|| root.unchecked_into())
            });
            if let Some(el) = el {
                state.borrow_mut().on_scroll(el, &win);
            }
        }
    })?;

    // A key: its handlers run between the window's capture listener (first) and its bubble
    // listener (last); what changed in between, or a cancelled key, is the page reacting.
    rec.listen_on(&window_target, "keydown", true, {
        let (state, key_watcher, key_changed) = (state.clone(), key_watcher.clone(), key_changed.clone());
        move |ev: Event| {
            if !live(&state, &ev) {
                return;
            }
            let _ = key_watcher.take_records();
            key_changed.set(false);
            let mut s = state.borrow_mut();
            if let Some(stopped) = s.input.key.take() {
                s.on_key(stopped, true);
            }
            let observation = s.snapshot.clone();
            s.input.key = Some(KeyDown { event: ev.unchecked_into(), observation, at: now_ms() });
        }
    })?;
    rec.listen_on(&window_target, "keydown", false, {
        let (state, envs, key_watcher) = (state.clone(), envs.clone(), key_watcher.clone());
        move |ev: Event| {
            if !live(&state, &ev) {
                return;
            }
            let queued = key_watcher.take_records().iter().any(|r| !in_chrome(r.unchecked_ref()));
            let changed = key_changed.replace(false) || queued;
            let mut s = state.borrow_mut();
            if let Some(down) = s.input.key.take() {
                s.on_key(down, changed || ev.default_prevented());
            }
            drop(s);
            refresh_later(&state, &envs);
        }
    })?;
    rec.listen_on(&window_target, "keyup", true, {
        let state = state.clone();
        move |ev: Event| {
            if !live(&state, &ev) {
                return;
            }
            let mut s = state.borrow_mut();
            // A keydown whose bubbling the page stopped: its handlers took it.
            if let Some(stopped) = s.input.key.take() {
                s.on_key(stopped, true);
            }
            s.input.key_owns_input = false;
        }
    })?;
    Ok(())
}
