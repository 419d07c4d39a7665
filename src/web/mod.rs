//! The browser edge: reads the live DOM of a task page in a same-origin iframe, acts on it with
//! real events, speaks the MiniWoB page contract, and exposes the lab to the JS shell. It calls
//! into the pure core; the core never calls back into it.

pub mod actuator;
pub mod app;
pub mod curriculum;
pub mod design;
pub mod env;
pub mod frame;
pub mod gminiwob;
pub mod input;
pub mod learner;
pub mod navigator;
pub mod play;
pub mod reaction;
pub mod reader;
pub mod recorder;
pub mod remote;
pub mod settings;
pub mod util;
pub mod watch;
pub mod wge;

pub use app::Lab;
pub use env::IframeEnv;

/// Runs the static constructors (burn's cubecl registers its kernels through them) exactly once,
/// when the module is instantiated. Without an explicit call, wasm-ld treats the module as a
/// command and re-runs every constructor at the top of *each* exported function — about 150 ms
/// on every call from JavaScript.
#[wasm_bindgen::prelude::wasm_bindgen(start)]
fn start() {
    unsafe extern "C" {
        fn __wasm_call_ctors();
    }
    // SAFETY: called once, before any other export, as wasm-ld expects of an explicit caller.
    unsafe { __wasm_call_ctors() };
    std::panic::set_hook(Box::new(report_panic));
}

/// The wasm builds abort on a panic (`panic = abort`, the only strategy on stable for wasm32):
/// the instance traps and its state (a task page taken out of its slot, a borrowed cell) stays
/// as it was, so the lab cannot go on in place. Before the trap, say what happened: on the
/// console, and to the page's `weblabPanicked(message)` (the app shows it and offers a reload
/// that restores from the browser's store; the learner worker reports it as the run's error).
/// The handler must not call back into the wasm.
fn report_panic(info: &std::panic::PanicHookInfo<'_>) {
    let text = info.to_string();
    web_sys::console::error_1(&wasm_bindgen::JsValue::from_str(&text));
    let handler = js_sys::Reflect::get(&js_sys::global(), &wasm_bindgen::JsValue::from_str("weblabPanicked"));
    if let Ok(f) = handler
        && let Some(f) = wasm_bindgen::JsCast::dyn_ref::<js_sys::Function>(&f)
    {
        let _ = f.call1(&wasm_bindgen::JsValue::NULL, &wasm_bindgen::JsValue::from_str(&text));
    }
}
