//! DOM-Q-Net learns: seeded runs on the page-graph simulator (click the button named in the goal;
//! type the goal word then submit) reach ≥ 95% greedy success within a fixed number of steps, on
//! the CPU backend; and seeded runs reproduce the same loss curve.
#![cfg(not(target_arch = "wasm32"))]

use burn::prelude::Device;
use weblab::dom_q_net::train::{Control, TrainEvent, evaluate, train};
use weblab::dom_q_net::{DomQNetAgent, DqnConfig};
use weblab::sim::{SIM_TASKS, SimEnv};
use weblab::util::block_on;

/// The paper's settings, with a smaller batch and buffer so the test runs in seconds.
fn test_config(seed: u64) -> DqnConfig {
    DqnConfig { batch_size: 32, replay_capacity: 5_000, max_episode_steps: 8, seed, ..DqnConfig::default() }
}

/// Trains on `names` (round-robin over one shared buffer when several) for `frames` steps.
fn run(names: &[&str], seed: u64, frames: u64) -> (DomQNetAgent, Vec<f32>) {
    let device = Device::flex().autodiff();
    let mut agent = DomQNetAgent::new(test_config(seed), &device).unwrap();
    let tasks: Vec<_> = names.iter().map(|t| SimEnv::spec(t)).collect();
    let mut envs: Vec<SimEnv> = names.iter().map(|_| SimEnv::new(None)).collect();
    let mut losses = Vec::new();
    block_on(train(&mut agent, &mut envs, &tasks, frames, seed as u32, |ev| {
        if let TrainEvent::Update { stats, .. } = ev {
            losses.push(stats.loss);
        }
        Control::Continue
    }))
    .unwrap();
    (agent, losses)
}

fn assert_learns(task: &str, frames: u64) {
    let (mut agent, losses) = run(&[task], 7, frames);
    assert_eq!(agent.counters.env_steps, frames);
    assert!(losses.len() as u64 > frames - 100, "one update per step once learning starts");
    assert!(losses.iter().all(|l| l.is_finite()));
    let stats = block_on(evaluate(&mut agent, &mut SimEnv::new(None), &SimEnv::spec(task), 100, 900_000)).unwrap();
    eprintln!("{task}: greedy success {:.0}% over 100 unseen seeds after {frames} steps", 100.0 * stats.success_rate_100);
    assert!(stats.success_rate_100 >= 0.95, "{task}: greedy success {}", stats.success_rate_100);
}

#[test]
fn learns_to_click_the_named_button() {
    assert_learns("sim-click", 2_000);
}

#[test]
fn learns_to_type_the_goal_word_then_submit() {
    assert_learns("sim-type", 6_000);
}

#[test]
fn seeded_runs_reproduce_the_loss_curve() {
    // Both tasks through one shared buffer: the multitask path.
    let (agent, a) = run(&SIM_TASKS, 3, 250);
    let (_, b) = run(&SIM_TASKS, 3, 250);
    let (_, c) = run(&SIM_TASKS, 4, 250);
    assert_eq!(agent.counters.env_steps, 250);
    assert!(a.len() > 100);
    assert_eq!(a, b, "same seed, same losses");
    assert_ne!(a, c, "another seed, other losses");
}
