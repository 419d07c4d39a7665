//! Trains DOM-Q-Net natively on the page-graph simulator and prints the learning curve, the time
//! per update and the greedy success: a quick way to compare agent settings without a browser.
//! Usage: cargo run --release --example sim_train -- [frames] [task ...]
//! `DQN_CONFIG='{"local_text_embedding": false}'` changes settings on top of the native learning
//! test's (the paper's defaults with a smaller batch and buffer).
use burn::prelude::Device;
use weblab::dom_q_net::train::{Control, TrainEvent, evaluate, train};
use weblab::dom_q_net::{DomQNetAgent, DqnConfig};
use weblab::sim::{SIM_TASKS, SimEnv};
use weblab::util::block_on;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frames: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(4000);
    let names: Vec<String> = if args.len() > 1 { args[1..].to_vec() } else { SIM_TASKS.iter().map(|s| s.to_string()).collect() };
    // The native learning test's settings (tests/dom_q_net_learns.rs), then DQN_CONFIG's fields.
    let base = DqnConfig { batch_size: 32, replay_capacity: 5_000, max_episode_steps: 8, seed: 7, ..DqnConfig::default() };
    let mut cfg = serde_json::to_value(&base).unwrap();
    if let Ok(json) = std::env::var("DQN_CONFIG") {
        let over: serde_json::Value = serde_json::from_str(&json).expect("DQN_CONFIG is a JSON object");
        for (k, v) in over.as_object().expect("DQN_CONFIG is a JSON object") {
            assert!(cfg.get(k).is_some(), "unknown setting {k}");
            cfg[k] = v.clone();
        }
    }
    let cfg: DqnConfig = serde_json::from_value(cfg).unwrap();
    println!(
        "local_dim {} (text embedding in the local module: {}), streams {}/{}/{}",
        cfg.local_dim(),
        cfg.local_text_embedding,
        cfg.dom_hidden,
        cfg.token_hidden,
        cfg.mode_hidden
    );
    let device = Device::flex().autodiff();
    let mut agent = DomQNetAgent::new(cfg, &device).unwrap();
    let tasks: Vec<_> = names.iter().map(|t| SimEnv::spec(t)).collect();
    let mut envs: Vec<SimEnv> = names.iter().map(|_| SimEnv::new(None)).collect();
    let t0 = std::time::Instant::now();
    let mut last_loss = 0.0;
    let progress = block_on(train(&mut agent, &mut envs, &tasks, frames, 7, |ev| {
        match ev {
            TrainEvent::Update { stats, .. } => last_loss = stats.loss,
            TrainEvent::Episode { task, progress, .. } if progress.stats.episodes % 100 == 0 => {
                println!(
                    "{:>6} frames  {:<10} episodes {:>5}  success(100) {:>5.1}%  loss {:.4}",
                    progress.frames,
                    names[task],
                    progress.stats.episodes,
                    100.0 * progress.stats.success_rate_100,
                    last_loss
                );
            }
            _ => {}
        }
        Control::Continue
    }))
    .unwrap();
    let secs = t0.elapsed().as_secs_f64();
    println!("{} updates in {secs:.1}s ({:.1} ms/update)", agent.counters.updates, 1000.0 * secs / agent.counters.updates.max(1) as f64);
    for (t, p) in tasks.iter().zip(&progress) {
        let s = block_on(evaluate(&mut agent, &mut SimEnv::new(None), t, 100, 900_000)).unwrap();
        println!(
            "{}: solved (90% of 100) at {:?} frames; greedy {:.0}% on 100 unseen seeds",
            t.name(),
            p.solved_at_frames,
            100.0 * s.success_rate_100
        );
    }
}
