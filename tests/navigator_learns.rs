//! The navigator learns (natively, on the site simulator, which `tests/web_gminiwob_sim.rs`
//! shows equal to the live DOM): A2C on one fixed site reaches ≥ 95% greedy success on seeds it
//! never trained on within a fixed budget, and the same seed gives the same loss curve; the DQN
//! head's runs reproduce from their seed and resume exactly from a snapshot.

use burn::prelude::Device;
use weblab::curriculum::train::{LoopConfig, PopState, PopulationTrainer};
use weblab::curriculum::{DomainRandomization, Fixed, Generator};
use weblab::gminiwob::sim::SiteSim;
use weblab::gminiwob::test_sites::test_site;
use weblab::navigator::train::{JUDGE_SEEDS_FROM, judge, sim_pool, site_task};
use weblab::navigator::{Head, Navigator, NavigatorConfig};
use weblab::util::block_on;

/// The defaults at a smaller width, so the test trains in seconds.
fn config() -> NavigatorConfig {
    NavigatorConfig { embedding_dim: 32, latent_dim: 32, ..NavigatorConfig::default() }
}

fn sim() -> Vec<SiteSim> {
    sim_pool(8)
}

/// A navigator alone: a population of one, M = its episodes_per_update, one design an iteration.
fn alone<G: Generator>(nav: Navigator, generator: G, seed: u64) -> PopulationTrainer<G> {
    let m = nav.cfg.episodes_per_update;
    PopulationTrainer::new(vec![nav], generator, LoopConfig { episodes: m, designs: 1, ..LoopConfig::default() }, seed).unwrap()
}

/// The loop's counters and the lone navigator's learner state, as the tab keeps them.
fn resume_alone<G: Generator>(nav: Navigator, generator: G, state: &PopState) -> PopulationTrainer<G> {
    let m = nav.cfg.episodes_per_update;
    PopulationTrainer::from_state(vec![nav], generator, LoopConfig { episodes: m, designs: 1, ..LoopConfig::default() }, state).unwrap()
}

#[test]
fn learns_the_login_site_to_95_percent() {
    let design = test_site("login", 0).unwrap();
    let nav = Navigator::new(config(), &Device::flex().autodiff(), 1).unwrap();
    let mut trainer = alone(nav, Fixed(design.clone()), 1);
    let mut env = sim();
    let task = site_task("login-0", design);
    let before = block_on(judge(&mut env, &mut trainer.population[0], &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + 50)).unwrap();
    // Budget: 1,500 updates of M = 8 episodes (greedy success reached 100% near 1,000 with
    // seeds 1–3 when this was written).
    for _ in 0..1_500 {
        block_on(trainer.step(&mut env)).unwrap();
    }
    let after = block_on(judge(&mut env, &mut trainer.population[0], &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + 50)).unwrap();
    assert!(
        after.success_rate() >= 0.95,
        "greedy success {:.0}% after 1,500 updates (before: {:.0}%)",
        100.0 * after.success_rate(),
        100.0 * before.success_rate()
    );
    assert!(before.success_rate() < 0.5, "an untrained navigator does not already solve it: {before:?}");
    assert!(after.mean_steps <= 4.0, "two fields and a submit: {after:?}");
}

#[test]
fn the_same_seed_gives_the_same_loss_curve() {
    let run = |seed: u64| {
        let nav = Navigator::new(config(), &Device::flex().autodiff(), seed).unwrap();
        let mut trainer = alone(nav, DomainRandomization::default(), seed);
        let mut env = sim();
        (0..15).map(|_| block_on(trainer.step(&mut env)).unwrap().updates[0].loss).collect::<Vec<f32>>()
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
    let mut trainer = alone(nav, DomainRandomization::default(), 6);
    let mut env = sim();
    for _ in 0..8 {
        block_on(trainer.step(&mut env)).unwrap();
    }
    // The snapshot: checkpoint (f32), loop state, Adam's moments.
    let bytes = block_on(trainer.population[0].save("DR", Precision::Full)).unwrap();
    let state = trainer.state();
    let adam = block_on(trainer.population[0].optimizer_state()).unwrap().expect("updates were made");
    let go_on = |t: &mut PopulationTrainer<DomainRandomization>, env: &mut Vec<SiteSim>| {
        (0..5).map(|_| block_on(t.step(env)).unwrap().updates[0].loss).collect::<Vec<f32>>()
    };
    let original = go_on(&mut trainer, &mut env);

    let (mut nav, _) = Navigator::load(&bytes, &dev, 0).unwrap();
    nav.load_optimizer_state(&adam).unwrap();
    let mut resumed = resume_alone(nav, DomainRandomization::default(), &state);
    assert_eq!(go_on(&mut resumed, &mut sim()), original);
}

#[test]
fn a_backend_probe_update_runs() {
    block_on(weblab::navigator::agent::probe_update(&config(), &Device::flex().autodiff())).unwrap();
    block_on(weblab::navigator::agent::probe_update(&dqn_config(), &Device::flex().autodiff())).unwrap();
}

/// The DQN head at the test's width, with small batches from early on (one update per 8 steps,
/// ACME's ratio), so short runs make updates in seconds.
fn dqn_config() -> NavigatorConfig {
    NavigatorConfig { head: Head::Dqn, dqn_batch_size: 16, dqn_samples_per_insert: 2.0, dqn_min_replay: 32, dqn_replay_capacity: 2_000, ..config() }
}

#[test]
fn dqn_learns_the_login_site_to_95_percent() {
    // ACME's constants but batch 64 and 8 samples per insert (still one update per 8 env steps)
    // at the tests' width: greedy success reached 100% within 200–430 iterations with seeds
    // 1–3, and was 100% at 500 for each.
    let cfg = NavigatorConfig { head: Head::Dqn, dqn_batch_size: 64, dqn_samples_per_insert: 8.0, ..config() };
    let design = test_site("login", 0).unwrap();
    let nav = Navigator::new(cfg, &Device::flex().autodiff(), 1).unwrap();
    let mut trainer = alone(nav, Fixed(design.clone()), 1);
    let mut env = sim();
    let task = site_task("login-0", design);
    let seeds = JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + 50;
    let before = block_on(judge(&mut env, &mut trainer.population[0], &task, seeds.clone())).unwrap();
    for _ in 0..500 {
        block_on(trainer.step(&mut env)).unwrap();
    }
    let after = block_on(judge(&mut env, &mut trainer.population[0], &task, seeds)).unwrap();
    assert!(trainer.population[0].counters.updates > 1_000, "{:?}", trainer.population[0].counters);
    assert!(
        after.success_rate() >= 0.95,
        "greedy success {:.0}% after 500 iterations (before: {:.0}%)",
        100.0 * after.success_rate(),
        100.0 * before.success_rate()
    );
    assert!(before.success_rate() < 0.5, "an untrained navigator does not already solve it: {before:?}");
}

#[test]
fn seeded_dqn_runs_give_the_same_loss_curve() {
    let run = |seed: u64, bidirectional: bool| {
        let nav = Navigator::new(NavigatorConfig { bidirectional, ..dqn_config() }, &Device::flex().autodiff(), seed).unwrap();
        let mut trainer = alone(nav, DomainRandomization::default(), seed);
        let mut env = sim();
        let curve: Vec<(f32, u32)> = (0..10)
            .map(|_| {
                let u = block_on(trainer.step(&mut env)).unwrap().updates[0];
                (u.loss, u.updates)
            })
            .collect();
        curve
    };
    let a = run(4, false);
    assert!(a.iter().map(|&(_, n)| n).sum::<u32>() > 5, "the run made TD updates: {a:?}");
    assert!(a.iter().all(|&(l, n)| n == 0 || (l.is_finite() && l >= 0.0)));
    assert_eq!(a, run(4, false), "same seed, same designs, episodes, samples and losses");
    assert_ne!(a, run(5, false), "another seed, another run");
    let bi = run(4, true);
    assert_eq!(bi, run(4, true), "the BiLSTM option reproduces too");
    assert_ne!(bi, a);
}

#[test]
fn a_dqn_run_resumed_from_its_snapshot_goes_on_as_the_original() {
    use weblab::learn::checkpoint::Precision;
    let dev = Device::flex().autodiff();
    // A target copy every 7 updates, and ε falling over the run: both must pick up where they were.
    let cfg =
        NavigatorConfig { dqn_target_update_period: 3, dqn_epsilon_start: 1.0, dqn_epsilon_end: 0.1, dqn_epsilon_decay_steps: 600, ..dqn_config() };
    let nav = Navigator::new(cfg, &dev, 6).unwrap();
    let mut trainer = alone(nav, DomainRandomization::default(), 6);
    let mut env = sim();
    for _ in 0..8 {
        block_on(trainer.step(&mut env)).unwrap();
    }
    assert!(trainer.population[0].counters.updates > 3, "past a target copy: {:?}", trainer.population[0].counters);
    // The snapshot: checkpoint (f32), loop state, and the learner state (Adam, target, replay).
    let bytes = block_on(trainer.population[0].save("DR", Precision::Full)).unwrap();
    let state = trainer.state();
    let learner = block_on(trainer.population[0].optimizer_state()).unwrap().expect("updates were made");
    let go_on = |t: &mut PopulationTrainer<DomainRandomization>, env: &mut Vec<SiteSim>| {
        (0..5)
            .map(|_| {
                let it = block_on(t.step(env)).unwrap();
                (it.updates[0].loss, it.updates[0].updates, it.updates[0].epsilon, it.episodes[0].iter().map(|e| e.steps).collect::<Vec<_>>())
            })
            .collect::<Vec<_>>()
    };
    let original = go_on(&mut trainer, &mut env);
    assert!(original.iter().any(|o| o.1 > 0));

    let (mut nav, _) = Navigator::load(&bytes, &dev, 0).unwrap();
    nav.load_optimizer_state(&learner).unwrap();
    let mut resumed = resume_alone(nav, DomainRandomization::default(), &state);
    assert_eq!(go_on(&mut resumed, &mut sim()), original);

    // Without the learner state (a fresh replay and target) the run would differ: the test can fail.
    let (nav, _) = Navigator::load(&bytes, &dev, 0).unwrap();
    let mut fresh = resume_alone(nav, DomainRandomization::default(), &state);
    assert_ne!(go_on(&mut fresh, &mut sim()), original);
}
