//! Steps per second of the native site simulator (`gminiwob::SiteSim`) under the random and the
//! oracle policies: a figure to print, nothing asserted.
//! Usage: cargo run --release --example bench_site_sim -- [TEST_SITE LEVEL] [SECONDS]
//! e.g. `cargo run --release --example bench_site_sim -- shopping 3 5`
use std::time::Instant;

use weblab::gminiwob::test_sites::test_site;
use weblab::gminiwob::{RewardConfig, SiteSim, Values};
use weblab::policy::Policy;
use weblab::policy::gminiwob::{SiteOracle, SiteRandom};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map(String::as_str).unwrap_or("shopping");
    let level: u32 = args.get(1).and_then(|l| l.parse().ok()).unwrap_or(3);
    let seconds: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let Some(design) = test_site(name, level) else {
        eprintln!("no test site {name} at level {level}");
        std::process::exit(2)
    };
    let pages = design.pages();
    let mut sim = SiteSim::new(design, 0, Values::default(), RewardConfig::default());
    for policy in ["random", "oracle"] {
        let (mut steps, mut episodes, mut solved, mut seed) = (0u64, 0u64, 0u64, 0u32);
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < seconds {
            // A new seed each episode: the site is rendered again, as a trainer's episodes are.
            let mut obs = sim.reset_seed(seed);
            let mut agent: Box<dyn Policy> = match policy {
                "random" => Box::new(SiteRandom::new(seed as u64)),
                _ => Box::new(SiteOracle::new(pages)),
            };
            seed += 1;
            loop {
                let action = agent.act(&obs).expect("an action");
                let step = sim.step(&action).expect("a step");
                steps += 1;
                if step.done {
                    solved += (step.raw_reward == 1.0) as u64;
                    break;
                }
                obs = step.observation;
            }
            episodes += 1;
        }
        let t = t0.elapsed().as_secs_f64();
        println!(
            "{name}-{level}, {policy}: {:.0} steps/s, {:.0} episodes/s ({episodes} episodes, {:.1} steps each, {:.0}% solved)",
            steps as f64 / t,
            episodes as f64 / t,
            steps as f64 / episodes as f64,
            100.0 * solved as f64 / episodes as f64
        );
    }
}
