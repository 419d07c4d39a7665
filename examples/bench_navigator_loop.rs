//! Where a navigator iteration's time goes, natively, and what playing episodes side by side
//! gives: a CL-style stream of designs (each primitive kept with probability p), M episodes per
//! design, D designs per iteration, one A2C update per iteration; first with a pool of one
//! simulator (one episode at a time, as before the batched loop), then with a pool of D·M. Splits
//! each iteration into the simulator (reset and step), reading the states and choosing (encode +
//! one forward per step), and the update; then times the parts alone: encoding one observation,
//! one forward pass at several batch sizes, and an update's forward, backward and Adam.
//! A benchmark, not a test: it prints figures.
//!
//! Usage: cargo run --release [--features native-wgpu] --example bench_navigator_loop -- \
//!          [D (8)] [M (8)] [iterations (60)] [p (0.25)] [flex|wgpu (flex)]

use std::time::Instant;

use burn::optim::GradientsParams;
use burn::prelude::*;
use weblab::curriculum::{CurriculumLearning, Generator};
use weblab::env::{EnvError, Environment, Observation, Step};
use weblab::gminiwob::sim::SiteSim;
use weblab::navigator::model::Padded;
use weblab::navigator::rollout::{Job, play};
use weblab::navigator::train::{sim_pool, site_task};
use weblab::navigator::{NavState, Navigator, NavigatorConfig, Transition};
use weblab::rng::Rng;
use weblab::task::{GeneratedSite, TaskSpec};
use weblab::util::block_on;

/// A simulator that adds up the time spent in it.
struct Timed {
    sim: SiteSim,
    s: f64,
}

impl Environment<GeneratedSite> for Timed {
    async fn reset(&mut self, task: &TaskSpec, seed: u32) -> Result<Observation, EnvError> {
        let t = Instant::now();
        let r = Environment::reset(&mut self.sim, task, seed).await;
        self.s += t.elapsed().as_secs_f64();
        r
    }
    async fn step(&mut self, action: &weblab::env::Action) -> Result<Step, EnvError> {
        let t = Instant::now();
        let r = Environment::step(&mut self.sim, action).await;
        self.s += t.elapsed().as_secs_f64();
        r
    }
}

struct Phases {
    steps: u64,
    updates: u64,
    wall: f64,
    sim: f64,
    play: f64,
    update: f64,
}

fn run(nav: &mut Navigator, pool: usize, d: usize, m: usize, iterations: usize, p: f64, keep: &mut Vec<Vec<Transition>>) -> Phases {
    let cl = CurriculumLearning { p_start: p, ramp: u64::MAX, ..CurriculumLearning::default() };
    let mut generator = cl;
    let mut rng = Rng::new(11);
    let mut envs: Vec<Timed> = sim_pool(pool).into_iter().map(|sim| Timed { sim, s: 0.0 }).collect();
    let mut ph = Phases { steps: 0, updates: 0, wall: 0.0, sim: 0.0, play: 0.0, update: 0.0 };
    let mut seed = 0u32;
    let t0 = Instant::now();
    for i in 0..iterations {
        let tasks: Vec<TaskSpec> = (0..d).map(|k| site_task(&format!("b{i}-{k}"), generator.propose(&mut rng, 0))).collect();
        let jobs: Vec<Job> = (0..d * m)
            .map(|j| {
                seed += 1;
                Job { task: &tasks[j / m], seed, stream: nav.episode_stream() }
            })
            .collect();
        let t = Instant::now();
        let played = block_on(play(&mut envs, nav, &jobs, false, true)).unwrap();
        ph.play += t.elapsed().as_secs_f64();
        let batch: Vec<Vec<Transition>> = played.into_iter().map(|p| p.steps).filter(|s| !s.is_empty()).collect();
        ph.steps += batch.iter().map(|e| e.len() as u64).sum::<u64>();
        let t = Instant::now();
        block_on(nav.update(&batch)).unwrap();
        ph.update += t.elapsed().as_secs_f64();
        ph.updates += 1;
        if keep.len() < 64 {
            keep.extend(batch);
        }
    }
    ph.wall = t0.elapsed().as_secs_f64();
    ph.sim = envs.iter().map(|e| e.s).sum();
    ph
}

fn report(label: &str, ph: &Phases) {
    let pct = |x: f64| 100.0 * x / ph.wall;
    println!(
        "{label}: {} env steps, {} updates in {:.1} s: {:.0} env steps/s, {:.1} updates/s | simulator {:.0}%, encode + forward + choosing {:.0}%, update {:.0}% ({:.1} ms per update)",
        ph.steps,
        ph.updates,
        ph.wall,
        ph.steps as f64 / ph.wall,
        ph.updates as f64 / ph.wall,
        pct(ph.sim),
        pct(ph.play - ph.sim),
        pct(ph.update),
        1000.0 * ph.update / ph.updates.max(1) as f64
    );
}

fn time<R>(reps: usize, mut f: impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(f());
    }
    t.elapsed().as_secs_f64() * 1000.0 / reps as f64
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| a.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(d);
    let (d, m, iterations, p) = (arg(0, 8.0) as usize, arg(1, 8.0) as usize, arg(2, 60.0) as usize, arg(3, 0.25));
    let dev = match a.get(4).map(String::as_str).unwrap_or("flex") {
        "flex" | "cpu" => Device::flex(),
        #[cfg(feature = "native-wgpu")]
        "wgpu" => Device::wgpu_options().init().unwrap_or_else(|e| panic!("no wgpu device: {e:?}")),
        other => panic!("unknown backend {other} (flex, or wgpu when built with --features native-wgpu)"),
    }
    .autodiff();
    println!("backend: {}", a.get(4).map(String::as_str).unwrap_or("flex"));
    println!("designs: each primitive kept with p = {p}; D = {d} designs per iteration, M = {m} episodes per design; {iterations} iterations each");
    let mut keep = Vec::new();
    // Warm up (vocabulary, allocations) on a throwaway navigator.
    let mut warm = Navigator::new(NavigatorConfig::default(), &dev, 1).unwrap();
    run(&mut warm, d * m, d, m, 5, p, &mut Vec::new());

    let mut nav = Navigator::new(NavigatorConfig::default(), &dev, 1).unwrap();
    let one = run(&mut nav, 1, d, m, iterations, p, &mut keep);
    report("one at a time (pool of 1)", &one);
    let mut nav = Navigator::new(NavigatorConfig::default(), &dev, 1).unwrap();
    let side = run(&mut nav, d * m, d, m, iterations, p, &mut Vec::new());
    report(&format!("side by side (pool of {})", d * m), &side);
    println!("speed-up: {:.1}x env steps/s", (side.steps as f64 / side.wall) / (one.steps as f64 / one.wall));

    // The parts alone.
    let states: Vec<&NavState> = keep.iter().flatten().map(|t| &t.state).collect();
    let mean_el = states.iter().map(|s| s.elements).sum::<usize>() as f64 / states.len() as f64;
    println!("parts ({} recorded states, {:.0} elements on average):", states.len(), mean_el);
    let mut sim = sim_pool(1).pop().unwrap();
    let mut generator = CurriculumLearning { p_start: p, ramp: u64::MAX, ..CurriculumLearning::default() };
    let task = site_task("enc", generator.propose(&mut Rng::new(5), 0));
    let obs = block_on(Environment::reset(&mut sim, &task, 1)).unwrap();
    let mut mem = weblab::navigator::EpisodeMemory::default();
    println!("  simulator reset (render + observe): {:.3} ms", time(200, || block_on(Environment::reset(&mut sim, &task, 1)).unwrap()));
    println!("  encode one observation ({} nodes): {:.3} ms", obs.dom.nodes.len(), time(500, || nav.encode(&obs, &mut mem, false)));
    for b in [1usize, 8, 32, 64] {
        let batch: Vec<&NavState> = states.iter().copied().cycle().take(b).collect();
        let mut rngs: Vec<Rng> = (0..b).map(|i| Rng::new(i as u64)).collect();
        let ms = time(40, || block_on(nav.choose(&batch, false, &mut rngs, 0.0)).unwrap());
        println!("  forward + choose, batch {b:>2}: {ms:.2} ms ({:.3} ms per state)", ms / b as f64);
    }
    let model = nav.model().clone();
    for b in [16usize, 64, 256] {
        let batch: Vec<&NavState> = states.iter().copied().cycle().take(b).collect();
        let p = Padded::new(&batch);
        let fwd = time(10, || model.forward(&p).value.into_data());
        let fwd_bwd = time(10, || {
            let out = model.forward(&p);
            let loss = out.log_probs.clone().exp().mul(out.log_probs).sum() + out.value.square().sum();
            GradientsParams::from_grads(loss.backward(), &model)
        });
        let eps: Vec<Vec<Transition>> = keep.iter().flatten().cycle().take(b).map(|t| vec![t.clone()]).collect();
        let mut learner = Navigator::new(NavigatorConfig::default(), &dev, 2).unwrap();
        // The recorded states' tokens come from `nav`'s vocabulary: same cap, so ids stay in range.
        block_on(learner.update(&eps)).unwrap();
        let full = time(10, || block_on(learner.update(&eps)).unwrap());
        println!(
            "  update of {b:>3} states (padded to {} elements): forward {fwd:.1} ms, forward + backward {fwd_bwd:.1} ms, whole update (+ Adam, loss read) {full:.1} ms",
            p.e
        );
    }
}
