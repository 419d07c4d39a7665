//! The Watch view's agent plays by the trainer's evaluation rules (`train::GreedyEpisode`), in
//! Rust: on held-out seeds, cut by the agent's own step cap whatever the page's cap is, and a
//! scripted policy keeps the seed it was given.
#![cfg(target_arch = "wasm32")]

mod common;

use common::new_frame;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;
use weblab::dom_q_net::train::HELD_OUT_SEEDS;
use weblab::env::EnvConfig;
use weblab::task::TaskSpec;
use weblab::web::Lab;

wasm_bindgen_test_configure!(run_in_browser);

fn js<T: serde::Serialize>(v: &T) -> JsValue {
    serde_wasm_bindgen::to_value(v).unwrap()
}

async fn json(p: js_sys::Promise) -> serde_json::Value {
    serde_wasm_bindgen::from_value(JsFuture::from(p).await.unwrap()).unwrap()
}

#[wasm_bindgen_test]
async fn a_watched_agent_plays_by_the_evaluation_rules() {
    let lab = Lab::new(new_frame());
    lab.load_agent(include_bytes!("../agents/click-test.wlq").to_vec(), "click-test".into()).unwrap();
    // A page where nothing the agent can do ends the episode: two buttons that do nothing. Lab
    // entry points refuse inline pages (docs/security.md), so it is a file in a folder the test
    // allows, as a person's typed folder is.
    lab.allow_folder("tests/fixtures/lab-core/".into()).unwrap();
    let task = js(&TaskSpec::External { base_url: "tests/fixtures/lab-core/".into(), name: "inert".into() });
    for _ in 0..2 {
        // The page's own cap (the view's step box) would end the episode after 5 steps.
        lab.set_config(js(&EnvConfig { max_steps: Some(5), hold_clock: true, ..EnvConfig::default() }), Some(vec![0])).unwrap();
        json(lab.watch_reset(task.clone(), 5, "dqn".into())).await;
        assert_eq!(lab.watch_seed(), HELD_OUT_SEEDS + 5, "an agent is watched on a seed it never trained on");
        let mut steps = 0;
        let last = loop {
            let r = json(lab.watch_step()).await;
            steps += 1;
            if r["step"]["done"].as_bool().unwrap() {
                break r;
            }
            assert!(steps < 100, "the episode never ended");
        };
        assert_eq!(steps, 22, "the agent's cap (max_episode_steps), not the page's");
        assert_eq!(last["step"]["raw_reward"], -1.0);
        assert_eq!(last["step"]["reason"], "step limit");
        assert!(JsFuture::from(lab.watch_step()).await.is_err(), "nothing after the end");
    }
    // Scripted policies are watched on the seed they are given, under the page's cap.
    json(lab.watch_reset(task.clone(), 5, "random".into())).await;
    assert_eq!(lab.watch_seed(), 5);
    let held = HELD_OUT_SEEDS + 77;
    json(lab.watch_reset(task, held, "dqn".into())).await;
    assert_eq!(lab.watch_seed(), held, "a held-out seed names its own page");
}
