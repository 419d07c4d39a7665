//! Small helpers for the pure core.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Runs a future to completion on the current thread. The core's futures (native environments,
/// CPU tensor reads) are ready at once or after a few polls; this is for native code and tests,
/// never for the browser, where futures wait on the event loop.
pub fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

/// Milliseconds since the first call, from the native monotonic clock (not available on
/// wasm32-unknown-unknown, where the browser edge passes `performance.now` instead).
#[cfg(not(target_arch = "wasm32"))]
pub fn native_clock_ms() -> f64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}
