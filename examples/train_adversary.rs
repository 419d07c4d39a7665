//! Trains navigators in the population loop with an adversary (PAIRED, Flexible PAIRED, Flexible
//! b-PAIRED, CoDE, ALP) or a baseline generator (DR, CL), natively on the site simulator, and
//! prints over training: the zero-shot success grid on the 5 test sites × 4 levels (greedy, on
//! the simulator, seeds never trained on) of the population's best navigator, the share of
//! active and passive primitives generated, the adversary's expected budget, regret, updates/s,
//! env steps/s and wall-clock. The best navigator is written as a `.wln` for
//! `scripts/judge-navigator.sh` (the live DOM). A command, not a test. `--help` prints its
//! usage.

mod common;

use weblab::adversary::config::Budget;
use weblab::request::GeneratorSpec;
use weblab::study::{RunConfig, train};

use common::{Cli, Common};

const USAGE: &str = "\
Usage: cargo run --release --example train_adversary -- GENERATOR [options]
  GENERATOR: paired | flexible_paired | flexible_b_paired | code | alp | dr | cl
  --seed N (1)  --minutes M (5; training time, judging not counted)  --iterations N
  --judge-every S (60 s of training)  --judge-seeds N (20)  --out FILE.wln (best navigator)
  --alpha A  --beta B  --delta D (the objective's constants; default: the papers')
  --budget expected|log_skip|floored_log_skip (the budget estimate N̂; default: the config's)
  --report-every S (print the curves every S s of training between judgings; default: at judgings)
  --episodes M (per navigator per design; default CoDE's 2)  --population N (DR/CL: 1)
  --max-pages K (DR and CL: the pages a design may have; an adversary's is its config's
    max_pages, --adversary-config '{\"max_pages\":K}')
  --ramp N (CL: proposals until p reaches 1; default the config's 20,000)
  --designs D (designs per iteration, played side by side; default 1, the papers')
  --sequential (the navigators take turns on one thread; default: a thread each)
  --revive-after N (a navigator N episodes without a success, while another succeeded within
    N, restarts as a copy of that one; default: never, the papers; see LoopConfig::revive_after)
  --nav-config JSON  --adversary-config JSON (partial configs)
  --reward JSON (the training designs' reward, a partial gminiwob::RewardConfig; default the
    reference gin's; the papers' terms: '{\"unchanged_penalty\":0,\"step_limit_reward\":-1}')
  --config JSON (a whole run as weblab::study::RunConfig reads it; flags after it override it)
  --run-dir DIR (a long run's folder: the run's snapshot every --snapshot-every S s of wall-clock
    (300), its curves and DIR/plot.png, the best navigator DIR/best.wln; a folder that holds a
    run resumes it exactly, and --minutes counts the training of all its sittings)
";

/// The command line as a run config (`weblab::study::RunConfig`) and its run folder.
fn parse() -> Result<(RunConfig, Option<String>), String> {
    let mut cli = Cli::new(USAGE);
    let g = cli.generator("no generator given (paired, flexible_paired, flexible_b_paired, code, alp, dr, cl); --help for the usage")?;
    let mut cfg = RunConfig {
        generator: match g.as_str() {
            "dr" => GeneratorSpec::Dr { max_pages: None, slots: None },
            "cl" => GeneratorSpec::Cl { p_start: None, ramp: None, max_pages: None },
            _ => GeneratorSpec::adversary(
                weblab::adversary::Objective::from_key(&g)
                    .ok_or(format!("unknown generator {g} (paired, flexible_paired, flexible_b_paired, code, alp, dr, cl)"))?,
            ),
        },
        ..RunConfig::default()
    };
    let mut common = Common { seed: 1, minutes: 5.0, iterations: None, judge_every_s: 60.0, judge_seeds: 20, out: None };
    let mut run_dir = None;
    while let Some(flag) = cli.next_flag() {
        if common.take(&flag, &mut cli)? {
            continue;
        }
        match flag.as_str() {
            "--config" => {
                let generator = cfg.generator.clone();
                cfg = serde_json::from_str(&cli.value(&flag)?).map_err(|e| format!("--config: {e}"))?;
                cfg.generator = generator;
            }
            "--alpha" | "--beta" | "--delta" | "--budget" | "--adversary-config" => {
                let value = cli.value(&flag)?;
                let GeneratorSpec::Adversary { alpha, beta, delta, budget, config, .. } = &mut cfg.generator else {
                    return Err(format!("{flag}: {g} has no adversary to set"));
                };
                let num = || value.parse::<f64>().map_err(|_| format!("{flag}: not a number: {value}"));
                match flag.as_str() {
                    "--alpha" => *alpha = Some(num()?),
                    "--beta" => *beta = Some(num()?),
                    "--delta" => *delta = Some(num()?),
                    "--budget" => *budget = Some(Budget::from_key(&value).ok_or("--budget: expected, log_skip or floored_log_skip")?),
                    _ => *config = Some(serde_json::from_str(&value).map_err(|e| format!("--adversary-config: {e}"))?),
                }
            }
            "--report-every" => cfg.report_every_s = Some(cli.num(&flag)?),
            "--episodes" => cfg.loop_cfg.episodes = cli.num(&flag)? as usize,
            "--designs" => cfg.loop_cfg.designs = cli.num(&flag)? as usize,
            "--revive-after" => cfg.loop_cfg.revive_after = Some(cli.num(&flag)? as u64),
            "--sequential" => cfg.sequential = true,
            "--run-dir" => run_dir = Some(cli.value(&flag)?),
            "--snapshot-every" => cfg.snapshot_every_s = cli.num(&flag)?,
            "--population" => cfg.population = Some(cli.num(&flag)? as usize),
            "--max-pages" => match &mut cfg.generator {
                GeneratorSpec::Dr { max_pages, .. } | GeneratorSpec::Cl { max_pages, .. } => *max_pages = Some(cli.num(&flag)? as u32),
                _ => return Err(format!("--max-pages: {g} sets its pages in --adversary-config '{{\"max_pages\":K}}'")),
            },
            "--ramp" => match &mut cfg.generator {
                GeneratorSpec::Cl { ramp, .. } => *ramp = Some(cli.num(&flag)? as u64),
                _ => return Err(format!("--ramp: only CL has a ramp, not {g}")),
            },
            "--nav-config" => cfg.navigator = serde_json::from_str(&cli.value(&flag)?).map_err(|e| format!("--nav-config: {e}"))?,
            "--reward" => cfg.loop_cfg.reward = serde_json::from_str(&cli.value(&flag)?).map_err(|e| format!("--reward: {e}"))?,
            other => return Err(format!("unknown option {other}; --help for the usage")),
        }
    }
    cfg.seed = common.seed;
    cfg.minutes = common.minutes;
    cfg.iterations = common.iterations.or(cfg.iterations);
    cfg.judge_every_s = common.judge_every_s;
    cfg.judge_seeds = common.judge_seeds;
    cfg.out = common.out.or(cfg.out);
    cfg.validate()?;
    Ok((cfg, run_dir))
}

fn main() {
    let result = parse().and_then(|(cfg, run_dir)| {
        if let GeneratorSpec::Adversary { .. } = &cfg.generator {
            let adversary = cfg.generator.build_adversary(&burn::prelude::Device::flex().autodiff(), cfg.seed)?;
            let (policy, critic) = adversary.model().parameter_counts();
            let c = &adversary.cfg;
            println!(
                "adversary: {}, K = {} pages, N = {} slots, repeated pairs {}, {policy} policy parameters (AEG A.12: 152,461) + {critic} in the critic",
                cfg.generator.label(),
                c.max_pages,
                c.slots,
                if c.mask_repeats { "masked" } else { "allowed" }
            );
        }
        train(&cfg, run_dir.as_deref(), &mut |line| println!("{line}")).map(|_| ())
    });
    if let Err(e) = result {
        eprintln!("{e}");
        std::process::exit(2);
    }
}
