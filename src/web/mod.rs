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
// The navigator's and the adversaries' training loops run only in the learner worker's build.
#[cfg(feature = "learner")]
mod learner_adversary;
#[cfg(feature = "learner")]
mod learner_navigator;
pub mod navigator;
pub mod reader;
pub mod recorder;
pub mod remote;
pub mod util;
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
}
