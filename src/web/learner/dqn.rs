//! DOM-Q-Net's runs in the worker (Algorithm 1, `dom_q_net::train::Trainer`) against the main
//! thread's task pages through [`Watched`] environments, a chunk of environment steps at a time;
//! a single step is one environment step and its update. If WebGPU fails mid-run (e.g. the
//! device is lost) it carries on with the CPU from its last good checkpoint; a number that is
//! not finite stops the run. At the end, a greedy evaluation on held-out seeds.

use std::cell::RefCell;
use std::rc::Rc;

use burn::prelude::Device;
use wasm_bindgen::JsValue;

use super::super::remote::to_js;
use super::super::util::now_ms;
use super::backend::{Probe, choose_backend};
use super::dqn_progress::{EpisodeNote, Meter, Progress, Rates};
use super::driver::{TrainingRun, drive};
use super::protocol::{Flags, Watched, message, post, post_run_snapshot, restore_optimizer, status};
use crate::dom_q_net::agent::{NOT_FINITE, probe_update};
use crate::dom_q_net::checkpoint::Checkpoint;
use crate::dom_q_net::train::{Control, TrainEvent, Trainer, evaluate_episodes};
use crate::dom_q_net::{DomQNetAgent, DqnConfig};
use crate::env::EnvError;
use crate::learn::failures::EnvFailures;
use crate::request::{SNAPSHOT_SCHEMA, SavedRun, TrainRequest};
use crate::runner::RunStats;

struct DqnProbe(DqnConfig);
impl Probe for DqnProbe {
    async fn update(&self, device: &Device) -> Result<(), String> {
        probe_update(&self.0, device).await
    }
}

struct DqnRun {
    req: TrainRequest,
    agent: DomQNetAgent,
    trainer: Trainer,
    envs: Vec<Watched>,
    failures: EnvFailures,
    /// Labels tell a real MiniWoB++ page from the lab's page of the same name.
    task_names: Vec<String>,
    backend: &'static str,
    /// The newest checkpoint known good, and its update: where a run that loses its GPU resumes.
    last_good: Vec<u8>,
    last_good_at: u64,
    t_start: f64,
    active_start: f64,
    start: (u64, u64),
    /// The last chunk's meter and rates, for its progress message.
    last: Option<(Meter, Rates)>,
}

pub(super) async fn run(
    req: TrainRequest,
    checkpoint: Option<Vec<u8>>,
    saved: Option<String>,
    optimizer: Option<Vec<u8>>,
    flags: Rc<RefCell<Flags>>,
) -> Result<JsValue, String> {
    if req.tasks.is_empty() {
        return Err("no tasks to train on".into());
    }
    let saved: Option<SavedRun> = match saved {
        Some(json) => Some(serde_json::from_str(&json).map_err(|e| format!("the saved run is damaged: {e}"))?),
        None => None,
    };
    let cfg = req.dqn_config()?;
    let probe = DqnProbe(DqnConfig { batch_size: cfg.batch_size.min(32), ..cfg.clone() });
    let (device, backend, reason) = choose_backend(&req, &probe).await;
    post(message("backend", serde_json::json!({ "name": backend, "reason": reason })));
    let task_names: Vec<String> = req.tasks.iter().map(|t| t.label()).collect();
    let mut agent = match checkpoint {
        Some(bytes) => {
            let ckpt = Checkpoint::from_bytes(&bytes).map_err(|e| e.to_string())?;
            ckpt.check_fits(&cfg).map_err(|e| e.to_string())?;
            DomQNetAgent::from_checkpoint(ckpt, &device).map_err(|e| e.to_string())?
        }
        None => DomQNetAgent::new(cfg.clone(), &device)?,
    };
    let resumed = saved.is_some();
    let trainer = match saved {
        Some(saved) => {
            saved.check(&req, &agent.cfg)?;
            agent.replay_mut().restore(saved.replay).map_err(|e| format!("the saved run is damaged: {e}"))?;
            restore_optimizer(&mut agent, optimizer);
            Trainer::from_state(saved.trainer)
        }
        None => Trainer::new(req.tasks.clone(), req.seed),
    }
    .with_clock(now_ms);
    let last_good = agent.save(&task_names).await?;
    let run = DqnRun {
        envs: (0..req.tasks.len()).map(Watched::new).collect(),
        failures: EnvFailures::new(req.tasks.len()),
        last_good_at: agent.counters.updates,
        last_good,
        t_start: now_ms(),
        active_start: trainer.elapsed_ms(),
        start: (agent.counters.env_steps, agent.counters.updates),
        last: None,
        task_names,
        backend,
        agent,
        trainer,
        req: req.clone(),
    };
    drive(run, &req, flags, resumed).await
}

impl DqnRun {
    /// After a chunk the trainer gave up with `e` (`failed_page`: the page that failed in it, if
    /// one did): a page that failed ends its episode (the loop
    /// dropped it) and the run goes on unless the rule says stop; a lost GPU moves the run to the
    /// CPU (`Ok(false)`); anything else ends the run.
    fn failed(&mut self, e: EnvError, failed_page: Option<(usize, EnvError)>) -> Result<bool, String> {
        if let Some((k, failure)) = failed_page
            && e == failure
        {
            let updates = self.agent.counters.updates;
            self.failures
                .failed(k, &self.task_names[k], &failure)
                .map_err(|why| format!("{why}. Training stopped at update {updates}; the run's last snapshot is kept"))?;
            return Ok(true);
        }
        // A number that is not finite (a NaN reward, an overflowing update) is no device
        // failure: the agent refused it and kept its network, but going on (here or on the CPU)
        // would meet it again. Stop, and save nothing more: the page keeps the run's last
        // snapshot, from before it.
        if let EnvError::Browser(m) = &e
            && let Some(why) = m.strip_prefix("agent: ").filter(|m| m.starts_with(NOT_FINITE))
        {
            let updates = self.agent.counters.updates;
            return Err(format!("{why}. Training stopped at update {updates}; the run's last snapshot, from before this, is kept"));
        }
        let agent_failed = matches!(&e, EnvError::Browser(m) if m.starts_with("agent:"));
        if self.backend == "webgpu" && agent_failed {
            // The GPU went away: carry on with the CPU from the last good checkpoint.
            let ckpt = Checkpoint::from_bytes(&self.last_good).map_err(|e| e.to_string())?;
            self.agent = DomQNetAgent::from_checkpoint(ckpt, &Device::flex().autodiff()).map_err(|e| e.to_string())?;
            self.trainer.drop_running_episodes(&mut self.agent);
            self.backend = "cpu";
            let reason = format!("WebGPU stopped working ({e}); continuing on the CPU from update {}", self.last_good_at);
            post(message("backend", serde_json::json!({ "name": "cpu", "reason": reason })));
            return Ok(false);
        }
        Err(e.to_string())
    }
}

impl TrainingRun for DqnRun {
    type Agent = DomQNetAgent;
    fn agent(&self) -> &DomQNetAgent {
        &self.agent
    }
    fn trained_on(&self) -> &[String] {
        &self.task_names
    }
    fn env_steps(&self) -> u64 {
        self.agent.counters.env_steps
    }

    async fn chunk(&mut self, flags: &RefCell<Flags>, single: bool) -> Result<bool, String> {
        let frames = self.req.frames;
        let until = if single { (self.agent.counters.env_steps + 1).min(frames) } else { frames };
        let mut meter = Meter::default();
        let chunk_start = now_ms();
        let (chunk_steps, chunk_updates) = (self.agent.counters.env_steps, self.agent.counters.updates);
        let progress_ms = self.req.progress_ms;
        let result = self
            .trainer
            .run(&mut self.agent, &mut self.envs, until, |ev| {
                match ev {
                    TrainEvent::Step { act_ms, env_ms, .. } => {
                        meter.acts += 1;
                        meter.act_ms += act_ms;
                        meter.env_ms += env_ms;
                    }
                    TrainEvent::Update { stats, update_ms } => {
                        meter.updates += 1;
                        meter.update_ms += update_ms;
                        meter.loss += stats.loss as f64;
                        meter.batch_positives += stats.positives_in_batch as f64;
                    }
                    TrainEvent::Episode { task, result, .. } => {
                        let note = EpisodeNote { task, reward: result.reward, raw_reward: result.raw_reward, steps: result.steps };
                        meter.episodes.push(note);
                    }
                    TrainEvent::Warning { message, .. } => {
                        if meter.warnings.len() < 4 {
                            meter.warnings.push(message.to_string());
                        }
                    }
                }
                let f = flags.borrow();
                // A single step ends by its step budget; anything but stop waits for it.
                if f.stop || (!single && f.interrupts(chunk_start, progress_ms)) { Control::Stop } else { Control::Continue }
            })
            .await;
        // Episodes the pages ended break their task's row of failures.
        for note in &meter.episodes {
            self.failures.ended(note.task);
        }
        let failed_page = self.envs.iter_mut().enumerate().find_map(|(k, w)| w.failure.take().map(|f| (k, f)));
        if let Err(e) = result
            && !self.failed(e, failed_page)?
        {
            return Ok(false);
        }
        let chunk_s = (now_ms() - chunk_start) / 1000.0;
        let active_s = (self.trainer.elapsed_ms() - self.active_start) / 1000.0;
        let c = self.agent.counters;
        let (steps_now, updates_now) = (c.env_steps - chunk_steps, c.updates - chunk_updates);
        let recent = |n: u64| (chunk_s > 0.0 && steps_now > 0).then(|| n as f64 / chunk_s);
        let rates = Rates {
            steps_per_s: (c.env_steps - self.start.0) as f64 / active_s.max(1e-9),
            updates_per_s: (c.updates - self.start.1) as f64 / active_s.max(1e-9),
            recent_steps_per_s: recent(steps_now),
            recent_updates_per_s: recent(updates_now),
            active_s,
        };
        self.last = Some((meter, rates));
        if c.updates >= self.last_good_at + self.req.checkpoint_every {
            self.last_good = self.agent.save(&self.task_names).await?;
            self.last_good_at = c.updates;
        }
        Ok(true)
    }

    fn progress(&mut self, paused: bool) -> JsValue {
        let (meter, rates) = match self.last.take() {
            Some((m, r)) => (m, Some(r)),
            None => (Meter::default(), None),
        };
        let mean = |sum: f64, n: u32| (n > 0).then(|| sum / n as f64);
        let (agent, c) = (&self.agent, self.agent.counters);
        to_js(&Progress {
            kind: "progress",
            backend: self.backend,
            env_steps: c.env_steps,
            frames: self.req.frames,
            updates: c.updates,
            episodes: c.episodes,
            tasks: &self.trainer.progress,
            replay_len: agent.replay().len(),
            replay_capacity: agent.replay().capacity(),
            positive_fraction: agent.replay().positive_fraction(),
            loss: mean(meter.loss, meter.updates),
            batch_positives: mean(meter.batch_positives, meter.updates),
            act_ms: mean(meter.act_ms, meter.acts),
            env_ms: mean(meter.env_ms, meter.acts),
            update_ms: mean(meter.update_ms, meter.updates),
            steps_per_s: rates.as_ref().map(|r| r.steps_per_s),
            updates_per_s: rates.as_ref().map(|r| r.updates_per_s),
            recent_steps_per_s: rates.as_ref().and_then(|r| r.recent_steps_per_s),
            recent_updates_per_s: rates.as_ref().and_then(|r| r.recent_updates_per_s),
            active_s: rates.as_ref().map_or(0.0, |r| r.active_s),
            elapsed_s: (now_ms() - self.t_start) / 1000.0,
            new_episodes: meter.episodes,
            env_failures: self.failures.take_notes(),
            env_failures_total: self.failures.total,
            warnings: meter.warnings,
            paused,
        })
    }

    /// The checkpoint, the trainer's state and recent replay, and Adam's moments.
    async fn snapshot(&mut self) -> Result<(), String> {
        let state = SavedRun { schema: SNAPSHOT_SCHEMA, trainer: self.trainer.state(), replay: self.agent.replay().recent(self.req.snapshot_replay) };
        post_run_snapshot(&self.agent, &self.task_names, serde_json::to_string(&state).map_err(|e| e.to_string())?).await
    }

    /// Greedy evaluation on held-out seeds; it leaves the agent as it was (and as checkpointed).
    async fn finish(mut self) -> Result<JsValue, String> {
        let req = &self.req;
        let mut evaluation = Vec::new();
        for (k, task) in req.tasks.iter().enumerate().filter(|_| req.eval_episodes > 0) {
            status(format!("evaluating {} greedily on {} held-out episodes…", task.label(), req.eval_episodes));
            let t0 = now_ms();
            let episodes = evaluate_episodes(&mut self.agent, &mut self.envs[k], task, req.eval_episodes, req.eval_seed)
                .await
                .map_err(|e| format!("evaluating {}: {e}", task.label()))?;
            let stats = RunStats::of(&episodes);
            // Why the failures failed: the first few, as they ended (seed, steps, the page's or the lab's reason).
            let failures: Vec<_> = episodes.iter().filter(|ep| !ep.success()).take(5).collect();
            let result = serde_json::json!({
                "task": task.label(),
                "episodes": stats.episodes,
                "successes": stats.successes,
                "success_rate": stats.successes as f64 / stats.episodes.max(1) as f64,
                "mean_reward": stats.mean_reward_100,
                "first_seed": req.eval_seed,
                "mean_steps": stats.steps as f64 / stats.episodes.max(1) as f64,
                "failures": failures,
                "seconds": (now_ms() - t0) / 1000.0,
            });
            post(message("evaluation", result.clone()));
            evaluation.push(result);
        }
        Ok(to_js(&serde_json::json!({
            "evaluation": evaluation,
            "kind": "done",
            "backend": self.backend,
            "env_steps": self.agent.counters.env_steps,
            "updates": self.agent.counters.updates,
            "tasks": self.trainer.progress,
            "elapsed_s": (now_ms() - self.t_start) / 1000.0,
            "active_s": (self.trainer.elapsed_ms() - self.active_start) / 1000.0,
        })))
    }
}
