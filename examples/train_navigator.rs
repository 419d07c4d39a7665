//! Trains a gMiniWoB navigator natively on the site simulator (equal to the live DOM, see
//! `tests/web_gminiwob_sim.rs`) and prints, over training time, the zero-shot success grid on the
//! test sites (judged on the simulator; `scripts/judge-navigator.sh` judges a checkpoint on the
//! live DOM), env steps/s and updates/s. A command, not a test.
//!
//! Usage: cargo run --release --example train_navigator -- GENERATOR [options]
//!   GENERATOR: dr | cl | SITE-LEVEL (one fixed test site, e.g. login-0)
//!   --seed N (1)  --minutes M (10)  --iterations N (no limit)  --judge-every S (60 seconds)
//!   --judge-seeds N (20)  --out FILE.wln (the best navigator by grid mean; FILE-last.wln: the last)
//!   --config JSON (a partial NavigatorConfig, e.g. '{"episodes_per_update":16}')
//!   --head a2c|dqn (the learner; default a2c, the papers')  --bidirectional (the BiLSTM option)
//!   --cl-ramp N (CL's proposals until p = 1)
//!   --stop-at F (a fixed site: stop at the first judging where its greedy success is >= F)

use std::time::Instant;

use burn::prelude::Device;
use weblab::curriculum::{CurriculumLearning, DomainRandomization, Fixed, Generator};
use weblab::gminiwob::sim::SiteSim;
use weblab::gminiwob::test_sites::{LEVELS, TEST_SITES, test_site};
use weblab::gminiwob::{Design, RewardConfig, Values};
use weblab::learn::checkpoint::Precision;
use weblab::navigator::train::{JUDGE_SEEDS_FROM, NavTrainer, judge, site_task};
use weblab::navigator::{Head, Navigator, NavigatorConfig};
use weblab::util::block_on;

struct Args {
    generator: String,
    seed: u64,
    minutes: f64,
    iterations: Option<u64>,
    judge_every_s: f64,
    judge_seeds: u32,
    out: Option<String>,
    config: NavigatorConfig,
    cl_ramp: Option<u64>,
    stop_at: Option<f64>,
}

fn head(s: &str) -> Result<Head, String> {
    match s {
        "a2c" => Ok(Head::A2c),
        "dqn" => Ok(Head::Dqn),
        other => Err(format!("--head: a2c or dqn, not {other}")),
    }
}

fn parse() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let generator = it.next().ok_or("no generator given (dr, cl or a test site like login-0)")?;
    let mut a = Args {
        generator,
        seed: 1,
        minutes: 10.0,
        iterations: None,
        judge_every_s: 60.0,
        judge_seeds: 20,
        out: None,
        config: NavigatorConfig::default(),
        cl_ramp: None,
        stop_at: None,
    };
    let (mut head_flag, mut bidirectional) = (None, false);
    while let Some(flag) = it.next() {
        let mut val = || it.next().ok_or(format!("{flag} needs a value"));
        let num = |s: String| s.parse::<f64>().map_err(|_| format!("{flag}: not a number: {s}"));
        match flag.as_str() {
            "--seed" => a.seed = num(val()?)? as u64,
            "--minutes" => a.minutes = num(val()?)?,
            "--iterations" => a.iterations = Some(num(val()?)? as u64),
            "--judge-every" => a.judge_every_s = num(val()?)?,
            "--judge-seeds" => a.judge_seeds = num(val()?)? as u32,
            "--out" => a.out = Some(val()?),
            "--cl-ramp" => a.cl_ramp = Some(num(val()?)? as u64),
            "--stop-at" => a.stop_at = Some(num(val()?)?),
            "--config" => a.config = serde_json::from_str(&val()?).map_err(|e| format!("--config: {e}"))?,
            "--head" => head_flag = Some(head(&val()?)?),
            "--bidirectional" => bidirectional = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    // The flags win over --config, whichever came first.
    if let Some(h) = head_flag {
        a.config.head = h;
    }
    a.config.bidirectional |= bidirectional;
    a.config.validate()?;
    Ok(a)
}

fn fixed_site(name: &str) -> Option<Design> {
    let (site, level) = name.rsplit_once('-')?;
    test_site(site, level.parse().ok()?)
}

/// Success of `nav` on every test site and level, judged on the simulator.
fn grid(nav: &mut Navigator, seeds: u32) -> Vec<[f64; LEVELS as usize]> {
    let mut sim = SiteSim::new(test_site("login", 0).unwrap(), 0, Values::default(), RewardConfig::default());
    TEST_SITES
        .iter()
        .map(|site| {
            let mut row = [0.0; LEVELS as usize];
            for (level, cell) in row.iter_mut().enumerate() {
                let task = site_task(&format!("{site}-{level}"), test_site(site, level as u32).unwrap());
                let j = block_on(judge(&mut sim, nav, &task, JUDGE_SEEDS_FROM..JUDGE_SEEDS_FROM + seeds)).unwrap();
                *cell = j.success_rate();
            }
            row
        })
        .collect()
}

fn run<G: Generator>(args: &Args, generator: G) -> Result<(), String> {
    let nav = Navigator::new(args.config.clone(), &Device::flex().autodiff(), args.seed)?;
    let name = generator.name();
    let mut trainer = NavTrainer::new(nav, generator, args.seed);
    let mut sim = SiteSim::new(test_site("login", 0).unwrap(), 0, Values::default(), RewardConfig::default());
    let c = &args.config;
    println!(
        "navigator, generator {name} ({}), seed {}, {} parameters, head {}, {} LSTM, M = {} episodes per iteration; judged on {} seeds per cell",
        args.generator,
        args.seed,
        trainer.navigator.model().parameter_count(),
        serde_json::to_string(&c.head).unwrap_or_default(),
        if c.bidirectional { "bidirectional" } else { "forward" },
        c.episodes_per_update,
        args.judge_seeds
    );
    if c.head == Head::Dqn {
        println!(
            "DQN: Adam {}, batch {}, replay {} (first update at {}), {} samples per insert, target copy every {} updates, n = {}, double {}, Huber {}, return clip {:?}, epsilon {} -> {} over {} env steps",
            c.dqn_learning_rate, c.dqn_batch_size, c.dqn_replay_capacity, c.dqn_min_replay, c.dqn_samples_per_insert,
            c.dqn_target_update_period, c.dqn_n_step, c.dqn_double, c.dqn_huber, c.dqn_reward_clip,
            c.dqn_epsilon_start, c.dqn_epsilon_end, c.dqn_epsilon_decay_steps
        );
    }
    let t0 = Instant::now();
    let mut train_s = 0.0;
    let mut last_judge = 0.0;
    let mut recent: Vec<(f64, f64)> = Vec::new();
    let mut best = -1.0;
    loop {
        let t = Instant::now();
        let it = block_on(trainer.step(&mut sim))?;
        train_s += t.elapsed().as_secs_f64();
        recent.push((it.mean_return(), it.success_rate()));
        let elapsed = t0.elapsed().as_secs_f64();
        let mut done = elapsed >= args.minutes * 60.0 || args.iterations.is_some_and(|n| trainer.iteration >= n);
        if done || elapsed - last_judge >= args.judge_every_s {
            last_judge = elapsed;
            let c = trainer.navigator.counters;
            let n = recent.len().max(1) as f64;
            let (ret, succ) = recent.iter().fold((0.0, 0.0), |(a, b), (r, s)| (a + r, b + s));
            recent.clear();
            println!(
                "\n[{:>6.0} s, {:.0} s training] iteration {}, {} env steps, {} updates, {:.0} env steps/s and {:.1} updates/s while training; \
                 training sites: return {:.2}, success {:.0}%, vocabulary {}",
                elapsed,
                train_s,
                trainer.iteration,
                c.env_steps,
                c.updates,
                c.env_steps as f64 / train_s,
                c.updates as f64 / train_s,
                ret / n,
                100.0 * succ / n,
                trainer.navigator.vocab.len()
            );
            let g = grid(&mut trainer.navigator, args.judge_seeds);
            println!("{:<10} {}", "site", (0..LEVELS).map(|l| format!("level {l}")).collect::<Vec<_>>().join("  "));
            for (site, row) in TEST_SITES.iter().zip(&g) {
                println!("{site:<10} {}", row.iter().map(|s| format!("{:>6.0}%", 100.0 * s)).collect::<Vec<_>>().join("  "));
            }
            let mean = g.iter().flatten().sum::<f64>() / (g.len() * LEVELS as usize) as f64;
            if let (Some(f), Some((site, level))) = (args.stop_at, fixed_site(&args.generator).and(args.generator.rsplit_once('-'))) {
                let row = TEST_SITES.iter().position(|s| *s == site);
                let cell = row.zip(level.parse::<usize>().ok()).map(|(r, l)| g[r][l]);
                if cell.is_some_and(|c| c >= f) && !done {
                    println!("{} reached {:.0}% greedy: stopping (--stop-at {f})", args.generator, 100.0 * cell.unwrap());
                    done = true;
                }
            }
            if let Some(out) = &args.out {
                // The best navigator so far goes to `out`, the last one beside it.
                let label = format!("{name} ({})", args.generator);
                if mean > best {
                    best = mean;
                    let bytes = block_on(trainer.navigator.save(&label, Precision::Full))?;
                    std::fs::write(out, bytes).map_err(|e| format!("{out}: {e}"))?;
                    println!("wrote {out} (grid mean {:.0}%, the best so far)", 100.0 * mean);
                }
                if done {
                    let last = match out.strip_suffix(".wln") {
                        Some(stem) => format!("{stem}-last.wln"),
                        None => format!("{out}-last"),
                    };
                    let bytes = block_on(trainer.navigator.save(&label, Precision::Full))?;
                    std::fs::write(&last, bytes).map_err(|e| format!("{last}: {e}"))?;
                    println!("wrote {last} (the last navigator, grid mean {:.0}%)", 100.0 * mean);
                }
            }
        }
        if done {
            if let Some(dqn) = trainer.navigator.dqn() {
                // What a snapshot carries beside the checkpoint: Adam, the target network, the replay.
                let bytes = block_on(trainer.navigator.optimizer_state())?.unwrap_or_default();
                println!(
                    "DQN learner state for a snapshot: {:.1} MB (replay {} of {} steps)",
                    bytes.len() as f64 / 1e6,
                    dqn.replay.len(),
                    dqn.replay.capacity()
                );
            }
            return Ok(());
        }
    }
}

fn main() {
    let result = parse().and_then(|args| match args.generator.as_str() {
        "dr" => run(&args, DomainRandomization::default()),
        "cl" => {
            let cl = CurriculumLearning { ramp: args.cl_ramp.unwrap_or(CurriculumLearning::default().ramp), ..Default::default() };
            cl.validate()?;
            run(&args, cl)
        }
        site => match fixed_site(site) {
            Some(d) => run(&args, Fixed(d)),
            None => Err(format!("unknown generator {site} (dr, cl, or a test site and level like login-0)")),
        },
    });
    if let Err(e) = result {
        eprintln!("{e}");
        std::process::exit(2);
    }
}
