//! One training run of the population loop, start to end: iterations until the run's minutes or
//! iterations are spent, the population judged on the test sites now and then (the best navigator
//! kept), the curves, and — in a run folder — snapshots, so a killed run resumes exactly. The
//! command line, the Python package and the Ray studies all call [`train`]; it is the loop's only
//! copy.

use std::time::Instant;

use burn::prelude::Device;
use serde::{Deserialize, Serialize};

use super::config::RunConfig;
use super::run_dir::{Point, Progress, RunDir, plot};
use crate::curriculum::Generator;
use crate::curriculum::train::{PopIteration, PopulationTrainer, population};
use crate::gminiwob::test_sites::{LEVELS, TEST_SITES};
use crate::learn::checkpoint::Precision;
use crate::navigator::train::{PopulationGrids, grid_mean, judge_population, sim_pool};
use crate::util::block_on;

/// How a run ended, as `summary.json` in its folder and the value [`train`] returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub generator: String,
    pub seed: u64,
    pub iterations: u64,
    pub designs: u64,
    pub env_steps: u64,
    pub updates: u64,
    /// Training seconds and wall-clock seconds over every sitting.
    pub train_s: f64,
    pub wall_s: f64,
    pub sittings: u32,
    /// The last judging's grid (test sites × levels) of the population's best navigator, and its mean.
    pub final_grid: Vec<Vec<f64>>,
    pub final_mean: f64,
    /// The best grid any judging saw (the navigator written as `best.wln`), and its mean.
    pub best_grid: Vec<Vec<f64>>,
    pub best_mean: f64,
    /// The test sites of the grids' rows.
    pub sites: Vec<String>,
    /// A digest of every iteration's designs and returns since the run began (FNV-1a over their
    /// bits): equal digests, the same run, however it was split into sittings or machines.
    pub trajectory: String,
}

/// What the iterations since the last print did.
#[derive(Default)]
struct Window {
    iterations: u64,
    successes: f64,
    /// Per navigator: the sum over designs of its share of successful episodes on each.
    nav_successes: Vec<f64>,
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
                self.nav_successes.resize(returns.len(), 0.0);
            }
            for (i, e) in eps.iter().enumerate() {
                self.nav_successes[i] += e.iter().filter(|e| e.success()).count() as f64 / e.len().max(1) as f64;
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

    fn point(&self, train_s: f64, trainer: &PopulationTrainer<Box<dyn Generator + Send>>) -> Point {
        let (n, r) = (self.iterations.max(1) as f64, self.reports.max(1) as f64);
        let some = |v: f64| (self.reports > 0).then_some(v / r);
        Point {
            train_min: train_s / 60.0,
            iteration: trainer.iteration,
            designs: trainer.designs,
            env_steps: trainer.counters().env_steps,
            budget: some(self.budget),
            rendered: self.placed as f64 / n,
            active: self.active as f64 / n,
            passive: self.passive as f64 / n,
            repeats: some(self.repeats as f64),
            regret: some(self.regret),
            success: self.successes / n,
            success_per_navigator: self.nav_successes.iter().map(|s| s / n).collect(),
        }
    }
}

/// FNV-1a over an iteration's designs and every navigator's returns, chained from `h`.
pub fn digest(mut h: u64, it: &PopIteration) -> u64 {
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    for design in &it.designs {
        eat(serde_json::to_string(design).unwrap_or_default().as_bytes());
    }
    for d in 0..it.designs.len() {
        for row in it.returns(d) {
            for r in row {
                eat(&r.to_bits().to_le_bytes());
            }
        }
    }
    h
}

pub const DIGEST_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Runs (or, when `dir` holds one, resumes) the training run `cfg` describes, printing its curves
/// through `log`; in `dir`, snapshots (`run.wlpr`, `progress.json`), `best.wln`, `plot.png` and at
/// the end `summary.json`.
pub fn train(cfg: &RunConfig, dir: Option<&str>, log: &mut dyn FnMut(&str)) -> Result<Summary, String> {
    cfg.validate()?;
    let dev = Device::flex().autodiff();
    let run_dir = dir.map(RunDir::new).transpose()?;
    let mut progress = Progress::default();
    let make = || cfg.build_generator(&dev);
    let mut trainer = match run_dir.as_ref().map(|d| d.load()).transpose()?.flatten() {
        Some((bytes, p)) => {
            progress = p;
            log(&format!(
                "resuming the run in {} (sitting {}, {:.0} s of training so far)",
                dir.unwrap_or(""),
                progress.sittings + 1,
                progress.train_s
            ));
            PopulationTrainer::resume(&bytes, make()?, &dev)?
        }
        None => PopulationTrainer::new(population(&cfg.navigator, cfg.population_size(), &dev, cfg.seed)?, make()?, cfg.loop_cfg.clone(), cfg.seed)?,
    };
    if trainer.population.len() != cfg.population_size() {
        return Err(format!("the run folder holds {} navigators; the config trains {}", trainer.population.len(), cfg.population_size()));
    }
    progress.sittings += 1;
    let wall_before = progress.wall_s;
    let name = trainer.generator.name();
    log(&format!(
        "generator {name}, seed {}, population {} navigator(s) of {} parameters, M = {} episodes per navigator per design, D = {} designs per iteration, {}{}; \
         training budget {} min{} (judging not counted), judged greedily on the simulator on {} seeds per cell",
        cfg.seed,
        trainer.population.len(),
        trainer.population[0].model().parameter_count(),
        trainer.cfg.episodes,
        trainer.cfg.designs,
        if cfg.sequential { "navigators in turn" } else { "a thread per navigator" },
        trainer.cfg.revive_after.map(|n| format!(", a navigator revived after {n} episodes without a success")).unwrap_or_default(),
        cfg.minutes,
        cfg.iterations.map(|n| format!(" or {n} iterations")).unwrap_or_default(),
        cfg.judge_seeds
    ));
    let t0 = Instant::now();
    let (mut train_s, mut judged_at, mut judged_it, mut reported_at) = (progress.train_s, progress.train_s, trainer.iteration, progress.train_s);
    let (mut snapshot_at, mut snapshot_it, sitting_train_s) = (Instant::now(), trainer.iteration, progress.train_s);
    let mut window = Window::default();
    let mut best = (if progress.best_grid.is_empty() { -1.0 } else { progress.best_mean }, 0usize);
    let mut last_grid: Vec<Vec<f64>> = progress.grids.last().map(|g| g.1.clone()).unwrap_or_default();
    let start = trainer.counters();
    let mut envs = sim_pool(trainer.population.len() * trainer.cfg.designs * trainer.cfg.episodes);
    let mut trajectory = u64::from_str_radix(&progress.trajectory, 16).unwrap_or(DIGEST_START);
    loop {
        let t = Instant::now();
        let it = if cfg.sequential { block_on(trainer.step(&mut envs))? } else { trainer.step_parallel(&mut envs)? };
        train_s += t.elapsed().as_secs_f64();
        trajectory = digest(trajectory, &it);
        for &(i, source) in &it.revived {
            log(&format!("  navigator {i} revived as a copy of navigator {source} (iteration {}, {:.0} s of training)", it.iteration, train_s));
        }
        window.add(&it);
        for design in &it.designs {
            progress.history.add(it.iteration, design);
        }
        let done = train_s >= cfg.minutes * 60.0 || cfg.iterations.is_some_and(|n| trainer.iteration >= n);
        let judge_due = done
            || match cfg.judge_every_iterations {
                Some(n) => trainer.iteration - judged_it >= n,
                None => train_s - judged_at >= cfg.judge_every_s,
            };
        let snapshot_due = run_dir.is_some()
            && (done
                || judge_due
                || match cfg.snapshot_every_iterations {
                    Some(n) => trainer.iteration - snapshot_it >= n,
                    None => snapshot_at.elapsed().as_secs_f64() >= cfg.snapshot_every_s,
                });
        let report_due = judge_due || cfg.report_every_s.is_some_and(|r| train_s - reported_at >= r);
        if report_due {
            reported_at = train_s;
            let c = trainer.counters();
            let (steps, updates) = (c.env_steps - start.env_steps, c.updates - start.updates);
            let sitting = (train_s - sitting_train_s).max(1e-9);
            log(&format!(
                "\n[{:.0} s wall, {:.0} s training] iteration {}, {steps} env steps, {updates} navigator updates: {:.0} env steps/s, {:.1} navigator updates/s",
                t0.elapsed().as_secs_f64(),
                train_s,
                trainer.iteration,
                steps as f64 / sitting,
                updates as f64 / sitting,
            ));
            let w = &window;
            let n = w.iterations.max(1) as f64;
            log(&format!(
                "  last {} designs: {:.1} pages, {:.1} primitives ({:.0}% active, {:.0}% passive), success {:.0}% (per navigator {}), mean return per navigator {}",
                w.iterations,
                w.pages as f64 / n,
                w.placed as f64 / n,
                100.0 * w.active as f64 / w.placed.max(1) as f64,
                100.0 * w.passive as f64 / w.placed.max(1) as f64,
                100.0 * w.successes / n,
                w.nav_successes.iter().map(|s| format!("{:.0}%", 100.0 * s / n)).collect::<Vec<_>>().join(" / "),
                w.returns.iter().map(|r| format!("{:.2}", r / n)).collect::<Vec<_>>().join(" / ")
            ));
            if w.reports > 0 {
                let r = w.reports as f64;
                log(&format!(
                    "  adversary: expected budget {:.1}, N̂ {:.2}, non-SKIP choices {:.1} of which repeats {:.1}, min log π(SKIP) {:.2}, regret {:.3}, objective {:.3}",
                    w.budget / r,
                    w.n_hat / r,
                    w.chosen as f64 / r,
                    w.repeats as f64 / r,
                    w.min_skip_lp / r,
                    w.regret / r,
                    w.objective / r,
                ));
            }
            progress.points.push(w.point(train_s, &trainer));
            window = Window::default();
        }
        if judge_due {
            judged_at = train_s;
            judged_it = trainer.iteration;
            let PopulationGrids { grids, means, best: top } =
                block_on(judge_population(&mut trainer.population, cfg.judge_seeds, || std::future::ready(())))?;
            log(&format!(
                "  zero-shot grid means per navigator: {}; navigator {top}'s grid:",
                means.iter().map(|m| format!("{:.0}%", 100.0 * m)).collect::<Vec<_>>().join(" / ")
            ));
            log(&grid_text("  ", &grids[top]));
            progress.grids.push((train_s / 60.0, grids[top].clone(), top));
            last_grid = grids[top].clone();
            if means[top] > best.0 {
                best = (means[top], top);
                progress.best_mean = means[top];
                progress.best_grid = grids[top].clone();
                let outs = run_dir.iter().map(|d| d.path("best.wln")).chain(cfg.out.iter().map(std::path::PathBuf::from));
                for out in outs {
                    let bytes = block_on(trainer.population[top].save(&format!("{name}, seed {}", cfg.seed), Precision::Full))?;
                    std::fs::write(&out, bytes).map_err(|e| format!("{}: {e}", out.display()))?;
                    log(&format!("  wrote {} (navigator {top}, grid mean {:.0}%, the best so far)", out.display(), 100.0 * means[top]));
                }
            }
            if let Some(d) = &run_dir {
                let title = format!("{name}, seed {}: {:.0} training minutes, {} iterations", cfg.seed, train_s / 60.0, trainer.iteration);
                std::fs::write(d.path("plot.png"), plot(&progress, &title)).map_err(|e| format!("plot.png: {e}"))?;
            }
        }
        if snapshot_due {
            let d = run_dir.as_ref().expect("a run folder");
            progress.train_s = train_s;
            progress.wall_s = wall_before + t0.elapsed().as_secs_f64();
            progress.trajectory = format!("{trajectory:016x}");
            d.save(&block_on(trainer.snapshot())?, &progress)?;
            snapshot_at = Instant::now();
            snapshot_it = trainer.iteration;
        }
        if done {
            let c = trainer.counters();
            let summary = Summary {
                generator: name.to_string(),
                seed: cfg.seed,
                iterations: trainer.iteration,
                designs: trainer.designs,
                env_steps: c.env_steps,
                updates: c.updates,
                train_s,
                wall_s: wall_before + t0.elapsed().as_secs_f64(),
                sittings: progress.sittings,
                final_mean: grid_mean(&last_grid),
                final_grid: last_grid,
                best_grid: progress.best_grid.clone(),
                best_mean: best.0.max(0.0),
                sites: TEST_SITES.iter().map(|s| s.to_string()).collect(),
                trajectory: format!("{trajectory:016x}"),
            };
            log(&format!(
                "SUMMARY {name} | seed {} | {:.0} s training, {:.0} s wall, {} sitting(s) | {} iterations, {} env steps, {} navigator updates | best grid mean {:.0}% | per site (levels 0-3): {}",
                cfg.seed,
                summary.train_s,
                summary.wall_s,
                summary.sittings,
                summary.iterations,
                summary.env_steps,
                summary.updates,
                100.0 * summary.best_mean,
                TEST_SITES
                    .iter()
                    .zip(&summary.best_grid)
                    .map(|(s, row)| format!("{s} {}", row.iter().map(|c| format!("{:.0}", 100.0 * c)).collect::<Vec<_>>().join("/")))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            if let Some(d) = &run_dir {
                let json = serde_json::to_vec_pretty(&summary).map_err(|e| e.to_string())?;
                std::fs::write(d.path("summary.json"), json).map_err(|e| format!("summary.json: {e}"))?;
            }
            return Ok(summary);
        }
    }
}

/// A success grid as text (rows in `TEST_SITES` order), each line after `indent`.
pub fn grid_text(indent: &str, grid: &[Vec<f64>]) -> String {
    let mut out = format!("{indent}{:<10} {}", "site", (0..LEVELS).map(|l| format!("level {l}")).collect::<Vec<_>>().join("  "));
    for (site, row) in TEST_SITES.iter().zip(grid) {
        out += &format!("\n{indent}{site:<10} {}", row.iter().map(|s| format!("{:>6.0}%", 100.0 * s)).collect::<Vec<_>>().join("  "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::GeneratorSpec;

    fn small(generator: GeneratorSpec, iterations: u64) -> RunConfig {
        RunConfig {
            generator,
            iterations: Some(iterations),
            minutes: 60.0,
            judge_every_iterations: Some(4),
            judge_seeds: 2,
            snapshot_every_iterations: Some(2),
            navigator: serde_json::from_str(r#"{"vocab_cap": 300, "embedding_dim": 8, "latent_dim": 8}"#).unwrap(),
            ..RunConfig::default()
        }
    }

    /// A run stopped after 3 iterations and resumed from its folder to 6 is the uninterrupted
    /// 6-iteration run: the same designs, returns and final grid.
    #[test]
    fn a_run_resumed_from_its_folder_is_the_uninterrupted_run() {
        let tmp = std::env::temp_dir().join(format!("weblab-study-{}", std::process::id()));
        let (a, b) = (tmp.join("a"), tmp.join("b"));
        let _ = std::fs::remove_dir_all(&tmp);
        let spec = GeneratorSpec::adversary(crate::adversary::Objective::Code);
        let quiet = &mut |_: &str| {};
        let whole = train(&small(spec.clone(), 6), Some(a.to_str().unwrap()), quiet).unwrap();
        let first = train(&small(spec.clone(), 3), Some(b.to_str().unwrap()), quiet).unwrap();
        assert_eq!(first.iterations, 3);
        let resumed = train(&small(spec, 6), Some(b.to_str().unwrap()), quiet).unwrap();
        assert_eq!((whole.iterations, resumed.iterations, resumed.sittings), (6, 6, 2));
        assert_eq!(whole.trajectory, resumed.trajectory);
        assert_ne!(first.trajectory, resumed.trajectory);
        assert_eq!(whole.final_grid, resumed.final_grid);
        assert_eq!(whole.env_steps, resumed.env_steps);
        assert!(b.join("summary.json").exists() && b.join("best.wln").exists() && b.join("plot.png").exists());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
