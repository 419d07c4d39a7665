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
