//! Times DOM-Q-Net's update (one batch: forward of the online and target networks, backward,
//! Adam, the loss read back) natively on the CPU backend or, built with `--features native-wgpu`,
//! on burn's wgpu backend: the figure behind "what would a GPU give" (issue: training speed).
//! Usage: cargo run --release [--features native-wgpu] --example bench_update -- \
//!          [flex|wgpu] [paper|reference-code] [updates] [batch]
//! The replay is filled by the page-graph simulator's tasks under the agent's own exploration; the
//! first 10 updates (kernel compilation, autotuning, allocation) are reported apart.
use burn::prelude::Device;
use weblab::dom_q_net::train::{Control, TrainEvent, Trainer};
use weblab::dom_q_net::{DomQNetAgent, DqnConfig};
use weblab::sim::{SIM_TASKS, SimEnv};
use weblab::util::block_on;

const WARMUP: usize = 10;

fn now_ms() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<std::time::Instant> = OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64() * 1000.0
}

fn device(backend: &str) -> Device {
    match backend {
        "flex" | "cpu" => Device::flex(),
        #[cfg(feature = "native-wgpu")]
        "wgpu" => Device::wgpu_options().init().unwrap_or_else(|e| panic!("no wgpu device: {e:?}")),
        other => panic!("unknown backend {other} (flex, or wgpu when built with --features native-wgpu)"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let backend = args.first().map(String::as_str).unwrap_or("flex");
    let preset = args.get(1).map(String::as_str).unwrap_or("paper");
    let updates: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    let batch: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(128);
    let base = match preset {
        "paper" => DqnConfig::default(),
        "reference-code" => DqnConfig::reference_code(),
        other => panic!("unknown preset {other} (paper, reference-code)"),
    };
    let cfg = DqnConfig { batch_size: batch, seed: 7, ..base };
    let dev = device(backend);
    let mut agent = DomQNetAgent::new(cfg, &dev.clone().autodiff()).unwrap();
    let tasks: Vec<_> = SIM_TASKS.iter().map(|t| SimEnv::spec(t)).collect();
    let mut envs: Vec<SimEnv> = SIM_TASKS.iter().map(|_| SimEnv::new(None)).collect();
    let mut trainer = Trainer::new(tasks, 7).with_clock(now_ms);
    let (mut update_ms, mut act_ms) = (Vec::new(), Vec::new());
    let wall = now_ms();
    // Frames until the replay holds a batch, then one update per frame.
    let frames = (batch + updates + 1) as u64;
    block_on(trainer.run(&mut agent, &mut envs, frames, |ev| {
        match ev {
            TrainEvent::Update { update_ms: ms, .. } => update_ms.push(ms),
            TrainEvent::Step { act_ms: ms, .. } => act_ms.push(ms),
            _ => {}
        }
        if update_ms.len() >= updates { Control::Stop } else { Control::Continue }
    }))
    .unwrap();
    let wall_s = (now_ms() - wall) / 1000.0;
    let warm: Vec<f64> = update_ms.iter().take(WARMUP).copied().collect();
    let mut timed: Vec<f64> = update_ms.iter().skip(WARMUP).copied().collect();
    timed.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| timed.get(((timed.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(f64::NAN);
    let mean = timed.iter().sum::<f64>() / timed.len().max(1) as f64;
    let act_mean = act_ms.iter().sum::<f64>() / act_ms.len().max(1) as f64;
    println!(
        "backend {backend} preset {preset} batch {batch}: {} updates timed, ms/update mean {mean:.2} p50 {:.2} p90 {:.2} min {:.2}; first {WARMUP}: {:.0} ms in all; act {act_mean:.2} ms; wall {wall_s:.1} s",
        timed.len(),
        pct(0.5),
        pct(0.9),
        pct(0.0),
        warm.iter().sum::<f64>()
    );
}
