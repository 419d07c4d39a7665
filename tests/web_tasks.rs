//! Every task of the lab, in a real browser: for each task and 20 seeds the scripted oracle gets
//! raw reward 1 and the wrong script gets the failure reward; the same seed gives the same
//! utterance and the same DOM. Tasks with data modes are checked in each mode.
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::env::{EnvConfig, Environment, TaskSpec, builtin_tasks};

use weblab::policy::oracle::{Script, scripted};
use weblab::runner::run_episode;
use weblab::web::IframeEnv;

wasm_bindgen_test_configure!(run_in_browser);

const SEEDS: u32 = 20;
/// Enough for the longest oracle; wrong scripts that only dawdle end here with the failure reward.
const MAX_STEPS: u32 = 60;

/// The tasks under test: all of them, or those named (comma-separated) in `WEBLAB_TASKS` at
/// build time (`WEBLAB_TASKS=click-tab,click-tab-2 cargo test ...` while developing a task).
fn tasks() -> Vec<&'static weblab::env::TaskInfo> {
    let only: Option<Vec<&str>> = option_env!("WEBLAB_TASKS").map(|s| s.split(',').map(str::trim).collect());
    builtin_tasks().iter().filter(|t| only.as_ref().is_none_or(|o| o.contains(&t.name.as_str()))).collect()
}

fn modes(task: &weblab::env::TaskInfo) -> Vec<String> {
    if task.modes.is_empty() { vec!["train".into()] } else { task.modes.clone() }
}

#[wasm_bindgen_test]
async fn oracle_solves_and_wrong_script_fails_every_task() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig { max_steps: Some(MAX_STEPS), hold_clock: true, ..EnvConfig::default() });
    let mut failures = Vec::new();
    let mut episodes = 0;
    for task in tasks() {
        let spec = TaskSpec::builtin_inline(&task.name).unwrap();
        for mode in modes(task) {
            env.set_config(EnvConfig { data_mode: mode.clone(), ..env.config().clone() });
            for seed in 0..SEEDS {
                for (script, want) in [(Script::Oracle, 1.0), (Script::Wrong, -1.0)] {
                    let mut policy = scripted(&task.name, script).expect("script");
                    let mut trace = Vec::new();
                    let result = run_episode(&mut env, &mut policy, &spec, seed, |a, s| {
                        trace.push(format!("{a:?} -> raw {} done {}", s.raw_reward, s.done));
                    })
                    .await;
                    episodes += 1;
                    match result {
                        Ok(r) if r.raw_reward == want => {}
                        Ok(r) => failures.push(format!(
                            "{} [{mode}] seed {seed} {script:?}: raw reward {} ({:?}) after {:?}",
                            task.name, r.raw_reward, r.reason, trace
                        )),
                        Err(e) => failures.push(format!("{} [{mode}] seed {seed} {script:?}: {e}", task.name)),
                    }
                }
            }
        }
    }
    web_sys::console::log_1(&format!("oracle/wrong-script episodes run: {episodes}").into());
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[wasm_bindgen_test]
async fn same_seed_gives_same_utterance_and_dom() {
    let mut env = IframeEnv::new(new_frame(), EnvConfig::default());
    for task in tasks() {
        let spec = TaskSpec::builtin_inline(&task.name).unwrap();
        for mode in modes(task) {
            env.set_config(EnvConfig { data_mode: mode.clone(), ..EnvConfig::default() });
            let mut distinct = std::collections::HashSet::new();
            for seed in [3, 17, 29] {
                let a = env.reset(&spec, seed).await.unwrap();
                let b = env.reset(&spec, seed).await.unwrap();
                assert_eq!(a, b, "{} [{mode}] seed {seed} is not reproducible", task.name);
                distinct.insert(format!("{:?}", (&a.instruction, &a.dom)));
            }
            assert!(distinct.len() > 1, "{} [{mode}]: three seeds gave the same episode", task.name);
        }
    }
}
