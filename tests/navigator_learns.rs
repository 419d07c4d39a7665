//! The navigator learns (natively, on the site simulator, which `tests/web_gminiwob_sim.rs`
//! shows equal to the live DOM): A2C on one fixed site reaches ≥ 95% greedy success on seeds it
//! never trained on within a fixed budget, and the same seed gives the same loss curve.

use burn::prelude::Device;
use weblab::curriculum::{DomainRandomization, Fixed};
use weblab::gminiwob::sim::SiteSim;
use weblab::gminiwob::test_sites::test_site;
use weblab::gminiwob::{RewardConfig, Values};
use weblab::navigator::train::{JUDGE_SEEDS_FROM, NavTrainer, judge, site_task};
use weblab::navigator::{Navigator, NavigatorConfig};
use weblab::util::block_on;

/// The defaults at a smaller width, so the test trains in seconds.
fn config() -> NavigatorConfig {
    NavigatorConfig { embedding_dim: 32, latent_dim: 32, ..NavigatorConfig::default() }
}

fn sim() -> SiteSim {
    SiteSim::new(test_site("login", 0).unwrap(), 0, Values::default(), RewardConfig::default())
}

#[test]
fn learns_the_login_site_to_95_percent() {
    let design = test_site("login", 0).unwrap();
    let nav = Navigator::new(config(), &Device::flex().autodiff(), 1).unwrap();
    let mut trainer = NavTrainer::new(nav, Fixed(design.clone()), 1);
    let mut env = sim();
    let task = site_task("login-0", design);
    let before = block_on(judge(&mut env, &mut trainer.navigator, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + 50)).unwrap();
    // Budget: 1,500 updates of M = 8 episodes (greedy success reached 100% near 1,000 with
    // seeds 1–3 when this was written).
    for _ in 0..1_500 {
        block_on(trainer.step(&mut env)).unwrap();
    }
    let after = block_on(judge(&mut env, &mut trainer.navigator, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + 50)).unwrap();
    assert!(after.success_rate() >= 0.95, "greedy success {:.0}% after 1,500 updates (before: {:.0}%)", 100.0 * after.success_rate(), 100.0 * before.success_rate());
    assert!(before.success_rate() < 0.5, "an untrained navigator does not already solve it: {before:?}");
    assert!(after.mean_steps <= 4.0, "two fields and a submit: {after:?}");
}

#[test]
fn the_same_seed_gives_the_same_loss_curve() {
    let run = |seed: u64| {
        let nav = Navigator::new(config(), &Device::flex().autodiff(), seed).unwrap();
        let mut trainer = NavTrainer::new(nav, DomainRandomization::default(), seed);
        let mut env = sim();
        (0..15).map(|_| block_on(trainer.step(&mut env)).unwrap().update.loss).collect::<Vec<f32>>()
    };
    let a = run(4);
    assert_eq!(a, run(4), "same seed, same designs, episodes and losses");
    assert_ne!(a, run(5), "another seed, another run");
}

#[test]
fn a_run_resumed_from_its_snapshot_goes_on_as_the_original() {
    use weblab::learn::checkpoint::Precision;
    let dev = Device::flex().autodiff();
    let nav = Navigator::new(config(), &dev, 6).unwrap();
    let mut trainer = NavTrainer::new(nav, DomainRandomization::default(), 6);
    let mut env = sim();
    for _ in 0..8 {
        block_on(trainer.step(&mut env)).unwrap();
    }
    // The snapshot: checkpoint (f32), loop state, Adam's moments.
    let bytes = block_on(trainer.navigator.save("DR", Precision::Full)).unwrap();
    let state = trainer.state();
    let adam = block_on(trainer.navigator.optimizer_state()).unwrap().expect("updates were made");
    let go_on = |t: &mut NavTrainer<DomainRandomization>, env: &mut SiteSim| {
        (0..5).map(|_| block_on(t.step(env)).unwrap().update.loss).collect::<Vec<f32>>()
    };
    let original = go_on(&mut trainer, &mut env);

    let (mut nav, _) = Navigator::load(&bytes, &dev, 0).unwrap();
    nav.load_optimizer_state(&adam).unwrap();
    let mut resumed = NavTrainer::resume(nav, DomainRandomization::default(), &state);
    assert_eq!(go_on(&mut resumed, &mut sim()), original);
}

#[test]
fn a_backend_probe_update_runs() {
    block_on(weblab::navigator::agent::probe_update(&config(), &Device::flex().autodiff())).unwrap();
}
