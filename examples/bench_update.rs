//! Times DOM-Q-Net's update (one batch: forward of the online and target networks, backward,
//! Adam, the loss read back) natively on the CPU backend or, built with `--features native-wgpu`,
//! on burn's wgpu backend: the figure behind "what would a GPU give" (issue: training speed).
//! Usage: cargo run --release [--features native-wgpu] --example bench_update -- \
//!          [flex|wgpu] [paper|reference-code|code-sizes|fast-tab] [updates] [batch]
//! The replay is filled by the page-graph simulator's tasks under the agent's own exploration; the
//! first 10 updates (kernel compilation, autotuning, allocation) are reported apart. Each timed
//! update's phases are averaged into a profile (`dom_q_net::bench`, which the tab's
//! `bench-dqn --update-profile` runs too); on the CPU backend each phase's span is its own work
//! (on wgpu, work queued in one phase may finish in a later one).
use burn::prelude::Device;
use weblab::dom_q_net::DqnConfig;
use weblab::dom_q_net::bench::{bench_updates, preset};
use weblab::util::block_on;

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
    let name = args.get(1).map(String::as_str).unwrap_or("paper");
    let updates: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(100);
    let batch: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(128);
    let cfg = DqnConfig { batch_size: batch, seed: 7, ..preset(name).unwrap_or_else(|e| panic!("{e}")) };
    let wall = now_ms();
    let bench = block_on(bench_updates(cfg, &device(backend).autodiff(), updates, now_ms)).unwrap();
    println!("backend {backend} preset {name} {}", bench.report());
    println!("wall {:.1} s", (now_ms() - wall) / 1000.0);
}
