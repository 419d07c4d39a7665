//! A page's reaction to an action, so that a step ends when the page has finished reacting, as a
//! person waits before looking again.
//!
//! Widgets react after a short delay: jQuery UI's autocomplete searches 300 ms after the last
//! keystroke, its date picker and accordion animate for a few hundred milliseconds (jQuery 1.12
//! drives animations with a 13 ms `setInterval`). MiniWoB++'s own scripted tests wait 300 ms after
//! actions on such pages, and the `-nodelay` variants exist because of it. Rather than a fixed
//! wait on every step, the lab watches the timers the page starts while an action's events run
//! (and those that such timers start in turn): the step waits until they have fired or been
//! cleared. Pages that start none cost nothing. Longer timers (a page's episode clock, a
//! countdown ticking each second) are not a reaction and are never waited for.
//!
//! The watch wraps the page's `setTimeout`/`setInterval`/`clear*` once, when the page loads; code
//! that kept its own reference to them before (d3's timer) goes unwatched, which only means no
//! wait.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::{JsCast, JsValue, closure::Closure};
use web_sys::Window;

use super::util::{get, now_ms, set, sleep};

/// Timers shorter than this, started in reaction to an action, are part of its reaction (jQuery
/// UI waits at most 400 ms); a page's one-second countdown is not.
pub const REACTION_MS: f64 = 1000.0;

#[derive(Default)]
struct State {
    /// Above 0 while the page runs code that belongs to an action: its events, or a watched timer.
    depth: u32,
    /// Watched timeouts not yet fired or cleared.
    timeouts: HashSet<i32>,
    /// Watched intervals not yet cleared.
    intervals: HashSet<i32>,
}

impl State {
    fn pending(&self) -> usize {
        self.timeouts.len() + self.intervals.len()
    }
}

/// The watch on one loaded page.
pub struct Reactions {
    state: Rc<RefCell<State>>,
}

/// What a step waited for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Waited {
    pub ms: f64,
    /// The bound ran out with timers still pending (a page that animates without end).
    pub timed_out: bool,
}

impl Reactions {
    /// Wraps the timer functions of `win` (a page just loaded).
    pub fn install(win: &Window) -> Self {
        let state = Rc::new(RefCell::new(State::default()));
        let global: &JsValue = win.as_ref();
        for (name, interval) in [("setTimeout", false), ("setInterval", true)] {
            if let Ok(original) = get(global, name).dyn_into::<Function>() {
                set(global, name, &starter(&state, global, original, interval));
            }
        }
        for name in ["clearTimeout", "clearInterval"] {
            if let Ok(original) = get(global, name).dyn_into::<Function>() {
                set(global, name, &clearer(&state, global, original));
            }
        }
        Reactions { state }
    }

    /// Runs `f` (the events of an action) as the start of a reaction: the timers it starts are
    /// watched.
    pub fn during<T>(&self, f: impl FnOnce() -> T) -> T {
        self.state.borrow_mut().depth += 1;
        let out = f();
        self.state.borrow_mut().depth -= 1;
        out
    }

    /// `during` for an action that awaits (a drag's moves, a wait): timers the page starts
    /// between its awaits count as its reactions too.
    pub async fn during_async<T>(&self, f: impl std::future::Future<Output = T>) -> T {
        self.state.borrow_mut().depth += 1;
        let out = f.await;
        self.state.borrow_mut().depth -= 1;
        out
    }

    /// Watched timers still to fire.
    pub fn pending(&self) -> usize {
        self.state.borrow().pending()
    }

    /// Waits until every watched timer has fired or been cleared, `stop()` holds (the episode
    /// ended), or `max_ms` have passed. `None` when there was nothing to wait for.
    pub async fn settle(&self, max_ms: u32, stop: impl Fn() -> bool) -> Option<Waited> {
        if self.pending() == 0 || stop() {
            return None;
        }
        let t0 = now_ms();
        loop {
            sleep(1).await;
            if self.pending() == 0 || stop() {
                return Some(Waited { ms: now_ms() - t0, timed_out: false });
            }
            if now_ms() - t0 >= max_ms as f64 {
                return Some(Waited { ms: now_ms() - t0, timed_out: true });
            }
        }
    }
}

/// The arguments of a timer call as given, without the trailing `undefined`s our fixed-arity
/// wrapper adds.
fn args(values: [JsValue; 4]) -> Array {
    let n = values.iter().rposition(|v| !v.is_undefined()).map_or(0, |i| i + 1);
    values.into_iter().take(n).collect()
}

/// The page's `setTimeout` (or `setInterval`), watching the short timers started during a
/// reaction. Their callbacks run as part of the reaction, so what they start is watched too.
fn starter(state: &Rc<RefCell<State>>, global: &JsValue, original: Function, interval: bool) -> JsValue {
    let (state, global) = (state.clone(), global.clone());
    let f = move |cb: JsValue, delay: JsValue, a: JsValue, b: JsValue| -> JsValue {
        let short = delay.as_f64().unwrap_or(0.0) < REACTION_MS;
        let watched = state.borrow().depth > 0 && short && cb.is_function();
        if !watched {
            return Reflect::apply(&original, &global, &args([cb, delay, a, b])).unwrap_or(JsValue::UNDEFINED);
        }
        let id = Rc::new(Cell::new(None::<i32>));
        let run = {
            let (state, global, id, cb) = (state.clone(), global.clone(), id.clone(), cb.unchecked_into::<Function>());
            move |x: JsValue, y: JsValue| {
                if !interval && let Some(i) = id.get() {
                    state.borrow_mut().timeouts.remove(&i);
                }
                state.borrow_mut().depth += 1;
                let result = cb.call2(&global, &x, &y);
                state.borrow_mut().depth -= 1;
                if let Err(e) = result {
                    wasm_bindgen::throw_val(e);
                }
            }
        };
        let wrapped: JsValue = if interval { Closure::<dyn FnMut(JsValue, JsValue)>::new(run).into_js_value() } else { Closure::once_into_js(run) };
        let handle = Reflect::apply(&original, &global, &args([wrapped, delay, a, b])).unwrap_or(JsValue::UNDEFINED);
        if let Some(h) = handle.as_f64() {
            let h = h as i32;
            id.set(Some(h));
            let mut s = state.borrow_mut();
            if interval {
                s.intervals.insert(h)
            } else {
                s.timeouts.insert(h)
            };
        }
        handle
    };
    Closure::<dyn FnMut(JsValue, JsValue, JsValue, JsValue) -> JsValue>::new(f).into_js_value()
}

/// The page's `clearTimeout` (or `clearInterval`; browsers let either clear both kinds).
fn clearer(state: &Rc<RefCell<State>>, global: &JsValue, original: Function) -> JsValue {
    let (state, global) = (state.clone(), global.clone());
    let f = move |handle: JsValue| -> JsValue {
        if let Some(h) = handle.as_f64() {
            let mut s = state.borrow_mut();
            s.timeouts.remove(&(h as i32));
            s.intervals.remove(&(h as i32));
        }
        original.call1(&global, &handle).unwrap_or(JsValue::UNDEFINED)
    };
    Closure::<dyn FnMut(JsValue) -> JsValue>::new(f).into_js_value()
}
