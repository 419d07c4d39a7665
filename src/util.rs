//! Small helpers for the pure core.

use std::future::{Future, poll_fn};
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

/// Runs `fut` until it finishes or `deadline` does, whichever comes first; `None` when the
/// deadline won. The browser edge passes a timer so that a hung WebGPU start (a `requestDevice`
/// that never answers) falls back instead of stalling training.
pub async fn before<F: Future, D: Future>(fut: F, deadline: D) -> Option<F::Output> {
    let (mut fut, mut deadline) = (pin!(fut), pin!(deadline));
    poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        deadline.as_mut().poll(cx).map(|_| None)
    })
    .await
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::{pending, ready};

    #[test]
    fn before_returns_the_result_or_none_when_the_deadline_comes_first() {
        assert_eq!(block_on(before(ready(7), pending::<()>())), Some(7));
        assert_eq!(block_on(before(pending::<i32>(), ready(()))), None, "a hung future gives way");
        assert_eq!(block_on(before(ready(1), ready(()))), Some(1), "a finished result wins a tie");
    }
}
