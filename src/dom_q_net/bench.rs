//! Timing DOM-Q-Net's update alone, the same way natively (`examples/bench_update.rs`) and in the
//! tab (`Lab.benchDqnUpdate`, `tests/e2e/bench-dqn.mjs --update-profile`): the page-graph
//! simulator's two tasks fill the replay under the agent's own exploration, then one update per
//! step is timed, each split into its phases ([`UpdatePhases`]). A benchmark, not a test: it
//! reports figures and decides nothing.

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use super::agent::{DomQNetAgent, UpdatePhases};
use super::config::DqnConfig;
use super::train::{Control, TrainEvent, Trainer};
use crate::sim::{SIM_TASKS, SimEnv};

/// Updates left out of the figures: the first ones allocate, compile kernels, tune.
pub const WARMUP: usize = 10;

/// What [`bench_updates`] measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct UpdateBench {
    pub batch: usize,
    pub updates_timed: usize,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub min_ms: f64,
    /// The [`WARMUP`] first updates, in all.
    pub warmup_ms: f64,
    /// One action's forward pass, on average.
    pub act_ms: f64,
    /// Mean ms per timed update of each phase, named as [`UpdatePhases::NAMES`].
    pub phases: Vec<(String, f64)>,
    /// Mean size of the states in the replay.
    pub nodes: f64,
    pub leaves: f64,
    pub goal_tokens: f64,
}

/// The preset by its benchmark name: `paper`, `reference-code`, `code-sizes` or `fast-tab`.
pub fn preset(name: &str) -> Result<DqnConfig, String> {
    DqnConfig::named(name)
}

/// Times `updates` updates after [`WARMUP`] with `cfg` on `device` (an autodiff device), by
/// `clock` (ms).
pub async fn bench_updates(cfg: DqnConfig, device: &Device, updates: usize, clock: fn() -> f64) -> Result<UpdateBench, String> {
    let batch = cfg.batch_size;
    let seed = cfg.seed as u32;
    let mut agent = DomQNetAgent::new(cfg, device)?;
    agent.time_phases(clock);
    let tasks: Vec<_> = SIM_TASKS.iter().map(|t| SimEnv::spec(t)).collect();
    let mut envs: Vec<SimEnv> = SIM_TASKS.iter().map(|_| SimEnv::new(None)).collect();
    let mut trainer = Trainer::new(tasks, seed).with_clock(clock);
    let (mut update_ms, mut act_ms) = (Vec::new(), Vec::new());
    let wanted = updates + WARMUP;
    // Terminal steps add no update until the replay holds a batch; the cap only guards the loop.
    let frames = (batch + 4 * wanted + 100) as u64;
    trainer
        .run(&mut agent, &mut envs, frames, |ev| {
            match ev {
                TrainEvent::Update { update_ms: ms, .. } => update_ms.push(ms),
                TrainEvent::Step { act_ms: ms, .. } => act_ms.push(ms),
                _ => {}
            }
            if update_ms.len() >= wanted { Control::Stop } else { Control::Continue }
        })
        .await
        .map_err(|e| format!("{e:?}"))?;
    let mut timed: Vec<f64> = update_ms.iter().skip(WARMUP).copied().collect();
    timed.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| timed.get(((timed.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(f64::NAN);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let phases = &agent.timed_phases()[WARMUP.min(agent.timed_phases().len())..];
    let mut sums = [0.0; 9];
    for p in phases {
        for (s, v) in sums.iter_mut().zip(p.values()) {
            *s += v;
        }
    }
    let replay = agent.replay();
    let states: Vec<_> = (0..replay.len()).map(|i| replay.get(i).state.clone()).collect();
    let per_state =
        |f: &dyn Fn(&super::features::StateFeatures) -> usize| states.iter().map(|s| f(s) as f64).sum::<f64>() / states.len().max(1) as f64;
    Ok(UpdateBench {
        batch,
        updates_timed: timed.len(),
        mean_ms: mean(&timed),
        p50_ms: pct(0.5),
        p90_ms: pct(0.9),
        min_ms: pct(0.0),
        warmup_ms: update_ms.iter().take(WARMUP).sum(),
        act_ms: mean(&act_ms),
        phases: UpdatePhases::NAMES.iter().zip(sums).map(|(n, s)| (n.to_string(), s / phases.len().max(1) as f64)).collect(),
        nodes: per_state(&|s| s.num_nodes()),
        leaves: per_state(&|s| s.leaves.len()),
        goal_tokens: per_state(&|s| s.goal.len()),
    })
}

impl UpdateBench {
    /// The figures as lines of text (the example prints them; the tab benchmark too).
    pub fn report(&self) -> String {
        let mut out = format!(
            "batch {}: {} updates timed, ms/update mean {:.2} p50 {:.2} p90 {:.2} min {:.2}; first {WARMUP}: {:.0} ms in all; act {:.2} ms\n",
            self.batch, self.updates_timed, self.mean_ms, self.p50_ms, self.p90_ms, self.min_ms, self.warmup_ms, self.act_ms
        );
        let total: f64 = self.phases.iter().map(|(_, v)| v).sum();
        out += "phase         ms/update  share\n";
        for (name, v) in &self.phases {
            out += &format!("{name:<13} {v:>9.2}  {:>4.0}%\n", 100.0 * v / total.max(1e-9));
        }
        out += &format!("replay states: {:.1} nodes, {:.1} leaves, {:.1} goal tokens on average", self.nodes, self.leaves, self.goal_tokens);
        out
    }
}
