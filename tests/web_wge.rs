//! Workflow induction on the lab's live task pages: a demonstration made by the scripted oracle
//! (labelled scripted: not a person) through the real environment — the observation before each
//! action, the action, and the page after — induces a lattice that holds the demonstrated path,
//! on several seeds of tasks the paper learns from demonstrations.
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen_test::*;
use weblab::demo::DemoStep;
use weblab::env::{EnvConfig, Environment, TaskSpec};
use weblab::policy::Policy;
use weblab::policy::oracle::{Script, scripted};
use weblab::web::IframeEnv;
use weblab::wge::constraint::ExecutionEnv;
use weblab::wge::induction::{InductionConfig, expand_to_leaves, induce};

wasm_bindgen_test_configure!(run_in_browser);

const TASKS: [&str; 3] = ["login-user", "enter-text", "click-checkboxes"];
const SEEDS: [u32; 3] = [1, 2, 3];

#[wasm_bindgen_test]
async fn oracle_demonstrations_induce_lattices_holding_their_path() {
    let config = EnvConfig { max_steps: Some(30), hold_clock: true, ..EnvConfig::default() };
    let mut env = IframeEnv::new(new_frame(), config);
    let induction = InductionConfig::default();
    for task in TASKS {
        let spec = TaskSpec::Builtin { name: task.into() };
        for seed in SEEDS {
            let mut oracle = scripted(task, Script::Oracle).unwrap();
            let mut obs = env.reset(&spec, seed).await.unwrap();
            let mut steps = Vec::new();
            let final_observation = loop {
                let action = oracle.act(&obs).unwrap_or_else(|| panic!("{task} seed {seed}: the oracle stopped early"));
                let step = env.step(&action).await.unwrap();
                steps.push(DemoStep { observation: obs, action });
                if step.done {
                    assert_eq!(step.raw_reward, 1.0, "{task} seed {seed}: the oracle's demonstration failed");
                    break step.observation;
                }
                obs = step.observation;
            };
            let lattice = induce(&steps, Some(&final_observation), &induction);
            assert_eq!(lattice.steps, steps.len());
            for (i, step) in steps.iter().enumerate() {
                let exec = ExecutionEnv::new(&step.observation, None);
                let actions = expand_to_leaves(&step.observation.dom, &step.action, induction.max_leaves);
                let programs = lattice.programs(i);
                assert!(
                    programs.iter().any(|p| actions.iter().any(|a| exec.consistent(p, a))),
                    "{task} seed {seed} step {i}: no workflow step allows {:?}",
                    step.action
                );
                // Every offered step allows the demonstrated or the inferred action; none is empty.
                assert!(programs.iter().all(|p| !exec.candidates(p).unwrap_or_default().is_empty()));
            }
            // Every vertex but the last can be left.
            for v in 0..steps.len() {
                assert!(lattice.edges_from(v).next().is_some(), "{task} seed {seed}: vertex {v} has no edge");
            }
        }
    }
}
