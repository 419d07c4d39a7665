//! The outer loop of every training run in the worker, written once: wait out a pause (serving
//! checkpoint requests), train a chunk, report progress, judge when due, snapshot when due, serve
//! a checkpoint asked for; at the end a last checkpoint and the run's own closing. A run kind
//! (`dqn.rs`, `navigator.rs`, `adversary.rs`) says how to do each step through [`TrainingRun`]:
//! a new agent adds a file with one `impl TrainingRun`, not a loop.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::JsValue;

use super::super::util::now_ms;
use super::protocol::{Flags, Next, post, serve_checkpoint, wait_while_paused};
use crate::learn::Agent;
use crate::request::TrainRequest;

/// One kind of training run, as the loop drives it.
#[allow(async_fn_in_trait)]
pub(super) trait TrainingRun {
    type Agent: Agent;
    /// The agent checkpoint requests are answered with (a population's: the best one judged).
    fn agent(&self) -> &Self::Agent;
    /// What its checkpoints say it was trained on.
    fn trained_on(&self) -> &[String];
    /// Environment steps so far, against the request's budget (`frames`).
    fn env_steps(&self) -> u64;
    /// Trains until `single`'s one step is done, the page asks for something
    /// ([`Flags::interrupts`]), stop, or the budget is spent. `Ok(false)`: the chunk was given up
    /// and there is nothing to report (the run moved to the CPU after losing its GPU).
    async fn chunk(&mut self, flags: &RefCell<Flags>, single: bool) -> Result<bool, String>;
    /// The `progress` message of what happened since the last one; before any chunk, a resumed
    /// run's restored counters.
    fn progress(&mut self, paused: bool) -> JsValue;
    /// Judges the agent and posts what it found (the navigators' success grid); runs that are
    /// judged only at their end keep the default.
    async fn judge(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Posts a `snapshot` message: all a reload needs to resume the run exactly.
    async fn snapshot(&mut self) -> Result<(), String>;
    /// What the run resolves with, after its last checkpoint (DOM-Q-Net evaluates here).
    async fn finish(self) -> Result<JsValue, String>;
}

/// Runs `run` as `req` says until its budget is spent or the page stops it. A `resumed` run
/// shows its restored counters at once, paused or not, instead of zeros until its first chunk
/// ends (a run resumed paused takes none until the person resumes it).
pub(super) async fn drive<R: TrainingRun>(mut run: R, req: &TrainRequest, flags: Rc<RefCell<Flags>>, resumed: bool) -> Result<JsValue, String> {
    if resumed {
        post(run.progress(flags.borrow().pause));
    }
    let mut last_snapshot = now_ms();
    let mut last_judge: Option<f64> = None;
    let mut was_paused = flags.borrow().pause;
    loop {
        let single = match wait_while_paused(run.agent(), run.trained_on(), &flags, req.checkpoint_half).await? {
            Next::Stop => break,
            Next::SingleStep => true,
            Next::Run => false,
        };
        if !run.chunk(&flags, single).await? {
            continue;
        }
        let paused = flags.borrow().pause;
        post(run.progress(paused));

        let finished = flags.borrow().stop || run.env_steps() >= req.frames;
        if req.judge_seeds > 0 && (finished || last_judge.is_none_or(|t| now_ms() - t > req.judge_every_s * 1000.0)) {
            run.judge().await?;
            last_judge = Some(now_ms());
        }
        // Snapshots: periodically, at the end, and when a pause begins (a reload then resumes
        // from where the run was paused).
        let pause_began = paused && !was_paused;
        was_paused = paused;
        if req.snapshot_every_s > 0.0 && (finished || pause_began || now_ms() - last_snapshot > req.snapshot_every_s * 1000.0) {
            run.snapshot().await?;
            last_snapshot = now_ms();
        }
        serve_checkpoint(run.agent(), run.trained_on(), &flags, req.checkpoint_half).await?;
        if finished {
            break;
        }
    }
    // A checkpoint asked for just before the end still gets its answer.
    if req.checkpoint_at_end {
        flags.borrow_mut().checkpoint = true;
    }
    serve_checkpoint(run.agent(), run.trained_on(), &flags, req.checkpoint_half).await?;
    run.finish().await
}
