//! The adversary natively: the decoder's shapes and parameter count, every sampled design valid
//! and round-tripping through the design format, log-probabilities that a re-scoring
//! reproduces, the budget term moving the expected number of primitives the way its sign says,
//! a short run of every objective (and DR, CL) in the population loop, seeded runs that
//! reproduce, and a run that resumes exactly from its snapshot.

use burn::prelude::Device;
use weblab::adversary::generator::Adversary;
use weblab::adversary::model::CHOICES;
use weblab::adversary::objective::Signal;
use weblab::adversary::{AdversaryConfig, Objective, ObjectiveConfig, Proposal};
use weblab::curriculum::train::{LoopConfig, PopulationTrainer, SnapshotParts, population};
use weblab::curriculum::{CurriculumLearning, DomainRandomization, Generator};
use weblab::gminiwob::Design;
use weblab::gminiwob::sim::SiteSim;
use weblab::learn::checkpoint::Precision;
use weblab::navigator::NavigatorConfig;
use weblab::navigator::train::sim_pool;
use weblab::rng::Rng;
use weblab::util::block_on;

fn dev() -> Device {
    Device::flex().autodiff()
}

fn adversary(objective: Objective, seed: u64) -> Adversary {
    Adversary::new(AdversaryConfig::default(), ObjectiveConfig::new(objective), &dev(), seed).unwrap()
}

/// The navigator at a small width, so the loop runs in seconds.
fn nav_config() -> NavigatorConfig {
    NavigatorConfig { embedding_dim: 16, latent_dim: 16, vocab_cap: 300, ..NavigatorConfig::default() }
}

fn sims() -> Vec<SiteSim> {
    sim_pool(4)
}

#[test]
fn the_decoder_has_the_papers_shape_and_about_their_parameter_count() {
    // Dense blocks are two layers (100 wide), the LSTM 100 wide. With K pages:
    // f0 2·(100·100+100), fK 10,100 + 101·K, LSTM 4·100·(100+100) + 400, fP 10,100 + 101·41,
    // fL 10,100 + 101·K, fI (41 + 2K)·100 + 100 + 10,100; the critic 10,100 + 101.
    let count = |k: usize| 20_200 + (10_100 + 101 * k) + 80_400 + (10_100 + 101 * 41) + (10_100 + 101 * k) + ((41 + 2 * k) * 100 + 100 + 10_100);
    let a = adversary(Objective::Code, 1);
    assert_eq!(a.model().parameter_counts(), (count(4), 10_201));
    let ten =
        Adversary::new(AdversaryConfig { max_pages: 10, ..AdversaryConfig::default() }, ObjectiveConfig::new(Objective::Code), &dev(), 1).unwrap();
    let (policy, _) = ten.model().parameter_counts();
    assert_eq!(policy, count(10));
    // AEG A.12: 152,461 for the policy network.
    assert!((policy as f64 - 152_461.0).abs() / 152_461.0 < 0.01, "{policy}");
    assert!(
        Adversary::new(AdversaryConfig { max_pages: 11, ..AdversaryConfig::default() }, ObjectiveConfig::new(Objective::Code), &dev(), 1).is_err()
    );
}

#[test]
fn designs_over_ten_pages_validate_and_render() {
    // The papers' K = 10 ("40 primitives across 10 web pages"): every sampled design validates,
    // renders in the site simulator with its k + 1 pages, and takes a step.
    use weblab::env::Environment;
    let a =
        Adversary::new(AdversaryConfig { max_pages: 10, ..AdversaryConfig::default() }, ObjectiveConfig::new(Objective::Code), &dev(), 4).unwrap();
    let mut sim = sims().pop().unwrap();
    let mut rng = Rng::new(6);
    let mut most = 0;
    for i in 0..60 {
        let p = block_on(a.sample(&mut rng)).unwrap();
        let d = p.design();
        assert_eq!(d.pages(), p.k + 1);
        Design::from_json(&d.to_json()).unwrap_or_else(|e| panic!("design {i} does not validate: {e:?}"));
        let task = weblab::navigator::train::site_task(&format!("k10-{i}"), d.clone());
        let obs = block_on(Environment::reset(&mut sim, &task, i)).unwrap_or_else(|e| panic!("design {i} does not render: {e:?}"));
        assert!(!obs.dom.nodes.is_empty());
        let target = obs.dom.nodes.iter().find(|n| n.tag == "BUTTON" || n.tag.starts_with("INPUT")).map(|n| n.r#ref);
        if let Some(r) = target {
            block_on(Environment::step(&mut sim, &weblab::env::Action::Click(r))).unwrap();
        }
        most = most.max(d.pages());
    }
    assert!(most > 4, "some designs use more than DR's 4 pages: at most {most}");
}

#[test]
fn every_sampled_design_is_valid_and_round_trips_through_the_design_format() {
    let a = adversary(Objective::FlexibleBPaired, 2);
    let cfg = &a.cfg;
    let mut rng = Rng::new(3);
    let mut pages = std::collections::BTreeSet::new();
    for _ in 0..150 {
        let p = block_on(a.sample(&mut rng)).unwrap();
        assert_eq!(p.noise.len(), cfg.noise_dim);
        assert_eq!(p.choices.len(), cfg.slots as usize);
        assert!(p.k < cfg.max_pages);
        for &(prim, page) in &p.choices {
            assert!(prim < CHOICES);
            assert_eq!(prim == 0, page.is_none(), "a page exactly when a primitive is placed");
            assert!(page.is_none_or(|b| b <= p.k), "pages ≤ k");
        }
        let d = p.design();
        assert_eq!(d.pages(), p.k + 1);
        let placed = p.choices.iter().filter(|c| c.0 != 0).count();
        assert!(d.placed().len() <= placed);
        let back = Design::from_json(&d.to_json()).unwrap();
        assert_eq!(back, d, "the design format gives the design back");
        assert!(p.skip_log_probs.iter().all(|lp| lp.is_finite() && *lp <= 0.0));
        pages.insert(d.pages());
    }
    assert_eq!(pages.len() as u32, cfg.max_pages, "an untrained adversary uses every page count");
}

#[test]
fn log_probabilities_of_a_sample_equal_its_rescoring() {
    let a = adversary(Objective::Code, 4);
    let mut rng = Rng::new(5);
    for _ in 0..20 {
        let p = block_on(a.sample(&mut rng)).unwrap();
        let (lp, skips) = block_on(a.score(&p)).unwrap();
        assert!((lp - p.log_prob).abs() < 1e-3 * p.log_prob.abs().max(1.0), "{lp} vs {}", p.log_prob);
        assert_eq!(skips.len(), p.skip_log_probs.len());
        for (s, t) in skips.iter().zip(&p.skip_log_probs) {
            assert!((s - t).abs() < 1e-4, "{s} vs {t}");
        }
        // The whole design's log-probability is the sum of its decisions': never above any part.
        assert!(p.log_prob < p.skip_log_probs.iter().copied().fold(0.0, f64::min) + 1e-9);
    }
}

#[test]
fn designs_scored_together_score_as_each_alone_values_and_gradients() {
    // The update scores its D designs in one pass (one LSTM step for all of them); each design's
    // log π, log π(SKIP) per step, entropy and value, and the gradient of their sum, must be what
    // scoring it alone gives.
    use burn::optim::GradientsParams;
    use burn::prelude::*;
    let cfg = AdversaryConfig::default();
    let a = adversary(Objective::Code, 8);
    let mut rng = Rng::new(21);
    let ps: Vec<Proposal> = (0..5).map(|_| block_on(a.sample(&mut rng)).unwrap()).collect();
    let m = a.model();
    let designs: Vec<_> = ps.iter().map(|p| (&p.noise[..], p.k, &p.choices[..])).collect();
    let together = m.score_batch(&designs, cfg.mask_repeats);
    let vec1 = |t: Tensor<1>| t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap();
    let all_skips: Vec<f32> = together.skip_log_probs.clone().into_data().convert::<f32>().try_to_vec().unwrap();
    let (lp, ent, val) = (vec1(together.log_prob.clone()), vec1(together.entropy.clone()), vec1(together.value.clone()));
    let n = ps[0].choices.len();
    let close = |x: f32, y: f32, what: &str| assert!((x - y).abs() <= 1e-4 * x.abs().max(1.0), "{what}: together {x}, alone {y}");
    let mut alone_sum = None;
    for (j, p) in ps.iter().enumerate() {
        let s = m.score(&p.noise, p.k, &p.choices, cfg.mask_repeats);
        close(lp[j], vec1(s.log_prob.clone())[0], "log π");
        close(ent[j], vec1(s.entropy.clone())[0], "entropy");
        close(val[j], vec1(s.value.clone())[0], "value");
        for (i, x) in vec1(s.skip_log_probs.clone()).into_iter().enumerate() {
            close(all_skips[j * n + i], x, "log π(SKIP)");
        }
        let part = s.log_prob + s.entropy + s.value + s.skip_log_probs.sum();
        alone_sum = Some(match alone_sum {
            None => part,
            Some(t) => t + part,
        });
    }
    let together_sum = together.log_prob.sum() + together.entropy.sum() + together.value.sum() + together.skip_log_probs.sum().reshape([1]);
    let grads = |loss: Tensor<1>| GradientsParams::from_grads(loss.backward(), m);
    let (g1, g2) = (grads(together_sum), grads(alone_sum.unwrap()));
    // Every parameter's gradient, flattened, in the model's order.
    struct Flat<'a>(&'a GradientsParams, Vec<Vec<f32>>);
    impl burn::module::ModuleVisitor for Flat<'_> {
        fn visit_float<const D: usize>(&mut self, p: &burn::module::Param<Tensor<D>>) {
            self.1.push(self.0.get::<D>(p.id).map_or(vec![], |g| g.into_data().convert::<f32>().try_to_vec().unwrap()));
        }
    }
    let (mut f1, mut f2) = (Flat(&g1, vec![]), Flat(&g2, vec![]));
    m.visit(&mut f1);
    m.visit(&mut f2);
    let mut compared = 0;
    for (x, y) in f1.1.iter().zip(&f2.1) {
        assert_eq!(x.len(), y.len(), "the same parameters get gradients");
        for (x, y) in x.iter().zip(y) {
            assert!((x - y).abs() <= 1e-3 * y.abs().max(1.0), "gradient: together {x}, alone {y}");
        }
        compared += !y.is_empty() as usize;
    }
    assert!(compared >= 10, "every weight matrix compared: {compared}");
}

#[test]
fn a_masked_decoder_never_repeats_a_pair_so_every_choice_renders() {
    // One page and 24 draws over 40 primitives: without the mask repeats are all but certain
    // (the birthday problem), with it none can happen, and re-scoring reproduces the masked draws.
    let one_page = |mask_repeats| AdversaryConfig { max_pages: 1, mask_repeats, ..AdversaryConfig::default() };
    let mut repeats = [0usize; 2];
    for (i, mask) in [false, true].into_iter().enumerate() {
        let a = Adversary::new(one_page(mask), ObjectiveConfig::new(Objective::Code), &dev(), 11).unwrap();
        let mut rng = Rng::new(12);
        for _ in 0..40 {
            let p = block_on(a.sample(&mut rng)).unwrap();
            let chosen = p.choices.iter().filter(|c| c.0 != 0).count();
            repeats[i] += chosen - p.design().placed().len();
            let (lp, skips) = block_on(a.score(&p)).unwrap();
            assert!((lp - p.log_prob).abs() < 1e-3 * p.log_prob.abs().max(1.0), "masked: {mask}: {lp} vs {}", p.log_prob);
            assert!(skips.iter().zip(&p.skip_log_probs).all(|(s, t)| (s - t).abs() < 1e-4));
        }
    }
    assert!(repeats[0] > 10, "unmasked draws repeat pairs: {repeats:?}");
    assert_eq!(repeats[1], 0, "masked draws never do");
    // Two pages: a primitive may go on each once, and then is closed.
    let masks = weblab::adversary::model::Masks::along(4, 1, &[(5, Some(0)), (0, None), (5, Some(1)), (7, Some(1))], true);
    assert_eq!(masks.pages, vec![vec![true, true, false, false], vec![false, true, false, false], vec![true, true, false, false]]);
    assert!(!masks.closed[2][5] && masks.closed[3][5] && !masks.closed[3][0] && !masks.closed[3][7]);
}

/// Mean expected budget (Σ 1 − π(SKIP)) over designs drawn with a fixed generator.
fn mean_budget(a: &Adversary) -> f64 {
    let mut rng = Rng::new(99);
    (0..30).map(|_| block_on(a.sample(&mut rng)).unwrap().expected_budget()).sum::<f64>() / 30.0
}

#[test]
fn the_budget_term_moves_the_expected_number_of_primitives_its_way() {
    // AEG Eq. 3: loss += α · R_A · Σ log π(SKIP). With the A2C reward held at 0, a best return
    // R_A = +1 must raise the expected non-SKIP count and R_A = −1 lower it.
    let run = |best: f64| {
        let mut a = adversary(Objective::FlexibleBPaired, 7);
        let before = mean_budget(&a);
        let mut rng = Rng::new(8);
        let sig = Signal { reward: 0.0, budget_weight: 1.25 * best, n_hat: 0.0, regret: 0.0, best, value: 0.0 };
        for _ in 0..40 {
            let p: Proposal = block_on(a.sample(&mut rng)).unwrap();
            block_on(a.learn_from(&[(&p, sig)])).unwrap();
        }
        (before, mean_budget(&a))
    };
    let (b0, up) = run(1.0);
    let (b1, down) = run(-1.0);
    assert_eq!(b0, b1, "the same seed, the same adversary before learning");
    assert!(up > b0 + 0.2, "R_A > 0: more primitives ({b0:.2} → {up:.2})");
    assert!(down < b0 - 2.0, "R_A < 0: fewer primitives ({b0:.2} → {down:.2})");
}

/// Per iteration: the navigators' losses, their returns, the adversary's loss, primitives placed.
type Curve = Vec<(Vec<f32>, Vec<Vec<f64>>, f64, u32)>;

fn adversarial_run(objective: Objective, seed: u64, iterations: usize, cfg: LoopConfig) -> Curve {
    let nav = population(&nav_config(), objective.population(), &dev(), seed).unwrap();
    let mut t = PopulationTrainer::new(nav, adversary(objective, seed), cfg, seed).unwrap();
    let mut env = sims();
    (0..iterations)
        .map(|_| {
            let it = block_on(t.step(&mut env)).unwrap();
            let r = it.reports.first().expect("an adversary reports").clone();
            assert_eq!(it.reports.len(), it.designs.len(), "a report per design");
            (it.updates.iter().map(|u| u.loss).collect(), it.returns(0), r.loss, it.designs[0].placed().len() as u32)
        })
        .collect()
}

#[test]
fn a_short_run_of_every_objective_completes_and_reports() {
    for objective in Objective::ALL {
        let curve = adversarial_run(objective, 1, 3, LoopConfig::default());
        assert_eq!(curve.len(), 3);
        for (losses, returns, adv_loss, _) in &curve {
            assert_eq!(returns.len(), objective.population(), "{objective:?}");
            assert!(returns.iter().all(|r| r.len() == LoopConfig::default().episodes));
            assert!(losses.iter().all(|l| l.is_finite()) && adv_loss.is_finite(), "{objective:?}: {curve:?}");
        }
    }
    // The baselines run in the same loop.
    for g in [Box::new(DomainRandomization::default()) as Box<dyn Generator>, Box::new(CurriculumLearning::default())] {
        let mut t = PopulationTrainer::new(population(&nav_config(), 1, &dev(), 1).unwrap(), g, LoopConfig::default(), 1).unwrap();
        let it = block_on(t.step(&mut sims())).unwrap();
        assert!(it.reports.is_empty() && it.returns(0).len() == 1);
    }
    // PAIRED with one navigator is refused, with a message.
    let mut t =
        PopulationTrainer::new(population(&nav_config(), 1, &dev(), 1).unwrap(), adversary(Objective::Paired, 1), LoopConfig::default(), 1).unwrap();
    assert!(block_on(t.step(&mut sims())).unwrap_err().contains("protagonist"));
}

#[test]
fn seeded_runs_reproduce_their_curves() {
    let a = adversarial_run(Objective::FlexibleBPaired, 3, 6, LoopConfig::default());
    assert_eq!(a, adversarial_run(Objective::FlexibleBPaired, 3, 6, LoopConfig::default()), "same seed: same designs, returns and losses");
    assert_ne!(a, adversarial_run(Objective::FlexibleBPaired, 4, 6, LoopConfig::default()), "another seed, another run");
    let batched = LoopConfig { designs: 3, ..LoopConfig::default() };
    let b = adversarial_run(Objective::Code, 3, 3, batched.clone());
    assert_eq!(b, adversarial_run(Objective::Code, 3, 3, batched), "batched designs reproduce too");
}

#[test]
fn a_run_resumed_from_its_snapshot_goes_on_exactly() {
    let objective = Objective::Code;
    let cfg = LoopConfig { designs: 2, ..LoopConfig::default() };
    let nav = population(&nav_config(), objective.population(), &dev(), 6).unwrap();
    let mut t = PopulationTrainer::new(nav, adversary(objective, 6), cfg, 6).unwrap();
    let mut env = sims();
    for _ in 0..3 {
        block_on(t.step(&mut env)).unwrap();
    }
    let snapshot = block_on(t.snapshot()).unwrap();
    // Taken apart (what extract_navigator writes): each navigator's part is its own checkpoint.
    let parts = SnapshotParts::read(&snapshot).unwrap();
    assert_eq!((parts.generator_name(), parts.navigators.len()), ("CoDE", t.population.len()));
    for (i, nav) in t.population.iter().enumerate() {
        let own = block_on(nav.save("CoDE", Precision::Full)).unwrap();
        assert_eq!(parts.navigators[i].0, own.as_slice(), "navigator {i}'s part");
        assert!(!parts.navigators[i].1.is_empty(), "navigator {i}'s Adam state");
    }
    assert!(!parts.generator.is_empty());
    let go_on = |t: &mut PopulationTrainer<Adversary>, env: &mut Vec<SiteSim>| {
        (0..3)
            .map(|_| {
                let it = block_on(t.step(env)).unwrap();
                (it.designs, it.episodes, it.updates.iter().map(|u| u.loss).collect::<Vec<f32>>(), it.reports)
            })
            .collect::<Vec<_>>()
    };
    let original = go_on(&mut t, &mut env);
    // Built afresh with another seed: everything must come from the snapshot.
    let mut resumed = PopulationTrainer::resume(&snapshot, adversary(objective, 77), &dev()).unwrap();
    assert_eq!((resumed.iteration, resumed.designs), (3, 6));
    assert_eq!(go_on(&mut resumed, &mut sims()), original);
    // A damaged snapshot, or one of another objective, is refused with a message.
    let mut bad = snapshot.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0xff;
    assert!(PopulationTrainer::resume(&bad, adversary(objective, 6), &dev()).err().unwrap().contains("damaged"));
    assert!(SnapshotParts::read(&bad).err().unwrap().contains("damaged"));
    assert!(SnapshotParts::read(&snapshot[..snapshot.len() - 9]).is_err());
    assert!(PopulationTrainer::resume(&snapshot, adversary(Objective::FlexiblePaired, 6), &dev()).err().unwrap().contains("CoDE"));
    // The same objective with another alpha: the message names both and the flags to give.
    let other_alpha =
        Adversary::new(AdversaryConfig::default(), ObjectiveConfig { alpha: 0.8, ..ObjectiveConfig::new(objective) }, &dev(), 6).unwrap();
    let err = PopulationTrainer::resume(&snapshot, other_alpha, &dev()).err().unwrap();
    assert!(err.contains("alpha 0.9") && err.contains("alpha 0.8") && err.contains("--alpha"), "{err}");
}

#[test]
fn navigators_on_their_own_threads_learn_what_they_learn_in_turn() {
    let run = |parallel: bool| {
        let cfg = LoopConfig { designs: 2, ..LoopConfig::default() };
        let nav = population(&nav_config(), 2, &dev(), 8).unwrap();
        let mut t = PopulationTrainer::new(nav, adversary(Objective::FlexibleBPaired, 8), cfg, 8).unwrap();
        let mut env = sim_pool(8);
        (0..3)
            .map(|_| {
                let it = if parallel { t.step_parallel(&mut env).unwrap() } else { block_on(t.step(&mut env)).unwrap() };
                (it.designs, it.episodes, it.updates, it.reports)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(true), run(false));
}

#[test]
fn a_navigator_long_without_a_success_is_revived_from_the_one_that_succeeded_last() {
    use weblab::curriculum::train::revivals;
    assert_eq!(revivals(&[10, 3], 5), vec![(0, 1)]);
    assert_eq!(revivals(&[10, 12], 5), vec![], "nobody succeeded lately: nobody to copy");
    assert_eq!(revivals(&[5, 2, 2, 7], 5), vec![(0, 1), (3, 1)], "the most recent success, the first on ties");
    assert_eq!(revivals(&[0, 4], 5), vec![]);
}

#[test]
fn a_revived_navigator_is_a_copy_of_its_source_with_its_own_sampling_and_the_run_resumes_exactly() {
    use weblab::env::Environment;
    use weblab::gminiwob::test_sites::test_site;
    use weblab::navigator::features::EpisodeMemory;
    use weblab::navigator::train::site_task;

    let cfg = LoopConfig { revive_after: Some(500), ..LoopConfig::default() };
    assert!(LoopConfig { revive_after: Some(0), ..cfg.clone() }.validate().is_err());
    let t = PopulationTrainer::new(population(&nav_config(), 2, &dev(), 9).unwrap(), adversary(Objective::Code, 9), cfg.clone(), 9).unwrap();
    // Navigator 0 has gone 1,000 episodes without a success, navigator 1 succeeded just now.
    let mut state = t.state();
    state.since_success = vec![1_000, 0];
    let mut t = PopulationTrainer::from_state(t.population, adversary(Objective::Code, 9), cfg, &state).unwrap();
    let mut env = sims();
    let it = block_on(t.step(&mut env)).unwrap();
    assert!(it.episodes[0].iter().all(|e| !e.success()), "this seed's iteration has no success for navigator 0");
    assert_eq!(it.revived, vec![(0, 1)]);
    let since = t.state().since_success;
    assert_eq!(since[0], since[1], "it takes its source's count");
    assert!(since[1] <= 2);

    // The same weights and vocabulary: the same policy on a page; its own sampling stream.
    let mut sim = sim_pool(1).pop().unwrap();
    let obs = block_on(Environment::reset(&mut sim, &site_task("login-0", test_site("login", 0).unwrap()), 3)).unwrap();
    let [a, b] = &mut t.population[..] else { panic!("two navigators") };
    assert_eq!(a.vocab, b.vocab);
    let (sa, sb) = (a.encode(&obs, &mut EpisodeMemory::default(), false), b.encode(&obs, &mut EpisodeMemory::default(), false));
    assert_eq!(block_on(a.policy(&sa)).unwrap(), block_on(b.policy(&sb)).unwrap());
    assert_ne!(a.rng_state(), b.rng_state());

    // It learns on, and a snapshot carries the counts since a success.
    let snapshot = block_on(t.snapshot()).unwrap();
    let it = block_on(t.step(&mut env)).unwrap();
    assert!(it.updates.iter().all(|u| u.loss.is_finite()));
    let mut resumed = PopulationTrainer::resume(&snapshot, adversary(Objective::Code, 1), &dev()).unwrap();
    let again = block_on(resumed.step(&mut sims())).unwrap();
    assert_eq!((again.episodes, again.revived), (it.episodes, it.revived));
    assert_eq!(resumed.state(), t.state());
}

#[test]
fn the_loops_reward_is_the_one_the_training_designs_use() {
    use weblab::env::STEP_LIMIT_REASON;
    use weblab::gminiwob::RewardConfig;
    // A two-step limit ending at −1 and no cost for unchanged steps: every episode of the
    // iteration stops by step 2, and one the limit ended has the configured raw reward.
    let reward = RewardConfig { step_limit: 2, step_limit_reward: -1.0, unchanged_penalty: 0.0, ..RewardConfig::default() };
    let cfg = LoopConfig { designs: 4, reward, ..LoopConfig::default() };
    assert_eq!(
        serde_json::from_str::<LoopConfig>(r#"{"designs":4,"reward":{"step_limit":2,"step_limit_reward":-1,"unchanged_penalty":0}}"#).unwrap(),
        cfg
    );
    let mut t = PopulationTrainer::new(population(&nav_config(), 1, &dev(), 3).unwrap(), Box::new(DomainRandomization::default()), cfg, 3).unwrap();
    let mut limited = 0;
    for _ in 0..3 {
        for e in block_on(t.step(&mut sims())).unwrap().episodes.concat() {
            assert!(e.steps <= 2, "{e:?}");
            if e.reason.as_deref() == Some(STEP_LIMIT_REASON) {
                assert_eq!(e.raw_reward, -1.0);
                limited += 1;
            }
        }
    }
    assert!(limited > 0, "some episode ran into the limit");
    // The default is the reference's: a longer limit, ending at 0.
    assert_eq!((LoopConfig::default().reward.step_limit, LoopConfig::default().reward.step_limit_reward), (25, 0.0));
}
