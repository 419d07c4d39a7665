//! Trains navigators in the population loop with an adversary (PAIRED, Flexible PAIRED, Flexible
//! b-PAIRED, CoDE, ALP) or a baseline generator (DR, CL), natively on the site simulator, and
//! prints over training: the zero-shot success grid on the 5 test sites × 4 levels (greedy, on
//! the simulator, seeds never trained on) of the population's best navigator, the share of
//! active and passive primitives generated, the adversary's expected budget, regret, updates/s,
//! env steps/s and wall-clock. The best navigator is written as a `.wln` for
//! `scripts/judge-navigator.sh` (the live DOM). A command, not a test. `--help` prints its
//! usage.

mod common;

use std::time::Instant;

use burn::prelude::Device;
use weblab::adversary::config::Budget;
use weblab::adversary::{Adversary, AdversaryConfig, Objective, ObjectiveConfig};
use weblab::curriculum::train::{LoopConfig, PopIteration, PopulationTrainer, population};
use weblab::curriculum::{CurriculumLearning, DomainRandomization, Generator};
use weblab::gminiwob::test_sites::TEST_SITES;
use weblab::learn::checkpoint::Precision;
use weblab::navigator::NavigatorConfig;
use weblab::navigator::train::{PopulationGrids, judge_population, sim_pool};
use weblab::util::block_on;

use common::run_dir::{Point, Progress, RunDir, plot};
use common::{Cli, Common, print_grid};

const USAGE: &str = "\
Usage: cargo run --release --example train_adversary -- GENERATOR [options]
  GENERATOR: paired | flexible_paired | flexible_b_paired | code | alp | dr | cl
  --seed N (1)  --minutes M (5; training time, judging not counted)  --iterations N
  --judge-every S (60 s of training)  --judge-seeds N (20)  --out FILE.wln (best navigator)
  --alpha A  --beta B  --delta D (the objective's constants; default: the papers')
  --budget expected|log_skip (the budget estimate N̂; default expected)
  --report-every S (print the curves every S s of training between judgings; default: at judgings)
  --episodes M (per navigator per design; default CoDE's 2)  --population N (DR/CL: 1)
  --designs D (designs per iteration, played side by side; default 1, the papers')
  --sequential (the navigators take turns on one thread; default: a thread each)
  --revive-after N (a navigator N episodes without a success, while another succeeded within
    N, restarts as a copy of that one; default: never, the papers; see LoopConfig::revive_after)
  --nav-config JSON  --adversary-config JSON (partial configs)
  --snapshot FILE (write the whole run at the end)  --resume FILE (continue one)
  --run-dir DIR (a long run's folder: the run's snapshot every --snapshot-every S s of wall-clock
    (300), its curves and DIR/plot.png, the best navigator DIR/best.wln; a folder that holds a
    run resumes it exactly, and --minutes counts the training of all its sittings)
";

struct Args {
    generator: String,
    common: Common,
    alpha: Option<f64>,
    beta: Option<f64>,
    delta: Option<f64>,
    budget: Option<Budget>,
    report_every_s: Option<f64>,
    loop_cfg: LoopConfig,
    population: Option<usize>,
    nav: NavigatorConfig,
    adversary: AdversaryConfig,
    snapshot: Option<String>,
    resume: Option<String>,
    sequential: bool,
    run_dir: Option<String>,
    snapshot_every_s: f64,
}

fn parse() -> Result<Args, String> {
    let mut cli = Cli::new(USAGE);
    let generator = cli.generator("no generator given (paired, flexible_paired, flexible_b_paired, code, alp, dr, cl); --help for the usage")?;
    let mut a = Args {
        generator,
        common: Common { seed: 1, minutes: 5.0, iterations: None, judge_every_s: 60.0, judge_seeds: 20, out: None },
        alpha: None,
        beta: None,
        delta: None,
        budget: None,
        report_every_s: None,
        loop_cfg: LoopConfig::default(),
        population: None,
        nav: NavigatorConfig::default(),
        adversary: AdversaryConfig::default(),
        snapshot: None,
        resume: None,
        sequential: false,
        run_dir: None,
        snapshot_every_s: 300.0,
    };
    while let Some(flag) = cli.next_flag() {
        if a.common.take(&flag, &mut cli)? {
            continue;
        }
        match flag.as_str() {
            "--alpha" => a.alpha = Some(cli.num(&flag)?),
            "--beta" => a.beta = Some(cli.num(&flag)?),
            "--delta" => a.delta = Some(cli.num(&flag)?),
            "--budget" => a.budget = Some(Budget::from_key(&cli.value(&flag)?).ok_or("--budget: expected or log_skip")?),
            "--report-every" => a.report_every_s = Some(cli.num(&flag)?),
            "--episodes" => a.loop_cfg.episodes = cli.num(&flag)? as usize,
            "--designs" => a.loop_cfg.designs = cli.num(&flag)? as usize,
            "--revive-after" => a.loop_cfg.revive_after = Some(cli.num(&flag)? as u64),
            "--sequential" => a.sequential = true,
            "--run-dir" => a.run_dir = Some(cli.value(&flag)?),
            "--snapshot-every" => a.snapshot_every_s = cli.num(&flag)?,
            "--population" => a.population = Some(cli.num(&flag)? as usize),
            "--nav-config" => a.nav = serde_json::from_str(&cli.value(&flag)?).map_err(|e| format!("--nav-config: {e}"))?,
            "--adversary-config" => a.adversary = serde_json::from_str(&cli.value(&flag)?).map_err(|e| format!("--adversary-config: {e}"))?,
            "--snapshot" => a.snapshot = Some(cli.value(&flag)?),
            "--resume" => a.resume = Some(cli.value(&flag)?),
            other => return Err(format!("unknown option {other}; --help for the usage")),
        }
    }
    a.nav.validate()?;
    a.adversary.validate()?;
    a.loop_cfg.validate()?;
    Ok(a)
}

/// What the iterations since the last print did.
#[derive(Default)]
struct Window {
    iterations: u64,
    successes: f64,
    returns: Vec<f64>,
    placed: u64,
    active: u64,
    passive: u64,
    pages: u64,
    budget: f64,
    n_hat: f64,
    chosen: u64,
    repeats: u64,
    min_skip_lp: f64,
    regret: f64,
    objective: f64,
    reports: u64,
}

impl Window {
    fn add(&mut self, it: &PopIteration) {
        for (d, design) in it.designs.iter().enumerate() {
            self.iterations += 1;
            let eps = it.on_design(d);
            let all = eps.iter().map(|e| e.len()).sum::<usize>().max(1) as f64;
            self.successes += eps.iter().flat_map(|e| e.iter()).filter(|e| e.success()).count() as f64 / all;
            let returns = it.returns(d);
            if self.returns.len() < returns.len() {
                self.returns.resize(returns.len(), 0.0);
            }
            for (i, r) in returns.iter().enumerate() {
                self.returns[i] += r.iter().sum::<f64>() / r.len().max(1) as f64;
            }
            let (active, passive) = design.counts();
            self.placed += (active + passive) as u64;
            self.active += active as u64;
            self.passive += passive as u64;
            self.pages += design.pages() as u64;
            if let Some(r) = it.reports.get(d) {
                self.budget += r.expected_budget;
                self.n_hat += r.n_hat;
                self.chosen += r.chosen as u64;
                self.repeats += r.repeats as u64;
                self.min_skip_lp += r.min_skip_log_prob;
                self.regret += r.regret;
                self.objective += r.objective;
                self.reports += 1;
            }
        }
    }
}

fn run<G: Generator>(args: &Args, make: impl Fn() -> Result<G, String>, population_size: usize) -> Result<(), String> {
    let dev = Device::flex().autodiff();
    let run_dir = args.run_dir.as_deref().map(RunDir::new).transpose()?;
    let saved = match &run_dir {
        Some(d) => d.load()?,
        None => None,
    };
    let mut progress = Progress::default();
    let mut trainer = match (saved, &args.resume) {
        (Some((bytes, p)), _) => {
            progress = p;
            println!(
                "resuming the run in {} (sitting {}, {:.0} s of training so far)",
                args.run_dir.as_deref().unwrap_or(""),
                progress.sittings + 1,
                progress.train_s
            );
            PopulationTrainer::resume(&bytes, make()?, &dev)?
        }
        (None, Some(file)) => {
            let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
            PopulationTrainer::resume(&bytes, make()?, &dev)?
        }
        (None, None) => {
            PopulationTrainer::new(population(&args.nav, population_size, &dev, args.common.seed)?, make()?, args.loop_cfg.clone(), args.common.seed)?
        }
    };
    progress.sittings += 1;
    let wall_before = progress.wall_s;
    let name = trainer.generator.name();
    println!(
        "generator {name}, seed {}, population {} navigator(s) of {} parameters, M = {} episodes per navigator per design, D = {} designs per iteration, {}; \
         training budget {} min (judging not counted), judged greedily on the simulator on {} seeds per cell",
        args.common.seed,
        trainer.population.len(),
        trainer.population[0].model().parameter_count(),
        trainer.cfg.episodes,
        trainer.cfg.designs,
        match (args.sequential, trainer.cfg.revive_after) {
            (true, None) => "navigators in turn".to_string(),
            (false, None) => "a thread per navigator".to_string(),
            (seq, Some(n)) => format!(
                "{}, a navigator revived after {n} episodes without a success",
                if seq { "navigators in turn" } else { "a thread per navigator" }
            ),
        },
        args.common.minutes,
        args.common.judge_seeds
    );
    let t0 = Instant::now();
    let (mut train_s, mut judged_at, mut reported_at) = (progress.train_s, progress.train_s, progress.train_s);
    let (mut snapshot_at, sitting_train_s) = (Instant::now(), progress.train_s);
    let mut window = Window::default();
    let mut total = Window::default();
    let mut best = (if progress.best_grid.is_empty() { -1.0 } else { progress.best_mean }, 0usize);
    let mut best_grid: Vec<Vec<f64>> = progress.best_grid.clone();
    let start_steps: u64 = trainer.population.iter().map(|n| n.counters.env_steps).sum();
    let start_updates: u64 = trainer.population.iter().map(|n| n.counters.updates).sum();
    let mut envs = sim_pool(trainer.population.len() * trainer.cfg.designs * trainer.cfg.episodes);
    loop {
        let t = Instant::now();
        let it = if args.sequential { block_on(trainer.step(&mut envs))? } else { trainer.step_parallel(&mut envs)? };
        train_s += t.elapsed().as_secs_f64();
        for &(i, source) in &it.revived {
            println!("  navigator {i} revived as a copy of navigator {source} (iteration {}, {:.0} s of training)", it.iteration, train_s);
        }
        window.add(&it);
        total.add(&it);
        for design in &it.designs {
            progress.history.add(it.iteration, design);
        }
        let done = train_s >= args.common.minutes * 60.0 || args.common.iterations.is_some_and(|n| trainer.iteration >= n);
        let judge_due = done || train_s - judged_at >= args.common.judge_every_s;
        if !(judge_due || args.report_every_s.is_some_and(|r| train_s - reported_at >= r)) {
            continue;
        }
        reported_at = train_s;
        let steps: u64 = trainer.population.iter().map(|n| n.counters.env_steps).sum::<u64>() - start_steps;
        let updates: u64 = trainer.population.iter().map(|n| n.counters.updates).sum::<u64>() - start_updates;
        let w = &window;
        let n = w.iterations.max(1) as f64;
        println!(
            "\n[{:.0} s wall, {:.0} s training] iteration {}, {} env steps, {} navigator updates: {:.0} env steps/s, {:.1} navigator updates/s, {:.1} designs/s",
            t0.elapsed().as_secs_f64(),
            train_s,
            trainer.iteration,
            steps,
            updates,
            steps as f64 / (train_s - sitting_train_s),
            updates as f64 / (train_s - sitting_train_s),
            total.iterations as f64 / (train_s - sitting_train_s)
        );
        println!(
            "  last {} designs: {:.1} pages, {:.1} primitives ({:.0}% active, {:.0}% passive), success {:.0}%, mean return per navigator {}",
            w.iterations,
            w.pages as f64 / n,
            w.placed as f64 / n,
            100.0 * w.active as f64 / w.placed.max(1) as f64,
            100.0 * w.passive as f64 / w.placed.max(1) as f64,
            100.0 * w.successes / n,
            w.returns.iter().map(|r| format!("{:.2}", r / n)).collect::<Vec<_>>().join(" / ")
        );
        if w.reports > 0 {
            let r = w.reports as f64;
            println!(
                "  adversary: expected budget {:.1} of {} slots, N̂ {:.2}, non-SKIP choices {:.1} of which repeats {:.1}, min log π(SKIP) {:.2}, regret {:.3}, objective {:.3}, {} updates",
                w.budget / r,
                args.adversary.slots,
                w.n_hat / r,
                w.chosen as f64 / r,
                w.repeats as f64 / r,
                w.min_skip_lp / r,
                w.regret / r,
                w.objective / r,
                trainer.generator.reports().first().map(|r| r.updates).unwrap_or(0)
            );
        }
        {
            let w = &window;
            let (n, r) = (w.iterations.max(1) as f64, w.reports.max(1) as f64);
            progress.points.push(Point {
                train_min: train_s / 60.0,
                iteration: trainer.iteration,
                designs: trainer.designs,
                env_steps: trainer.population.iter().map(|n| n.counters.env_steps).sum(),
                budget: (w.reports > 0).then(|| w.budget / r),
                rendered: w.placed as f64 / n,
                active: w.active as f64 / n,
                passive: w.passive as f64 / n,
                repeats: (w.reports > 0).then(|| w.repeats as f64 / r),
                regret: (w.reports > 0).then(|| w.regret / r),
                success: w.successes / n,
            });
            let goal = args.common.minutes * 60.0;
            let filled = ((train_s / goal).min(1.0) * 30.0) as usize;
            println!(
                "  [{}{}] {:.0}% of {:.0} training minutes | {:.0} wall minutes over {} sitting(s) | iteration {}, {} designs | best grid mean {:.0}%",
                "#".repeat(filled),
                ".".repeat(30 - filled),
                100.0 * train_s / goal,
                args.common.minutes,
                (wall_before + t0.elapsed().as_secs_f64()) / 60.0,
                progress.sittings,
                trainer.iteration,
                trainer.designs,
                100.0 * best.0.max(0.0)
            );
        }
        window = Window::default();
        let snapshot_due = run_dir.is_some() && (done || snapshot_at.elapsed().as_secs_f64() >= args.snapshot_every_s);
        if snapshot_due && !judge_due {
            let d = run_dir.as_ref().expect("a run folder");
            progress.train_s = train_s;
            progress.wall_s = wall_before + t0.elapsed().as_secs_f64();
            d.save(&block_on(trainer.snapshot())?, &progress)?;
            snapshot_at = Instant::now();
        }
        if !judge_due {
            continue;
        }
        judged_at = train_s;
        let PopulationGrids { grids, means, best: top } =
            block_on(judge_population(&mut trainer.population, args.common.judge_seeds, || std::future::ready(())))?;
        println!(
            "  zero-shot grid means per navigator: {}; navigator {top}'s grid:",
            means.iter().map(|m| format!("{:.0}%", 100.0 * m)).collect::<Vec<_>>().join(" / ")
        );
        print_grid("  ", &grids[top]);
        progress.grids.push((train_s / 60.0, grids[top].clone(), top));
        if means[top] > best.0 {
            best = (means[top], top);
            best_grid = grids[top].clone();
            progress.best_mean = means[top];
            progress.best_grid = best_grid.clone();
            let out = args.common.out.clone().or_else(|| run_dir.as_ref().map(|d| d.path("best.wln").display().to_string()));
            if let Some(out) = out {
                let bytes = block_on(trainer.population[top].save(&format!("{name}, seed {}", args.common.seed), Precision::Full))?;
                std::fs::write(&out, bytes).map_err(|e| format!("{out}: {e}"))?;
                println!("  wrote {out} (navigator {top}, grid mean {:.0}%, the best so far)", 100.0 * means[top]);
            }
        }
        if let Some(d) = &run_dir {
            let title = format!("{name}, seed {}: {:.0} training minutes, {} iterations", args.common.seed, train_s / 60.0, trainer.iteration);
            std::fs::write(d.path("plot.png"), plot(&progress, &title)).map_err(|e| format!("plot.png: {e}"))?;
            if snapshot_due || judge_due {
                progress.train_s = train_s;
                progress.wall_s = wall_before + t0.elapsed().as_secs_f64();
                d.save(&block_on(trainer.snapshot())?, &progress)?;
                snapshot_at = Instant::now();
            }
        }
        if done {
            if let Some(file) = &args.snapshot {
                std::fs::write(file, block_on(trainer.snapshot())?).map_err(|e| format!("{file}: {e}"))?;
                println!("  wrote the run's snapshot to {file}");
            }
            let t = &total;
            let n = t.iterations.max(1) as f64;
            println!(
                "SUMMARY {name} | seed {} | {:.0} s training, {:.0} s wall | {} designs, {} env steps, {} navigator updates | {:.0} env steps/s, {:.1} updates/s | \
                 primitives/design {:.1} ({:.0}% active) | expected budget {} | regret {} | best grid mean {:.0}% (navigator {}) | per site (levels 0-3): {}",
                args.common.seed,
                train_s,
                wall_before + t0.elapsed().as_secs_f64(),
                t.iterations,
                steps,
                updates,
                steps as f64 / (train_s - sitting_train_s),
                updates as f64 / (train_s - sitting_train_s),
                t.placed as f64 / n,
                100.0 * t.active as f64 / t.placed.max(1) as f64,
                if t.reports > 0 { format!("{:.1}", t.budget / t.reports as f64) } else { "-".into() },
                if t.reports > 0 { format!("{:.3}", t.regret / t.reports as f64) } else { "-".into() },
                100.0 * best.0,
                best.1,
                TEST_SITES
                    .iter()
                    .zip(&best_grid)
                    .map(|(s, row)| format!("{s} {}", row.iter().map(|c| format!("{:.0}", 100.0 * c)).collect::<Vec<_>>().join("/")))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            return Ok(());
        }
    }
}

fn main() {
    let result = parse().and_then(|args| {
        let g = args.generator.as_str();
        match g {
            "dr" => run(&args, || Ok(DomainRandomization::default()), args.population.unwrap_or(1)),
            "cl" => run(&args, || Ok(CurriculumLearning::default()), args.population.unwrap_or(1)),
            _ => {
                let objective = Objective::from_key(g).ok_or(format!("unknown generator {g} (paired, flexible_paired, flexible_b_paired, code, alp, dr, cl)"))?;
                let d = ObjectiveConfig::new(objective);
                let obj = ObjectiveConfig {
                    objective,
                    alpha: args.alpha.unwrap_or(d.alpha),
                    beta: args.beta.unwrap_or(d.beta),
                    delta: args.delta.unwrap_or(d.delta),
                    budget: args.budget.unwrap_or(d.budget),
                };
                let (cfg, seed) = (args.adversary.clone(), args.common.seed);
                let (policy, critic) = Adversary::new(cfg.clone(), obj.clone(), &Device::flex().autodiff(), seed)?.model().parameter_counts();
                println!(
                    "adversary: {} (alpha {}, beta {}, delta {}, budget {}), K = {} pages, N = {} slots, repeated pairs {}, {policy} policy parameters (AEG A.12: 152,461) + {critic} in the critic",
                    objective.label(),
                    obj.alpha,
                    obj.beta,
                    obj.delta,
                    obj.budget.key(),
                    cfg.max_pages,
                    cfg.slots,
                    if cfg.mask_repeats { "masked" } else { "allowed" }
                );
                if args.population.is_some_and(|p| p != objective.population()) {
                    return Err(format!("{} trains {} navigator(s)", objective.label(), objective.population()));
                }
                run(&args, || Adversary::new(cfg.clone(), obj.clone(), &Device::flex().autodiff(), seed), objective.population())
            }
        }
    });
    if let Err(e) = result {
        eprintln!("{e}");
        std::process::exit(2);
    }
}
