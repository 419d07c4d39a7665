//! Trains a gMiniWoB navigator natively on the site simulator (equal to the live DOM, see
//! `tests/web_gminiwob_sim.rs`) and prints, over training time, the zero-shot success grid on the
//! test sites (judged on the simulator; `scripts/judge-navigator.sh` judges a checkpoint on the
//! live DOM), env steps/s and updates/s. A command, not a test. `--help` prints its usage.

mod common;

use std::time::Instant;

use burn::prelude::Device;
use weblab::curriculum::train::{LoopConfig, PopulationTrainer};
use weblab::curriculum::{CurriculumLearning, DomainRandomization, Fixed, Generator};
use weblab::gminiwob::Design;
use weblab::gminiwob::test_sites::{TEST_SITES, test_site};
use weblab::learn::checkpoint::Precision;
use weblab::navigator::train::{grid_mean, judge_test_sites, sim_pool};
use weblab::navigator::{Head, Navigator, NavigatorConfig};
use weblab::util::block_on;

use common::{Cli, Common, print_grid};

const USAGE: &str = "\
Usage: cargo run --release --example train_navigator -- GENERATOR [options]
  GENERATOR: dr | cl | SITE-LEVEL (one fixed test site, e.g. login-0)
  --seed N (1)  --minutes M (10)  --iterations N (no limit)  --judge-every S (60 seconds)
  --judge-seeds N (20)  --out FILE.wln (the best navigator by grid mean; FILE-last.wln: the last)
  --config JSON (a partial NavigatorConfig, e.g. '{\"episodes_per_update\":16}')
  --head a2c|dqn (the learner; default a2c, the papers')  --bidirectional (the BiLSTM option)
  --cl-ramp N (CL's proposals until p = 1)
  --designs D (designs per iteration, played side by side: D·M episodes per update; default 1)
  --stop-at F (a fixed site: stop at the first judging where its greedy success is >= F)
  --from FILE.wln (start from a saved navigator: its weights, vocabulary and config; --head and
    --bidirectional are then refused, and --config may set only the A2C learner's constants
    (learning_rate, entropy_coef, uniform_coef, value_coef, max_grad_norm, episodes_per_update).
    E.g. whether a population's navigator that never learnt can learn a site alone)
";

struct Args {
    generator: String,
    common: Common,
    config: NavigatorConfig,
    cl_ramp: Option<u64>,
    stop_at: Option<f64>,
    designs: usize,
    from: Option<String>,
    /// Under --from: the learner constants --config sets on the saved navigator's config.
    learner: Option<serde_json::Value>,
}

/// The constants --config may change on a saved navigator: the A2C learner's, not the network's
/// or the page reading's.
const LEARNER_KEYS: [&str; 6] = ["learning_rate", "entropy_coef", "uniform_coef", "value_coef", "max_grad_norm", "episodes_per_update"];

fn head(s: &str) -> Result<Head, String> {
    match s {
        "a2c" => Ok(Head::A2c),
        "dqn" => Ok(Head::Dqn),
        other => Err(format!("--head: a2c or dqn, not {other}")),
    }
}

fn parse() -> Result<Args, String> {
    let mut cli = Cli::new(USAGE);
    let generator = cli.generator("no generator given (dr, cl or a test site like login-0); --help for the usage")?;
    let common = Common { seed: 1, minutes: 10.0, iterations: None, judge_every_s: 60.0, judge_seeds: 20, out: None };
    let mut a = Args { generator, common, config: NavigatorConfig::default(), cl_ramp: None, stop_at: None, designs: 1, from: None, learner: None };
    let mut configured: Option<serde_json::Value> = None;
    let (mut head_flag, mut bidirectional) = (None, false);
    while let Some(flag) = cli.next_flag() {
        if a.common.take(&flag, &mut cli)? {
            continue;
        }
        match flag.as_str() {
            "--cl-ramp" => a.cl_ramp = Some(cli.num(&flag)? as u64),
            "--stop-at" => a.stop_at = Some(cli.num(&flag)?),
            "--designs" => a.designs = cli.num(&flag)? as usize,
            "--config" => {
                let json = cli.value(&flag)?;
                a.config = serde_json::from_str(&json).map_err(|e| format!("--config: {e}"))?;
                configured = serde_json::from_str(&json).ok();
            }
            "--head" => head_flag = Some(head(&cli.value(&flag)?)?),
            "--bidirectional" => bidirectional = true,
            "--from" => a.from = Some(cli.value(&flag)?),
            other => return Err(format!("unknown option {other}; --help for the usage")),
        }
    }
    if a.from.is_some() && (head_flag.is_some() || bidirectional) {
        return Err("--from takes the saved navigator's network: drop --head and --bidirectional".into());
    }
    if a.from.is_some() {
        let keys: Vec<String> = configured.as_ref().and_then(|v| v.as_object()).map(|o| o.keys().cloned().collect()).unwrap_or_default();
        if let Some(k) = keys.iter().find(|k| !LEARNER_KEYS.contains(&k.as_str())) {
            return Err(format!("--from keeps the saved navigator's network and reading; --config may not set {k}"));
        }
        a.learner = configured;
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

fn run<G: Generator>(args: &Args, generator: G) -> Result<(), String> {
    let device = Device::flex().autodiff();
    let nav = match &args.from {
        // The saved weights and vocabulary, a fresh optimiser; the seed draws the episodes.
        Some(file) => {
            let mut nav = Navigator::load(&std::fs::read(file).map_err(|e| format!("{file}: {e}"))?, &device, args.common.seed)
                .map_err(|e| format!("{file}: {e}"))?
                .0;
            if let Some(serde_json::Value::Object(set)) = &args.learner {
                let mut cfg = serde_json::to_value(&nav.cfg).map_err(|e| e.to_string())?;
                for (k, v) in set {
                    cfg[k] = v.clone();
                }
                nav.cfg = serde_json::from_value(cfg).map_err(|e| format!("--config: {e}"))?;
                nav.cfg.validate()?;
            }
            nav
        }
        None => Navigator::new(args.config.clone(), &device, args.common.seed)?,
    };
    // The config the navigator has: --config's, or the saved one's under --from.
    let c = nav.cfg.clone();
    let name = generator.name();
    // A navigator alone is a population of one; M is its episodes_per_update.
    let loop_cfg = LoopConfig { episodes: c.episodes_per_update, designs: args.designs, ..LoopConfig::default() };
    let mut trainer = PopulationTrainer::new(vec![nav], generator, loop_cfg.clone(), args.common.seed)?;
    let mut sims = sim_pool(loop_cfg.episodes * loop_cfg.designs);
    println!(
        "navigator, generator {name} ({}), seed {}, {} parameters, head {}, {} LSTM, M = {} episodes per design, D = {} designs per iteration; judged on {} seeds per cell",
        args.generator,
        args.common.seed,
        trainer.population[0].model().parameter_count(),
        serde_json::to_string(&c.head).unwrap_or_default(),
        if c.bidirectional { "bidirectional" } else { "forward" },
        c.episodes_per_update,
        loop_cfg.designs,
        args.common.judge_seeds
    );
    if c.head == Head::Dqn {
        println!(
            "DQN: Adam {}, batch {}, replay {} (first update at {}), {} samples per insert, target copy every {} updates, n = {}, double {}, Huber {}, return clip {:?}, epsilon {} -> {} over {} env steps",
            c.dqn_learning_rate,
            c.dqn_batch_size,
            c.dqn_replay_capacity,
            c.dqn_min_replay,
            c.dqn_samples_per_insert,
            c.dqn_target_update_period,
            c.dqn_n_step,
            c.dqn_double,
            c.dqn_huber,
            c.dqn_reward_clip,
            c.dqn_epsilon_start,
            c.dqn_epsilon_end,
            c.dqn_epsilon_decay_steps
        );
    }
    // Counted from here: a navigator from --from arrives with its own counters.
    let start = trainer.population[0].counters;
    let t0 = Instant::now();
    let mut train_s = 0.0;
    let mut last_judge = 0.0;
    let mut recent: Vec<(f64, f64)> = Vec::new();
    let mut best = -1.0;
    loop {
        let t = Instant::now();
        let it = block_on(trainer.step(&mut sims))?;
        train_s += t.elapsed().as_secs_f64();
        let eps = &it.episodes[0];
        recent.push((eps.iter().map(|e| e.ret).sum::<f64>() / eps.len().max(1) as f64, it.success_rate()));
        let elapsed = t0.elapsed().as_secs_f64();
        let mut done = elapsed >= args.common.minutes * 60.0 || args.common.iterations.is_some_and(|n| trainer.iteration >= n);
        if done || elapsed - last_judge >= args.common.judge_every_s {
            last_judge = elapsed;
            let c = trainer.population[0].counters;
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
                (c.env_steps - start.env_steps) as f64 / train_s,
                (c.updates - start.updates) as f64 / train_s,
                ret / n,
                100.0 * succ / n,
                trainer.population[0].vocab.len()
            );
            let g = block_on(judge_test_sites(&mut trainer.population[0], args.common.judge_seeds, || std::future::ready(())))?;
            print_grid("", &g);
            let mean = grid_mean(&g);
            if let (Some(f), Some((site, level))) = (args.stop_at, fixed_site(&args.generator).and(args.generator.rsplit_once('-'))) {
                let row = TEST_SITES.iter().position(|s| *s == site);
                let cell = row.zip(level.parse::<usize>().ok()).map(|(r, l)| g[r][l]);
                if cell.is_some_and(|c| c >= f) && !done {
                    println!("{} reached {:.0}% greedy: stopping (--stop-at {f})", args.generator, 100.0 * cell.unwrap());
                    done = true;
                }
            }
            if let Some(out) = &args.common.out {
                // The best navigator so far goes to `out`, the last one beside it.
                let label = format!("{name} ({})", args.generator);
                if mean > best {
                    best = mean;
                    let bytes = block_on(trainer.population[0].save(&label, Precision::Full))?;
                    std::fs::write(out, bytes).map_err(|e| format!("{out}: {e}"))?;
                    println!("wrote {out} (grid mean {:.0}%, the best so far)", 100.0 * mean);
                }
                if done {
                    let last = match out.strip_suffix(".wln") {
                        Some(stem) => format!("{stem}-last.wln"),
                        None => format!("{out}-last"),
                    };
                    let bytes = block_on(trainer.population[0].save(&label, Precision::Full))?;
                    std::fs::write(&last, bytes).map_err(|e| format!("{last}: {e}"))?;
                    println!("wrote {last} (the last navigator, grid mean {:.0}%)", 100.0 * mean);
                }
            }
        }
        if done {
            if let Some(dqn) = trainer.population[0].dqn() {
                // What a snapshot carries beside the checkpoint: Adam, the target network, the replay.
                let bytes = block_on(trainer.population[0].optimizer_state())?.unwrap_or_default();
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
