//! The learner worker's loop for the gMiniWoB navigator: a generator proposes a design, the
//! navigator collects M episodes on it on the page's task iframe (the site renders there as it
//! trains), one A2C update; the success grid on the test sites is judged on the site simulator
//! in the worker (equal to the live DOM, see `tests/web_gminiwob_sim.rs`). Pause, single
//! iteration, stop, checkpoints and snapshots go through the same helpers as DOM-Q-Net's loop
//! (`super::learner`), over the shared `Agent` interface.

use std::cell::RefCell;
use std::rc::Rc;

use burn::prelude::Device;
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

use super::learner::{
    Flags, Next, Probe, SNAPSHOT_SCHEMA, TrainRequest, Watched, check_schema, choose_backend, message, post, post_run_snapshot,
    serve_checkpoint, wait_while_paused,
};
use super::remote::to_js;
use super::util::{now_ms, yield_now};
use crate::curriculum::{Generator, GeneratorSpec};
use crate::gminiwob::sim::SiteSim;
use crate::gminiwob::test_sites::{LEVELS, TEST_SITES, test_site};
use crate::gminiwob::{RewardConfig, Values};
use crate::learn::failures::EnvFailures;
use crate::navigator::agent::probe_update;
use crate::navigator::train::{Iteration, JUDGE_SEEDS_FROM, NavTrainer, NavTrainerState, judge, site_task};
use crate::navigator::{Navigator, NavigatorConfig};

pub(super) struct NavProbe(pub(super) NavigatorConfig);
impl Probe for NavProbe {
    async fn update(&self, device: &Device) -> Result<(), String> {
        probe_update(&self.0, device).await
    }
}

/// The request's config (a partial `NavigatorConfig`) over the defaults.
pub(super) fn config(req: &TrainRequest) -> Result<NavigatorConfig, String> {
    let mut base = serde_json::to_value(NavigatorConfig::default()).map_err(|e| e.to_string())?;
    if let serde_json::Value::Object(over) = &req.config {
        for (k, v) in over {
            base[k] = v.clone();
        }
    } else if !req.config.is_null() {
        return Err("bad training request: the navigator's config must be an object".into());
    }
    let cfg: NavigatorConfig = serde_json::from_value(base).map_err(|e| format!("bad navigator config: {e}"))?;
    cfg.validate().map_err(|e| format!("bad navigator config: {e}"))?;
    Ok(cfg)
}

/// A navigator run's `state` in its snapshot: the loop's state and the format's version.
#[derive(Serialize, Deserialize)]
struct SavedNavRun {
    #[serde(default)]
    schema: u32,
    #[serde(flatten)]
    trainer: NavTrainerState,
}

/// One iteration as the charts read it.
#[derive(Serialize)]
struct IterationNote {
    iteration: u64,
    env_steps: u64,
    pages: u32,
    primitives: u32,
    fields: u32,
    mean_return: f64,
    success_rate: f64,
    mean_steps: f64,
    loss: f32,
    entropy: f32,
}

fn note(it: &Iteration, env_steps: u64) -> IterationNote {
    let n = it.episodes.len().max(1) as f64;
    IterationNote {
        iteration: it.iteration,
        env_steps,
        pages: it.pages,
        primitives: it.primitives,
        fields: it.fields,
        mean_return: it.mean_return(),
        success_rate: it.success_rate(),
        mean_steps: it.episodes.iter().map(|e| e.steps as f64).sum::<f64>() / n,
        loss: it.update.loss,
        entropy: it.update.entropy,
    }
}

/// Greedy success on every test site and level, on the simulator: rows in `TEST_SITES` order.
pub(super) async fn grid(nav: &mut Navigator, seeds: u32) -> Result<Vec<Vec<f64>>, String> {
    let mut sim = SiteSim::new(test_site("login", 0).expect("a test site"), 0, Values::default(), RewardConfig::default());
    let mut rows = Vec::new();
    for site in TEST_SITES {
        let mut row = Vec::new();
        for level in 0..LEVELS {
            let task = site_task(&format!("{site}-{level}"), test_site(site, level).expect("a test site"));
            row.push(judge(&mut sim, nav, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + seeds).await?.success_rate());
            yield_now().await;
        }
        rows.push(row);
    }
    Ok(rows)
}

fn post_grid(rows: &[Vec<f64>], c: crate::learn::Counters, seeds: u32) {
    post(message(
        "grid",
        serde_json::json!({ "sites": TEST_SITES, "levels": LEVELS, "success": rows, "env_steps": c.env_steps, "updates": c.updates, "seeds": seeds }),
    ));
}

pub(super) async fn run(
    req: TrainRequest,
    checkpoint: Option<Vec<u8>>,
    saved: Option<String>,
    optimizer: Option<Vec<u8>>,
    flags: Rc<RefCell<Flags>>,
) -> Result<JsValue, String> {
    let spec: GeneratorSpec = req.generator.clone().ok_or("bad training request: the navigator needs a generator (dr, cl or a site)")?;
    let generator: Box<dyn Generator> = spec.build().map_err(|e| format!("bad generator: {e}"))?;
    let trained_on = vec![spec.label()];
    let cfg = config(&req)?;
    let (device, backend, reason) = choose_backend(&req, &NavProbe(cfg.clone())).await;
    post(message("backend", serde_json::json!({ "name": backend, "reason": reason })));
    let navigator = match checkpoint {
        Some(bytes) => Navigator::load(&bytes, &device, req.seed as u64).map_err(|e| e.to_string())?.0,
        None => Navigator::new(cfg, &device, req.seed as u64)?,
    };
    let mut trainer = match saved {
        Some(json) => {
            let saved: SavedNavRun = serde_json::from_str(&json).map_err(|e| format!("the saved run is damaged: {e}"))?;
            check_schema(saved.schema)?;
            let mut t = NavTrainer::resume(navigator, generator, &saved.trainer);
            if let Some(adam) = optimizer {
                if let Err(e) = t.navigator.load_optimizer_state(&adam) {
                    post(message("status", serde_json::json!({ "text": format!("Resumed with fresh Adam moments: {e}.") })));
                }
            }
            t
        }
        None => NavTrainer::new(navigator, generator, req.seed as u64),
    };
    let mut env = Watched::new(0);
    let mut failures = EnvFailures::new(1);
    let t_start = now_ms();
    let mut active_ms = 0.0;
    let start = trainer.navigator.counters;
    let mut last_snapshot = now_ms();
    let mut last_judge: Option<f64> = None;
    let mut was_paused = false;

    loop {
        let single = match wait_while_paused(&trainer.navigator, &trained_on, &flags, req.checkpoint_half).await? {
            Next::Stop => break,
            Next::SingleStep => true,
            Next::Run => false,
        };
        let chunk_start = now_ms();
        let mut notes = Vec::new();
        loop {
            let ended = env.ended;
            let stepped = trainer.step(&mut env).await;
            // Episodes the site ended break the row of failures (see `EnvFailures`).
            if env.ended > ended {
                failures.ended(0);
            }
            match (stepped, env.failure.take()) {
                (Ok(it), _) => notes.push(note(&it, trainer.navigator.counters.env_steps)),
                // The page failed: that episode ends, and with it the iteration (its episodes
                // are not learned from); the run goes on with the next design.
                (Err(_), Some(failure)) => failures.failed(0, &trained_on[0], &failure).map_err(|why| {
                    format!("{why}. Training stopped at update {}; the run's last snapshot is kept", trainer.navigator.counters.updates)
                })?,
                (Err(e), None) => return Err(e),
            }
            let c = trainer.navigator.counters;
            let f = flags.borrow();
            let interrupt = f.pause || f.checkpoint || f.step || now_ms() - chunk_start > req.progress_ms;
            if single || f.stop || interrupt || c.env_steps >= req.frames {
                break;
            }
        }
        active_ms += now_ms() - chunk_start;
        let c = trainer.navigator.counters;
        let active_s = active_ms / 1000.0;
        let paused = flags.borrow().pause;
        post(to_js(&serde_json::json!({
            "kind": "progress",
            "agent": "navigator",
            "backend": backend,
            "generator": trained_on[0],
            "env_steps": c.env_steps,
            "frames": req.frames,
            "updates": c.updates,
            "episodes": c.episodes,
            "iterations": trainer.iteration,
            "vocabulary": trainer.navigator.vocab.len(),
            "steps_per_s": (c.env_steps - start.env_steps) as f64 / active_s.max(1e-9),
            "updates_per_s": (c.updates - start.updates) as f64 / active_s.max(1e-9),
            "active_s": active_s,
            "elapsed_s": (now_ms() - t_start) / 1000.0,
            "new_iterations": notes,
            "env_failures": failures.take_notes(),
            "env_failures_total": failures.total,
            "paused": paused,
        })));

        let finished = flags.borrow().stop || c.env_steps >= req.frames;
        if req.judge_seeds > 0 && (finished || last_judge.is_none_or(|t| now_ms() - t > req.judge_every_s * 1000.0)) {
            post(message("status", serde_json::json!({ "text": "judging on the test sites…" })));
            let rows = grid(&mut trainer.navigator, req.judge_seeds).await?;
            post_grid(&rows, c, req.judge_seeds);
            last_judge = Some(now_ms());
        }
        let pause_began = paused && !was_paused;
        was_paused = paused;
        if req.snapshot_every_s > 0.0 && (finished || pause_began || now_ms() - last_snapshot > req.snapshot_every_s * 1000.0) {
            let state = serde_json::to_string(&SavedNavRun { schema: SNAPSHOT_SCHEMA, trainer: trainer.state() }).map_err(|e| e.to_string())?;
            post_run_snapshot(&trainer.navigator, &trained_on, state).await?;
            last_snapshot = now_ms();
        }
        serve_checkpoint(&trainer.navigator, &trained_on, &flags, req.checkpoint_half).await?;
        if finished {
            break;
        }
    }
    if req.checkpoint_at_end {
        flags.borrow_mut().checkpoint = true;
    }
    serve_checkpoint(&trainer.navigator, &trained_on, &flags, req.checkpoint_half).await?;
    let c = trainer.navigator.counters;
    Ok(to_js(&serde_json::json!({
        "kind": "done",
        "agent": "navigator",
        "backend": backend,
        "env_steps": c.env_steps,
        "updates": c.updates,
        "episodes": c.episodes,
        "elapsed_s": (now_ms() - t_start) / 1000.0,
        "active_s": active_ms / 1000.0,
    })))
}
