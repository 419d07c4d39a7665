//! Benchmark (not a test; ignored unless asked for): the workflow policy alone on the paper's
//! Table 1 tasks we have, plus login-user, use-autocomplete, search-engine and book-flight, on the
//! live task pages in headless Chromium. Per task: ten scripted-oracle demonstrations (labelled
//! scripted: not a person's; seeds 1–10) recorded as the recorder keeps them, then
//! `WGE_EPISODES` exploration episodes that train the workflow policy (seeds from 10,000), then
//! test-mode success on `WGE_TEST` held-out seeds (from 90,000; `test` data mode where the task
//! has one). Prints success over training in quarters, test success and wall-clock.
//!
//! Run with `scripts/bench-wge.sh` (budget and task list passed at compile time; with
//! `WGE_DEBUG=1` set it also prints the likeliest steps of the first two demonstrations' lattices
//! after training, and five exploration episodes).
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::demo::DemoStep;
use weblab::env::{EnvConfig, Environment, TaskSpec, builtin_task};
use weblab::policy::Policy;
use weblab::policy::oracle::{Script, scripted};
use weblab::web::IframeEnv;
use weblab::wge::config::WgeConfig;
use weblab::wge::explore::{EpisodeEnd, run_episode, train_episode};
use weblab::wge::policy::{Mode, WorkflowPolicy};

wasm_bindgen_test_configure!(run_in_browser);

const TASKS: [&str; 14] = [
    "click-checkboxes",
    "click-checkboxes-large",
    "click-checkboxes-soft",
    "click-checkboxes-transfer",
    "multi-orderings",
    "multi-layouts",
    "social-media",
    "social-media-some",
    "email-inbox",
    "email-inbox-nl",
    "login-user",
    "use-autocomplete",
    "search-engine",
    "book-flight",
];

/// DOMNet+WGE success (%) in the paper's Table 1, where it reports the task.
fn paper(task: &str) -> Option<u32> {
    Some(match task {
        "click-checkboxes" => 100,
        "click-checkboxes-large" => 84,
        "click-checkboxes-soft" => 94,
        "click-checkboxes-transfer" => 64,
        "multi-orderings" => 100,
        "multi-layouts" => 100,
        "social-media" => 100,
        "social-media-some" => 42,
        "email-inbox" => 99,
        "email-inbox-nl" => 93,
        _ => return None,
    })
}

const DEMOS: u32 = 10;
const TRAIN_SEEDS: u32 = 10_000;
const TEST_SEEDS: u32 = 90_000;

fn setting(value: Option<&str>, default: u32) -> u32 {
    value.and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn now_s() -> f64 {
    js_sys::Date::now() / 1000.0
}

fn pct(wins: u32, n: u32) -> f64 {
    if n == 0 { 0.0 } else { 100.0 * wins as f64 / n as f64 }
}

#[wasm_bindgen_test]
#[ignore]
async fn bench_workflow_policy_on_table_1_tasks() {
    let episodes = setting(option_env!("WGE_EPISODES"), 3000);
    let test = setting(option_env!("WGE_TEST"), 100);
    let seed = setting(option_env!("WGE_SEED"), 1) as u64;
    let only: Vec<&str> = option_env!("WGE_TASKS").unwrap_or("").split([',', ' ']).filter(|t| !t.is_empty()).collect();
    let train_cfg = EnvConfig { max_steps: Some(30), hold_clock: true, ..EnvConfig::default() };
    let mut env = IframeEnv::new(new_frame(), train_cfg.clone());
    console_log!(
        "Workflow policy alone (softmax, policy seed {seed}); {DEMOS} scripted-oracle demonstrations per task (seeds 1-{DEMOS}); {episodes} training episodes (seeds {TRAIN_SEEDS}+); test mode on {test} held-out seeds ({TEST_SEEDS}+)"
    );
    console_log!("| task | paper DOMNet+WGE | demo steps | step cap | training success by quarter (%) | test success (%) | wall-clock (s) |");
    console_log!("|---|---|---|---|---|---|---|");
    for task in TASKS.iter().filter(|t| only.is_empty() || only.contains(t)) {
        let t0 = now_s();
        let spec = TaskSpec::Builtin { name: task.to_string() };
        let Some(_) = scripted(task, Script::Oracle) else {
            console_log!("| {task} | no scripted oracle |");
            continue;
        };
        env.set_config(train_cfg.clone());
        let mut policy = WorkflowPolicy::new(WgeConfig::default(), seed);
        let mut longest = 0;
        let mut failed_demos = 0;
        for s in 1..=DEMOS {
            let mut oracle = scripted(task, Script::Oracle).unwrap();
            let mut obs = env.reset(&spec, s).await.unwrap();
            let mut steps = Vec::new();
            let last = loop {
                let Some(action) = oracle.act(&obs) else { break None };
                let step = env.step(&action).await.unwrap();
                steps.push(DemoStep { observation: obs, action });
                if step.done {
                    break (step.raw_reward >= 1.0).then_some(step.observation);
                }
                obs = step.observation;
            };
            // Only successful demonstrations are used (reference §2.1: rawReward ≥ 1).
            match last {
                Some(last) => {
                    longest = longest.max(steps.len());
                    policy.add_demonstration(&steps, Some(&last));
                }
                None => failed_demos += 1,
            }
        }
        // Ten actions per episode (reference §2.6), or the longest demonstration where it needs
        // more (click-checkboxes-large ticks up to twelve boxes before Submit).
        policy.config.max_steps = policy.config.max_steps.max(longest as u32);
        let empty_positions: usize =
            policy.demos().iter().map(|d| d.positions.iter().filter(|p| p.options.is_empty()).count()).sum();
        let quarter = episodes.div_ceil(4).max(1);
        let mut quarters = Vec::new();
        let (mut wins, mut n) = (0, 0);
        // How training episodes ended: page success, page failure, the policy stopped, step cap.
        let mut ends = [0u32; 4];
        let mut actions = 0;
        let t_train = now_s();
        for e in 0..episodes {
            let ep = train_episode(&mut env, &mut policy, &spec, TRAIN_SEEDS + e).await.unwrap();
            wins += ep.succeeded() as u32;
            actions += ep.steps.len();
            ends[match ep.end {
                EpisodeEnd::Done if ep.succeeded() => 0,
                EpisodeEnd::Done => 1,
                EpisodeEnd::Stopped(_) => 2,
                EpisodeEnd::StepCap => 3,
            }] += 1;
            n += 1;
            if n == quarter || e + 1 == episodes {
                quarters.push(format!("{:.0}", pct(wins, n)));
                (wins, n) = (0, 0);
            }
        }
        let train_s = now_s() - t_train;
        if option_env!("WGE_DEBUG").is_some() {
            for (k, d) in policy.demos().iter().enumerate().take(2) {
                for (v, p) in d.positions.iter().enumerate() {
                    let probs = policy.probabilities(k, v);
                    let mut order: Vec<usize> = (0..p.options.len()).collect();
                    order.sort_by(|&a, &b| probs[b].total_cmp(&probs[a]));
                    for &o in order.iter().take(6) {
                        console_log!("demo {k} v{v} V={:.2} p={:.3} w={:.2} paths={} {}", p.value, probs[o], p.weights[o], p.options[o].paths, d.constraint(&p.options[o]).map_or("skip".into(), |c| c.to_string()));
                    }
                }
            }
            for s in 0..5 {
                let ep = run_episode(&mut env, &mut policy, &spec, 50_000 + s, Mode::Explore).await.unwrap();
                console_log!("explore {s}: end {:?} reward {} actions {:?} stopped {:?}", ep.end, ep.raw_reward, ep.steps.iter().map(|s| s.action.describe(Some(&s.observation.dom))).collect::<Vec<_>>(), ep.stopped_at.map(|c| policy.demos()[c.demo].constraint(&policy.demos()[c.demo].positions[c.vertex].options[c.option]).map(|x| x.to_string())));
            }
        }
        let modes = builtin_task(task).map(|t| t.modes.clone()).unwrap_or_default();
        if modes.iter().any(|m| m == "test") {
            env.set_config(EnvConfig { data_mode: "test".into(), ..train_cfg.clone() });
        }
        let mut test_wins = 0;
        for s in 0..test {
            test_wins += run_episode(&mut env, &mut policy, &spec, TEST_SEEDS + s, Mode::Test).await.unwrap().succeeded() as u32;
        }
        let note = match (failed_demos, empty_positions) {
            (0, 0) => String::new(),
            (f, p) => format!(" ({f} oracle demonstrations failed; {p} lattice positions without a workflow step)"),
        };
        console_log!(
            "| {task} | {} | {longest} | {} | {} | {:.0} | {:.0} |{note}",
            paper(task).map_or("—".to_string(), |p| p.to_string()),
            policy.config.max_steps,
            quarters.join(" / "),
            pct(test_wins, test),
            now_s() - t0
        );
        console_log!(
            "    {task}: training episodes ended {} success / {} failure / {} stopped / {} step cap; {:.1} actions each; {:.0} episodes/s",
            ends[0],
            ends[1],
            ends[2],
            ends[3],
            actions as f64 / episodes.max(1) as f64,
            episodes as f64 / train_s.max(1e-3)
        );
    }
}
