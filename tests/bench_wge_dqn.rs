//! Benchmark (not a test; ignored unless asked for): DOM-Q-Net fed by workflow-guided exploration
//! on the live login-user page. Ten scripted-oracle demonstrations (labelled scripted: not a
//! person's) induce the workflow policy's lattices; then, in turns, the workflow policy explores
//! an episode (and learns from it) and its steps enter DOM-Q-Net's replay through
//! `DomQNetAgent::observe_external`, and DOM-Q-Net plays an episode of its own with noisy-net
//! exploration; DOM-Q-Net takes one update per environment step of either. Every
//! `WGE_DQN_EVAL_EVERY` steps it prints DOM-Q-Net's greedy success on held-out seeds.
//!
//! Run with `scripts/bench-wge-dqn.sh` (which passes the budget at compile time:
//! `WGE_DQN_STEPS`, `WGE_DQN_EVAL_EVERY`, `WGE_DQN_FEED=0` for DOM-Q-Net alone as the control).
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::demo::DemoStep;
use weblab::dom_q_net::agent::DomQNetAgent;
use weblab::dom_q_net::config::DqnConfig;
use weblab::env::{EnvConfig, EnvError, Environment};
use weblab::policy::Policy;
use weblab::policy::oracle::{Script, scripted};
use weblab::task::TaskSpec;
use weblab::web::IframeEnv;
use weblab::wge::config::WgeConfig;
use weblab::wge::explore::{WorkflowEpisode, train_episode};
use weblab::wge::policy::WorkflowPolicy;

wasm_bindgen_test_configure!(run_in_browser);

const TASK: &str = "login-user";
const DEMOS: u32 = 10;
const EVAL_SEEDS: std::ops::Range<u32> = 90_000..90_020;

fn setting(name: Option<&str>, default: u64) -> u64 {
    name.and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn now_s() -> f64 {
    js_sys::Date::now() / 1000.0
}

/// One DOM-Q-Net episode on `actor` (exploring) or greedy (evaluation, nothing stored), with an
/// update after every exploring step. Returns (raw reward, steps).
async fn dqn_episode(agent: &mut DomQNetAgent, env: &mut IframeEnv, spec: &TaskSpec, seed: u32, explore: bool) -> (f64, u32) {
    let mut state = agent.encode(&env.reset(spec, seed).await.unwrap());
    let cap = agent.cfg.max_episode_steps;
    for steps in 1..=cap {
        let d = agent.act(0, &state, explore).await.unwrap();
        let step = match env.step(&d.env_action).await {
            Ok(s) => s,
            Err(EnvError::BadTarget { .. }) => Default::default(),
            Err(e) => panic!("{e}"),
        };
        let next = if step.observation.dom.nodes.is_empty() { state.clone() } else { agent.encode(&step.observation) };
        let end = step.done || steps == cap;
        if explore {
            agent.observe(0, step.learning_reward(), &next, end).unwrap();
            agent.learn().await.unwrap();
        }
        if end {
            return (if step.done { step.raw_reward } else { -1.0 }, steps);
        }
        state = next;
    }
    unreachable!()
}

/// Feeds a workflow-policy episode to DOM-Q-Net's replay on actor 1, one update per step.
/// Returns how many of its steps DOM-Q-Net could represent.
async fn feed(agent: &mut DomQNetAgent, ep: &WorkflowEpisode) -> usize {
    let mut stored = 0;
    for (i, s) in ep.steps.iter().enumerate() {
        let last = i + 1 == ep.steps.len();
        let next_obs = if last { &ep.final_observation } else { &ep.steps[i + 1].observation };
        let (enc, next) = (agent.encode(&s.observation), agent.encode(next_obs));
        let reward = if last { ep.raw_reward } else { 0.0 };
        if !agent.observe_external(1, &enc, &s.action, reward, &next, last).unwrap() {
            break;
        }
        stored += 1;
        agent.learn().await.unwrap();
    }
    stored
}

#[wasm_bindgen_test]
#[ignore]
async fn bench_dom_q_net_fed_by_workflow_exploration() {
    let budget = setting(option_env!("WGE_DQN_STEPS"), 3000);
    let eval_every = setting(option_env!("WGE_DQN_EVAL_EVERY"), 500);
    let feed_on = setting(option_env!("WGE_DQN_FEED"), 1) != 0;
    let seed = setting(option_env!("WGE_DQN_SEED"), 1);
    let spec = TaskSpec::Builtin { name: TASK.into() };
    let mut env = IframeEnv::new(new_frame(), EnvConfig { max_steps: Some(30), hold_clock: true, ..EnvConfig::default() });

    // Ten scripted-oracle demonstrations through the live page, as the recorder keeps them.
    let mut wge = WorkflowPolicy::new(WgeConfig::default(), seed);
    for s in 1..=DEMOS {
        let mut oracle = scripted(TASK, Script::Oracle).unwrap();
        let mut obs = env.reset(&spec, s).await.unwrap();
        let mut steps = Vec::new();
        let last = loop {
            let action = oracle.act(&obs).expect("the oracle has an action");
            let step = env.step(&action).await.unwrap();
            steps.push(DemoStep { observation: obs, action });
            if step.done {
                assert_eq!(step.raw_reward, 1.0, "demonstration seed {s} failed");
                break step.observation;
            }
            obs = step.observation;
        };
        wge.add_demonstration(&steps, Some(&last));
    }

    let cfg = DqnConfig { seed, ..DqnConfig::code_sizes() };
    let mut agent = DomQNetAgent::new(cfg, &burn::prelude::Device::flex().autodiff()).unwrap();
    console_log!(
        "{TASK}: DOM-Q-Net (code sizes, seed {seed}) {} workflow exploration; {DEMOS} scripted demonstrations; budget {budget} steps; greedy success on {} held-out seeds every {eval_every} steps",
        if feed_on { "fed by" } else { "without" },
        EVAL_SEEDS.len()
    );
    let t0 = now_s();
    let (mut wge_eps, mut wge_wins, mut wge_steps, mut fed) = (0u32, 0u32, 0u64, 0u64);
    let (mut dqn_eps, mut dqn_wins, mut dqn_steps) = (0u32, 0u32, 0u64);
    let mut next_eval = 0u64;
    loop {
        let total = wge_steps + dqn_steps;
        if total >= next_eval {
            let mut wins = 0;
            for s in EVAL_SEEDS {
                wins += (dqn_episode(&mut agent, &mut env, &spec, s, false).await.0 >= 1.0) as u32;
                weblab::web::util::yield_now().await;
            }
            console_log!(
                "steps {total:>6} (workflow {wge_steps}, DOM-Q-Net {dqn_steps}) | greedy success {:>3.0}% | workflow episodes {wge_eps}, successes {wge_wins}, steps fed {fed} | DOM-Q-Net's own episodes {dqn_eps}, successes {dqn_wins} | updates {} | {:.0} s",
                100.0 * wins as f64 / EVAL_SEEDS.len() as f64,
                agent.counters.updates,
                now_s() - t0
            );
            next_eval += eval_every;
        }
        if total >= budget {
            break;
        }
        if feed_on {
            let ep = train_episode(&mut env, &mut wge, &spec, 20_000 + wge_eps).await.unwrap();
            wge_eps += 1;
            wge_wins += ep.succeeded() as u32;
            wge_steps += ep.steps.len().max(1) as u64;
            fed += feed(&mut agent, &ep).await as u64;
        }
        let (r, n) = dqn_episode(&mut agent, &mut env, &spec, 10_000 + dqn_eps, true).await;
        dqn_eps += 1;
        dqn_wins += (r >= 1.0) as u32;
        dqn_steps += n as u64;
        // The page's events resolve as microtasks: without a turn of the event loop the tab
        // never renders or answers the test runner (which gives up after 300 s).
        weblab::web::util::yield_now().await;
    }
}
